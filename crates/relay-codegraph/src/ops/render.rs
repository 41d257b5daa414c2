//! Text rendering of [`Outcome`]s: the exact strings agents read.

use std::fmt::Write;

use super::args::Operation;
use super::outcome::*;
use crate::model::{Confidence, Symbol};

// Names `read`'s real arguments (`path`, `offset`): a model follows hints literally.
const READ_HINT: &str = "Use read(path, offset) to see the code.";
const QNAME_HINT: &str = "Use qname with callers/callees/implementations/usages operations.";
const VALID_KINDS: &str =
    "function, method, struct, interface, class, type, const, var, field, module, package";

impl Outcome {
    /// The text shown to an agent (and by the CLI's default `--format text`).
    pub fn to_text(&self) -> String {
        match self {
            Outcome::Search(o) => search(o),
            Outcome::Calls(o) => calls(o),
            Outcome::Implementations(o) => implementations(o),
            Outcome::Usages(o) => usages(o),
            Outcome::Resolve(o) => resolve(o),
            Outcome::Error(e) => e.to_text(),
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn filters(kind: Option<&str>, file: Option<&str>) -> String {
    let parts: Vec<String> = kind
        .map(|k| format!("kind={k}"))
        .into_iter()
        .chain(file.map(|f| format!("file={f}")))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

fn no_symbols(query: &str, filtered: bool) -> String {
    let mut out = format!("No symbols found matching \"{query}\".\n\nPossible reasons:\n");
    if filtered {
        out.push_str("  - the kind or file filter excludes it (try again without filters)\n");
    }
    out.push_str(
        "  - it is not indexed: only Go and Python code is indexed, and locals are not symbols\n\
         \x20 - the name is spelled differently: matching is case-insensitive and `*` is a wildcard (e.g. \"Plan*\", \"*Handler\")\n\
         \x20 - the code changed since the last index: re-index the repository\n\
         Use grep to search the text instead.",
    );
    out
}

fn symbol_line(out: &mut String, s: &Symbol) {
    let _ = writeln!(out, "  {} ({}:{})", s.qname, s.file, s.line);
}

fn search(o: &SearchOutcome) -> String {
    let filtered = o.kind.is_some() || o.file.is_some();
    if o.total == 0 {
        return no_symbols(&o.query, filtered);
    }
    let mut out = format!(
        "Found {} matching \"{}\"{}:\n\n",
        plural(o.total, "symbol", "symbols"),
        o.query,
        filters(o.kind.as_deref(), o.file.as_deref())
    );
    for s in &o.symbols {
        symbol_line(&mut out, s);
    }
    out.push('\n');
    if o.total > o.symbols.len() {
        let _ = writeln!(
            out,
            "Showing {} of {} symbols matching \"{}\". Refine with kind or file filter.",
            o.symbols.len(),
            o.total,
            o.query
        );
    }
    out.push_str(QNAME_HINT);
    out
}

fn resolve(o: &ResolveOutcome) -> String {
    if o.total == 0 {
        return no_symbols(&o.name, false);
    }
    let mut out = format!(
        "\"{}\" may refer to {}:\n\n",
        o.name,
        plural(o.total, "symbol", "symbols")
    );
    for s in &o.candidates {
        let _ = writeln!(
            out,
            "  {} ({}, {}:{})",
            s.qname,
            s.kind.as_str(),
            s.file,
            s.line
        );
    }
    out.push('\n');
    if o.total > o.candidates.len() {
        let _ = writeln!(
            out,
            "Showing {} of {}. Use search with a kind or file filter to narrow them down.",
            o.candidates.len(),
            o.total
        );
    }
    out.push_str(QNAME_HINT);
    out
}

fn confidence_label(c: Confidence) -> &'static str {
    match c {
        Confidence::Exact => "",
        Confidence::Inferred => " [inferred]",
        Confidence::Dynamic => " [dynamic]",
    }
}

/// A call result's label: static, or how a dynamic call reaches it.
fn call_label(r: &CallResult) -> &'static str {
    match (r.confidence, r.dispatch) {
        (Confidence::Dynamic, Some(Dispatch::Interface)) => {
            " [dynamic: interface call, a type that flows to the receiver]"
        }
        (Confidence::Dynamic, Some(Dispatch::FunctionValue)) => {
            " [dynamic: function value that flows to the call]"
        }
        (c, _) => confidence_label(c),
    }
}

fn sites(sites: &[Site]) -> String {
    sites
        .iter()
        .map(|s| format!("{}:{}", s.file, s.line))
        .collect::<Vec<_>>()
        .join(", ")
}

fn calls(o: &CallsOutcome) -> String {
    let title = if o.operation == Operation::Callers.as_str() {
        "Callers"
    } else {
        "Callees"
    };
    if o.total == 0 {
        let why = if o.operation == Operation::Callers.as_str() {
            "It may be unused, an entry point, or called only in ways the indexer could not resolve \
             (reflection, function values, code outside the index)."
        } else {
            "It calls nothing the indexer recorded."
        };
        return format!(
            "No {} found for {} (depth {}). {why}\nUse grep to search the text instead.",
            title.to_lowercase(),
            o.qname,
            o.depth
        );
    }
    let mut out = format!(
        "{title} of {} (depth {}) - {}:\n",
        o.qname,
        o.depth,
        plural(o.total, "result", "results")
    );
    if !o.indexed {
        out.push_str(
            "(this qname is not a symbol of the index: an external or generated symbol)\n",
        );
    }
    for r in &o.results {
        out.push('\n');
        let kind = match (r.kind, &r.qname) {
            (Some(k), _) => k.as_str().to_owned(),
            (None, Some(_)) => "not indexed".to_owned(),
            (None, None) => "unresolved".to_owned(),
        };
        let depth = if r.depth > 1 {
            format!(" [depth {}]", r.depth)
        } else {
            String::new()
        };
        let _ = writeln!(out, "  {} ({kind}){depth}{}", r.name, call_label(r));
        if let Some(q) = &r.qname {
            let _ = writeln!(out, "    qname: {q}");
        }
        if let (Some(file), Some(line)) = (&r.file, r.line) {
            let _ = writeln!(out, "    file: {file}:{line}");
        }
        if let Some(sig) = &r.signature {
            let _ = writeln!(out, "    signature: {sig}");
        }
        let via = if r.depth > 1 {
            let verb = if o.operation == Operation::Callers.as_str() {
                "calls"
            } else {
                "called from"
            };
            format!(" ({verb} {})", r.via.join(", "))
        } else {
            String::new()
        };
        let _ = writeln!(out, "    call site: {}{via}", sites(&r.sites));
    }
    out.push('\n');
    if o.total > o.results.len() {
        let _ = writeln!(
            out,
            "Showing the first {} of {} results; use a smaller depth to narrow them down.",
            o.results.len(),
            o.total
        );
    }
    out.push_str(READ_HINT);
    out
}

fn related_entry(out: &mut String, r: &RelatedSymbol) {
    let kind = r.kind.map(|k| k.as_str()).unwrap_or("not indexed");
    let _ = writeln!(
        out,
        "\n  {} ({kind}){}",
        r.name,
        confidence_label(r.confidence)
    );
    let _ = writeln!(out, "    qname: {}", r.qname);
    if let (Some(file), Some(line)) = (&r.file, r.line) {
        let _ = writeln!(out, "    file: {file}:{line}");
    }
    if let Some(sig) = &r.signature {
        let _ = writeln!(out, "    signature: {sig}");
    }
    for m in &r.methods {
        let _ = writeln!(out, "    method: {} ({}:{})", m.qname, m.file, m.line);
    }
}

fn implementations(o: &ImplementationsOutcome) -> String {
    let found: usize = o.sections.iter().map(|s| s.entries.len()).sum();
    if found == 0 {
        let applies = if o.sections.is_empty() {
            " The implementations operation applies to interfaces, concrete types, classes and methods."
        } else {
            " The index found no implementing types, implemented interfaces, subclasses or base classes."
        };
        return format!(
            "No implementations found for {} ({}).{applies}\nUse grep to search the text instead.",
            o.qname,
            o.kind.as_str()
        );
    }
    let mut out = format!("Implementations of {} ({}):\n", o.qname, o.kind.as_str());
    for section in &o.sections {
        let _ = write!(
            out,
            "\n{} - {}:\n",
            section.title,
            plural(section.entries.len(), "result", "results")
        );
        if section.entries.is_empty() {
            out.push_str("  (none)\n");
        }
        for r in &section.entries {
            related_entry(&mut out, r);
        }
    }
    out.push('\n');
    out.push_str(READ_HINT);
    out
}

fn usages(o: &UsagesOutcome) -> String {
    let kind = o
        .kind
        .map(|k| format!(" ({})", k.as_str()))
        .unwrap_or_default();
    if o.total == 0 {
        return format!(
            "No usages found for {}{kind}. It may be unused, or used in ways the indexer could not \
             resolve.\nUse grep to search the text instead.",
            o.qname
        );
    }
    let mut out = format!(
        "Usages of {}{kind} - {}:\n\n",
        o.qname,
        plural(o.total, "result", "results")
    );
    for u in &o.usages {
        let user_kind = u
            .user_kind
            .map(|k| format!(" ({})", k.as_str()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}:{}  in {}{user_kind} [{}]{}",
            u.file,
            u.line,
            u.user,
            u.relation.as_str(),
            confidence_label(u.confidence)
        );
    }
    out.push('\n');
    if o.total > o.usages.len() {
        let _ = writeln!(
            out,
            "Showing the first {} of {} usages.",
            o.usages.len(),
            o.total
        );
    }
    out.push_str(READ_HINT);
    out
}

impl OpError {
    /// The message shown to the agent.
    pub fn to_text(&self) -> String {
        match self {
            OpError::Unavailable => {
                "Codegraph is not available. Use grep and read tools instead.".to_owned()
            }
            OpError::NotIndexed { repo, commit } => {
                let at = commit
                    .as_deref()
                    .map(|c| format!(" at commit {c}"))
                    .unwrap_or_default();
                format!(
                    "No code graph has been indexed for repository {repo}{at}. \
                     Use grep and read tools instead."
                )
            }
            OpError::UnknownOperation { operation } => format!(
                "Unknown operation \"{operation}\". Valid operations: {}.",
                Operation::list()
            ),
            OpError::MissingParameter {
                parameter,
                operation,
            } => {
                let hint = if parameter == "qname" {
                    "\nUse search to find the qname first."
                } else {
                    ""
                };
                format!("{parameter} parameter required for {operation}{hint}")
            }
            OpError::InvalidKind { kind } => {
                format!("Invalid kind \"{kind}\". Valid kinds: {VALID_KINDS}.")
            }
            OpError::UnknownSymbol { qname, suggestions } => {
                let mut out = format!("Symbol \"{qname}\" not found in the code graph.");
                if suggestions.is_empty() {
                    out.push_str(" No similar qnames found.");
                } else {
                    out.push_str(" Closest qnames:\n");
                    for s in suggestions {
                        let _ = write!(out, "\n  {s}");
                    }
                    out.push('\n');
                }
                out.push_str("\nUse search to find the exact qname.");
                out
            }
            OpError::NotRelated { repo, related } => {
                // Worded as the other tools' refusal (relay-tools' `NotRelated`).
                let related = if related.is_empty() {
                    "this issue has no related repositories".to_owned()
                } else {
                    format!("related repositories: {}", related.join(", "))
                };
                format!("FAILED: repository \"{repo}\" is not related to this issue; {related}")
            }
            OpError::Store { message } => {
                format!("Codegraph query failed: {message}. Use grep and read tools instead.")
            }
        }
    }
}
