//! The order of bindings within a scope, tracked while the builder walks its statements: which
//! bindings of a name reach each read of it (a later binding kills the earlier ones on its path,
//! branches join, a loop carries values back to its head, an exception handler sees every
//! binding of its `try` body, `return`/`raise`/`break`/`continue` end a path), star imports in
//! order, and the events that change the attributes or items of the object a local name holds
//! on the way (`n.x = v`, `n[k] = v`, a method call `n.m(…)`, any other use of `n`, which lets
//! the object escape). The results are facts ([`PyOrder::reaches`], [`PyOrder::event_reads`],
//! [`PyOrder::events`], [`PyOrder::star_states`], [`PyScope::final_reach`]) that the evaluator
//! reads; every set is bounded, and a scope with too many names is left flow-insensitive.
//!
//! [`PyOrder::reaches`]: crate::index::python::PyOrder::reaches
//! [`PyOrder::event_reads`]: crate::index::python::PyOrder::event_reads
//! [`PyOrder::events`]: crate::index::python::PyOrder::events
//! [`PyOrder::star_states`]: crate::index::python::PyOrder::star_states
//! [`PyScope::final_reach`]: crate::index::python::PyScope::final_reach

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::PyBuilder;
use crate::index::python::{EvRef, PEvent, PEventKind, PExpr, PyFile, Reach, StarState};

/// At most this many bindings (or events) reach one read; a larger set means "any binding of
/// the name" ([`Reach::All`]) or "any value" ([`EvRef::Havoc`]).
pub(crate) const MAX_REACH: usize = 16;
/// A scope that binds more names than this is not tracked (its reads are flow-insensitive):
/// the state is cloned at every branch, so this bounds that cost.
pub(crate) const MAX_TRACKED_NAMES: usize = 256;

/// An event reference with the number of calls built before it (see [`PyBuilder::calls_built`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Timed {
    pub r: EvRef,
    pub calls: u32,
}

/// What reaches one name at a point of a scope.
#[derive(Debug, Clone, Default)]
pub(super) struct NameFlow {
    reach: Vec<Reach>,
    events: Vec<Timed>,
}

/// The state of one scope at a point of its walk.
#[derive(Debug, Clone)]
pub(super) struct Frame {
    scope: u32,
    names: HashMap<String, NameFlow>,
    /// What reaches a name not in `names`: unbound, or star imports since.
    others: Vec<Reach>,
    /// No path reaches this point (after `return`, `raise`, `break`, `continue`).
    dead: bool,
    /// Too many names: the scope is left flow-insensitive.
    overflow: bool,
}

impl Frame {
    pub(super) fn new(scope: u32) -> Frame {
        Frame {
            scope,
            names: HashMap::default(),
            others: vec![Reach::Unbound],
            dead: false,
            overflow: false,
        }
    }

    fn get(&self, name: &str) -> NameFlow {
        self.names.get(name).cloned().unwrap_or_else(|| NameFlow {
            reach: self.others.clone(),
            events: vec![Timed {
                r: EvRef::Unbound,
                calls: 0,
            }],
        })
    }

    /// Joins the states of several paths (dead ones reach nothing).
    fn join(frames: Vec<Frame>) -> Option<Frame> {
        let mut live: Vec<Frame> = frames.into_iter().filter(|f| !f.dead).collect();
        let mut out = live.pop()?;
        for f in live {
            out.overflow |= f.overflow;
            let keys: HashSet<String> = out.names.keys().chain(f.names.keys()).cloned().collect();
            for k in keys {
                let a = out.get(&k);
                let b = f.get(&k);
                out.names.insert(k, union(a, &b));
            }
            out.others = union_reach(&out.others, &f.others);
        }
        if out.names.len() > MAX_TRACKED_NAMES {
            out.overflow = true;
        }
        Some(out)
    }
}

fn union_reach(a: &[Reach], b: &[Reach]) -> Vec<Reach> {
    let mut out: Vec<Reach> = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    out.dedup();
    if out.len() > MAX_REACH || out.contains(&Reach::All) {
        out = vec![Reach::All];
    }
    out
}

fn union_events(a: &[Timed], b: &[Timed]) -> Vec<Timed> {
    let mut out: Vec<Timed> = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    out.dedup();
    if out.len() > MAX_REACH || out.iter().any(|t| t.r == EvRef::Havoc) {
        out = vec![Timed {
            r: EvRef::Havoc,
            calls: 0,
        }];
    }
    out
}

