//! Evaluation in order: the bindings and star imports that reach a read of a name, and the
//! attributes and items of the object a local name holds as the events on its path left them
//! (see `body/order.rs`, which records both).

use super::{Eval, Val, Vals, join, one, unknown};
use crate::index::python::builtins::BUILTINS;
use crate::index::python::{EvRef, PArg, PBind, PEventKind, PExpr, PyDef, PyFile, Reach};

/// What is read of an object: an attribute, or an item under a key (`None`: any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access<'k> {
    Attr(&'k str),
    Item(Option<&'k str>),
}

/// Whether a store under key `stored` writes the item read under key `read`.
enum KeyMatch {
    Same,
    Different,
    Maybe,
}

fn key_match(read: Option<&str>, stored: Option<&str>) -> KeyMatch {
    let exact = |k: &str| {
        k.strip_prefix("s:").is_some()
            || k.strip_prefix("i:")
                .and_then(|i| i.parse::<i64>().ok())
                .is_some_and(|i| i >= 0)
    };
    match (read, stored) {
        (Some(a), Some(b)) if exact(a) && exact(b) => {
            if a == b {
                KeyMatch::Same
            } else {
                KeyMatch::Different
            }
        }
        _ => KeyMatch::Maybe,
    }
}

impl<'a> Eval<'_, 'a> {
    /// The value of `name` in scope `scope` of file `fi` where `reach` reaches (memoized by the
    /// address of the set in the facts).
    pub(super) fn reached(
        &mut self,
        fi: usize,
        scope: u32,
        name: &str,
        reach: &'a [Reach],
    ) -> Vals {
        // Reads of one name that the same bindings reach share a value: keyed by the name's
        // bindings in the facts (or the set itself for a name without bindings) and the set.
        let file: &'a PyFile = self.file(fi);
        let key = match file.scopes[scope as usize].bindings.get(name) {
            Some(binds) => binds.as_ptr() as usize,
            None => reach.as_ptr() as usize,
        };
        if let Some(v) = self
            .reach_memo
            .get(&key)
            .and_then(|sets| sets.iter().find(|(r, _)| r.as_slice() == reach))
        {
            return v.1.clone();
        }
        let guard = |sets: &mut Vec<(Vec<Reach>, Vals)>, v: Vals| match sets
            .iter_mut()
            .find(|(r, _)| r.as_slice() == reach)
        {
            Some(entry) => entry.1 = v,
            None => sets.push((reach.to_vec(), v)),
        };
        // Cycle guard while evaluating.
        guard(self.reach_memo.entry(key).or_default(), unknown());
        let outer = std::mem::replace(&mut self.truncated, false);
        let v = self.reached_uncached(fi, scope, name, reach);
        let sets = self.reach_memo.entry(key).or_default();
        if self.truncated {
            sets.retain(|(r, _)| r.as_slice() != reach);
        } else {
            guard(sets, v.clone());
        }
        self.truncated |= outer;
        v
    }

    /// [`Self::reached`] for a set shared by several names (not memoized by its address).
    fn reached_uncached(&mut self, fi: usize, scope: u32, name: &str, reach: &'a [Reach]) -> Vals {
        if self.depth >= super::MAX_DEPTH {
            self.truncated = true;
            return unknown();
        }
        let file: &'a PyFile = self.file(fi);
        let binds: &'a [PBind] = file.scopes[scope as usize]
            .bindings
            .get(name)
            .map_or(&[], Vec::as_slice);
        let mut v = Vals::new();
        for r in reach {
            let more = match r {
                Reach::Bind(i) => match binds.get(*i as usize) {
                    Some(b) => self.binding(fi, b),
                    None => unknown(),
                },
                Reach::All if !binds.is_empty() => self.bound_value(fi, binds),
                Reach::All => self.star_value(fi, name, file.star_imports.len()),
                Reach::Star(k) => self.star_value(fi, name, *k as usize + 1),
                Reach::Unbound if scope == 0 && BUILTINS.contains(&name) => {
                    one(Val::Builtin(name.to_owned()))
                }
                Reach::Unbound => Vals::new(),
            };
            join(&mut v, more);
        }
        if v.is_empty() {
            v = unknown();
        }
        v
    }

    /// The value of module-level `name` after the first `count` star imports of file `fi`: the
    /// last of them that exports it, else what reached that one.
    fn star_value(&mut self, fi: usize, name: &str, count: usize) -> Vals {
        let file: &'a PyFile = self.file(fi);
        let Some(k) = count.checked_sub(1) else {
            return Vals::new();
        };
        let Some(module) = file.star_imports.get(k) else {
            return unknown();
        };
        self.depth += 1;
        let exported = self.module_member(module, name, true);
        self.depth -= 1;
        if let Some(v) = exported {
            return v;
        }
        let Some(state) = file.order.star_states.get(k) else {
            return unknown();
        };
        let before: &'a [Reach] = match state.names.get(name) {
            Some(own) => own,
            None if state.others == [Reach::Unbound] => {
                return if BUILTINS.contains(&name) {
                    one(Val::Builtin(name.to_owned()))
                } else {
                    Vals::new()
                };
            }
            None => {
                self.depth += 1;
                let v = self.reached_uncached(fi, 0, name, &state.others);
                self.depth -= 1;
                return v;
            }
        };
        self.reached(fi, 0, name, before)
    }

    /// `obj.attr` or `obj[key]` (expression `id`) where `obj` is a name bound in the scope it
    /// is read in: the values the events on the read's path (stores, method calls) left; `None`
    /// for any other object (the caller evaluates it flow-insensitively).
    pub(super) fn object_access(
        &mut self,
        fi: usize,
        id: u32,
        obj: u32,
        access: Access<'_>,
    ) -> Option<Vals> {
        let file: &'a PyFile = self.file(fi);
        let Some(PExpr::Name { scope, name }) = file.exprs.get(obj as usize) else {
            return None;
        };
        let binds: &'a [PBind] = file.scopes[*scope as usize].bindings.get(name)?;
        let refs: Vec<EvRef> = match file.event_read(id) {
            Some(refs) => refs.to_vec(),
            None => {
                // No event since the bindings: only a constructor's `__init__` can have set
                // the attribute.
                let Access::Attr(a) = access else {
                    return None;
                };
                if !self.index.set_attrs.contains(a) {
                    return None;
                }
                let constructed = |b: Option<&PBind>| {
                    matches!(b, Some(PBind::Assign(e))
                        if matches!(file.exprs.get(*e as usize), Some(PExpr::Call(_))))
                };
                match file.reach(obj) {
                    Some(reach) => {
                        if reach.contains(&Reach::All)
                            || !reach.iter().any(|r| {
                                matches!(r, Reach::Bind(i) if constructed(binds.get(*i as usize)))
                            })
                        {
                            return None;
                        }
                        reach
                            .iter()
                            .filter_map(|r| match r {
                                Reach::Bind(i) => Some(EvRef::Base(*i)),
                                _ => None,
                            })
                            .collect()
                    }
                    None => {
                        if !binds.iter().any(|b| constructed(Some(b))) {
                            return None;
                        }
                        (0..binds.len() as u32).map(EvRef::Base).collect()
                    }
                }
            }
        };
        let mut out = Vals::new();
        let mut havoc = false;
        let mut stack = refs;
        let mut seen: Vec<EvRef> = Vec::new();
        while let Some(r) = stack.pop() {
            if seen.contains(&r) {
                continue;
            }
            seen.push(r);
            match r {
                EvRef::Unbound => {}
                EvRef::Havoc => havoc = true,
                EvRef::Base(i) => {
                    let v = match binds.get(i as usize) {
                        Some(b) => self.base_access(fi, b, access),
                        None => unknown(),
                    };
                    join(&mut out, v);
                }
                EvRef::Event(k) => {
                    let Some(event) = file.order.events.get(k as usize) else {
                        havoc = true;
                        continue;
                    };
                    match (&event.kind, access) {
                        (PEventKind::SetAttr { attr, value }, Access::Attr(a)) if attr == a => {
                            let v = self.expr(fi, *value, false);
                            join(&mut out, v);
                        }
                        (PEventKind::SetItem { key, value }, Access::Item(k)) => {
                            match key_match(k, key.as_deref()) {
                                KeyMatch::Same => {
                                    let v = self.expr(fi, *value, false);
                                    join(&mut out, v);
                                }
                                KeyMatch::Different => stack.extend(&event.prev),
                                KeyMatch::Maybe => {
                                    let v = self.expr(fi, *value, false);
                                    join(&mut out, v);
                                    stack.extend(&event.prev);
                                }
                            }
                        }
                        (PEventKind::Call(call), Access::Attr(a)) => {
                            if !self.index.set_attrs.contains(a) {
                                havoc = true;
                                continue;
                            }
                            match self.call_sets(fi, *call, a) {
                                Some(v) => join(&mut out, v),
                                None => havoc = true,
                            }
                        }
                        (PEventKind::Call(_), Access::Item(_)) => havoc = true,
                        _ => stack.extend(&event.prev),
                    }
                }
            }
            if havoc || self.steps > super::MAX_STEPS {
                havoc = true;
                break;
            }
        }
        if havoc {
            let base = self.expr(fi, obj, false);
            let v = match access {
                Access::Attr(a) => self.attr(&base, a),
                Access::Item(k) => self.subscript(&base, k),
            };
            join(&mut out, v);
        }
        Some(if out.is_empty() { unknown() } else { out })
    }

    /// `access` of the object binding `b` made: a class called there has only what its
    /// `__init__` set on every return (when it sets the attribute), else the flow-insensitive
    /// value.
    fn base_access(&mut self, fi: usize, b: &'a PBind, access: Access<'_>) -> Vals {
        if let (PBind::Assign(e), Access::Attr(a)) = (b, access)
            && self.index.set_attrs.contains(a)
            && let Some(v) = self.constructed_attr(fi, *e, a)
        {
            return v;
        }
        let base = self.binding(fi, b);
        match access {
            Access::Attr(a) => self.attr(&base, a),
            Access::Item(k) => self.subscript(&base, k),
        }
    }

    /// Attribute `attr` of what call `e` of file `fi` constructs, when `e` calls classes only
    /// and each one's `__init__` sets `attr` on every return.
    fn constructed_attr(&mut self, fi: usize, e: u32, attr: &str) -> Option<Vals> {
        let Some(PExpr::Call(callee)) = self.file(fi).exprs.get(e as usize) else {
            return None;
        };
        let classes = self.expr(fi, *callee, false);
        if classes.is_empty() || !classes.iter().all(|v| matches!(v, Val::Class(..))) {
            return None;
        }
        let mut out = Vals::new();
        for c in classes {
            let Val::Class(c, inf) = c else { continue };
            let init = self.class_attr(&c, "__init__", 0, inf, true);
            if init.is_empty() || !init.iter().all(|v| matches!(v, Val::Bound(..))) {
                return None;
            }
            for f in init {
                let Val::Bound(f, _) = f else { continue };
                let v = self.sets_self(fi, e, &f, attr)?;
                join(&mut out, v);
            }
        }
        Some(out)
    }

    /// What method call `call` of file `fi` sets attribute `attr` of its object to, when every
    /// method it can call sets it on every return.
    fn call_sets(&mut self, fi: usize, call: u32, attr: &str) -> Option<Vals> {
        let Some(PExpr::Call(callee)) = self.file(fi).exprs.get(call as usize) else {
            return None;
        };
        let methods = self.expr(fi, *callee, false);
        if methods.is_empty() || !methods.iter().all(|v| matches!(v, Val::Bound(..))) {
            return None;
        }
        let mut out = Vals::new();
        for m in methods {
            let Val::Bound(f, _) = m else { continue };
            let v = self.sets_self(fi, call, &f, attr)?;
            join(&mut out, v);
        }
        Some(out)
    }

    /// The value method `f`, called at `call` of file `fi`, sets `self.attr` to on every return
    /// (a parameter's value is this call's argument).
    fn sets_self(&mut self, fi: usize, call: u32, f: &str, attr: &str) -> Option<Vals> {
        let &(dfi, ddi) = self.index.funcs.get(f)?;
        let file: &'a PyFile = self.file(dfi);
        let def: &'a PyDef = &file.defs[ddi];
        let &(_, value) = def.sets_self.iter().rev().find(|(a, _)| a == attr)?;
        let param = match file.exprs.get(value as usize) {
            Some(PExpr::Name { scope, name }) if *scope == def.scope => {
                let binds = file.scopes[*scope as usize].bindings.get(name)?;
                match (file.reach(value), binds.as_slice()) {
                    (None, [PBind::Param { index, .. }]) => Some(*index),
                    (Some([Reach::Bind(i)]), _) => match binds.get(*i as usize) {
                        Some(PBind::Param { index, .. }) => Some(*index),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        };
        let v = match param {
            Some(index) => self.argument(fi, call, dfi, def, index, 1)?,
            None => self.expr(dfi, value, false),
        };
        Some(v.into_iter().map(Val::inferred).collect())
    }

    /// The argument call `call` of file `fi` passes to parameter `index` of `def` (in file
    /// `dfi`; `offset`: 1 when `self` is bound), or its default; `None` when the call unpacks
    /// arguments.
    pub(super) fn argument(
        &mut self,
        fi: usize,
        call: u32,
        dfi: usize,
        def: &'a PyDef,
        index: u32,
        offset: usize,
    ) -> Option<Vals> {
        let args: &'a [PArg] = self.file(fi).args(call);
        if args
            .iter()
            .any(|a| matches!(a, PArg::Star(_) | PArg::DoubleStar(_)))
        {
            return None;
        }
        let name = def.params.get(index as usize).map(|p| p.name.as_str());
        let positional = (index as usize)
            .checked_sub(offset)
            .and_then(|k| args.iter().filter(|a| matches!(a, PArg::Pos(_))).nth(k));
        let keyword = args
            .iter()
            .find(|a| matches!(a, PArg::Kw(n, _) if Some(n.as_str()) == name));
        Some(match (positional, keyword) {
            (Some(PArg::Pos(e)), _) | (None, Some(PArg::Kw(_, e))) => self.expr(fi, *e, false),
            _ => match def.params.get(index as usize).and_then(|p| p.default) {
                Some(d) => self.expr(dfi, d, false),
                None => Vals::new(),
            },
        })
    }
}
