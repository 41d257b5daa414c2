//! The value-flow table: a flow-insensitive fixpoint over the assignment graph of the whole
//! repository. Arguments flow into parameters (positional, keyword, `*args`, `**kwargs`),
//! returned and yielded values out of functions, decorated definitions become what their
//! decorators return, and stores (`xs[k] = v`, `xs.append(v)`, `d.update(m)`, `obj.attr = v`)
//! into containers and class attributes. Each round evaluates every module against the
//! previous round's table; it stops when a round changes nothing or after
//! [`MAX_FLOW_ROUNDS`]. Sets are bounded by `MAX_VALUES` (`tables/values.rs`). The table itself
//! (data and lookups) is [`super::tables::PyFlow`].

use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::body::APPENDED_KEY;
use super::eval::{Eval, LiteralEntry, is_mapping, literal_entries};
use super::tables::{
    FilesRead, FlowRecord, FlowState, MAX_FLOW_ROUNDS, PyFlow, PyIndex, ReadSet,
    SUBCLASS_RECEIVERS, Val, Vals, intersects, join, join_entry,
};
use super::{DefKind, PArg, PStore, ParamKind, PyFile};

/// Modules per unit of parallel work in a round.
const FLOW_CHUNK: usize = 32;
/// At most this many container literals are snapshotted into the table.
const MAX_LITERAL_SNAPSHOTS: usize = 100_000;

/// Evaluates the contributions of the modules `todo` against `flow`, in parallel, in the
/// order of `todo`.
pub(super) fn evaluate(
    index: &PyIndex<'_>,
    flow: &PyFlow,
    todo: &[usize],
) -> Vec<(usize, FlowRecord)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunks: Vec<&[usize]> = todo.chunks(FLOW_CHUNK).collect();
    let parts = crate::index::parallel::par_map(
        &chunks,
        threads,
        |files| {
            let mut eval = Eval::new(index, flow);
            let mut out = Vec::with_capacity(files.len());
            for &fi in *files {
                eval.reset();
                eval.reads = Some(ReadSet::default());
                eval.files_read = Some(FilesRead::default());
                let mut contribution = PyFlow::default();
                contribute(&mut eval, fi, &mut contribution);
                out.push((
                    fi,
                    FlowRecord {
                        contribution,
                        reads: eval.reads.take().unwrap_or_default(),
                        files_read: eval.files_read.take().unwrap_or_default(),
                    },
                ));
            }
            out
        },
        |_| {},
    );
    parts.into_iter().flatten().collect()
}

impl PyFlow {
    /// Computes the fixpoint for all modules of `index`, with what an update needs to replay
    /// it ([`FlowState`]).
    pub(crate) fn compute(index: &PyIndex<'_>) -> (Arc<PyFlow>, FlowState) {
        let mut flow = PyFlow::default();
        let files = index.files.len();
        // What each module's contribution read: a later round re-evaluates only the modules
        // that read an entry the previous round changed (semi-naive evaluation; values only
        // grow, so the other modules' contributions are already in the table).
        let mut records: Vec<Vec<(usize, Arc<FlowRecord>)>> = vec![Vec::new(); files];
        let mut tables: Vec<Arc<PyFlow>> = Vec::new();
        let mut changes: Vec<ReadSet> = Vec::new();
        let mut todo: Vec<usize> = (0..files).collect();
        for round in 1..=MAX_FLOW_ROUNDS {
            if todo.is_empty() {
                break;
            }
            let round_started = std::time::Instant::now();
            let todo_len = todo.len();
            let evaluated = evaluate(index, &flow, &todo);
            let eval_ms = round_started.elapsed().as_millis() as u64;
            let mut changed = ReadSet::default();
            for (fi, record) in evaluated {
                flow.merge(record.contribution.clone(), &mut changed);
                records[fi].push((round, Arc::new(record)));
            }
            tracing::debug!(
                index.py_flow_modules = todo_len,
                index.py_flow_changed = changed.len(),
                index.py_flow_eval_ms = eval_ms,
                index.py_flow_round_ms = round_started.elapsed().as_millis() as u64,
                "flow round"
            );
            let done = changed.is_empty() || round == MAX_FLOW_ROUNDS;
            changes.push(changed);
            if done {
                break;
            }
            tables.push(Arc::new(flow.clone()));
            todo = (0..files)
                .filter(|&fi| {
                    records[fi]
                        .last()
                        .is_some_and(|(_, r)| intersects(&r.reads, &changes[round - 1]))
                })
                .collect();
        }
        tracing::debug!(
            index.py_flow_rounds = tables.len() + 1,
            "python value-flow fixpoint"
        );
        let flow = flow.finish(index);
        tables.push(Arc::clone(&flow));
        let state = FlowState {
            paths: index.paths.iter().map(|p| (*p).to_owned()).collect(),
            tables,
            changes,
            records,
        };
        (flow, state)
    }