fn union(a: NameFlow, b: &NameFlow) -> NameFlow {
    NameFlow {
        reach: union_reach(&a.reach, &b.reach),
        events: union_events(&a.events, &b.events),
    }
}

/// A read recorded during the walk, finished in [`PyBuilder::finish_order`].
#[derive(Debug)]
pub(super) struct ReadRec {
    expr: u32,
    scope: u32,
    name: String,
    reach: Vec<Reach>,
}

/// An attribute or item read of a local name, with the events that reach it.
#[derive(Debug)]
pub(super) struct EventRead {
    expr: u32,
    scope: u32,
    name: String,
    refs: Vec<Timed>,
    calls: u32,
}

/// Where an event was made (its scope and name, and the calls built before it).
#[derive(Debug)]
pub(super) struct EventOrigin {
    scope: u32,
    name: String,
    prev: Vec<Timed>,
    calls: u32,
}

/// A loop being walked.
#[derive(Debug)]
pub(super) struct LoopCtx {
    /// The frame depth it belongs to (`break` in a nested function is not its).
    depth: usize,
    entry: Frame,
    reads_start: usize,
    event_reads_start: usize,
    events_start: usize,
    breaks: Vec<Frame>,
    continues: Vec<Frame>,
}

/// What the walk of a scope tracks beside the facts.
#[derive(Debug, Default)]
pub(super) struct Order {
    pub(super) frames: Vec<Frame>,
    loops: Vec<LoopCtx>,
    reads: Vec<ReadRec>,
    event_reads: Vec<EventRead>,
    origins: Vec<EventOrigin>,
    /// Bindings and events made, in order (for `try` bodies): (scope, name, reference).
    log: Vec<(u32, String, Reach, Timed)>,
    /// Module-level bindings made from functions (`global x`): they can happen at any time.
    anytime: Vec<(String, u32)>,
    /// Names declared `nonlocal`: (scope, name).
    nonlocals: Vec<(u32, String)>,
    /// `try` bodies being walked (only they need the log).
    tries: u32,
    /// Final states of class scopes (the module's is the bottom frame).
    finals: Vec<Frame>,
}

/// A snapshot taken before a branch or a `try`.
pub(crate) struct Fork {
    pub(super) frame: Frame,
    log_start: usize,
}

