//! Plumbing shared by the line-oriented readers (SWIM, Hawk/Eagle, Kairos):
//! numbered lines and lenient number parsing with errors that name the file
//! and the line.

use super::WorkloadError;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Opens `path` for buffered reading; the error names the file.
pub(crate) fn open_file(path: &Path) -> Result<BufReader<File>, WorkloadError> {
    File::open(path)
        .map(|f| BufReader::with_capacity(1 << 16, f))
        .map_err(|e| WorkloadError::new(path.display().to_string(), 0, format!("cannot open: {e}")))
}

/// The non-blank lines of a text stream with their 1-based numbers, without
/// the line ending. Stops after the first error.
pub(crate) struct Lines<R> {
    reader: R,
    file: String,
    line: usize,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R, file: impl Into<String>) -> Lines<R> {
        Lines { reader, file: file.into(), line: 0, buf: Vec::new(), done: false }
    }

    pub(crate) fn file(&self) -> &str {
        &self.file
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = Result<(usize, String), WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            self.line += 1;
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    let text = match std::str::from_utf8(&self.buf) {
                        Ok(t) => t.trim_end_matches(['\n', '\r']),
                        Err(_) => {
                            self.done = true;
                            return Some(Err(WorkloadError::new(&self.file, self.line, "the line is not UTF-8")));
                        }
                    };
                    if !text.trim().is_empty() {
                        return Some(Ok((self.line, text.to_string())));
                    }
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(WorkloadError::new(&self.file, self.line, format!("read error: {e}"))));
                }
            }
        }
        None
    }
}

/// A finite number, in any format Rust's `f64` parser takes (`12`, `1.5`,
/// `3e9`), surrounding whitespace allowed. `what` names the field.
pub(crate) fn parse_f64(s: &str, what: &str, file: &str, line: usize) -> Result<f64, WorkloadError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(WorkloadError::new(file, line, format!("{what}: not a number: {:?}", s.trim()))),
    }
}

/// A finite number that is not negative.
pub(crate) fn parse_nonneg_f64(s: &str, what: &str, file: &str, line: usize) -> Result<f64, WorkloadError> {
    let v = parse_f64(s, what, file, line)?;
    if v < 0.0 {
        return Err(WorkloadError::new(file, line, format!("{what}: negative value {v}")));
    }
    Ok(v)
}

/// A non-negative whole number. `3e9` and `12.0` are accepted, `1.5` is not
/// (a count or a byte total with a fraction is a corrupt field).
pub(crate) fn parse_u64(s: &str, what: &str, file: &str, line: usize) -> Result<u64, WorkloadError> {
    let t = s.trim();
    if let Ok(v) = t.parse::<u64>() {
        return Ok(v);
    }
    let v = parse_nonneg_f64(t, what, file, line)?;
    if v.fract() != 0.0 || v >= u64::MAX as f64 {
        return Err(WorkloadError::new(file, line, format!("{what}: not a whole number: {t:?}")));
    }
    Ok(v as u64)
}

/// Seconds (non-negative) to whole milliseconds, rounded.
pub(crate) fn secs_to_ms(s: f64) -> u64 {
    (s * 1000.0).round().max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn lines_skip_blanks_and_number_from_one() {
        let v: Vec<_> = Lines::new(Cursor::new("a\r\n\n  \nb"), "f").map(|r| r.unwrap()).collect();
        assert_eq!(v, vec![(1, "a".to_string()), (4, "b".to_string())]);
    }

    #[test]
    fn numbers_are_lenient_in_format_strict_in_value() {
        assert_eq!(parse_u64(" 3e3 ", "x", "f", 1).unwrap(), 3000);
        assert_eq!(parse_u64("12.0", "x", "f", 1).unwrap(), 12);
        assert!(parse_u64("1.5", "x", "f", 1).is_err());
        assert!(parse_u64("-1", "x", "f", 1).is_err());
        let e = parse_f64("abc", "arrival", "f.tr", 7).unwrap_err();
        assert_eq!(e.to_string(), "f.tr:7: arrival: not a number: \"abc\"");
        assert!(parse_f64("NaN", "x", "f", 1).is_err());
    }
}