    /// The final table: the last round's with the literal snapshots ([`Self::snapshot_literals`]).
    pub(super) fn finish(mut self, index: &PyIndex<'_>) -> Arc<PyFlow> {
        let snapshot_started = std::time::Instant::now();
        self.literals.clear();
        self.snapshot_literals(index);
        tracing::debug!(
            index.py_flow_snapshot_ms = snapshot_started.elapsed().as_millis() as u64,
            "flow literal snapshot"
        );
        Arc::new(self)
    }

    /// Records the items of the container literals that flow between functions, so
    /// that an edit of such a literal (`run([a, b])` → `run([a, c])`, same expression ids)
    /// changes the table and reaches the modules that read the container.
    fn snapshot_literals(&mut self, index: &PyIndex<'_>) {
        // In key order (the order of a sorted table), so that the literals evaluated first
        // (their evaluation shares one memo) do not depend on hashing.
        fn sorted<K: Ord, V>(map: &HashMap<K, V>) -> Vec<(&K, &V)> {
            let mut entries: Vec<(&K, &V)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            entries
        }
        let mut sets: Vec<&Vals> = Vec::new();
        for (_, params) in sorted(&self.params) {
            sets.extend(params.values());
        }
        for map in [&self.returns, &self.yields, &self.decorated] {
            sets.extend(sorted(map).into_iter().map(|(_, v)| v));
        }
        for (_, attrs) in sorted(&self.attrs) {
            sets.extend(sorted(attrs).into_iter().map(|(_, v)| v));
        }
        for (_, items) in sorted(&self.stored) {
            sets.extend(items.values());
        }
        let mut pending: Vec<Val> = sets
            .into_iter()
            .flatten()
            .filter(|v| matches!(v, Val::Container(..)))
            .cloned()
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        let no_flow = PyFlow::default();
        let mut eval = Eval::new(index, &no_flow);
        while let Some(c) = pending.pop() {
            if seen.len() >= MAX_LITERAL_SNAPSHOTS || !seen.insert(c.clone()) {
                continue;
            }
            let Val::Container(cf, ce) = c else { continue };
            let file: &PyFile = index.files[cf as usize];
            let entries: Vec<(Option<String>, u32)> = literal_entries(file, ce)
                .into_iter()
                .map(|LiteralEntry(key, e)| (key, e))
                .collect();
            for (key, e) in entries {
                let v = eval.expr(cf as usize, e, false);
                pending.extend(
                    v.iter()
                        .filter(|v| matches!(v, Val::Container(..)))
                        .cloned(),
                );
                // Unknown items are kept too: an item becoming unknown is a change.
                let items = self.literals.entry(c.clone()).or_default();
                join(items.entry(key).or_default(), v);
            }
        }
    }
}

fn add<K: Eq + std::hash::Hash>(map: &mut HashMap<K, Vals>, key: K, v: Vals) {
    let known: Vals = v.into_iter().filter(|v| *v != Val::Unknown).collect();
    if !known.is_empty() {
        join_entry(map.entry(key).or_default(), known);
    }
}

