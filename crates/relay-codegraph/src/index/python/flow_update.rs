//! The value-flow fixpoint after an update, replayed from the previous one ([`FlowState`]):
//! only the modules an edit can affect are evaluated again, and the result is the table a full
//! computation ([`PyFlow::compute`]) gives.
//!
//! The full computation is, round for round, the naive iteration `T(k) = T(k-1) ⊔ ⋃ F(m,
//! T(k-1))` over all modules `m` (a module not re-evaluated in a round read no entry the round
//! before changed, so it contributes what it did). The replay runs the same rounds on the new
//! facts. A module's contribution in round `k` is the one recorded by the previous run unless
//! the module is *dirty* (its facts changed, or its evaluation read the facts of a changed
//! file, a file that owns a table entry (function, class, MRO, variable) that changed counting
//! as changed) or it read an entry in which the new round-`k - 1`
//! table differs from the previous run's; only those are evaluated. Each round's table is
//! then the previous run's when nothing evaluated contributes differently, that table joined
//! with the new contributions when they only add to the old ones, and otherwise the new
//! previous table joined with every contribution that differs from the round before (the
//! semi-naive step of the full computation). The bounds stay those of the full computation:
//! the same rounds, the same set sizes.

use std::collections::BTreeSet;
use std::sync::Arc;

use rustc_hash::FxHashSet as HashSet;

use super::flow::evaluate;
use super::tables::{
    FlowKey, FlowRecord, FlowState, MAX_FLOW_ROUNDS, PyFlow, PyIndex, PyTables, ReadSet, intersects,
};

/// At most this many entries are recomputed one by one in a round (each against every
/// module's contribution); more take the semi-naive step of the full computation.
const MAX_PATCHED_ENTRIES: usize = 256;

/// Tests lower the limit to take the other path ([`max_patched_entries`]).
#[cfg(test)]
pub(crate) static PATCHED_ENTRIES_LIMIT: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(MAX_PATCHED_ENTRIES);

fn max_patched_entries() -> usize {
    #[cfg(test)]
    return PATCHED_ENTRIES_LIMIT.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    MAX_PATCHED_ENTRIES
}

/// What an update changed, for [`replay`].
#[derive(Debug, Clone)]
pub(crate) struct FlowUpdate {
    /// The fixpoint of the previous resolution.
    pub state: Arc<FlowState>,
    /// The Python files whose facts changed (repository-relative paths).
    pub changed: Vec<String>,
    /// The tables of the previous resolution, when the update rebuilds them (the files whose
    /// entries changed count as changed).
    pub tables: Option<Arc<PyTables>>,
}

