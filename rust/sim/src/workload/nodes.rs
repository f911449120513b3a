//! SLS nodes files (`slsrun.sh --nodes`, `rumen2sls.sh`'s `sls-nodes.json`;
//! `shared/research/yarn.md` §3.1).
//!
//! # Format
//! A stream of concatenated JSON objects, one per rack:
//! `{"rack": "default-rack", "nodes": [{"node": "node1"}, {"node": "node2",
//! "memory-mb": 8192, "vcores": 8, "labels": "x(exclusive=true),y"}]}`.
//! A node without `memory-mb` or `vcores` takes that part of the default
//! capacity ([`SLS_NODE`], SLS's `yarn.sls.nm.memory.mb` / `.vcores`, unless
//! the caller gives another). Numbers may be strings. Racks are named with a
//! leading `/` (`/default-rack`), as YARN's topology does; node names keep
//! only their host part. `labels` is a comma-separated list of YARN node
//! labels; the `(exclusive=...)` attribute is dropped. Duplicate node names
//! and a file without nodes are errors, and so are more than
//! [`MAX_NODES`] nodes or a node larger than [`MAX_NODE_MEMORY_MB`] /
//! [`MAX_NODE_VCORES`] ([`super::limits`]).

use super::json::{host_of, opt_i64, opt_string, JsonObjects};
use super::limits::{MAX_NODES, MAX_NODE_MEMORY_MB, MAX_NODE_VCORES};
use super::text::open_file;
use super::{ClusterSpec, NodeShape, WorkloadError};
use serde::Deserialize;
use sojourn_core::Resources;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

/// SLS's default node (`yarn.sls.nm.memory.mb` 10240, `yarn.sls.nm.vcores` 10).
pub const SLS_NODE: Resources = Resources::new(10240, 10);

#[derive(Deserialize)]
struct Rack {
    #[serde(default, deserialize_with = "opt_string")]
    rack: Option<String>,
    nodes: Vec<Node>,
}

#[derive(Deserialize)]
struct Node {
    #[serde(default, deserialize_with = "opt_string")]
    node: Option<String>,
    #[serde(rename = "memory-mb", default, deserialize_with = "opt_i64")]
    memory_mb: Option<i64>,
    #[serde(default, deserialize_with = "opt_i64")]
    vcores: Option<i64>,
    #[serde(default, deserialize_with = "opt_string")]
    labels: Option<String>,
}

/// Reads an SLS nodes stream; nodes without resources get `default`.
pub fn read_nodes(reader: impl Read, file: &str, default: Resources) -> Result<ClusterSpec, WorkloadError> {
    let mut nodes = Vec::new();
    let mut seen = BTreeSet::new();
    for r in JsonObjects::<_, Rack>::new(reader, file) {
        let (line, rack) = r?;
        let err = |msg: String| WorkloadError::new(file, line, msg);
        let rack_name = match rack.rack.as_deref().map(str::trim) {
            None | Some("") => "/default-rack".to_string(),
            Some(r) if r.starts_with('/') => r.to_string(),
            Some(r) => format!("/{r}"),
        };
        for (i, n) in rack.nodes.into_iter().enumerate() {
            let name = n
                .node
                .as_deref()
                .and_then(host_of)
                .ok_or_else(|| err(format!("node {} of rack {rack_name} has no name", i + 1)))?;
            let memory = n.memory_mb.unwrap_or(default.memory_mb as i64);
            let vcores = n.vcores.unwrap_or(default.vcores as i64);
            if memory <= 0 || vcores <= 0 || memory as u64 > MAX_NODE_MEMORY_MB || vcores > MAX_NODE_VCORES as i64 {
                return Err(err(format!(
                    "node {name}: bad capacity {memory} MB / {vcores} vcores (at most {MAX_NODE_MEMORY_MB} MB / \
                     {MAX_NODE_VCORES} vcores)"
                )));
            }
            if nodes.len() == MAX_NODES {
                return Err(err(format!("node {name}: more than the limit of {MAX_NODES} nodes")));
            }
            if !seen.insert(name.clone()) {
                return Err(err(format!("node {name} is listed twice")));
            }
            let labels = n
                .labels
                .as_deref()
                .unwrap_or("")
                .split(',')
                .map(|l| l.split('(').next().unwrap_or("").trim().to_string())
                .filter(|l| !l.is_empty())
                .collect();
            nodes.push(NodeShape {
                name,
                rack: rack_name.clone(),
                capacity: Resources::new(memory as u64, vcores as u32),
                labels,
            });
        }
    }
    if nodes.is_empty() {
        return Err(WorkloadError::new(file, 0, "no nodes"));
    }
    Ok(ClusterSpec { nodes })
}