impl PyBuilder<'_> {
    fn frame(&mut self) -> Option<&mut Frame> {
        let f = self.order.frames.last_mut()?;
        (f.scope == self.scope && !f.overflow).then_some(f)
    }

    /// Starts the state of a new scope (`scope` must become `self.scope`).
    pub(super) fn enter_frame(&mut self, scope: u32) {
        self.order.frames.push(Frame::new(scope));
    }

    /// Ends the state of the current scope; a class's final state is kept.
    pub(super) fn leave_frame(&mut self) {
        if let Some(f) = self.order.frames.pop()
            && self.file.scopes[f.scope as usize].kind == crate::index::python::ScopeKind::Class
        {
            self.order.finals.push(f);
        }
    }

    /// A binding of `name` at index `index` of its scope's bindings.
    pub(super) fn order_bind(&mut self, name: &str, index: u32) {
        let calls = self.calls_built;
        let scope = self.scope;
        let Some(f) = self.frame() else { return };
        let flow = NameFlow {
            reach: vec![Reach::Bind(index)],
            events: vec![Timed {
                r: EvRef::Base(index),
                calls,
            }],
        };
        f.names.insert(name.to_owned(), flow);
        if f.names.len() > MAX_TRACKED_NAMES {
            f.overflow = true;
        }
        if self.order.tries == 0 {
            return;
        }
        self.order.log.push((
            scope,
            name.to_owned(),
            Reach::Bind(index),
            Timed {
                r: EvRef::Base(index),
                calls,
            },
        ));
    }

    /// A module-level binding made from a function (`global name`).
    pub(super) fn order_anytime(&mut self, name: &str, index: u32) {
        self.order.anytime.push((name.to_owned(), index));
    }

    pub(super) fn order_nonlocal(&mut self, name: &str) {
        self.order.nonlocals.push((self.scope, name.to_owned()));
    }

    /// A read of `name` (expression `expr`) in the current scope.
    pub(super) fn order_read(&mut self, expr: u32, name: &str) {
        let scope = self.scope;
        let Some(f) = self.frame() else { return };
        if !f.names.contains_key(name) && f.others == [Reach::Unbound] {
            return;
        }
        let reach = f.get(name).reach;
        self.order.reads.push(ReadRec {
            expr,
            scope,
            name: name.to_owned(),
            reach,
        });
    }

    /// A use of `name` that lets its object escape (passed, aliased, called, iterated …): what
    /// its attributes and items are from here on is not followed.
    pub(super) fn order_escape(&mut self, name: &str) {
        let Some(f) = self.frame() else { return };
        if let Some(flow) = f.names.get_mut(name) {
            flow.events = vec![Timed {
                r: EvRef::Havoc,
                calls: 0,
            }];
        }
    }

    /// An event on the object `name` holds.
    pub(super) fn order_event(&mut self, name: &str, kind: PEventKind) {
        let calls = self.calls_built;
        let scope = self.scope;
        let id = self.file.order.events.len() as u32;
        let Some(f) = self.frame() else { return };
        let Some(flow) = f.names.get_mut(name) else {
            return;
        };
        let prev = std::mem::replace(
            &mut flow.events,
            vec![Timed {
                r: EvRef::Event(id),
                calls,
            }],
        );
        self.file.order.events.push(PEvent {
            kind,
            prev: Vec::new(),
        });
        self.order.origins.push(EventOrigin {
            scope,
            name: name.to_owned(),
            prev,
            calls,
        });
        if self.order.tries == 0 {
            return;
        }
        self.order.log.push((
            scope,
            name.to_owned(),
            Reach::All,
            Timed {
                r: EvRef::Event(id),
                calls,
            },
        ));
    }

    /// An attribute or item read (expression `expr`) of the object `name` holds.
    pub(super) fn order_event_read(&mut self, expr: u32, name: &str) {
        let calls = self.calls_built;
        let scope = self.scope;
        let Some(f) = self.frame() else { return };
        let Some(flow) = f.names.get(name) else {
            return;
        };
        // The bindings themselves with no call since: the same as no entry, whatever the name.
        if flow
            .events
            .iter()
            .all(|t| matches!(t.r, EvRef::Base(_) | EvRef::Unbound) && t.calls == calls)
        {
            return;
        }
        let refs = flow.events.clone();
        self.order.event_reads.push(EventRead {
            expr,
            scope,
            name: name.to_owned(),
            refs,
            calls,
        });
    }

    /// `from m import *` (star import `k`): every name may now be the module's.
    pub(super) fn order_star(&mut self, k: u32) {
        let Some(f) = self.frame() else {
            self.file.order.star_states.push(StarState::default());
            return;
        };
        let names = f
            .names
            .iter()
            .map(|(n, flow)| (n.clone(), flow.reach.clone()))
            .collect();
        let state = StarState {
            names,
            others: f.others.clone(),
        };
        for flow in f.names.values_mut() {
            flow.reach = vec![Reach::Star(k)];
            flow.events = vec![Timed {
                r: EvRef::Havoc,
                calls: 0,
            }];
        }
        f.others = vec![Reach::Star(k)];
        self.file.order.star_states.push(state);
    }

    /// The end of a path (`return`, `raise`).
    pub(super) fn order_dead(&mut self) {
        if let Some(f) = self.frame() {
            f.dead = true;
        }
    }

    /// `break` (`brk`) or `continue`: the state joins the loop's exit or head.
    pub(super) fn order_jump(&mut self, brk: bool) {
        let depth = self.order.frames.len();
        let Some(frame) = self.frame().map(|f| f.clone()) else {
            return;
        };
        if let Some(l) = self.order.loops.last_mut()
            && l.depth == depth
        {
            if brk {
                l.breaks.push(frame);
            } else {
                l.continues.push(frame);
            }
        }
        self.order_dead();
    }

    /// Enters (`true`) or leaves a `try` body, whose bindings a handler sees.
    pub(super) fn order_try(&mut self, enter: bool) {
        if enter {
            self.order.tries += 1;
        } else {
            self.order.tries -= 1;
        }
    }

    /// A snapshot of the current state, before a branch or a `try` body.
    pub(super) fn fork(&mut self) -> Option<Fork> {
        let log_start = self.order.log.len();
        let frame = self.frame()?.clone();
        Some(Fork { frame, log_start })
    }

    /// The current state, to join later.
    pub(super) fn current(&mut self) -> Option<Frame> {
        self.frame().map(|f| f.clone())
    }

    /// Continues from `frame` (a state taken earlier in this scope).
    pub(super) fn set_current(&mut self, frame: Frame) {
        if let Some(f) = self.frame() {
            *f = frame;
        }
    }

    /// Restarts from `fork` (the next branch).
    pub(super) fn restore(&mut self, fork: &Fork) {
        if let Some(f) = self.frame() {
            *f = fork.frame.clone();
        }
    }

    /// Continues with the join of `ends` (the ends of the branches).
    pub(super) fn join_paths(&mut self, ends: Vec<Frame>) {
        let Some(f) = self.frame() else { return };
        let scope = f.scope;
        match Frame::join(ends) {
            Some(joined) => *f = joined,
            None => f.dead = true,
        }
        debug_assert_eq!(f.scope, scope);
    }

    /// The state an exception handler of a `try` begins with: what reached the `try` joined
    /// with every binding and event its body made, wherever it stopped.
    pub(super) fn handler_entry(&mut self, fork: &Fork, end: Option<Frame>) -> Option<Frame> {
        let scope = self.scope;
        let mut entry = Frame::join(
            std::iter::once(fork.frame.clone())
                .chain(end)
                .map(|mut f| {
                    f.dead = false;
                    f
                })
                .collect(),
        )?;
        for (s, name, reach, timed) in &self.order.log[fork.log_start..] {
            if *s != scope {
                continue;
            }
            let flow = entry.get(name);
            let mut more = NameFlow {
                reach: Vec::new(),
                events: vec![*timed],
            };
            if *reach != Reach::All {
                more.reach.push(*reach);
            } else {
                more.reach = flow.reach.clone();
            }
            entry.names.insert(name.clone(), union(flow, &more));
        }
        Some(entry)
    }

    /// Begins a loop (before its condition, or its target's binding); `false` when the scope
    /// is not tracked (then [`Self::loop_end`] must not be called).
    pub(super) fn loop_begin(&mut self) -> bool {
        let depth = self.order.frames.len();
        let Some(entry) = self.frame().map(|f| f.clone()) else {
            return false;
        };
        self.order.loops.push(LoopCtx {
            depth,
            entry,
            reads_start: self.order.reads.len(),
            event_reads_start: self.order.event_reads.len(),
            events_start: self.order.origins.len(),
            breaks: Vec::new(),
            continues: Vec::new(),
        });
        true
    }

    /// Ends a loop's body: reads in it that can see the values of the loop's entry also see
    /// those of the end of an iteration. Returns the exits by `break`; the state becomes the
    /// head's (the normal exit, where an `else` clause runs).
    pub(super) fn loop_end(&mut self) -> Vec<Frame> {
        let depth = self.order.frames.len();
        let scope = self.scope;
        let Some(end) = self.frame().map(|f| f.clone()) else {
            return Vec::new();
        };
        let Some(l) = self.order.loops.pop_if(|l| l.depth == depth) else {
            return Vec::new();
        };
        let mut paths = vec![l.entry.clone(), end];
        paths.extend(l.continues);
        let Some(head) = Frame::join(paths) else {
            return l.breaks;
        };
        for r in &mut self.order.reads[l.reads_start..] {
            if r.scope == scope {
                let entry = l.entry.get(&r.name).reach;
                if r.reach.iter().any(|x| entry.contains(x)) {
                    r.reach = union_reach(&r.reach, &head.get(&r.name).reach);
                }
            }
        }
        let carried = |refs: &mut Vec<Timed>, name: &str| {
            let entry = l.entry.get(name).events;
            if refs.iter().any(|x| entry.iter().any(|y| y.r == x.r)) {
                *refs = union_events(refs, &head.get(name).events);
            }
        };
        for r in &mut self.order.event_reads[l.event_reads_start..] {
            if r.scope == scope {
                carried(&mut r.refs, &r.name);
            }
        }
        for o in &mut self.order.origins[l.events_start..] {
            if o.scope == scope {
                carried(&mut o.prev, &o.name);
            }
        }
        if let Some(f) = self.frame() {
            *f = head;
        }
        l.breaks
    }
}

