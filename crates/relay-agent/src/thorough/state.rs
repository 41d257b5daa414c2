//! The traversal state of one issue: what thorough mode has explored so far, FIFO-bounded so a
//! long investigation keeps its most recent ground and never grows without limit.

use std::collections::VecDeque;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Files remembered at most.
pub const MAX_FILES: usize = 100;
/// Symbols remembered at most.
pub const MAX_SYMBOLS: usize = 200;
/// Snippets remembered at most.
pub const MAX_SNIPPETS: usize = 50;
/// Steps of the call chain remembered at most.
pub const MAX_CALL_CHAIN: usize = 20;
/// Call edges (`from → to`, from callers/callees answers) remembered at most.
pub const MAX_EDGES: usize = 100;
/// Directories listed with `tree` remembered at most.
pub const MAX_DIRS: usize = 50;
/// Earlier queries' context summaries remembered at most (each one is capped by the run).
pub const MAX_SUMMARIES: usize = 5;

/// A first-in-first-out list of distinct items with a capacity: adding a known item moves it to
/// the back (it is fresh again); adding past the capacity drops the oldest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fifo<T> {
    items: VecDeque<T>,
    capacity: usize,
}

impl<T: PartialEq> Fifo<T> {
    pub fn new(capacity: usize) -> Fifo<T> {
        Fifo {
            items: VecDeque::with_capacity(capacity.min(1024)),
            capacity: capacity.max(1),
        }
    }

    /// Adds `item` (or refreshes it); returns the item dropped to make room, if any.
    pub fn push(&mut self, item: T) -> Option<T> {
        if let Some(at) = self.items.iter().position(|known| *known == item) {
            self.items.remove(at);
            self.items.push_back(item);
            return None;
        }
        self.items.push_back(item);
        if self.items.len() > self.capacity {
            self.items.pop_front()
        } else {
            None
        }
    }

    pub fn contains(&self, item: &T) -> bool {
        self.items.contains(item)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.items.iter()
    }
}

/// A piece of code seen, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snippet {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
}

/// One call seen in a callers/callees answer: `from` calls `to` (qualified names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallEdge {
    pub from: String,
    pub to: String,
}

/// What thorough mode knows about the repository for one issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraversalState {
    pub files: Fifo<String>,
    pub symbols: Fifo<String>,
    pub snippets: Fifo<Snippet>,
    /// Qualified names along the call chain being followed, outermost first.
    pub call_chain: Fifo<String>,
    /// The calls seen, as structure: what called what.
    pub edges: Fifo<CallEdge>,
    /// Directories listed with `tree` (`.` for the root): an outline of where the query looked.
    pub dirs: Fifo<String>,
    /// What each earlier query on this issue established (its context summary), oldest first.
    pub summaries: Fifo<String>,
}

impl Default for TraversalState {
    fn default() -> Self {
        TraversalState {
            files: Fifo::new(MAX_FILES),
            symbols: Fifo::new(MAX_SYMBOLS),
            snippets: Fifo::new(MAX_SNIPPETS),
            call_chain: Fifo::new(MAX_CALL_CHAIN),
            edges: Fifo::new(MAX_EDGES),
            dirs: Fifo::new(MAX_DIRS),
            summaries: Fifo::new(MAX_SUMMARIES),
        }
    }
}

/// The stored shape: each list oldest first. Capacities are not stored: a state read back gets
/// the current bounds, keeping the newest items of a longer stored list.
#[derive(Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    symbols: Vec<String>,
    #[serde(default)]
    snippets: Vec<Snippet>,
    #[serde(default)]
    call_chain: Vec<String>,
    #[serde(default)]
    edges: Vec<CallEdge>,
    #[serde(default)]
    dirs: Vec<String>,
    #[serde(default)]
    summaries: Vec<String>,
}

impl Serialize for TraversalState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Stored {
            files: self.files.iter().cloned().collect(),
            symbols: self.symbols.iter().cloned().collect(),
            snippets: self.snippets.iter().cloned().collect(),
            call_chain: self.call_chain.iter().cloned().collect(),
            edges: self.edges.iter().cloned().collect(),
            dirs: self.dirs.iter().cloned().collect(),
            summaries: self.summaries.iter().cloned().collect(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TraversalState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = Stored::deserialize(deserializer)?;
        let mut state = TraversalState::default();
        stored.files.into_iter().for_each(|f| {
            state.files.push(f);
        });
        stored.symbols.into_iter().for_each(|s| {
            state.symbols.push(s);
        });
        stored.snippets.into_iter().for_each(|s| {
            state.snippets.push(s);
        });
        stored.call_chain.into_iter().for_each(|c| {
            state.call_chain.push(c);
        });
        stored.edges.into_iter().for_each(|e| {
            state.edges.push(e);
        });
        stored.dirs.into_iter().for_each(|d| {
            state.dirs.push(d);
        });
        stored.summaries.into_iter().for_each(|s| {
            state.summaries.push(s);
        });
        Ok(state)
    }
}

