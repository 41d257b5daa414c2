//! The Synthesizer's claims made evidence: each citation is verified against the checkout (as in
//! the ExploreAgent: the file exists, the lines are in range, the quote is there) and must name a
//! file that a tool step of this query showed — a citation of code nobody looked at is a guess,
//! however real the lines. A claim keeps the citations that pass, each linked to the step that
//! saw its file (the evidence chain); a claim with none left is dropped.

use relay_core::Citation;
use relay_tools::SandboxSet;
use relay_tools::citation::verify_in;

use super::contracts::SynthesizerReply;
use super::integration::{Claim, StepRef};
use super::traverser::{StepRecord, StepStatus};

/// The first of `steps` (each with where it ran) whose output named `path`; only successful
/// steps have output.
pub fn first_showing<'a>(
    steps: impl IntoIterator<Item = (StepRef, &'a StepRecord)>,
    path: &str,
) -> Option<StepRef> {
    steps
        .into_iter()
        .find(|(_, record)| record.status == StepStatus::Ok && mentions(&record.output, path))
        .map(|(step, _)| step)
}

/// Whether `output` names `path` as a whole path (not as the tail of a longer one: `a.go` is not
/// named by `pkg/data.go`).
pub fn mentions(output: &str, path: &str) -> bool {
    if path.is_empty() {
        return false;
    }
    let before_ok = |c: Option<char>| {
        c.is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '[' | '"' | '\'' | '`'))
    };
    let after_ok = |c: Option<char>| {
        c.is_none_or(|c| c.is_whitespace() || matches!(c, ':' | ')' | ']' | ',' | '"' | '\'' | '`'))
    };
    output.match_indices(path).any(|(at, _)| {
        before_ok(output[..at].chars().next_back())
            && after_ok(output[at + path.len()..].chars().next())
    })
}

/// The verified claims of one Synthesizer reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifiedSynthesis {
    pub claims: Vec<Claim>,
    /// Claims left without a verified, seen citation.
    pub dropped_claims: usize,
    /// Why each rejected citation was rejected, in order (`path:line: problem`).
    pub rejected: Vec<String>,
}

/// Verifies every evidence item and flow of `reply`; `showing` names the step of the query that
/// showed a path, if one did. Claims without goal ids answer `stage_goals`.
pub fn verify_reply(
    sandboxes: &SandboxSet,
    reply: &SynthesizerReply,
    stage_goals: &[String],
    showing: impl Fn(&str) -> Option<StepRef>,
) -> VerifiedSynthesis {
    let mut out = VerifiedSynthesis::default();
    let no_goals: Vec<String> = Vec::new();
    let items = reply
        .evidence
        .iter()
        .map(|item| (&item.claim, &item.goals, &item.citations))
        .chain(
            reply
                .flows
                .iter()
                .map(|flow| (&flow.description, &no_goals, &flow.citations)),
        );
    for (text, goals, citations) in items {
        let mut kept: Vec<Citation> = Vec::new();
        let mut seen_in = Vec::new();
        for citation in citations {
            match verify_in(sandboxes, citation) {
                Err(problem) => out.rejected.push(problem.to_string()),
                Ok(verified) => match showing(&verified.citation.path) {
                    None => out.rejected.push(format!(
                        "{}: no step of this query showed this file",
                        verified.citation
                    )),
                    Some(step) => {
                        if !kept.contains(&verified.citation) {
                            kept.push(verified.citation);
                            seen_in.push(step);
                        }
                    }
                },
            }
        }
        if kept.is_empty() || text.trim().is_empty() {
            out.dropped_claims += 1;
            continue;
        }
        out.claims.push(Claim {
            text: text.trim().to_owned(),
            citations: kept,
            goals: if goals.is_empty() {
                stage_goals.to_vec()
            } else {
                goals.clone()
            },
            seen_in,
        });
    }
    out
}