/// Names of a scope that code in another scope reads or rebinds (closures, functions reading
/// globals, `global`/`nonlocal`): a call can change what their objects hold.
fn shared_names(file: &PyFile, nonlocals: &[(u32, String)]) -> HashSet<(u32, String)> {
    let mut shared = HashSet::default();
    let binding_scope = |from: u32, name: &str| -> Option<u32> {
        let mut current = Some(from);
        while let Some(si) = current {
            let sc = &file.scopes[si as usize];
            if sc.globals.contains(name) {
                return Some(0);
            }
            let visible = sc.kind != crate::index::python::ScopeKind::Class || si == from;
            if visible && sc.bindings.contains_key(name) {
                return Some(si);
            }
            current = sc.parent;
        }
        None
    };
    for e in &file.exprs {
        if let PExpr::Name { scope, name } = e
            && let Some(target) = binding_scope(*scope, name)
            && target != *scope
        {
            shared.insert((target, name.clone()));
        }
    }
    for sc in &file.scopes {
        for name in &sc.globals {
            shared.insert((0, name.clone()));
        }
    }
    for (scope, name) in nonlocals {
        if let Some(parent) = file.scopes[*scope as usize].parent
            && let Some(target) = binding_scope(parent, name)
        {
            shared.insert((target, name.clone()));
        }
    }
    shared
}

