//! Plumbing shared by every reader of line-oriented text: the traces (SWIM,
//! Hawk/Eagle, Kairos), SLS's output files and the simulator's job CSVs
//! ([`crate::sls_results`], [`crate::fidelity`]) and flight recordings
//! ([`crate::replay`]). [`Lines`] yields numbered lines within a byte cap and
//! builds the errors, so every message reads `file:line: what is wrong`;
//! the number parsers below report the same way.

use super::limits::{check_secs, MAX_LINE_BYTES};
use super::WorkloadError;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Opens `path` for buffered reading; the error names the file.
pub(crate) fn open_file(path: &Path) -> Result<BufReader<File>, WorkloadError> {
    File::open(path).map(buffered).map_err(|e| cannot_open(path, e))
}

fn buffered(f: File) -> BufReader<File> {
    BufReader::with_capacity(1 << 16, f)
}

fn cannot_open(path: &Path, e: std::io::Error) -> WorkloadError {
    WorkloadError::new(path.display().to_string(), 0, format!("cannot open: {e}"))
}

/// The non-blank lines of a text stream with their 1-based numbers, without
/// the line ending. A line longer than the cap ([`MAX_LINE_BYTES`] unless
/// [`Lines::with_cap`] says otherwise) is an error, and is not read into
/// memory past the cap; so is a line that is not UTF-8. Stops after the
/// first error.
pub(crate) struct Lines<R> {
    reader: R,
    file: String,
    line: usize,
    buf: Vec<u8>,
    cap: usize,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R, file: impl Into<String>) -> Lines<R> {
        Lines { reader, file: file.into(), line: 0, buf: Vec::new(), cap: MAX_LINE_BYTES, done: false }
    }

    /// The same lines with another cap, for a format whose lines are whole
    /// objects (a flight recording's step).
    pub(crate) fn with_cap(self, cap: usize) -> Lines<R> {
        Lines { cap, ..self }
    }

    /// The file's name, as errors give it.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// An error about `line` of this file.
    pub(crate) fn error(&self, line: usize, message: impl Into<String>) -> WorkloadError {
        WorkloadError::new(&self.file, line, message)
    }

    /// Reads a CSV header and finds `names` in it: their column positions,
    /// in the order asked, and the header's column names. An empty file or a
    /// missing column is an error naming the file (and the column and header).
    pub(crate) fn columns<const N: usize>(
        &mut self,
        names: [&str; N],
    ) -> Result<([usize; N], Vec<String>), WorkloadError> {
        let (at, header) = self.next().ok_or_else(|| self.error(0, "empty: no header"))??;
        let cols: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
        let mut found = [0; N];
        for (slot, name) in found.iter_mut().zip(names) {
            *slot = cols
                .iter()
                .position(|c| c == name)
                .ok_or_else(|| self.error(at, format!("no column {name} in header '{header}'")))?;
        }
        Ok((found, cols))
    }
}

impl Lines<BufReader<File>> {
    /// The lines of the file at `path`, named as `path` displays.
    pub(crate) fn open(path: &Path) -> Result<Self, WorkloadError> {
        Ok(Lines::new(open_file(path)?, path.display().to_string()))
    }

    /// [`Lines::open`], or `None` when there is no file at `path`.
    pub(crate) fn open_if_exists(path: &Path) -> Result<Option<Self>, WorkloadError> {
        match File::open(path) {
            Ok(f) => Ok(Some(Lines::new(buffered(f), path.display().to_string()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(cannot_open(path, e)),
        }
    }
}

impl<'a> Lines<&'a [u8]> {
    /// The lines of text already in memory, named `file` in errors.
    pub(crate) fn of_str(text: &'a str, file: impl Into<String>) -> Self {
        Lines::new(text.as_bytes(), file)
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = Result<(usize, String), WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            self.line += 1;
            // Read at most the cap, a "\r\n" and one byte more: enough to
            // tell a line past the cap without holding more of it.
            let cap = self.cap as u64 + 3;
            match (&mut self.reader).take(cap).read_until(b'\n', &mut self.buf) {
                Ok(0) => self.done = true,
                Ok(_) if without_line_end(&self.buf).len() > self.cap => {
                    self.done = true;
                    return Some(Err(
                        self.error(self.line, format!("the line is longer than the limit of {} bytes", self.cap))
                    ));
                }
                Ok(_) => {
                    let text = match std::str::from_utf8(&self.buf) {
                        Ok(t) => t.trim_end_matches(['\n', '\r']),
                        Err(_) => {
                            self.done = true;
                            return Some(Err(self.error(self.line, "the line is not UTF-8")));
                        }
                    };
                    if !text.trim().is_empty() {
                        return Some(Ok((self.line, text.to_string())));
                    }
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(self.error(self.line, format!("read error: {e}"))));
                }
            }
        }
        None
    }
}

/// `buf` without its `\n` or `\r\n`.
fn without_line_end(buf: &[u8]) -> &[u8] {
    let b = buf.strip_suffix(b"\n").unwrap_or(buf);
    b.strip_suffix(b"\r").unwrap_or(b)
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

/// A time in seconds: a finite number, not negative, within the horizon
/// ([`super::limits::MAX_TIME_S`]).
pub(crate) fn parse_secs(s: &str, what: &str, file: &str, line: usize) -> Result<f64, WorkloadError> {
    check_secs(parse_nonneg_f64(s, what, file, line)?, what, file, line)
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
    fn a_line_longer_than_the_cap_is_refused() {
        let long = "x".repeat(MAX_LINE_BYTES + 1);
        let text = format!("a\n{}\nb\n", "y".repeat(MAX_LINE_BYTES));
        let v: Vec<_> = Lines::new(Cursor::new(text), "f").map(|r| r.unwrap().0).collect();
        assert_eq!(v, vec![1, 2, 3], "a line of exactly the cap is read");
        let v: Vec<_> = Lines::new(Cursor::new(format!("a\n{long}\nb\n")), "f.tsv").collect();
        assert_eq!(v.len(), 2, "reading stops at the long line");
        let e = v[1].as_ref().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("f.tsv", 2));
        assert!(e.message.contains(&format!("longer than the limit of {MAX_LINE_BYTES} bytes")), "{e}");
        let v: Vec<_> = Lines::new(Cursor::new(long), "f").collect();
        assert!(v[0].is_err(), "also without a line ending");
    }

    #[test]
    fn times_past_the_horizon_are_refused() {
        assert_eq!(parse_secs("31536000", "t", "f", 1).unwrap(), 31_536_000.0);
        let e = parse_secs("1e10", "arrival_s", "f.tr", 4).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.starts_with("arrival_s: 10000000000 s is past the limit"), "{e}");
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
