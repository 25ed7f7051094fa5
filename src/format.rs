//! Number formatting shared by CSV files, tables and messages. All formatting is exact Rust
//! formatting of f64, so the same value always prints the same bytes on every platform.

/// Seven significant digits, plain notation for magnitudes in [1e-4, 1e15), scientific outside,
/// trailing zeros trimmed: `0.7234561`, `1250`, `2.5e16`. Non-finite values print as empty
/// strings so that no NaN or infinity ever reaches a file.
pub fn number(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let magnitude = x.abs();
    if (1e-4..1e15).contains(&magnitude) {
        let exponent = magnitude.log10().floor() as i32;
        let decimals = (6 - exponent).max(0) as usize;
        trim_zeros(format!("{x:.decimals$}"))
    } else {
        let text = format!("{x:.6e}");
        let (mantissa, exponent) = text
            .split_once('e')
            .expect("scientific notation has an exponent");
        format!("{}e{exponent}", trim_zeros(mantissa.to_string()))
    }
}

fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// An integer-valued quantity with thousands separators: `1,234,567`.
pub fn thousands(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let rounded = x.round();
    let digits = format!("{}", rounded.abs() as u128);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if rounded < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Dollars or hours for humans: thousands separators and two decimals below 1,000, none above.
pub fn money(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    if x.abs() >= 1000.0 {
        thousands(x)
    } else {
        format!("{x:.2}")
    }
}

/// A share as a percentage with one decimal: `71.3%`.
pub fn percent(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    format!("{:.1}%", 100.0 * x)
}

/// FLOPs for humans: `1.234e18`.
pub fn flops(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    if x == 0.0 {
        "0".to_string()
    } else {
        format!("{x:.3e}")
    }
}

/// A plain-text table with aligned columns: text left-aligned, numbers right-aligned.
#[derive(Debug, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(headers: I) -> Self {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells print empty).
    pub fn row<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, cells: I) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// Renders the table, two spaces between columns, a dashed rule under the header.
    pub fn render(&self) -> String {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let numeric: Vec<bool> = (0..columns)
            .map(|i| {
                self.rows.iter().all(|r| {
                    r.get(i).is_none_or(|c| {
                        c.is_empty()
                            || c.trim_end_matches('%')
                                .replace([',', '.', 'e', '-', '+', '$'], "")
                                .chars()
                                .all(|ch| ch.is_ascii_digit())
                    })
                }) && !self.rows.is_empty()
            })
            .collect();
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let mut parts = Vec::with_capacity(columns);
            for i in 0..columns {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = widths[i] - cell.chars().count();
                if numeric[i] {
                    parts.push(format!("{}{cell}", " ".repeat(pad)));
                } else {
                    parts.push(format!("{cell}{}", " ".repeat(pad)));
                }
            }
            out.push_str(parts.join("  ").trim_end());
            out.push('\n');
        };
        line(&self.headers, &mut out);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for row in &self.rows {
            line(row, &mut out);
        }
        out
    }
}

/// Lowercase hexadecimal of bytes (SHA-256 digests in manifests and plans).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `text` as literal Markdown: the characters Markdown or a table would read as syntax
/// (`\\ ` `` ` `` `*` `_` `[` `]` `<` `>` `#` `|`) are backslash-escaped, line breaks become
/// spaces, so a user's metric name cannot add links, HTML or table cells.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_text_escapes_syntax() {
        assert_eq!(markdown_text("a|b"), "a\\|b");
        assert_eq!(markdown_text("[x](javascript:y)"), "\\[x\\](javascript:y)");
        assert_eq!(markdown_text("<img>\nz"), "\\<img\\> z");
        assert_eq!(markdown_text("math500_pass1"), "math500\\_pass1");
    }

    #[test]
    fn numbers_are_compact_and_exact() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(2.5e16), "2.5e16");
        assert_eq!(number(1250.0), "1250");
        assert_eq!(number(0.723456149), "0.7234561");
        assert_eq!(number(-3.0), "-3");
        assert_eq!(number(1e-7), "1e-7");
        assert_eq!(number(f64::NAN), "");
        assert_eq!(number(f64::INFINITY), "");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1000.0), "-1,000");
        assert_eq!(money(12.345), "12.35");
        assert_eq!(percent(0.7134), "71.3%");
    }

    #[test]
    fn table_aligns_numbers_right() {
        let mut t = Table::new(["name", "usd"]);
        t.row(["a", "1,000"]);
        t.row(["bbb", "5"]);
        let text = t.render();
        assert_eq!(text, "name    usd\n----  -----\na     1,000\nbbb       5\n");
    }
}
