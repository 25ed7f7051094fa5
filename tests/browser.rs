//! Smoke test: report.html renders in a real browser (headless Chromium, Debian's `chromium`
//! package, which .ci/run installs). The screenshot must not be blank.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

mod common;
use common::ink;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not installed; .ci/run installs Debian's chromium package");
        }
        common::skip(
            "report_renders_in_headless_chromium",
            "chromium not installed (apt-get install chromium)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    sweep_race_pilot(&out);
    let shot = dir.path().join("report.png");
    let profile = dir.path().join("profile");
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1200,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", out.join("report.html").display()))
        .output()
        .unwrap();
    assert!(
        shot.exists(),
        "no screenshot; chromium said: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (share, colours) = ink(&shot);
    assert!(
        share > 0.05,
        "page looks blank: {:.1}% of pixels inked",
        100.0 * share
    );
    assert!(
        colours > 20,
        "page has only {colours} colours: plots did not render"
    );
}

/// Chromium's common flags for a hermetic headless run with its own profile in `dir`.
fn headless(browser: &Path, dir: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", dir.join("profile").display()));
    c
}

/// The DOM Chromium prints after loading `url` and running its scripts.
fn dumped_dom(browser: &Path, dir: &Path, url: &str) -> String {
    let output = headless(browser, dir)
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(url)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).to_string()
}

fn sweep_race_pilot(out: &Path) {
    sweep_grid("race-pilot", out);
}

/// `rlfrontier sweep grids/NAME.toml --quiet --out OUT`, which must succeed (its summary is
/// captured, and shown only if it fails).
fn sweep_grid(name: &str, out: &Path) {
    let grid = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("grids/{name}.toml"));
    let output = Command::cargo_bin("rlfrontier")
        .unwrap()
        .args(["sweep", grid.to_str().unwrap(), "--quiet", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_report_answers_per_budget_filters_its_shortlist_and_carries_tooltips() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed"
        );
        common::skip(
            "the_report_answers_per_budget_filters_its_shortlist_and_carries_tooltips",
            "chromium not installed",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    sweep_race_pilot(&out);
    // Load the report with a filter in the address: the page's script runs, then Chromium
    // prints the resulting DOM.
    let url = format!(
        "file://{}#filter=qwen2.5-7b%20prm",
        out.join("report.html").display()
    );
    let dom = dumped_dom(&browser, dir.path(), &url);
    assert!(
        dom.contains("<h2>Recommendation per budget</h2>"),
        "no headline section"
    );
    assert!(dom.contains("id=\"headline\""), "no headline table");
    // Every budget of the grid has a best row.
    assert_eq!(dom.matches("<tr class=\"best\">").count(), 5);
    // The filter ran: shown rows all mention both words, hidden rows miss one, and the count
    // says how many are shown.
    let body = &dom[dom.find("id=\"shortlist\"").expect("shortlist table")..];
    let body = &body[..body.find("</table>").unwrap()];
    let rows: Vec<&str> = body.split("<tr").skip(2).collect();
    assert!(!rows.is_empty());
    let mut shown = 0;
    for row in &rows {
        let matches = row.contains("qwen2.5-7b") && row.contains("prm");
        if row.contains("data-shown=\"1\"") {
            assert!(matches, "a shown row does not match the filter: {row}");
            shown += 1;
        } else {
            assert!(
                row.contains("data-shown=\"0\""),
                "the filter did not run: {row}"
            );
            assert!(!matches, "a matching row is hidden: {row}");
        }
    }
    assert!(shown > 0 && shown < rows.len(), "{shown} of {}", rows.len());
    assert!(dom.contains(&format!("{shown} of {} rows", rows.len())));
    // Hovering a front point shows its configuration: each point is a hover target with a
    // <title>, as the browser parsed it.
    let tips = dom.matches("<circle class=\"tip\"").count();
    assert!(tips >= 3, "{tips} tooltips");
    assert!(dom.contains("<title>qwen2.5-"), "tooltips name the regime");
    // A malformed address (a broken percent escape, markup) still leaves a working page: the
    // script ran to the end (the count is written) and no row was injected.
    for hash in [
        "filter=%E0%A4%A",
        "filter=%3Cimg%20src=x%20onerror=alert(1)%3E",
        "filter",
    ] {
        let url = format!("file://{}#{hash}", out.join("report.html").display());
        let dom = dumped_dom(&browser, dir.path(), &url);
        assert!(
            dom.contains(" rows</span>"),
            "{hash}: the page's script stopped"
        );
        assert!(
            !dom.contains("<img src=\"x\""),
            "{hash}: markup reached the page"
        );
    }
}

#[test]
fn every_plot_rasterises_to_a_picture_with_content() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed"
        );
        common::skip(
            "every_plot_rasterises_to_a_picture_with_content",
            "chromium not installed",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    sweep_race_pilot(&out);
    for plot in ["frontier", "regimes", "allocation", "split", "simplex"] {
        let svg = out.join(format!("plots/{plot}.svg"));
        let text = std::fs::read_to_string(&svg).unwrap();
        // Paint opacity only: element opacity renders as black shapes in ImageMagick.
        assert!(
            !text.contains(" opacity=\""),
            "{plot}.svg uses element opacity"
        );
        let shot = dir.path().join(format!("{plot}.png"));
        headless(&browser, dir.path())
            .arg("--window-size=1600,1000")
            .arg(format!("--screenshot={}", shot.display()))
            .arg(format!("file://{}", svg.display()))
            .output()
            .unwrap();
        assert!(shot.exists(), "{plot}: no PNG");
        let (share, colours) = ink(&shot);
        assert!(
            share > 0.01 && colours > 5,
            "{plot}.svg rasterises to an empty picture ({:.2}% inked, {colours} colours)",
            100.0 * share
        );
        // Not a black slab either.
        assert!(
            share < 0.6,
            "{plot}.svg is mostly ink: {:.0}%",
            100.0 * share
        );
    }
}