/// Reads an SLS nodes file; nodes without resources get `default`.
pub fn load_nodes(path: impl AsRef<Path>, default: Resources) -> Result<ClusterSpec, WorkloadError> {
    let path = path.as_ref();
    read_nodes(open_file(path)?, &path.display().to_string(), default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racks_nodes_defaults_and_labels() {
        let text = r#"{"rack": "default-rack", "nodes": [{"node": "node1"},
  {"node": "node2", "memory-mb": "8192", "vcores": 8, "labels": "gpu(exclusive=true), ssd"}]}
{"rack": "/r2", "nodes": [{"node": "/r2/node3", "vcores": 4}], "extra": 1}"#;
        let c = read_nodes(text.as_bytes(), "nodes.json", SLS_NODE).unwrap();
        assert_eq!(c.nodes.len(), 3);
        assert_eq!(c.nodes[0].name, "node1");
        assert_eq!(c.nodes[0].rack, "/default-rack");
        assert_eq!(c.nodes[0].capacity, SLS_NODE);
        assert_eq!(c.nodes[1].capacity, Resources::new(8192, 8));
        assert_eq!(c.nodes[1].labels, vec!["gpu".to_string(), "ssd".to_string()]);
        assert_eq!((c.nodes[2].name.as_str(), c.nodes[2].rack.as_str()), ("node3", "/r2"));
        assert_eq!(c.nodes[2].capacity, Resources::new(10240, 4));
        assert_eq!(c.total(), Resources::new(10240 * 2 + 8192, 22));
    }

    #[test]
    fn errors_name_the_line() {
        let e = read_nodes(
            "{\"rack\": \"a\", \"nodes\": [{\"node\": \"n\"}]}\n{\"rack\": \"b\", \"nodes\": [{\"node\": \"n\"}]}"
                .as_bytes(),
            "n.json",
            SLS_NODE,
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("n.json", 2));
        assert!(e.message.contains("listed twice"), "{e}");
        let e = read_nodes(
            "{\"rack\": \"a\",\n \"nodes\": [{\"node\": \"n\", \"vcores\": \"many\"}]}".as_bytes(),
            "n.json",
            SLS_NODE,
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        let e = read_nodes("{\"rack\": \"a\", \"nodes\": [{\"node\":".as_bytes(), "n.json", SLS_NODE).unwrap_err();
        assert!(e.message.starts_with("truncated JSON"), "{e}");
        let e = read_nodes("{\"rack\": \"a\"}".as_bytes(), "n.json", SLS_NODE).unwrap_err();
        assert!(e.message.contains("nodes"), "{e}");
        assert!(read_nodes("".as_bytes(), "n.json", SLS_NODE).unwrap_err().message.contains("no nodes"));
    }

    #[test]
    fn nodes_past_the_caps_are_refused() {
        let e = read_nodes(
            "{\"rack\": \"a\", \"nodes\": [{\"node\": \"n\"},\n {\"node\": \"m\", \"memory-mb\": 1e12}]}".as_bytes(),
            "n.json",
            SLS_NODE,
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("n.json", 1));
        assert!(e.message.contains("node m: bad capacity 1000000000000 MB"), "{e}");
        let many: Vec<String> = (0..=MAX_NODES).map(|i| format!("{{\"node\": \"n{i}\"}}")).collect();
        let text = format!("{{\"rack\": \"a\", \"nodes\": [{}]}}", many.join(","));
        let e = read_nodes(text.as_bytes(), "n.json", SLS_NODE).unwrap_err();
        assert!(e.message.contains(&format!("node n{MAX_NODES}: more than the limit of {MAX_NODES} nodes")), "{e}");
    }
}