impl TraversalState {
    /// Whether nothing has been explored.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.symbols.is_empty()
            && self.snippets.is_empty()
            && self.call_chain.is_empty()
            && self.edges.is_empty()
            && self.dirs.is_empty()
            && self.summaries.is_empty()
    }

    /// Adds what `other` explored (oldest first, so `other`'s newest stay newest here).
    pub fn absorb(&mut self, other: &TraversalState) {
        for file in other.files.iter() {
            self.files.push(file.clone());
        }
        for symbol in other.symbols.iter() {
            self.symbols.push(symbol.clone());
        }
        for snippet in other.snippets.iter() {
            self.snippets.push(snippet.clone());
        }
        for step in other.call_chain.iter() {
            self.call_chain.push(step.clone());
        }
        for edge in other.edges.iter() {
            self.edges.push(edge.clone());
        }
        for dir in other.dirs.iter() {
            self.dirs.push(dir.clone());
        }
        for summary in other.summaries.iter() {
            self.summaries.push(summary.clone());
        }
    }

    /// The call chains the edges make, longest first: each starts at a caller nothing seen
    /// calls and follows the first callee not already on the chain (so a cycle ends it).
    /// Bounded: at most `limit` chains of at most `MAX_CALL_CHAIN` names.
    pub fn chains(&self, limit: usize) -> Vec<Vec<&str>> {
        let edges: Vec<&CallEdge> = self.edges.iter().collect();
        let mut starts: Vec<&str> = Vec::new();
        for edge in &edges {
            if !edges.iter().any(|e| e.to == edge.from) && !starts.contains(&edge.from.as_str()) {
                starts.push(&edge.from);
            }
        }
        let mut chains: Vec<Vec<&str>> = starts
            .into_iter()
            .map(|start| {
                let mut chain = vec![start];
                while chain.len() < MAX_CALL_CHAIN {
                    let last = chain[chain.len() - 1];
                    let next = edges
                        .iter()
                        .find(|e| e.from == last && !chain.contains(&e.to.as_str()));
                    match next {
                        Some(edge) => chain.push(&edge.to),
                        None => break,
                    }
                }
                chain
            })
            .collect();
        chains.sort_by_key(|c| std::cmp::Reverse(c.len()));
        chains.truncate(limit);
        chains
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_keeps_the_newest_distinct_items() {
        let mut fifo = Fifo::new(3);
        assert_eq!(fifo.push("a"), None);
        fifo.push("b");
        fifo.push("c");
        // Known again: refreshed, nothing dropped.
        assert_eq!(fifo.push("a"), None);
        assert_eq!(fifo.iter().copied().collect::<Vec<_>>(), ["b", "c", "a"]);
        assert_eq!(fifo.push("d"), Some("b"));
        assert_eq!(fifo.len(), 3);
        assert!(!fifo.contains(&"b"));
    }

    #[test]
    fn the_state_holds_its_documented_bounds() {
        let mut state = TraversalState::default();
        for i in 0..500 {
            state.files.push(format!("f{i}.go"));
            state.symbols.push(format!("pkg.S{i}"));
            state.call_chain.push(format!("pkg.F{i}"));
            state.snippets.push(Snippet {
                path: format!("f{i}.go"),
                start_line: 1,
                end_line: 2,
                text: String::new(),
            });
        }
        assert_eq!(
            (
                state.files.len(),
                state.symbols.len(),
                state.snippets.len(),
                state.call_chain.len()
            ),
            (MAX_FILES, MAX_SYMBOLS, MAX_SNIPPETS, MAX_CALL_CHAIN)
        );
        assert_eq!(
            state.files.iter().next().unwrap(),
            "f400.go",
            "the oldest dropped"
        );
    }

    #[test]
    fn a_state_round_trips_through_json_within_its_bounds() {
        let mut state = TraversalState::default();
        state.files.push("a.go".into());
        state.symbols.push("pkg.A".into());
        state.call_chain.push("pkg.main".into());
        state.snippets.push(Snippet {
            path: "a.go".into(),
            start_line: 1,
            end_line: 2,
            text: "package a".into(),
        });
        let json = serde_json::to_value(&state).unwrap();
        assert_eq!(json["files"], serde_json::json!(["a.go"]));
        let back: TraversalState = serde_json::from_value(json).unwrap();
        assert_eq!(back, state);
        let long =
            serde_json::json!({"files": (0..150).map(|i| format!("f{i}")).collect::<Vec<_>>()});
        let capped: TraversalState = serde_json::from_value(long).unwrap();
        assert_eq!(capped.files.len(), MAX_FILES);
        assert_eq!(
            capped.files.iter().next().unwrap(),
            "f50",
            "the newest are kept"
        );
        assert!(TraversalState::default().is_empty());
    }

    #[test]
    fn edges_make_call_chains_and_round_trip_with_the_outline_and_summaries() {
        let mut state = TraversalState::default();
        for (from, to) in [
            ("main", "Run"),
            ("Run", "Claim"),
            ("Run", "process"),
            ("process", "Plan"),
            ("Plan", "Run"),
        ] {
            state.edges.push(CallEdge {
                from: from.into(),
                to: to.into(),
            });
        }
        state.dirs.push("queue".into());
        state
            .summaries
            .push("Verified: 2 claims over 1 file read (queue/queue.go).".into());
        // One chain from the one caller nothing calls; the cycle back to Run ends it.
        assert_eq!(state.chains(3), [vec!["main", "Run", "Claim"]]);
        let back: TraversalState =
            serde_json::from_value(serde_json::to_value(&state).unwrap()).unwrap();
        assert_eq!(back, state);
        assert!(!back.is_empty());
        for i in 0..(MAX_EDGES + 10) {
            state.edges.push(CallEdge {
                from: format!("a{i}"),
                to: format!("b{i}"),
            });
        }
        assert_eq!(state.edges.len(), MAX_EDGES);
        assert_eq!(state.chains(4).len(), 4, "bounded");
    }
}