/// Measures, in the page as Chromium lays it out, the smallest font size of any element that
/// holds text, and reads the recommendation's parts: the page is copied with a script appended
/// that writes its findings into the DOM, which `--dump-dom` then prints.
#[test]
fn the_page_s_text_is_at_least_12_px_and_it_shows_the_recommendation_s_parts() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed"
        );
        common::skip(
            "the_page_s_text_is_at_least_12_px_and_it_shows_the_recommendation_s_parts",
            "chromium not installed",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    sweep_grid("dollars", &out);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    let probe = r#"<script>
(function () {
  var smallest = 1e9, where = "";
  var all = document.querySelectorAll("body *");
  for (var i = 0; i < all.length; i++) {
    var el = all[i], own = false;
    for (var c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3 && c.textContent.trim().length > 0) { own = true; }
    }
    if (!own || el.tagName === "SCRIPT" || el.tagName === "STYLE" || el.tagName === "title") { continue; }
    var size = parseFloat(getComputedStyle(el).fontSize);
    if (size < smallest) { smallest = size; where = el.tagName + ": " + el.textContent.trim().slice(0, 40); }
  }
  var div = document.createElement("div");
  div.id = "probe";
  div.setAttribute("data-smallest", String(smallest));
  div.setAttribute("data-where", where);
  div.setAttribute("data-advice", String(document.querySelectorAll("ul.advice li").length));
  div.setAttribute("data-why", String(document.querySelectorAll(".why .bar").length));
  document.body.appendChild(div);
})();
</script></body>"#;
    let probed = out.join("probed.html");
    std::fs::write(&probed, page.replace("</body>", probe)).unwrap();
    let dom = dumped_dom(
        &browser,
        dir.path(),
        &format!("file://{}", probed.display()),
    );
    let attribute = |name: &str| -> String {
        let at = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("no {name}"));
        let rest = &dom[at + name.len() + 2..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    let smallest: f64 = attribute("data-smallest").parse().unwrap();
    assert!(
        smallest >= 12.0,
        "text at {smallest} px: {}",
        attribute("data-where")
    );
    assert!(dom.contains("<h2>Recommendation per budget</h2>"));
    // Four budgets: each has its advice list (the group, the second run, the cheaper regime,
    // why and the edges) and the why bars.
    let advice: usize = attribute("data-advice").parse().unwrap();
    assert!(advice >= 4 * 3, "{advice} advice lines");
    assert!(dom.contains("each of these is indistinguishable from it"));
    assert!(dom.contains("why"));
    assert_eq!(dom.matches("<tr class=\"best\">").count(), 4);
}
