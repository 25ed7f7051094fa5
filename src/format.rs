//! Number formatting shared by CSV files, tables and messages. All formatting is exact Rust
//! formatting of f64, so the same value always prints the same bytes on every platform.

/// Seven significant digits, plain notation for magnitudes in [1e-4, 1e15), scientific outside,
/// trailing zeros trimmed: `0.7234561`, `1250`, `2.5e16`. Non-finite values print as empty
/// strings so that no NaN or infinity ever reaches a file.
pub fn number(x: f64) -> String {
    number_text(x).as_str().to_string()
}

/// [`number`] without an allocation: the text in a small buffer (the CSV and Parquet writers
/// format tens of millions of numbers).
pub fn number_text(x: f64) -> NumberText {
    let mut out = NumberText::default();
    if !x.is_finite() {
        return out;
    }
    if x == 0.0 {
        out.push_str("0");
        return out;
    }
    let magnitude = x.abs();
    if (1e-4..1e15).contains(&magnitude) {
        let exponent = decimal_exponent(magnitude);
        let decimals = (6 - exponent).max(0) as usize;
        if !fixed_fast(x, decimals, &mut out) {
            use std::fmt::Write as _;
            out = NumberText::default();
            let _ = write!(out, "{x:.decimals$}");
            out.trim_zeros();
        }
    } else if !scientific_fast(x, &mut out) {
        use std::fmt::Write as _;
        out = NumberText::default();
        let _ = write!(out, "{x:.6e}");
        let text = out.as_str();
        let at = text.find('e').expect("scientific notation has an exponent");
        let mut mantissa = NumberText::default();
        mantissa.push_str(&text[..at]);
        mantissa.trim_zeros();
        let exponent = NumberText::from_str(&text[at..]);
        out = mantissa;
        out.push_str(exponent.as_str());
    }
    out
}

