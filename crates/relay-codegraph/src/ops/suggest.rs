//! "Did you mean" suggestions for a qname that is not in the graph.

use std::collections::BTreeSet;

use super::query::short_name;
use crate::store::{GraphStore, Snapshot, StoreResult, SymbolQuery};

/// Levenshtein edit distance over characters.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Up to `limit` stored qnames closest to `qname` by edit distance (case-insensitive), from a candidate
/// pool the store can find quickly: the same qname in another case, symbols with the same short name,
/// symbols whose short name shares the first three characters, and siblings under the same parent.
pub(super) async fn closest_qnames(
    store: &dyn GraphStore,
    snap: &Snapshot,
    qname: &str,
    limit: usize,
) -> StoreResult<Vec<String>> {
    let name = short_name(qname);
    let mut queries = vec![
        SymbolQuery::qname(qname.replace('*', ""), 20),
        SymbolQuery::name(name.replace('*', ""), 200),
    ];
    let prefix: String = name.chars().filter(|c| *c != '*').take(3).collect();
    if !prefix.is_empty() {
        queries.push(SymbolQuery::name(format!("{prefix}*"), 300));
    }
    if let Some((parent, _)) = qname.rsplit_once('.') {
        queries.push(SymbolQuery::qname(
            format!("{}.*", parent.replace('*', "")),
            300,
        ));
    }
    let mut candidates = BTreeSet::new();
    for query in &queries {
        for s in store.search(snap, query).await?.symbols {
            candidates.insert(s.qname);
        }
    }
    let wanted = qname.to_lowercase();
    let mut ranked: Vec<(usize, String)> = candidates
        .into_iter()
        .map(|c| (levenshtein(&wanted, &c.to_lowercase()), c))
        .collect();
    ranked.sort();
    Ok(ranked.into_iter().take(limit).map(|(_, q)| q).collect())
}

#[cfg(test)]
mod tests {
    use super::levenshtein;

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("abc", ""), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("Planner.Plan", "Planer.Plan"), 1);
    }
}
