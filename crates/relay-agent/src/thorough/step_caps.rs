//! The per-step bounds of thorough mode, applied to a tool's output before the Synthesizer sees
//! it: a tree outline of at most [`STEP_TREE_TOKENS`], a file slice of at most
//! [`STEP_FILE_SLICE_TOKENS`], [`STEP_GREP_MATCHES`] grep matches and [`STEP_SYMBOLS`] code-graph
//! entries. The tools have caps of their own, but those are configurable per deployment; these
//! are the query's contract, so they are enforced here whatever the tools were allowed.

use relay_tools::ToolName;
use relay_tools::output::estimate_tokens;

use super::bounds::{STEP_FILE_SLICE_TOKENS, STEP_GREP_MATCHES, STEP_SYMBOLS, STEP_TREE_TOKENS};

/// A step's output after its cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    pub text: String,
    /// What was cut, e.g. "12 of 62 grep matches"; `None` when the output fit.
    pub cut: Option<String>,
}

/// How one tool's output is bounded per step.
#[derive(Debug, Clone, Copy)]
enum StepBound {
    /// Whole lines while they fit in this many tokens.
    Tokens(u64, &'static str),
    /// Lines up to this many entries (an entry's continuation lines stay with it).
    Entries(usize, fn(&str) -> bool, &'static str),
    /// The tool's own cap is the bound (a list of paths, of commits).
    ToolCap,
}

/// The step bound of every tool a query may call, by the tool's name (`None` for a name that is
/// no [`ToolName`]): the match is exhaustive, so a new tool cannot reach the Synthesizer
/// unbounded by accident.
fn step_bound(tool: &str) -> Option<StepBound> {
    Some(match tool.parse::<ToolName>().ok()? {
        ToolName::Tree => StepBound::Tokens(STEP_TREE_TOKENS, ToolName::Tree.as_str()),
        ToolName::Read => StepBound::Tokens(STEP_FILE_SLICE_TOKENS, "file slice"),
        ToolName::Grep => StepBound::Entries(STEP_GREP_MATCHES, is_grep_match, "grep matches"),
        ToolName::Codegraph => {
            StepBound::Entries(STEP_SYMBOLS, is_graph_entry, "code-graph symbols")
        }
        ToolName::Glob => StepBound::ToolCap,
        // At most 30 commits and 40 blame groups, one line each: the tool's cap is the bound.
        ToolName::History => StepBound::ToolCap,
    })
}

/// `output` of `tool`, cut to the step's bound.
pub fn cap_output(tool: &str, output: String) -> Capped {
    match step_bound(tool) {
        Some(StepBound::Tokens(limit, what)) => cap_tokens(output, limit, what),
        Some(StepBound::Entries(limit, is_entry, what)) => {
            cap_entries(output, limit, is_entry, what)
        }
        Some(StepBound::ToolCap) | None => Capped {
            text: output,
            cut: None,
        },
    }
}

/// Whole lines while they fit in `limit` tokens.
fn cap_tokens(output: String, limit: u64, what: &str) -> Capped {
    let total = estimate_tokens(&output) as u64;
    if total <= limit {
        return Capped {
            text: output,
            cut: None,
        };
    }
    let mut kept = String::new();
    let mut tokens = 0_u64;
    for line in output.lines() {
        let cost = estimate_tokens(line) as u64 + 1;
        if tokens + cost > limit {
            break;
        }
        tokens += cost;
        kept.push_str(line);
        kept.push('\n');
    }
    let note = format!("~{tokens} of ~{total} tokens of the {what} (step bound {limit})");
    kept.push_str(&format!("[cut: {note}]\n"));
    Capped {
        text: kept,
        cut: Some(note),
    }
}

/// Lines up to the `limit`-th entry (an entry's continuation lines stay with it).
fn cap_entries(output: String, limit: usize, is_entry: fn(&str) -> bool, what: &str) -> Capped {
    let total = output.lines().filter(|l| is_entry(l)).count();
    if total <= limit {
        return Capped {
            text: output,
            cut: None,
        };
    }
    let mut kept = String::new();
    let mut entries = 0;
    for line in output.lines() {
        if is_entry(line) {
            if entries == limit {
                break;
            }
            entries += 1;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    let note = format!("{limit} of {total} {what} (step bound)");
    kept.push_str(&format!("[cut: {note}]\n"));
    Capped {
        text: kept,
        cut: Some(note),
    }
}

/// `path:line: text`, as the grep tool prints a match.
fn is_grep_match(line: &str) -> bool {
    let mut parts = line.splitn(3, ':');
    let (Some(path), Some(number), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !path.is_empty() && !path.starts_with(' ') && number.parse::<u32>().is_ok()
}

/// A code-graph result entry: indented by exactly two spaces (details are indented further).
fn is_graph_entry(line: &str) -> bool {
    line.starts_with("  ") && !line[2..].starts_with(' ') && line.len() > 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_a_query_may_call_has_a_step_bound() {
        let registry = relay_tools::ToolRegistry::standard();
        let names: Vec<&str> = registry.tools().map(|t| t.name()).collect();
        assert!(names.len() >= 4, "{names:?}");
        for name in names.into_iter().chain([ToolName::Codegraph.as_str()]) {
            assert!(step_bound(name).is_some(), "{name} has no step bound");
        }
    }

    #[test]
    fn grep_output_keeps_its_first_matches() {
        let output: String = (1..=80)
            .map(|i| format!("src/a.rs:{i}: let x = {i};\n"))
            .collect::<String>()
            + "80 matches in 1 file\n";
        let capped = cap_output("grep", output);
        assert_eq!(
            capped.text.lines().filter(|l| is_grep_match(l)).count(),
            STEP_GREP_MATCHES
        );
        assert_eq!(
            capped.cut.as_deref(),
            Some("50 of 80 grep matches (step bound)")
        );
        assert!(
            capped
                .text
                .ends_with("[cut: 50 of 80 grep matches (step bound)]\n")
        );
    }

    #[test]
    fn token_bounds_cut_tree_and_read_at_whole_lines() {
        let long: String = (0..2_000).map(|i| format!("{i:>6}  line {i}\n")).collect();
        let read = cap_output("read", long.clone());
        assert!(estimate_tokens(&read.text) as u64 <= STEP_FILE_SLICE_TOKENS + 30);
        assert!(read.cut.unwrap().contains("file slice"));
        let tree = cap_output("tree", long);
        assert!(estimate_tokens(&tree.text) as u64 <= STEP_TREE_TOKENS + 30);
        let small = cap_output("read", "1  fn main() {}\n".into());
        assert_eq!(small.cut, None);
    }

    #[test]
    fn code_graph_entries_keep_their_details() {
        let mut output = String::from("Callers of x:\n");
        for i in 0..150 {
            output.push_str(&format!("  pkg.f{i} (a.go:{i})\n    qname: pkg.f{i}\n"));
        }
        let capped = cap_output("codegraph", output);
        assert_eq!(
            capped.text.lines().filter(|l| is_graph_entry(l)).count(),
            STEP_SYMBOLS
        );
        assert!(capped.text.contains("    qname: pkg.f99\n"));
        assert!(!capped.text.contains("pkg.f100 "));
    }
}