impl PyBuilder<'_> {
    /// Turns what the walk recorded into facts.
    pub(super) fn finish_order(&mut self) {
        let order = std::mem::take(&mut self.order);
        let file = &mut self.file;
        let overflowed: HashSet<u32> = order
            .frames
            .iter()
            .chain(&order.finals)
            .filter(|f| f.overflow)
            .map(|f| f.scope)
            .collect();
        let anytime: HashMap<&str, Vec<u32>> =
            order
                .anytime
                .iter()
                .fold(HashMap::default(), |mut m, (n, i)| {
                    m.entry(n.as_str()).or_default().push(*i);
                    m
                });
        // What a read of `name` in `scope` sees, with the bindings made at any time.
        let complete = |scope: u32, name: &str, reach: &[Reach]| -> Vec<Reach> {
            let mut out = reach.to_vec();
            if scope == 0
                && let Some(more) = anytime.get(name)
            {
                out.extend(more.iter().map(|&i| Reach::Bind(i)));
            }
            out.sort_unstable();
            out.dedup();
            if out.len() > MAX_REACH || out.contains(&Reach::All) {
                out = vec![Reach::All];
            }
            out
        };
        // Whether `reach` says no more than a flow-insensitive lookup would.
        let plain = |file: &PyFile, scope: u32, name: &str, reach: &[Reach]| -> bool {
            match file.scopes[scope as usize].bindings.get(name) {
                Some(binds) => {
                    reach == [Reach::All]
                        || (reach.len() == binds.len()
                            && reach
                                .iter()
                                .enumerate()
                                .all(|(i, r)| *r == Reach::Bind(i as u32)))
                }
                None => !reach.iter().any(|r| matches!(r, Reach::Star(_))),
            }
        };
        let mut reaches: Vec<(u32, Vec<Reach>)> = Vec::new();
        for r in &order.reads {
            if overflowed.contains(&r.scope) {
                continue;
            }
            let reach = complete(r.scope, &r.name, &r.reach);
            if !plain(file, r.scope, &r.name, &reach) {
                reaches.push((r.expr, reach));
            }
        }
        reaches.sort_unstable_by_key(|(e, _)| *e);
        file.order.reaches = reaches;
        for state in &mut file.order.star_states {
            for (name, reach) in &mut state.names {
                *reach = complete(0, name, reach);
            }
        }
        for f in order.frames.iter().take(1).chain(&order.finals) {
            if f.overflow {
                continue;
            }
            let mut finals = HashMap::default();
            for (name, flow) in &f.names {
                let reach = complete(f.scope, name, &flow.reach);
                if !plain(file, f.scope, name, &reach) {
                    finals.insert(name.clone(), reach);
                }
            }
            file.scopes[f.scope as usize].final_reach = finals;
        }
        let shared = shared_names(file, &order.nonlocals);
        // A call made since the reference can change the object of a shared name.
        let settle = |scope: u32, name: &str, refs: &[Timed], calls: u32| -> Vec<EvRef> {
            let key = (scope, name.to_owned());
            let is_shared = shared.contains(&key);
            let mut out: Vec<EvRef> = refs
                .iter()
                .map(|t| match t.r {
                    EvRef::Base(_) | EvRef::Event(_) if is_shared && t.calls < calls => {
                        EvRef::Havoc
                    }
                    r => r,
                })
                .collect();
            out.sort_unstable();
            out.dedup();
            if overflowed.contains(&scope) || out.contains(&EvRef::Havoc) {
                out = vec![EvRef::Havoc];
            }
            out
        };
        for (event, o) in file.order.events.iter_mut().zip(&order.origins) {
            // The event's own call is not one that happened before it.
            let calls = match event.kind {
                PEventKind::Call(_) => o.calls.saturating_sub(1),
                _ => o.calls,
            };
            event.prev = settle(o.scope, &o.name, &o.prev, calls);
        }
        let mut event_reads: Vec<(u32, Vec<EvRef>)> = Vec::new();
        for r in &order.event_reads {
            let refs = settle(r.scope, &r.name, &r.refs, r.calls);
            // Only the bindings themselves: the same as no entry.
            if refs
                .iter()
                .all(|r| matches!(r, EvRef::Base(_) | EvRef::Unbound))
            {
                continue;
            }
            event_reads.push((r.expr, refs));
        }
        event_reads.sort_unstable_by_key(|(e, _)| *e);
        file.order.event_reads = event_reads;
    }
}