/// The names of the Synthesizer's `entities` whose definition citation verifies: they join the
/// traversal state's symbols, so the next stages' Planner sees what the code was shown to define.
/// An entity without a citation, or with one that does not verify, is a guess and is left out.
pub fn verified_entities(sandboxes: &SandboxSet, reply: &SynthesizerReply) -> Vec<String> {
    reply
        .entities
        .iter()
        .filter(|entity| !entity.name.trim().is_empty())
        .filter(|entity| {
            entity
                .citation
                .as_ref()
                .is_some_and(|citation| verify_in(sandboxes, citation).is_ok())
        })
        .map(|entity| entity.name.trim().to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thorough::contracts::Entity;

    #[test]
    fn only_entities_with_a_verified_definition_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.go"), "package a\n\nfunc Enqueue() {}\n").unwrap();
        let sandboxes = SandboxSet::new(relay_tools::sandbox::Sandbox::new(dir.path()).unwrap());
        let entity = |name: &str, line: Option<u32>| Entity {
            name: name.into(),
            kind: "function".into(),
            citation: line.map(|line| Citation {
                path: "a.go".into(),
                start_line: line,
                end_line: line,
                quote: Some("func Enqueue() {}".into()),
            }),
        };
        let reply = SynthesizerReply {
            entities: vec![
                entity("Enqueue", Some(3)),
                entity("Wrong line", Some(1)),
                entity("Uncited", None),
            ],
            flows: Vec::new(),
            open_questions: Vec::new(),
            contradictions: Vec::new(),
            evidence: Vec::new(),
        };
        assert_eq!(verified_entities(&sandboxes, &reply), ["Enqueue"]);
    }

    /// A claim citing a related repository is verified in that repository's checkout, and only
    /// when a step's output showed the file as that repository's place.
    #[test]
    fn evidence_in_a_related_repository_is_verified_there() {
        let app = tempfile::tempdir().unwrap();
        let sdk = tempfile::tempdir().unwrap();
        std::fs::write(sdk.path().join("a.go"), "package a\n\nfunc Dial() {}\n").unwrap();
        let sandboxes = SandboxSet::new(relay_tools::sandbox::Sandbox::new(app.path()).unwrap())
            .with_related(
                "acme/sdk",
                relay_tools::sandbox::Sandbox::new(sdk.path()).unwrap(),
            );
        let cite = |path: &str| Citation {
            path: path.into(),
            start_line: 3,
            end_line: 3,
            quote: Some("func Dial() {}".into()),
        };
        let reply = SynthesizerReply {
            entities: Vec::new(),
            flows: Vec::new(),
            open_questions: Vec::new(),
            contradictions: Vec::new(),
            evidence: vec![
                crate::thorough::contracts::EvidenceItem {
                    claim: "Dial is in the SDK.".into(),
                    goals: Vec::new(),
                    citations: vec![cite("acme/sdk:a.go")],
                },
                crate::thorough::contracts::EvidenceItem {
                    claim: "Dial is in the app.".into(),
                    goals: Vec::new(),
                    citations: vec![cite("a.go"), cite("acme/secret:a.go")],
                },
            ],
        };
        let output = "acme/sdk:a.go (lines 1-3 of 3)\n";
        let step = StepRef {
            stage: 1,
            attempt: 1,
            step: 0,
        };
        let verified = verify_reply(&sandboxes, &reply, &[], |path| {
            mentions(output, path).then_some(step)
        });
        assert_eq!(verified.claims.len(), 1);
        assert_eq!(verified.claims[0].citations[0].path, "acme/sdk:a.go");
        assert_eq!(verified.dropped_claims, 1);
        assert_eq!(verified.rejected.len(), 2, "{:?}", verified.rejected);
        assert!(verified.rejected[1].contains("is not related to this issue"));
    }

    #[test]
    fn a_path_is_named_only_as_a_whole() {
        assert!(mentions("pkg/a.go (lines 1-3 of 3)\n", "pkg/a.go"));
        assert!(mentions("x\npkg/a.go:12: func A()", "pkg/a.go"));
        assert!(mentions("  pkg.A (pkg/a.go:3)", "pkg/a.go"));
        assert!(!mentions("pkg/data.go:3: x", "a.go"));
        assert!(!mentions("pkg/a.go.bak:3: x", "pkg/a.go"));
        assert!(!mentions("anything", ""));
    }
}