fn add_param(out: &mut PyFlow, f: &str, index: u32, v: Vals) {
    let known: Vals = v.into_iter().filter(|v| *v != Val::Unknown).collect();
    if !known.is_empty() {
        let params = match out.params.get_mut(f) {
            Some(p) => p,
            None => out.params.entry(f.to_owned()).or_default(),
        };
        join_entry(params.entry(index).or_default(), known);
    }
}

fn add_item(out: &mut PyFlow, container: &Val, key: Option<String>, v: Vals) {
    let known: Vals = v.into_iter().filter(|v| *v != Val::Unknown).collect();
    if !known.is_empty() {
        let items = out.stored.entry(container.clone()).or_default();
        join_entry(items.entry(key).or_default(), known);
    }
}

/// What module `fi` contributes to the next round.
fn contribute(eval: &mut Eval<'_, '_>, fi: usize, out: &mut PyFlow) {
    let file: &PyFile = eval.file(fi);
    for def in &file.defs {
        if def.kind == DefKind::Class && def.decorators.is_empty() {
            continue;
        }
        for &r in &def.returned {
            if let Some(index) = returned_param(file, def, r) {
                let params = out.returned_params.entry(def.qname.clone()).or_default();
                if !params.contains(&index) {
                    params.push(index);
                    params.sort_unstable();
                }
                continue;
            }
            let v = eval.expr(fi, r, false);
            add(&mut out.returns, def.qname.clone(), v);
        }
        for &y in &def.yielded {
            let v = eval.expr(fi, y, false);
            add(&mut out.yields, def.qname.clone(), v);
        }
        if !def.decorators.is_empty() {
            let mut value = vec![if def.kind == DefKind::Class {
                Val::Class(def.qname.clone(), false)
            } else {
                Val::Func(def.qname.clone(), false)
            }];
            let mut followed = false;
            // The decorator nearest the definition applies first.
            for &d in def.decorators.iter().rev() {
                let callee = eval.expr(fi, d, false);
                pass_args(eval, &callee, &[value.clone()], &[], out);
                let result = decorated(eval, &callee, &value);
                let callable = !result.is_empty()
                    && result.iter().all(|v| {
                        matches!(
                            v,
                            Val::Func(..) | Val::Bound(..) | Val::Class(..) | Val::Instance(..)
                        )
                    });
                // A decorator we cannot follow (external, builtin such as `property`, or one
                // returning something unknown) is assumed to return the function itself.
                if callable {
                    followed |= result != value;
                    value = result;
                }
            }
            // Only a followed decorator is recorded: the table only grows between rounds, and
            // a name without an entry is bound to the definition itself.
            if followed {
                add(&mut out.decorated, def.qname.clone(), value);
            }
        }
    }
    for call in &file.calls {
        let Some(super::PExpr::Call(callee)) = file.exprs.get(call.call as usize) else {
            continue;
        };
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        let mut worth = false;
        for a in &call.args {
            match a {
                PArg::Pos(e) => {
                    let v = eval.expr(fi, *e, false);
                    worth |= v.iter().any(flows);
                    positional.push(v);
                }
                PArg::Kw(n, e) => {
                    let v = eval.expr(fi, *e, false);
                    worth |= v.iter().any(flows);
                    keywords.push((n.clone(), v));
                }
                // Unpacked arguments: positions and names unknown.
                PArg::Star(_) | PArg::DoubleStar(_) => {}
            }
        }
        if !worth {
            // Nothing worth passing, but which defaults the call leaves out still counts.
            if !defaults_callee(eval, file, *callee) {
                continue;
            }
            positional.iter_mut().for_each(Vec::clear);
            keywords.iter_mut().for_each(|(_, v)| v.clear());
        }
        let callee = eval.expr(fi, *callee, false);
        pass_args(eval, &callee, &positional, &keywords, out);
    }
    receivers(eval, fi, file, out);
    // Calls without arguments leave every default out.
    for r in &file.refs {
        if r.kind != super::PRefKind::Call || !file.args(r.expr).is_empty() {
            continue;
        }
        let Some(super::PExpr::Call(callee)) = file.exprs.get(r.expr as usize) else {
            continue;
        };
        if defaults_callee(eval, file, *callee) {
            let callee = eval.expr(fi, *callee, false);
            pass_args(eval, &callee, &[], &[], out);
        }
    }
    for store in &file.stores {
        match store {
            PStore::Item { target, key, value } => {
                let targets = eval.expr(fi, *target, false);
                let v = eval.expr(fi, *value, false);
                for t in targets.iter().filter(|t| is_container(t)) {
                    add_item(out, t, key.clone(), v.clone());
                }
            }
            PStore::Append { target, value } => {
                let targets = eval.expr(fi, *target, false);
                let v = eval.expr(fi, *value, false);
                for t in targets.iter().filter(|t| is_container(t)) {
                    add_item(out, t, Some(APPENDED_KEY.to_owned()), v.clone());
                }
            }
            PStore::Extend { target, value } => {
                let targets = eval.expr(fi, *target, false);
                let v = eval.expr(fi, *value, false);
                let items = keyed_items(eval, &v);
                for t in targets.iter().filter(|t| is_container(t)) {
                    for (key, items) in &items {
                        add_item(out, t, key.clone(), items.clone());
                    }
                }
            }
            PStore::Attr {
                target,
                attr,
                value,
            } => {
                let targets = eval.expr(fi, *target, false);
                let v = eval.expr(fi, *value, false);
                for t in targets {
                    if let Val::Class(c, _) | Val::Instance(c, _) = t {
                        add(out.attrs.entry(c).or_default(), attr.clone(), v.clone());
                    }
                }
            }
        }
    }
}

