//! The repository's configuration file as written: its keys, their bounds, and the JSON Schema
//! editors validate it with (`relay config schema`).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::roles::EngageRole;

/// Where Relay looks for the file at the default branch's commit, in this order; the first
/// that exists is read and the others are ignored (and said to be).
pub const CONFIG_PATHS: [&str; 3] = [".relay.toml", ".github/relay.toml", ".gitlab/relay.toml"];

/// The guidance files read when the file does not name its own (`guidance_files`), each only
/// when present.
pub const DEFAULT_GUIDANCE_FILES: [&str; 4] = [
    "AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    "CONTRIBUTING.md",
];

/// Largest configuration file read; a larger one is an error (fallback to the server's).
pub const MAX_CONFIG_BYTES: usize = 64 * 1024;
/// Longest `instructions` text, in characters.
pub const MAX_INSTRUCTIONS_CHARS: usize = 8_000;
/// Most guidance files read.
pub const MAX_GUIDANCE_FILES: usize = 8;
/// Characters kept of one guidance file (the rest is cut with a visible marker).
pub const MAX_GUIDANCE_FILE_CHARS: usize = 8_000;
/// Characters kept of all guidance together, instructions included.
pub const MAX_GUIDANCE_TOTAL_CHARS: usize = 24_000;
/// Most `exclude` patterns.
pub const MAX_EXCLUDE_PATTERNS: usize = 100;
/// Longest `exclude` pattern or guidance path, in characters.
pub const MAX_PATTERN_CHARS: usize = 200;
/// Most labels per list.
pub const MAX_LABELS: usize = 20;
/// Longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 100;

/// `.relay.toml`: how a team steers Relay on its repository. Every key is optional; what is not
/// set comes from the server. The file can only narrow what the server allows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Relay repository configuration (.relay.toml)")]
pub struct RepoConfigFile {
    /// The file format's version; only 1 exists.
    #[serde(default)]
    pub version: Option<u32>,
    /// Conventions and context for Relay, in the team's words (at most 8,000 characters).
    /// Shown to the planner and the explorers as repository guidance, below Relay's own rules.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Files whose text is shown as repository guidance (at most 8, each cut at 8,000
    /// characters). Default: `AGENTS.md`, `CLAUDE.md`, `.github/copilot-instructions.md` and
    /// `CONTRIBUTING.md`, each when present. `[]` reads none.
    #[serde(default)]
    pub guidance_files: Option<Vec<String>>,
    /// Paths every code tool (grep, read, glob, tree) and the code graph skip: gitignore-style
    /// globs relative to the repository root (`vendor/`, `gen/**`, `*.pb.go`, `/docs/api/`).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// How deep an exploration goes when the planner does not say.
    #[serde(default)]
    pub thoroughness: Option<Thoroughness>,
    /// Keep the living summary comment on this repository's issues (can only turn it off when
    /// the server has it on).
    #[serde(default)]
    pub summary_comment: Option<bool>,
    /// Who may engage Relay: a subset of the server's roles.
    #[serde(default)]
    pub engage: Option<EngageSection>,
    /// Labels that start Relay (a subset of the server's) and labels that keep it silent.
    #[serde(default)]
    pub labels: Option<LabelsSection>,
    /// Per-issue spending caps, at most the server's.
    #[serde(default)]
    pub budget: Option<BudgetSection>,
    /// Other repositories of the same tracker whose code may answer this repository's issues
    /// (`["acme/sdk", "acme/proto"]`; GitLab: project paths). A request: the server admits at
    /// most 8, only those its credentials can read, inside its `projects` allow-list and not
    /// more private than this repository; each refusal is shown with its reason.
    #[serde(default)]
    pub related: Vec<String>,
}

/// `[engage]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EngageSection {
    /// Roles that may engage Relay on a public project.
    #[serde(default)]
    pub public: Option<Vec<EngageRole>>,
    /// Roles that may engage Relay on a private project.
    #[serde(default)]
    pub private: Option<Vec<EngageRole>>,
}

/// `[labels]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelsSection {
    /// Labels whose adding engages Relay: a subset of the server's trigger labels (`[]`: no
    /// label engages it).
    #[serde(default)]
    pub trigger: Option<Vec<String>>,
    /// Labels that keep Relay silent on an issue while the issue carries one (commands are
    /// still answered).
    #[serde(default)]
    pub opt_out: Vec<String>,
}

/// `[budget]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetSection {
    /// Tokens one issue may spend before Relay stops and says so (at most the server's).
    #[serde(default)]
    pub issue_tokens: Option<u64>,
    /// US dollars one issue may spend, priced with the server's `[prices]` (at most the
    /// server's cap when it has one).
    #[serde(default)]
    pub issue_cost_usd: Option<f64>,
}

/// The depth of an exploration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Thoroughness {
    Quick,
    Medium,
    Thorough,
}

impl Thoroughness {
    pub fn as_str(self) -> &'static str {
        match self {
            Thoroughness::Quick => "quick",
            Thoroughness::Medium => "medium",
            Thoroughness::Thorough => "thorough",
        }
    }
}

/// Top-level keys a repository file may name only to be told no: they are the server's
/// (trackers, projects, the LLM, safety rules). Each is reported as a refused widening, and the
/// rest of the file still applies.
pub const SERVER_ONLY_KEYS: [(&str, &str); 10] = [
    (
        "trackers",
        "a repository cannot enable or configure a tracker",
    ),
    ("projects", "a repository cannot enable a project"),
    ("llm", "a repository cannot choose the LLM"),
    ("api", "a repository cannot configure the read API"),
    ("database", "a repository cannot configure the database"),
    ("tools", "a repository cannot raise the tools' limits"),
    (
        "daily_token_budget",
        "a repository cannot set the server's daily budget",
    ),
    ("safety", "a repository cannot turn off a safety rule"),
    (
        "validator",
        "a repository cannot change what the validator allows",
    ),
    (
        "agent",
        "a repository cannot change the server's [agent] settings; use the keys of .relay.toml",
    ),
];

/// The file's JSON Schema (draft 2020-12), for editors and `relay config schema`.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RepoConfigFile)).unwrap_or_default()
}
