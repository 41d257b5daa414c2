//! The tool's arguments and their JSON schema.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// Arguments of a `codegraph` tool call.
///
/// `operation` and `kind` are plain strings (with the valid values listed in the schema) so that an
/// invalid value reaches the tool and gets a helpful answer instead of a deserialization error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodegraphArgs {
    /// The operation: `search` (find symbols by name; returns qnames), `callers`, `callees`,
    /// `implementations`, `usages` (each needs `qname`), `resolve` (name to candidate qnames).
    #[schemars(extend("enum" = ["search", "callers", "callees", "implementations", "usages", "resolve"]))]
    pub operation: String,
    /// Symbol name for `search` / `resolve`: case-insensitive, `*` is a wildcard (e.g. `Plan`, `Handle*`).
    /// A name containing `.` or `/` is matched against the end of qnames (e.g. `Planner.Plan`).
    #[serde(default)]
    pub name: Option<String>,
    /// Restrict `search` to one kind of symbol.
    #[serde(default)]
    #[schemars(extend("enum" = ["function", "method", "struct", "interface", "class", "type", "const", "var", "field", "module", "package"]))]
    pub kind: Option<String>,
    /// Restrict `search` to files whose repository-relative path contains this text (e.g. `internal/brain`).
    #[serde(default)]
    pub file: Option<String>,
    /// Fully qualified name from `search`, for `callers`, `callees`, `implementations`, `usages`.
    #[serde(default)]
    pub qname: Option<String>,
    /// Levels of `callers` / `callees` to follow, 1-3 (default 1).
    #[serde(default, deserialize_with = "lenient_depth")]
    #[schemars(range(min = 1, max = 3))]
    pub depth: Option<i64>,
    /// Which repository to search; default the issue's own; one of the related repositories
    /// listed in the tool description. Results from a related repository are written
    /// `owner/name:path` and `owner/name:qname`.
    #[serde(default)]
    pub repo: Option<String>,
}

/// The valid operations, in the order they are listed to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Search,
    Callers,
    Callees,
    Implementations,
    Usages,
    Resolve,
}

impl Operation {
    pub const ALL: [Operation; 6] = [
        Operation::Search,
        Operation::Callers,
        Operation::Callees,
        Operation::Implementations,
        Operation::Usages,
        Operation::Resolve,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Search => "search",
            Operation::Callers => "callers",
            Operation::Callees => "callees",
            Operation::Implementations => "implementations",
            Operation::Usages => "usages",
            Operation::Resolve => "resolve",
        }
    }

    /// Parses an operation name (case-insensitive, surrounding whitespace ignored).
    pub fn parse(s: &str) -> Option<Operation> {
        let s = s.trim().to_ascii_lowercase();
        Operation::ALL.into_iter().find(|op| op.as_str() == s)
    }

    /// `search, callers, ...` for messages.
    pub fn list() -> String {
        Operation::ALL.map(Operation::as_str).join(", ")
    }
}

/// Clamps the `depth` of a tool call's JSON arguments to 1-3 in place, before any schema check: the
/// seed clamps an out-of-range depth (`5`, `0`, `"2"`, `2.0`) rather than refusing it, so a model
/// never loses a turn over it. A depth that is not a number at all is left for the check to refuse.
pub fn clamp_depth_argument(arguments: &mut serde_json::Value) {
    let Some(depth) = arguments.get_mut("depth") else {
        return;
    };
    let Ok(Some(value)) = lenient_depth(depth.clone()) else {
        return;
    };
    *depth = serde_json::Value::from(crate::store::clamp_depth(value));
}

/// Accepts a depth as a number (integer or float) or a numeric string; models are not always careful.
fn lenient_depth<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(deserializer)?;
    match value {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f.round() as i64))
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom("depth must be an integer")),
        Some(serde_json::Value::String(s)) => {
            s.trim().parse::<i64>().map(Some).map_err(|_| {
                serde::de::Error::custom(format!("depth must be an integer, got {s:?}"))
            })
        }
        Some(other) => Err(serde::de::Error::custom(format!(
            "depth must be an integer, got {other}"
        ))),
    }
}
