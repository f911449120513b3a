//! Plumbing shared by the JSON readers (SLS jobs, Rumen, SLS nodes): a
//! stream of concatenated top-level objects read one at a time, each with
//! the line it starts on and at most [`MAX_JSON_OBJECT_BYTES`] long (the
//! reader stops there: an object is held in memory whole), and deserializers that take numbers written as
//! JSON numbers or as strings (SLS parses every value as a string).

use super::limits::MAX_JSON_OBJECT_BYTES;
use super::WorkloadError;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::de::IoRead;
use std::fmt;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// Where the reader is: the current line, and the line the current object
/// started on. serde_json pulls bytes one at a time, so what this sees is
/// exactly what the parser has consumed.
#[derive(Default)]
struct Position {
    line: AtomicUsize,
    seeking: AtomicBool,
    start: AtomicUsize,
    /// Set when the current object passed the size limit.
    too_long: AtomicBool,
}

struct Counting<R> {
    inner: R,
    pos: Arc<Position>,
    /// Bytes of the current object so far, and the most it may have.
    object_bytes: u64,
    limit: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.pos.line.fetch_add(1, Relaxed);
            }
            if self.pos.seeking.load(Relaxed) {
                if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    continue;
                }
                self.pos.start.store(self.pos.line.load(Relaxed), Relaxed);
                self.pos.seeking.store(false, Relaxed);
                self.object_bytes = 0;
            }
            self.object_bytes += 1;
            if self.object_bytes > self.limit {
                self.pos.too_long.store(true, Relaxed);
                return Err(io::Error::other("object too long"));
            }
        }
        Ok(n)
    }
}

/// The top-level values of a JSON stream, each deserialized as `T` and
/// paired with its 1-based start line. Stops after the first error.
pub(crate) struct JsonObjects<R: Read, T> {
    file: String,
    stream: serde_json::StreamDeserializer<'static, IoRead<Counting<R>>, T>,
    pos: Arc<Position>,
    limit: u64,
    done: bool,
}

impl<R: Read, T: DeserializeOwned> JsonObjects<R, T> {
    pub(crate) fn new(reader: R, file: impl Into<String>) -> JsonObjects<R, T> {
        JsonObjects::with_limit(reader, file, MAX_JSON_OBJECT_BYTES)
    }

    /// Objects of at most `limit` bytes each.
    fn with_limit(reader: R, file: impl Into<String>, limit: u64) -> JsonObjects<R, T> {
        let pos = Arc::new(Position { line: AtomicUsize::new(1), ..Position::default() });
        let counting = Counting { inner: reader, pos: pos.clone(), object_bytes: 0, limit };
        JsonObjects {
            file: file.into(),
            stream: serde_json::Deserializer::from_reader(counting).into_iter::<T>(),
            pos,
            limit,
            done: false,
        }
    }
}

impl<R: Read, T: DeserializeOwned> Iterator for JsonObjects<R, T> {
    type Item = Result<(usize, T), WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.pos.seeking.store(true, Relaxed);
        match self.stream.next()? {
            Ok(v) => Some(Ok((self.pos.start.load(Relaxed), v))),
            Err(_) if self.pos.too_long.load(Relaxed) => {
                self.done = true;
                Some(Err(WorkloadError::new(
                    &self.file,
                    self.pos.start.load(Relaxed),
                    format!("the JSON object starting on this line is longer than the limit of {} bytes", self.limit),
                )))
            }
            Err(e) => {
                self.done = true;
                let mut err = json_error(&self.file, &e);
                if err.line == 0 {
                    err.line = self.pos.line.load(Relaxed);
                }
                Some(Err(err))
            }
        }
    }
}

/// serde_json's message without its trailing "at line L column C" (the
/// line goes into the error's own field).
pub(crate) fn json_error(file: &str, e: &serde_json::Error) -> WorkloadError {
    let mut msg = e.to_string();
    if let Some(i) = msg.rfind(" at line ") {
        msg.truncate(i);
    }
    let msg = match e.classify() {
        serde_json::error::Category::Eof => format!("truncated JSON: {msg}"),
        serde_json::error::Category::Io => format!("read error: {msg}"),
        _ => format!("{msg} (column {})", e.column()),
    };
    WorkloadError::new(file, e.line(), msg)
}

