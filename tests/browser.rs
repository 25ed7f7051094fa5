//! Smoke test: report.html renders in a real browser (headless Chromium, Debian's `chromium`
//! package, which .ci/run installs). The screenshot must not be blank.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Share of pixels that are not (near) white, and the number of distinct colours seen.
fn ink(png_path: &Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buffer[..info.buffer_size()];
    let mut inked = 0usize;
    let mut colours = std::collections::BTreeSet::new();
    let total = pixels.len() / channels;
    for px in pixels.chunks(channels) {
        if px[..3.min(channels)].iter().any(|&c| c < 235) {
            inked += 1;
        }
        if colours.len() < 1000 {
            colours.insert((
                px[0] / 16,
                px.get(1).copied().unwrap_or(0) / 16,
                px.get(2).copied().unwrap_or(0) / 16,
            ));
        }
    }
    (inked as f64 / total as f64, colours.len())
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not installed; .ci/run installs Debian's chromium package");
        }
        eprintln!("skipping: chromium not installed (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let grid = Path::new(env!("CARGO_MANIFEST_DIR")).join("grids/race-pilot.toml");
    let status = Command::cargo_bin("rlfrontier")
        .unwrap()
        .args(["sweep", grid.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
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