/// The items `d.update(v)` / `xs.extend(v)` adds, by key: a mapping written in place keeps its
/// constant keys, a sequence's items are appended, anything else lands under any key.
fn keyed_items(eval: &mut Eval<'_, '_>, v: &[Val]) -> Vec<(Option<String>, Vals)> {
    let mut out = Vec::new();
    for c in v {
        match c {
            Val::Container(cf, ce) if is_mapping(eval.file(*cf as usize), *ce) => {
                let file = eval.file(*cf as usize);
                for LiteralEntry(key, e) in literal_entries(file, *ce) {
                    let v = eval.expr(*cf as usize, e, false);
                    out.push((key, v));
                }
                // What was stored into the mapping elsewhere, under any key.
                out.push((None, eval.read_stored(c, None)));
            }
            Val::Container(..) | Val::Slice(..) => {
                let items = eval.items(std::slice::from_ref(c), None);
                out.push((Some(APPENDED_KEY.to_owned()), items));
            }
            _ => out.push((None, eval.items(std::slice::from_ref(c), None))),
        }
    }
    out
}

/// The parameter of `def` that return expression `r` names, when it is bound to nothing else.
fn returned_param(file: &PyFile, def: &super::PyDef, r: u32) -> Option<u32> {
    let Some(super::PExpr::Name { scope, name }) = file.exprs.get(r as usize) else {
        return None;
    };
    if *scope != def.scope {
        return None;
    }
    match file
        .scopes
        .get(*scope as usize)?
        .bindings
        .get(name)?
        .as_slice()
    {
        [super::PBind::Param { index, .. }]
            if def
                .params
                .get(*index as usize)
                .is_some_and(|p| matches!(p.kind, ParamKind::Plain | ParamKind::KeywordOnly)) =>
        {
            Some(*index)
        }
        _ => None,
    }
}