/// ⌊log10 m⌋ for m in [1e-4, 1e15), by comparison with the powers of ten (as doubles) instead of
/// a logarithm. The two can differ only within an ulp or so of a power of ten, where seven and
/// eight significant digits print the same (the value rounds to the power either way).
fn decimal_exponent(magnitude: f64) -> i32 {
    // 10^-5 to 10^15 as doubles: POWERS[k] = 10^(k - 5).
    const POWERS: [f64; 21] = [
        1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15,
    ];
    // The binary exponent b = ⌊log2 m⌋ puts ⌊log10 m⌋ at g = ⌊b·log10 2⌋ or g + 1 (m spans one
    // octave, less than a decade); 1233/4096 is log10 2 to within 4.6e-6, which gives the same
    // floor for |b| < 681 (here -14 <= b <= 49). One comparison with the double 10^(g+1) decides, as the table search did:
    // the count of powers p <= m. (Bit 52 up, minus the bias 1023; m is normal here.)
    let binary = ((magnitude.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let guess = (binary * 1233) >> 12;
    let next = (guess + 1 + 5) as usize;
    guess + i32::from(POWERS[next] <= magnitude)
}

/// |x| as a seven-digit integer mantissa m in [1e6, 1e7) and a decimal exponent e, |x| ≈ m·10^(e-6),
/// for |x| in [1e-16, 1e-4) or [1e15, 1e29), when one rounded operation decides the digits (the
/// reasoning of [`scientific_fast`]): a division by the exact power 10^(e-6) for large
/// magnitudes, a product with the exact power 10^(6-e) for small ones (both powers at most
/// 10^22). None otherwise.
fn scientific_integer(x: f64) -> Option<(u64, i32)> {
    let magnitude = x.abs();
    const LARGE: [f64; 14] = [
        1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28,
    ];
    const SMALL: [f64; 12] = [
        1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5,
    ];
    // ⌊log10 m⌋ (checked below: a wrong guess leaves the scaled value outside [1e6, 1e7)), then
    // seven significant digits: m scaled into [1e6, 1e7), rounded once.
    let (mut exponent, scaled) = if (1e15..1e29).contains(&magnitude) {
        let exponent = 14 + LARGE.partition_point(|&p| p <= magnitude) as i32;
        (exponent, magnitude / EXACT_POWERS[(exponent - 6) as usize])
    } else if (1e-16..1e-4).contains(&magnitude) {
        let exponent = -17 + SMALL.partition_point(|&p| p <= magnitude) as i32;
        (exponent, magnitude * EXACT_POWERS[(6 - exponent) as usize])
    } else {
        return None;
    };
    if !(1e6..1e7).contains(&scaled) {
        return None;
    }
    // Truncation through i64 is the floor here (0 < scaled < 1e7).
    let floor = (scaled as i64) as f64;
    let fraction = scaled - floor;
    if (fraction - 0.5).abs() <= scaled * f64::EPSILON {
        return None;
    }
    let mut integer = if fraction > 0.5 { floor + 1.0 } else { floor } as i64 as u64;
    if integer == 10_000_000 {
        integer = 1_000_000;
        exponent += 1;
    }
    Some((integer, exponent))
}

/// `format!("{x:.6e}")` with the mantissa's trailing zeros trimmed, for |x| in [1e-16, 1e-4) or
/// [1e15, 1e29), by
/// integer arithmetic when that provably gives the same digits (as [`fixed_fast`]: one rounded
/// division by an exact power of ten, refused near a tie). False, writing nothing, otherwise.
fn scientific_fast(x: f64, out: &mut NumberText) -> bool {
    let Some((mut integer, exponent)) = scientific_integer(x) else {
        return false;
    };
    if x < 0.0 {
        out.push_byte(b'-');
    }
    // Seven digits, most significant first; the point after the first, trailing zeros dropped.
    let mut digits = [0u8; 7];
    for k in (0..7).rev() {
        digits[k] = b'0' + (integer % 10) as u8;
        integer /= 10;
    }
    let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(0);
    out.push_byte(digits[0]);
    if last > 0 {
        out.push_byte(b'.');
        for &d in &digits[1..=last] {
            out.push_byte(d);
        }
    }
    out.push_byte(b'e');
    // The exponent is -16 to -4 or 15 to 29: Rust writes a sign only when negative, and no
    // leading zero.
    if exponent < 0 {
        out.push_byte(b'-');
    }
    let exponent = exponent.unsigned_abs();
    if exponent >= 10 {
        out.push_byte(b'0' + (exponent / 10) as u8);
    }
    out.push_byte(b'0' + (exponent % 10) as u8);
    true
}

/// `format!("{x:.decimals$}")` with its trailing zeros trimmed, by integer arithmetic when that
/// provably gives the same digits: x·10^d is computed with one rounding (10^d is exact for
/// d ≤ 22), so when its fractional part is farther from ½ than that rounding's bound, rounding
/// it to the nearest integer rounds the exact binary value the same way Rust's exact formatting
/// does. Near a tie (Rust rounds exact ties to even) it returns false and writes nothing useful.
fn fixed_fast(x: f64, decimals: usize, out: &mut NumberText) -> bool {
    let Some(integer) = fixed_integer(x, decimals) else {
        return false;
    };
    // The digits from the right, two at a time, in a buffer wide enough for 16 digits, the
    // point and leading zeros ("0.000123" for decimals 6 and integer 123).
    let mut buffer = [b'0'; 32];
    let mut at = buffer.len();
    let mut rest = integer;
    while rest >= 100 {
        let pair = (rest % 100) as usize;
        rest /= 100;
        at -= 2;
        buffer[at..at + 2].copy_from_slice(&DIGIT_PAIRS[2 * pair..2 * pair + 2]);
    }
    if rest >= 10 {
        at -= 2;
        buffer[at..at + 2].copy_from_slice(&DIGIT_PAIRS[2 * rest as usize..2 * rest as usize + 2]);
    } else {
        at -= 1;
        buffer[at] = b'0' + rest as u8;
    }
    // At least one digit before the point: the buffer is pre-filled with zeros.
    let digits = buffer.len() - at;
    let start = buffer.len() - digits.max(decimals + 1);
    let whole = &buffer[start..];
    let (int_part, frac_part) = whole.split_at(whole.len() - decimals);
    // Trailing zeros of the fraction dropped, then the point if nothing follows it.
    let kept = frac_part
        .iter()
        .rposition(|&d| d != b'0')
        .map_or(0, |k| k + 1);
    if x < 0.0 {
        out.push_byte(b'-');
    }
    out.push_bytes(int_part);
    if kept > 0 {
        out.push_byte(b'.');
        out.push_bytes(&frac_part[..kept]);
    }
    true
}

/// Exact powers of ten, 10^0 to 10^22 (every one is a double).
const EXACT_POWERS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// |x|·10^decimals rounded to the nearest integer, when one rounded product decides it (the
/// reasoning of [`fixed_fast`]): the digits `format!("{x:.decimals$}")` prints, as an integer
/// held exactly in a double. None near a tie, above 9e15, or for more than 10 decimals.
fn fixed_rounded(x: f64, decimals: usize) -> Option<f64> {
    if decimals > 10 {
        return None;
    }
    let scaled = x.abs() * EXACT_POWERS[decimals];
    if scaled >= 9.0e15 {
        return None;
    }
    // `scaled` is below 9e15, so truncation to an integer is exact and is the floor (through
    // i64, whose conversions are single instructions).
    let floor = (scaled as i64) as f64;
    let fraction = scaled - floor;
    // The product's rounding error is at most half an ulp of `scaled`; twice that, plus the
    // subtraction's (exact for these magnitudes), is a safe margin.
    let margin = scaled * f64::EPSILON;
    if (fraction - 0.5).abs() <= margin {
        return None;
    }
    // An integer below 2^53 as a double: exact.
    Some(if fraction > 0.5 { floor + 1.0 } else { floor })
}

/// [`fixed_rounded`] as an integer.
fn fixed_integer(x: f64, decimals: usize) -> Option<u64> {
    fixed_rounded(x, decimals).map(|n| n as i64 as u64)
}

/// The number [`number_text`]'s text parses to (None when it writes nothing: `x` not finite),
/// mostly without the text. The text is an integer n below 2^53 scaled by a power of ten 10^k
/// with |k| ≤ 22, both exact doubles, so one IEEE division or product (correctly rounded) gives
/// the double nearest the text's exact decimal value, which is what parsing returns: the fast
/// path of W. D. Clinger, "How to read floating point numbers accurately" (PLDI 1990). Where
/// the text was not made from such an n (near a tie, or outside those exponents) the text is
/// parsed. `cells.parquet` and the Python tables get the CSV's values this way.
pub fn number_value(x: f64) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some(0.0);
    }
    let magnitude = x.abs();
    let signed = |v: f64| if x < 0.0 { -v } else { v };
    if (1e-4..1e15).contains(&magnitude) {
        let decimals = (6 - decimal_exponent(magnitude)).max(0) as usize;
        if let Some(integer) = fixed_rounded(x, decimals) {
            return Some(signed(integer / EXACT_POWERS[decimals]));
        }
    } else if let Some((mantissa, exponent)) = scientific_integer(x) {
        // m·10^(e-6): a product with an exact power for large magnitudes, a division by one for
        // small ones (e - 6 is 9 to 23 or -22 to -10).
        let mantissa = mantissa as i64 as f64;
        if exponent >= 6 {
            if let Some(&power) = EXACT_POWERS.get((exponent - 6) as usize) {
                return Some(signed(mantissa * power));
            }
        } else {
            return Some(signed(mantissa / EXACT_POWERS[(6 - exponent) as usize]));
        }
    }
    number_text(x).as_str().parse().ok()
}