/// Objects of local names and what a method sets on `self`.
impl PyBuilder<'_> {
    /// Builds the object of an attribute or subscript: an identifier there is not an escape.
    pub(super) fn object_expr(&mut self, node: tree_sitter::Node<'_>, value_pos: bool) -> u32 {
        self.object_ctx = crate::index::syntax::py_kind(node) == "identifier";
        let e = self.expr(node, value_pos);
        self.object_ctx = false;
        e
    }

    /// The local name that object expression `object` is, in the current scope.
    fn local_name(&self, object: u32) -> Option<String> {
        match self.file.exprs.get(object as usize) {
            Some(PExpr::Name { scope, name }) if *scope == self.scope => Some(name.clone()),
            _ => None,
        }
    }

    /// An attribute or item read (expression `read`) of object expression `object`.
    pub(super) fn object_read(&mut self, object: u32, read: u32) {
        if let Some(name) = self.local_name(object) {
            self.order_event_read(read, &name);
        }
    }

    /// An event on object expression `object`.
    pub(super) fn object_event(&mut self, object: u32, kind: PEventKind) {
        if let Some(name) = self.local_name(object) {
            self.order_event(&name, kind);
        }
    }

    /// Call `call` of `callee`: a method called on a local name is an event on its object (a
    /// method called on `self` may also set any attribute of it).
    pub(super) fn method_called(&mut self, callee: u32, call: u32) {
        let Some(PExpr::Attr(obj, _)) = self.file.exprs.get(callee as usize) else {
            return;
        };
        let Some(name) = self.local_name(*obj) else {
            return;
        };
        if self.method.as_ref().is_some_and(|m| m.self_name == name) {
            self.self_called();
        }
        self.order_event(&name, PEventKind::Call(call));
    }

    /// A call that can set attributes of `self` (`self.m()`, `super()…`): what was set before
    /// is no longer known to last.
    pub(super) fn self_called(&mut self) {
        self.definite.clear();
    }

    /// A use of identifier `name`; `object`: as the object of an attribute or subscript. `self`
    /// used otherwise, or from a nested function, escapes: anything may set its attributes.
    pub(super) fn self_used(&mut self, name: &str, object: bool) {
        if self.definite_owner.is_some()
            && self.method.as_ref().is_some_and(|m| m.self_name == name)
            && (!object || self.func != self.definite_owner)
        {
            self.definite.clear();
        }
    }

    /// `self.attr = value` in a method: set on every normal return when at the method's top
    /// level, before any early return.
    pub(super) fn self_set(&mut self, attr: &str, value: u32) {
        self.definite.retain(|(a, _)| a != attr);
        if self.definite_owner.is_some()
            && self.func == self.definite_owner
            && self.branch_depth == 0
            && !self.early_exit
        {
            self.definite.push((attr.to_owned(), value));
        }
    }

    /// `return` or `raise`: inside a branch of the collecting method, later assignments are not
    /// made on every path.
    pub(super) fn exit_early(&mut self) {
        if self.func == self.definite_owner && self.branch_depth > 0 {
            self.early_exit = true;
        }
    }
}