/// What applying decorator `callee` to `value` returns: what the decorator function (a bound
/// method, an instance's `__call__`) returns, its own return statements evaluated now rather
/// than read from the table, so that a stacked decorator never sees the undecorated function
/// in a round where the inner one's result is not in the table yet; a class makes an instance.
fn decorated(eval: &mut Eval<'_, '_>, callee: &[Val], value: &Vals) -> Vals {
    let mut result = Vals::new();
    let mut functions: Vec<(String, u32)> = Vec::new();
    for c in callee {
        match c {
            Val::Func(f, _) => functions.push((f.clone(), 0)),
            Val::Bound(f, _) => functions.push((f.clone(), 1)),
            Val::Instance(cls, inf) => {
                for call in eval.class_attr(cls, "__call__", 0, *inf, true) {
                    if let Val::Bound(f, _) = call {
                        functions.push((f, 1));
                    }
                }
            }
            Val::Class(cls, inf) => join(&mut result, vec![Val::Instance(cls.clone(), *inf)]),
            _ => {}
        }
    }
    for (f, offset) in functions {
        join(&mut result, eval.read_returns(&f));
        if eval.read_returned_params(&f).contains(&offset) {
            join(&mut result, value.clone());
        }
        let Some(&(dfi, ddi)) = eval.index.funcs.get(f.as_str()) else {
            continue;
        };
        let file: &PyFile = eval.file(dfi);
        let def = &file.defs[ddi];
        if def.generator {
            join(&mut result, vec![Val::Unknown]);
            continue;
        }
        for &r in &def.returned {
            match returned_param(file, def, r) {
                Some(i) if i == offset => join(&mut result, value.clone()),
                Some(_) => join(&mut result, vec![Val::Unknown]),
                None => {
                    let v = eval.expr(dfi, r, false);
                    join(&mut result, v);
                }
            }
        }
    }
    result
}

fn is_container(v: &Val) -> bool {
    matches!(v, Val::Container(..) | Val::Args(_) | Val::Kwargs(_))
}

/// Whether a value is worth propagating into a parameter (anything we can call or look into).
fn flows(v: &Val) -> bool {
    !matches!(v, Val::Unknown | Val::Builtin(_) | Val::Module(_))
}

/// Records the arguments of a call of `callee` into the parameters of the functions it can be.
fn pass_args(
    eval: &mut Eval<'_, '_>,
    callee: &[Val],
    positional: &[Vals],
    keywords: &[(String, Vals)],
    out: &mut PyFlow,
) {
    for c in callee {
        let (f, offset) = match c {
            Val::Func(f, _) => (f.clone(), 0),
            Val::Bound(f, _) => (f.clone(), 1),
            Val::Class(cls, inf) => {
                for init in eval.class_attr(cls, "__init__", 0, *inf, true) {
                    if let Val::Bound(f, _) = init {
                        bind_params(eval, &f, 1, positional, keywords, out);
                    }
                }
                continue;
            }
            Val::Instance(cls, inf) => {
                for call in eval.class_attr(cls, "__call__", 0, *inf, true) {
                    if let Val::Bound(f, _) = call {
                        bind_params(eval, &f, 1, positional, keywords, out);
                    }
                }
                continue;
            }
            Val::Builtin(name) if matches!(name.as_str(), "map" | "filter") => {
                // `map(f, xs)` calls `f` with the items of `xs`.
                if let (Some(fs), Some(xs)) = (positional.first(), positional.get(1)) {
                    let items = eval.items(xs, None);
                    for f in fs.clone() {
                        pass_args(eval, &[f], std::slice::from_ref(&items), &[], out);
                    }
                }
                continue;
            }
            _ => continue,
        };
        bind_params(eval, &f, offset, positional, keywords, out);
    }
}