/// "00" to "99", for writing digits two at a time.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// A formatted number in a fixed buffer (see [`number_text`]).
#[derive(Debug, Clone, Copy)]
pub struct NumberText {
    bytes: [u8; 40],
    len: usize,
}

impl Default for NumberText {
    fn default() -> Self {
        NumberText {
            bytes: [0; 40],
            len: 0,
        }
    }
}

impl NumberText {
    fn from_str(text: &str) -> Self {
        let mut out = NumberText::default();
        out.push_str(text);
        out
    }

    fn push_byte(&mut self, b: u8) {
        self.bytes[self.len] = b;
        self.len += 1;
    }

    fn push_str(&mut self, text: &str) {
        self.push_bytes(text.as_bytes());
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        self.bytes[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Trailing zeros after a decimal point removed, then the point if nothing follows it.
    fn trim_zeros(&mut self) {
        if !self.bytes[..self.len].contains(&b'.') {
            return;
        }
        while self.len > 0 && self.bytes[self.len - 1] == b'0' {
            self.len -= 1;
        }
        if self.len > 0 && self.bytes[self.len - 1] == b'.' {
            self.len -= 1;
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("ASCII digits, sign, point and e")
    }

    /// An integer's decimal digits (what `n.to_string()` writes), without an allocation.
    pub fn integer(n: u64) -> Self {
        let mut out = NumberText::default();
        let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{n}"));
        out
    }
}

impl PartialEq for NumberText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl serde::Serialize for NumberText {
    /// The text, as a string.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Write for NumberText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.len + s.len() > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.push_str(s);
        Ok(())
    }
}

/// A text cell of a CSV file as a spreadsheet reads it literally: a cell starting with `=`,
/// `+`, `-`, `@`, a tab or a carriage return would be a formula (OWASP's CSV injection), so it
/// is written after a `'`. For text from the user's files (study, row and run names), never for
/// numbers.
pub fn spreadsheet_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{text}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether a CSV cell's text is a number (`-0.5`, `1e3`), which [`spreadsheet_text`] leaves
/// alone.
pub fn number_value_text(text: &str) -> bool {
    text.trim().parse::<f64>().is_ok()
}

/// Where [`thousands`] switches to scientific notation: 1e15, below 2^53, so every integer it
/// writes digit by digit is exact.
pub const THOUSANDS_LIMIT: f64 = 1e15;

/// `x` rounded to an integer with thousands separators (`1,234,567`); scientific notation from
/// [`THOUSANDS_LIMIT`] on; empty for NaN or infinity.
pub fn thousands(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    if x.abs() >= THOUSANDS_LIMIT {
        // Past the range where every integer is exact, digits would be invented (and a cast to
        // an integer would saturate): scientific notation, as large as the number is.
        return format!("{x:.3e}");
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

/// A duration or count as people read it: whole with separators from 100 (`1,810`), one
/// decimal below (`52.1`).
pub fn readable(x: f64) -> String {
    if x.abs() >= 100.0 {
        thousands(x)
    } else {
        format!("{x:.1}")
    }
}

/// `x` to three significant digits for reading (`0.401`, `927`, `16,384`, `0.00607`), whole
/// numbers from 1,000 with separators; empty for NaN or infinity. Files keep full precision.
pub fn significant(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    if x.abs() >= 1000.0 {
        return thousands(x);
    }
    let decimals = (2 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{x:.decimals$}");
    // 0.500 reads as 0.5: trailing zeros after the point say nothing.
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
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

    /// The formatting `number` had before its integer fast path: Rust's exact formatting.
    fn number_by_format(x: f64) -> String {
        if !x.is_finite() {
            return String::new();
        }
        if x == 0.0 {
            return "0".to_string();
        }
        let trim = |t: String| {
            if t.contains('.') {
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                t
            }
        };
        let magnitude = x.abs();
        if (1e-4..1e15).contains(&magnitude) {
            let exponent = magnitude.log10().floor() as i32;
            let decimals = (6 - exponent).max(0) as usize;
            trim(format!("{x:.decimals$}"))
        } else {
            let text = format!("{x:.6e}");
            let (mantissa, exponent) = text.split_once('e').unwrap();
            format!("{}e{exponent}", trim(mantissa.to_string()))
        }
    }

    #[test]
    fn the_fast_path_prints_what_exact_formatting_prints() {
        // Ties (Rust rounds exact ties to even), powers of ten, integers, both branches.
        let special = [
            0.125,
            2.5,
            3.5,
            -2.5,
            0.0001,
            0.00012345675,
            1e15 - 1.0,
            999_999.95,
            0.99999995,
            1234567.5,
            12345675.0,
            1e-4,
            9.9999995e-5,
            1e14,
            123.4565,
            0.5,
            1.5,
            7.0,
            1e7,
            1e6,
            0.3,
            0.1 + 0.2,
            100.0 / 3.0,
            2.0f64.sqrt(),
            6.02214076e23,
            1e-300,
            -0.07,
        ];
        for &x in &special {
            assert_eq!(number(x), number_by_format(x), "{x:e}");
        }
        // Around every power of ten the two branches meet (the exponent is found by comparison,
        // not by a logarithm), and the scientific mantissa's carry (9.9999995e16 -> 1e17).
        for k in -20..32 {
            let p = format!("1e{k}").parse::<f64>().unwrap();
            let mut x = p;
            let mut y = p;
            for _ in 0..4 {
                x = x.next_up();
                y = y.next_down();
                for v in [x, y, p * (1.0 + 5e-8), p * (1.0 - 5e-8), p * 9.9999995] {
                    assert_eq!(number(v), number_by_format(v), "{v:e}");
                    assert_eq!(number(-v), number_by_format(-v), "{v:e}");
                }
            }
        }
        let mut rng = crate::rng::SplitMix64::new(7, 0);
        for _ in 0..200_000 {
            let u = rng.uniform();
            let exponent = -20.0 + 50.0 * rng.uniform();
            let x = (1.0 + 9.0 * u) * 10f64.powf(exponent.floor());
            let x = if rng.uniform() < 0.3 { -x } else { x };
            assert_eq!(number(x), number_by_format(x), "{x:e}");
            // Values with few binary digits, where ties are exact.
            let y = (rng.uniform() * 1e6).round() / 1024.0;
            assert_eq!(number(y), number_by_format(y), "{y:e}");
        }
    }

    /// `number_value` against parsing `number`'s text, bit for bit.
    fn assert_value_is_the_texts(x: f64) {
        let parsed = number_text(x).as_str().parse::<f64>().ok();
        assert_eq!(
            number_value(x).map(f64::to_bits),
            parsed.map(f64::to_bits),
            "{x:e}: text {}",
            number(x)
        );
    }

    #[test]
    fn the_numeric_value_is_what_the_text_parses_to() {
        for x in [
            f64::NAN,
            f64::INFINITY,
            -0.0,
            0.0,
            0.1 + 0.2,
            1e-300,
            9.9999995e28,
            1e29,
        ] {
            assert_value_is_the_texts(x);
        }
        // Both branches, their meeting points, ties and the mantissa's carry, as above.
        for k in -20..40 {
            let p = format!("1e{k}").parse::<f64>().unwrap();
            let (mut x, mut y) = (p, p);
            for _ in 0..4 {
                x = x.next_up();
                y = y.next_down();
                for v in [
                    x,
                    y,
                    p * (1.0 + 5e-8),
                    p * (1.0 - 5e-8),
                    p * 9.9999995,
                    p * 1.2345675,
                ] {
                    assert_value_is_the_texts(v);
                    assert_value_is_the_texts(-v);
                }
            }
        }
        let mut rng = crate::rng::SplitMix64::new(11, 0);
        for _ in 0..300_000 {
            let exponent = -20.0 + 52.0 * rng.uniform();
            let x = (1.0 + 9.0 * rng.uniform()) * 10f64.powf(exponent.floor());
            assert_value_is_the_texts(if rng.uniform() < 0.3 { -x } else { x });
            assert_value_is_the_texts((rng.uniform() * 1e6).round() / 1024.0);
            assert_value_is_the_texts(f64::from_bits(rng.next_u64()));
        }
    }

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
