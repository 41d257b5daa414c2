//! Symbol and edge counts of an index, patched per file.

use std::collections::BTreeMap;

use crate::index::IndexStats;
use crate::index::packed::EdgeView;
use crate::index::resolve::StoredOutput;
use crate::model::EdgeKind;
/// Edge counts by `(kind, confidence)`, `None` for unresolved edges.
type TallyKey = (&'static str, Option<&'static str>);

/// Symbol and edge counts, patched per file so that an update does not recount the whole graph.
#[derive(Debug, Default)]
pub(super) struct Tally {
    symbols: usize,
    edges: BTreeMap<TallyKey, usize>,
}

impl Tally {
    pub(super) fn key(e: &EdgeView<'_>) -> TallyKey {
        (
            e.kind.as_str(),
            e.to.map(|_| crate::index::confidence_str(e.confidence)),
        )
    }

    pub(super) fn add(&mut self, out: &StoredOutput) {
        self.symbols += out.graph.symbol_count();
        for e in out.graph.edge_views() {
            *self.edges.entry(Self::key(&e)).or_default() += 1;
        }
    }

    pub(super) fn remove(&mut self, out: &StoredOutput) {
        self.symbols = self.symbols.saturating_sub(out.graph.symbol_count());
        for e in out.graph.edge_views() {
            let key = Self::key(&e);
            if let Some(n) = self.edges.get_mut(&key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.edges.remove(&key);
                }
            }
        }
    }

    /// Fills the symbol and edge figures of `stats`.
    pub(super) fn fill(&self, stats: &mut IndexStats) {
        stats.symbols = self.symbols;
        for (&(kind, confidence), &n) in &self.edges {
            stats.edges += n;
            *stats.edges_by_kind.entry(kind.to_owned()).or_default() += n;
            match confidence {
                Some(c) => *stats.edges_by_confidence.entry(c.to_owned()).or_default() += n,
                None => {
                    *stats.unresolved_by_kind.entry(kind.to_owned()).or_default() += n;
                    if kind == EdgeKind::Calls.as_str() {
                        stats.unresolved_calls += n;
                    }
                }
            }
        }
    }
}