/// The objects methods are called on (`obj.m(…)`): an instance of a subclass of the class that
/// defines `m` is what `self` can be in the class's methods (its MRO then answers `self.x`).
fn receivers(eval: &mut Eval<'_, '_>, fi: usize, file: &PyFile, out: &mut PyFlow) {
    for r in &file.refs {
        if r.kind != super::PRefKind::Call {
            continue;
        }
        let Some(super::PExpr::Call(callee)) = file.exprs.get(r.expr as usize) else {
            continue;
        };
        let Some(super::PExpr::Attr(obj, _)) = file.exprs.get(*callee as usize) else {
            continue;
        };
        let objects = eval.expr(fi, *obj, false);
        if !objects.iter().any(|v| matches!(v, Val::Instance(..))) {
            continue;
        }
        // The methods called (memoized with the callee), each paired with the receivers whose
        // MRO holds its class.
        let methods = eval.expr(fi, *callee, false);
        for m in &methods {
            let Val::Bound(f, _) = m else { continue };
            let Some(&(dfi, ddi)) = eval.index.funcs.get(f.as_str()) else {
                continue;
            };
            let defining: &str = &eval.file(dfi).defs[ddi].parent;
            for v in &objects {
                let Val::Instance(class, _) = v else { continue };
                if class != defining
                    && eval
                        .index
                        .mro
                        .get(class.as_str())
                        .is_some_and(|mro| mro.iter().flatten().any(|c| c == defining))
                {
                    // A subclass's instance: its MRO is as declared, not a guess.
                    add_param(
                        out,
                        defining,
                        SUBCLASS_RECEIVERS,
                        vec![Val::Instance(class.clone(), false)],
                    );
                }
            }
        }
    }
}

/// Whether callee expression `callee` is named like a function with a default argument (or a
/// class whose `__init__` has one): only such calls are evaluated when no argument flows.
fn defaults_callee(eval: &Eval<'_, '_>, file: &PyFile, callee: u32) -> bool {
    let name = match file.exprs.get(callee as usize) {
        Some(super::PExpr::Name { name, .. } | super::PExpr::Attr(_, name)) => name,
        _ => return false,
    };
    eval.index.defaulted.contains(name.as_str())
}

fn bind_params(
    eval: &mut Eval<'_, '_>,
    f: &str,
    offset: usize,
    positional: &[Vals],
    keywords: &[(String, Vals)],
    out: &mut PyFlow,
) {
    let Some(&(fi, di)) = eval.index.funcs.get(f) else {
        return;
    };
    let def = &eval.file(fi).defs[di];
    let params = &def.params;
    // Parameters with a default that this call leaves out.
    for (slot, p) in params.iter().enumerate().skip(offset) {
        let filled = (p.kind == ParamKind::Plain
            && slot - offset < positional.len()
            && params[..slot].iter().all(|q| q.kind == ParamKind::Plain))
            || keywords.iter().any(|(n, _)| *n == p.name);
        if p.default.is_some()
            && matches!(p.kind, ParamKind::Plain | ParamKind::KeywordOnly)
            && !filled
        {
            let params = out.params.entry(f.to_owned()).or_default();
            join_entry(params.entry(slot as u32).or_default(), vec![Val::Omitted]);
        }
    }
    let star = params.iter().position(|p| p.kind == ParamKind::Star);
    let double_star = params.iter().position(|p| p.kind == ParamKind::DoubleStar);
    for (i, v) in positional.iter().enumerate() {
        let slot = i + offset;
        match params.get(slot) {
            Some(p) if p.kind == ParamKind::Plain && star.is_none_or(|s| slot < s) => {
                add_param(out, f, slot as u32, v.clone());
            }
            _ => {
                if let Some(s) = star {
                    let extra = slot.saturating_sub(s);
                    add_item(
                        out,
                        &Val::Args(f.to_owned()),
                        Some(format!("i:{extra}")),
                        v.clone(),
                    );
                }
            }
        }
    }
    for (name, v) in keywords {
        match params.iter().position(|p| {
            &p.name == name && matches!(p.kind, ParamKind::Plain | ParamKind::KeywordOnly)
        }) {
            Some(slot) => add_param(out, f, slot as u32, v.clone()),
            None => {
                if double_star.is_some() {
                    add_item(
                        out,
                        &Val::Kwargs(f.to_owned()),
                        Some(format!("s:{name}")),
                        v.clone(),
                    );
                }
            }
        }
    }
}
