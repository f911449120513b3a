//! One parameter schema (ARCHITECTURE.md principle 5). Each policy declares
//! its parameters; the same names serve yarn-site.xml
//! (`yarn.scheduler.sojourn.<policy>.<param>`) and the simulator
//! (`--param <param>=<value>`). Unknown keys and bad values are errors.
//!
//! A name may contain one `*` segment for families of keys, e.g.
//! `queue.*.weight` matches `queue.root.a.weight` (the `*` spans dots).

use crate::error::{CoreError, Result};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamKind {
    Int,
    Float,
    Bool,
    Str,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
}

#[derive(Clone, Debug, Serialize)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    /// The default as text (`""` where a family has no default).
    pub default: &'static str,
    pub doc: &'static str,
}

impl ParamSpec {
    pub const fn new(name: &'static str, kind: ParamKind, default: &'static str, doc: &'static str) -> ParamSpec {
        ParamSpec { name, kind, default, doc }
    }

    fn matches(&self, key: &str) -> Option<String> {
        match self.name.split_once('*') {
            None => (self.name == key).then(String::new),
            Some((pre, post)) => {
                if key.len() > pre.len() + post.len() && key.starts_with(pre) && key.ends_with(post) {
                    Some(key[pre.len()..key.len() - post.len()].to_string())
                } else {
                    None
                }
            }
        }
    }

    fn check(&self, key: &str, value: &str) -> Result<()> {
        let bad = |want: &str| CoreError::Config(format!("parameter '{key}': '{value}' is not {want}"));
        match self.kind {
            ParamKind::Int => value.trim().parse::<i64>().map(|_| ()).map_err(|_| bad("an integer")),
            ParamKind::Float => match value.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(()),
                _ => Err(bad("a finite number")),
            },
            ParamKind::Bool => parse_bool(value).map(|_| ()).ok_or_else(|| bad("true or false")),
            ParamKind::Str => Ok(()),
            ParamKind::Choice(words) => {
                if words.contains(&value.trim()) {
                    Ok(())
                } else {
                    Err(bad(&format!("one of {}", words.join(", "))))
                }
            }
        }
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Some(true),
        "false" | "no" | "0" | "off" => Some(false),
        _ => None,
    }
}

/// Validated parameters of one policy: what was given, checked against the
/// schema, with typed getters that fall back to the declared default.
#[derive(Clone, Debug, Default)]
pub struct Params {
    policy: String,
    given: BTreeMap<String, String>,
    specs: Vec<ParamSpec>,
}

impl Params {
    /// Checks every given key against `specs`: unknown keys and malformed
    /// values are errors naming the key.
    pub fn validate(policy: &str, specs: &[ParamSpec], given: &BTreeMap<String, String>) -> Result<Params> {
        for (k, v) in given {
            let spec = specs.iter().find(|s| s.matches(k).is_some()).ok_or_else(|| {
                let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
                CoreError::Config(format!(
                    "unknown parameter '{k}' for policy '{policy}' (known: {})",
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ))
            })?;
            spec.check(k, v)?;
        }
        Ok(Params { policy: policy.to_string(), given: given.clone(), specs: specs.to_vec() })
    }

    fn raw(&self, key: &str) -> Result<&str> {
        if let Some(v) = self.given.get(key) {
            return Ok(v.trim());
        }
        let spec = self
            .specs
            .iter()
            .find(|s| s.matches(key).is_some())
            .ok_or_else(|| CoreError::Config(format!("policy '{}' has no parameter '{key}'", self.policy)))?;
        Ok(spec.default)
    }

    pub fn int(&self, key: &str) -> Result<i64> {
        let v = self.raw(key)?;
        v.parse().map_err(|_| CoreError::Config(format!("parameter '{key}': '{v}' is not an integer")))
    }
    pub fn float(&self, key: &str) -> Result<f64> {
        let v = self.raw(key)?;
        v.parse().map_err(|_| CoreError::Config(format!("parameter '{key}': '{v}' is not a number")))
    }
    pub fn bool(&self, key: &str) -> Result<bool> {
        let v = self.raw(key)?;
        parse_bool(v).ok_or_else(|| CoreError::Config(format!("parameter '{key}': '{v}' is not true or false")))
    }
    pub fn str(&self, key: &str) -> Result<String> {
        Ok(self.raw(key)?.to_string())
    }
    /// A non-negative integer that must also be at least `min`.
    pub fn int_at_least(&self, key: &str, min: i64) -> Result<i64> {
        let v = self.int(key)?;
        if v < min {
            return Err(CoreError::Config(format!("parameter '{key}': {v} is below the minimum {min}")));
        }
        Ok(v)
    }
    /// A number in `[lo, hi]`.
    pub fn float_in(&self, key: &str, lo: f64, hi: f64) -> Result<f64> {
        let v = self.float(key)?;
        if !(lo..=hi).contains(&v) {
            return Err(CoreError::Config(format!("parameter '{key}': {v} is outside [{lo}, {hi}]")));
        }
        Ok(v)
    }

    /// Every given key of a `*` family, with the text the `*` stood for,
    /// in key order. E.g. `family("queue.*.weight")` → `[("root.a", "2")]`.
    pub fn family(&self, pattern: &'static str) -> Vec<(String, String)> {
        let spec = ParamSpec::new(pattern, ParamKind::Str, "", "");
        self.given.iter().filter_map(|(k, v)| spec.matches(k).map(|star| (star, v.trim().to_string()))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec::new("quantum_ms", ParamKind::Int, "50000", "time slice"),
        ParamSpec::new("mode", ParamKind::Choice(&["kill", "suspend"]), "kill", "how"),
        ParamSpec::new("queue.*.weight", ParamKind::Float, "1", "queue weight"),
    ];

    fn given(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_and_overrides() {
        let p = Params::validate("x", SPECS, &given(&[("mode", "suspend")])).unwrap();
        assert_eq!(p.int("quantum_ms").unwrap(), 50000);
        assert_eq!(p.str("mode").unwrap(), "suspend");
    }

    #[test]
    fn unknown_key_is_named() {
        let e = Params::validate("x", SPECS, &given(&[("quantom_ms", "1")])).unwrap_err();
        assert!(e.to_string().contains("quantom_ms"), "{e}");
    }

    #[test]
    fn bad_value_is_named() {
        let e = Params::validate("x", SPECS, &given(&[("mode", "pause")])).unwrap_err();
        assert!(e.to_string().contains("'mode'") && e.to_string().contains("pause"), "{e}");
    }

    #[test]
    fn families_match_dotted_names() {
        let p = Params::validate("x", SPECS, &given(&[("queue.root.a.weight", "2")])).unwrap();
        assert_eq!(p.family("queue.*.weight"), vec![("root.a".to_string(), "2".to_string())]);
        assert!(Params::validate("x", SPECS, &given(&[("queue.root.a.wait", "2")])).is_err());
    }
}