/// Replays the fixpoint of `update.state` over the facts of `index`; `None` when it does not
/// apply (the set of files changed: values name files by position).
pub(crate) fn replay(index: &PyIndex<'_>, update: &FlowUpdate) -> Option<(Arc<PyFlow>, FlowState)> {
    let old = &*update.state;
    let files = index.files.len();
    if old.paths.len() != files
        || old.records.len() != files
        || old.tables.is_empty()
        || old.paths.iter().zip(&index.paths).any(|(a, b)| a != b)
    {
        return None;
    }
    let position = |rel: &String| index.paths.binary_search(&rel.as_str()).ok();
    let mut changed: HashSet<u32> = HashSet::default();
    for rel in &update.changed {
        changed.insert(position(rel)? as u32);
    }
    let mut dirty = vec![false; files];
    for &fi in &changed {
        dirty[fi as usize] = true;
    }
    for (fi, records) in old.records.iter().enumerate() {
        if records.is_empty() {
            // Every module is evaluated in the first round: a missing record is a state this
            // replay does not understand.
            return None;
        }
        if records
            .iter()
            .any(|(_, r)| r.files_read.iter().any(|f| changed.contains(f)))
        {
            dirty[fi] = true;
        }
    }
    let old_rounds = old.tables.len();
    if old.changes.len() != old_rounds {
        return None;
    }
    let old_table = |k: usize| &old.tables[k.min(old_rounds) - 1];
    // What the previous run's round `k` changed.
    let no_changes = ReadSet::default();
    let old_changes = |k: usize| old.changes.get(k - 1).unwrap_or(&no_changes);
    let old_record = |fi: usize, k: usize| -> &Arc<FlowRecord> {
        let records = &old.records[fi];
        let at = records.partition_point(|(first, _)| *first <= k);
        &records[at.max(1) - 1].1
    };

    // The table of the round before (`T'(k-1)`), and the entries where it differs from the
    // previous run's (keys and digests).
    let mut work: Arc<PyFlow> = Arc::new(PyFlow::default());
    let mut delta_keys: BTreeSet<FlowKey> = BTreeSet::new();
    let mut delta = ReadSet::default();
    let mut records: Vec<Vec<(usize, Arc<FlowRecord>)>> = vec![Vec::new(); files];
    let mut tables: Vec<Arc<PyFlow>> = Vec::new();
    let mut changes: Vec<ReadSet> = Vec::new();
    let mut evaluated_total = 0;
    for round in 1..=MAX_FLOW_ROUNDS {
        let round_started = std::time::Instant::now();
        let todo: Vec<usize> = (0..files)
            .filter(|&fi| {
                dirty[fi] || (!delta.is_empty() && intersects(&old_record(fi, round).reads, &delta))
            })
            .collect();
        evaluated_total += todo.len();
        let fresh: Vec<(usize, Arc<FlowRecord>)> = evaluate(index, &work, &todo)
            .into_iter()
            .map(|(fi, r)| (fi, Arc::new(r)))
            .collect();
        // The contribution of every module in this round; those that differ from the round
        // before are merged (the others are in the table already).
        let mut differ: Vec<usize> = Vec::new();
        let mut fresh_at = fresh.iter().peekable();
        for (fi, list) in records.iter_mut().enumerate() {
            let record = match fresh_at.peek() {
                Some((f, r)) if *f == fi => {
                    fresh_at.next();
                    r
                }
                _ => old_record(fi, round),
            };
            if list
                .last()
                .is_none_or(|(_, last)| !Arc::ptr_eq(last, record))
            {
                list.push((round, Arc::clone(record)));
                differ.push(fi);
            }
        }
        // The entries where this round's table can differ from the previous run's: those
        // where the round before differed, and those the evaluated modules contribute to now
        // or did before.
        let mut suspects: BTreeSet<FlowKey> = delta_keys.clone();
        // A module evaluated again to the same contribution changes nothing.
        let unchanged =
            |fi: usize, r: &FlowRecord| r.contribution == old_record(fi, round).contribution;
        for (fi, r) in fresh.iter().filter(|(fi, r)| !unchanged(*fi, r)) {
            suspects.extend(r.contribution.keys());
            suspects.extend(old_record(*fi, round).contribution.keys());
            if suspects.len() > max_patched_entries() {
                break;
            }
        }
        let eval_us = round_started.elapsed().as_micros() as u64;
        let path;
        let changed_now: ReadSet;
        if suspects.is_empty() {
            // Nothing evaluated contributes differently: the previous run's table.
            path = "same";
            work = Arc::clone(old_table(round));
            changed_now = old_changes(round).clone();
        } else if suspects.len() <= max_patched_entries() {
            // The previous run's table, with the suspect entries recomputed from the round
            // before and every module's contribution.
            path = "patch";
            let mut table = (**old_table(round)).clone();
            let suspect_digests: ReadSet = suspects.iter().map(FlowKey::digest).collect();
            let mut changed: ReadSet = old_changes(round)
                .iter()
                .filter(|d| !suspect_digests.contains(*d))
                .copied()
                .collect();
            delta_keys.clear();
            for key in &suspects {
                table.remove_entry(key);
                table.merge_entry(&work, key);
                for list in &records {
                    if let Some((_, r)) = list.last() {
                        table.merge_entry(&r.contribution, key);
                    }
                }
                if !table.entry_eq(&work, key) {
                    changed.insert(key.digest());
                }
                if !table.entry_eq(old_table(round), key) {
                    delta_keys.insert(key.clone());
                }
            }
            changed_now = changed;
            work = Arc::new(table);
        } else {
            // The semi-naive step of the full computation on the new round before.
            path = "merge";
            let table = Arc::make_mut(&mut work);
            let mut grew = ReadSet::default();
            for &fi in &differ {
                if let Some((_, r)) = records[fi].last() {
                    table.merge(r.contribution.clone(), &mut grew);
                }
            }
            changed_now = grew;
            delta_keys = table.changed_entries(old_table(round), false);
        }
        delta = delta_keys.iter().map(FlowKey::digest).collect();
        tracing::debug!(
            index.py_flow_round = round,
            index.py_flow_modules = todo.len(),
            index.py_flow_differ = delta.len(),
            index.py_flow_eval_us = eval_us,
            index.py_flow_round_us = round_started.elapsed().as_micros() as u64,
            index.py_flow_path = path,
            "flow replay round"
        );
        tables.push(Arc::clone(&work));
        let done = changed_now.is_empty();
        changes.push(changed_now);
        if done {
            break;
        }
    }
    tracing::debug!(
        index.py_flow_rounds = tables.len(),
        index.py_flow_evaluated = evaluated_total,
        "python value-flow fixpoint replayed"
    );
    tables.pop();
    let table = Arc::try_unwrap(work).unwrap_or_else(|shared| (*shared).clone());
    let flow = table.finish(index);
    tables.push(Arc::clone(&flow));
    let state = FlowState {
        paths: old.paths.clone(),
        tables,
        changes,
        records,
    };
    Some((flow, state))
}