/// An integer given as a JSON number (whole floats are rounded) or as a
/// string holding one; `null` and absent are `None`.
pub(crate) fn opt_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    d.deserialize_any(I64Visitor)
}

struct I64Visitor;

impl<'de> Visitor<'de> for I64Visitor {
    type Value = Option<i64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer (as a number or a string)")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v).map(Some).map_err(|_| E::custom(format!("integer {v} is too large")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        if v.is_finite() && v.abs() < 9.0e18 {
            Ok(Some(v.round() as i64))
        } else {
            Err(E::custom(format!("number {v} is out of range")))
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        let t = v.trim();
        if let Ok(i) = t.parse::<i64>() {
            return Ok(Some(i));
        }
        match t.parse::<f64>() {
            Ok(f) => self.visit_f64(f),
            Err(_) => Err(E::custom(format!("expected an integer, found the string {v:?}"))),
        }
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A string, or a number or boolean written where a string was expected
/// (`"job.id": 7`); `null` and absent are `None`.
pub(crate) fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    d.deserialize_any(StringVisitor)
}

struct StringVisitor;

impl<'de> Visitor<'de> for StringVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// The host part of a YARN location (`/rack/host` or `host`); `None` when
/// empty.
pub(crate) fn host_of(location: &str) -> Option<String> {
    let h = location.trim().rsplit('/').next().unwrap_or("").trim();
    (!h.is_empty()).then(|| h.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug, PartialEq)]
    struct T {
        #[serde(default, deserialize_with = "opt_i64")]
        n: Option<i64>,
        #[serde(default, deserialize_with = "opt_string")]
        s: Option<String>,
    }

    fn read(text: &str) -> Vec<Result<(usize, T), WorkloadError>> {
        JsonObjects::<_, T>::new(text.as_bytes(), "t.json").collect()
    }

    #[test]
    fn objects_carry_their_start_line_and_lenient_values() {
        let v = read("{\"n\": 1}\n\n{\n \"n\": \"2\", \"s\": 3}\n{\"n\": null, \"extra\": [1,2]}");
        let v: Vec<_> = v.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(v[0], (1, T { n: Some(1), s: None }));
        assert_eq!(v[1], (3, T { n: Some(2), s: Some("3".into()) }));
        assert_eq!(v[2], (5, T { n: None, s: None }));
    }

    #[test]
    fn errors_name_the_line() {
        let v = read("{\"n\": 1}\n{\"n\": \"x\"}");
        let e = v[1].as_ref().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("expected an integer"), "{e}");
        let v = read("{\"n\": 1}\n{\"n\":\n 2");
        let e = v[1].as_ref().unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.starts_with("truncated JSON"), "{e}");
    }

    #[test]
    fn an_object_past_the_size_cap_is_refused_naming_its_line() {
        let text = "{\"n\": 1}\n\n  {\"n\": 2,\n \"s\": \"0123456789abcdef\"}\n{\"n\": 3}";
        let v: Vec<_> = JsonObjects::<_, T>::with_limit(text.as_bytes(), "t.json", 30).collect();
        assert_eq!(v.len(), 2);
        assert!(v[0].is_ok(), "a short object is read");
        let e = v[1].as_ref().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.json", 3));
        assert!(e.message.contains("longer than the limit of 30 bytes"), "{e}");
        // Whitespace between objects does not count; 30 bytes are allowed.
        let exact = format!("{}{{\"s\": \"{}\"}}", " \n".repeat(40), "x".repeat(21));
        assert_eq!(exact.trim_start().len(), 30);
        assert!(JsonObjects::<_, T>::with_limit(exact.as_bytes(), "t", 30).all(|r| r.is_ok()));
    }

    #[test]
    fn a_json_object_past_64_mib_is_refused() {
        let big = format!("{{\"s\": \"{}\"}}", "x".repeat(MAX_JSON_OBJECT_BYTES as usize));
        let e = read(&big).pop().unwrap().unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains(&format!("longer than the limit of {MAX_JSON_OBJECT_BYTES} bytes")), "{e}");
    }

    #[test]
    fn hosts_drop_the_rack() {
        assert_eq!(host_of("/default-rack/node1").as_deref(), Some("node1"));
        assert_eq!(host_of("node2").as_deref(), Some("node2"));
        assert_eq!(host_of(""), None);
    }
}
