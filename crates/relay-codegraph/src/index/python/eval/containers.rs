//! Values of built-in containers beyond literals: slices and starred targets, items appended
//! to a list, keys named by a constant; and attributes inherited from a class outside the
//! repository.

use super::{Eval, Val, Vals, join, one, unknown};
use crate::index::python::body::{APPENDED_KEY, NAME_KEY, SLICE_KEY};
use crate::index::python::{PBind, PExpr, PyFile};

/// An entry of a container written in place: an item under a constant key (`None`: any key)
/// and its value expression.
pub(crate) struct LiteralEntry(pub Option<String>, pub u32);

/// The entries of container `ce` of `file`: a list/tuple/set/dict literal or comprehension
/// (`dict(k=v, …)` and `dict.fromkeys(ks, v)` are built as dict literals).
pub(crate) fn literal_entries(file: &PyFile, ce: u32) -> Vec<LiteralEntry> {
    match file.exprs.get(ce as usize) {
        Some(PExpr::Seq { items, indexed }) => items
            .iter()
            .enumerate()
            .map(|(i, e)| LiteralEntry((*indexed).then(|| format!("i:{i}")), *e))
            .collect(),
        Some(PExpr::Dict(items)) => items
            .iter()
            .map(|(k, e)| LiteralEntry(k.clone(), *e))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether container `ce` of `file` is a mapping (iterating it yields keys, which are not
/// tracked).
pub(crate) fn is_mapping(file: &PyFile, ce: u32) -> bool {
    matches!(file.exprs.get(ce as usize), Some(PExpr::Dict(_)))
}

/// Verbs that begin the CapWords names of functions in API bindings (`GetLastError`,
/// `CreateFile`, `LCMapStringEx`); a class's name is a noun phrase.
const FUNCTION_VERBS: &[&str] = &[
    "Add",
    "Allocate",
    "Cancel",
    "Close",
    "Connect",
    "Convert",
    "Copy",
    "Create",
    "Delete",
    "Disconnect",
    "Duplicate",
    "Enum",
    "Exit",
    "Find",
    "Flush",
    "Format",
    "Free",
    "Get",
    "Has",
    "Init",
    "Initialize",
    "Is",
    "Load",
    "Map",
    "Move",
    "Open",
    "Peek",
    "Post",
    "Query",
    "Read",
    "Register",
    "Release",
    "Remove",
    "Reset",
    "Resume",
    "Send",
    "Set",
    "Suspend",
    "Terminate",
    "Unload",
    "Unlock",
    "Unmap",
    "Unregister",
    "Wait",
    "Write",
];

/// Whether an external name is a class by its spelling (`Session`, `OrderedDict`,
/// `HTTPConnection`; not `get`, `MAX_SIZE`, nor a verb phrase such as `GetLastError` or
/// `LCMapStringEx`): calling it makes an instance.
pub(super) fn is_class_name(qname: &str) -> bool {
    let last = qname.rsplit('.').next().unwrap_or(qname);
    if !(last.starts_with(|c: char| c.is_ascii_uppercase())
        && last.bytes().any(|b| b.is_ascii_lowercase()))
    {
        return false;
    }
    // Past a leading acronym (`LC` of `LCMap`, `HTTP` of `HTTPConnection`), the first word.
    let bytes = last.as_bytes();
    let upper = bytes.iter().take_while(|b| b.is_ascii_uppercase()).count();
    let start = upper.saturating_sub(1);
    let rest = &last[start..];
    let word_len = 1 + rest[1..]
        .bytes()
        .take_while(|b| b.is_ascii_lowercase())
        .count();
    let more = rest.len() > word_len;
    !(more && FUNCTION_VERBS.contains(&&rest[..word_len]))
}

/// The integer of a constant index key (`i:3`).
fn index_of(key: Option<&str>) -> Option<i64> {
    key?.strip_prefix("i:")?.parse().ok()
}

impl<'a> Eval<'_, 'a> {
    /// The key of subscript `id` of file `fi` whose written key is `key`: a [`NAME_KEY`] is
    /// replaced by the constant string the name is bound to (`d[START]` with `START = "start"`),
    /// or `None` (any item) when it is bound to anything else.
    pub(super) fn subscript_key(
        &mut self,
        fi: usize,
        id: u32,
        key: Option<&str>,
    ) -> Option<String> {
        let key = key?;
        if key != NAME_KEY {
            return Some(key.to_owned());
        }
        let file: &'a PyFile = self.file(fi);
        // The key's name expression is the one built just before the subscript.
        let Some(PExpr::Name { scope, name }) =
            id.checked_sub(1).and_then(|k| file.exprs.get(k as usize))
        else {
            return None;
        };
        let mut current = Some(*scope);
        while let Some(si) = current {
            let sc = &file.scopes[si as usize];
            if let Some(binds) = sc.bindings.get(name) {
                return match binds.as_slice() {
                    [PBind::Assign(e)] => {
                        super::constant_string(file, *e).map(|s| format!("s:{s}"))
                    }
                    _ => None,
                };
            }
            current = sc.parent;
        }
        None
    }

    /// The value of `base[key]` for a subscript's key, a slice key (`r:START:END`) making
    /// [`Val::Slice`]s of the sequences.
    pub(super) fn subscript(&mut self, base: &[Val], key: Option<&str>) -> Vals {
        let Some(range) = key.and_then(|k| k.strip_prefix(SLICE_KEY)) else {
            return self.items(base, key);
        };
        let (start, end) = range.split_once(':').unwrap_or((range, ""));
        let (Ok(start), end) = (start.parse::<i64>(), end.parse::<i64>().ok()) else {
            return unknown();
        };
        let mut out = Vals::new();
        for b in base {
            match b {
                Val::Container(..) | Val::Slice(..) | Val::Args(_) => {
                    join(&mut out, one(Val::Slice(Box::new(b.clone()), start, end)));
                }
                _ => join(&mut out, unknown()),
            }
        }
        out
    }

    /// The items of slice `base[start:end]` under `key`.
    pub(super) fn slice_items(
        &mut self,
        base: &Val,
        start: i64,
        end: Option<i64>,
        key: Option<&str>,
    ) -> Vals {
        let inner = std::slice::from_ref(base);
        // A literal of known length: the range, and the index into it, are exact.
        if let Val::Container(cf, ce) = base
            && let Some(PExpr::Seq {
                items,
                indexed: true,
            }) = self.file(*cf as usize).exprs.get(*ce as usize)
        {
            let len = items.len() as i64;
            let norm = |i: i64| if i < 0 { (len + i).max(0) } else { i.min(len) };
            let (from, to) = (norm(start), norm(end.unwrap_or(len)));
            let picked = match index_of(key) {
                Some(k) if k >= 0 => from + k,
                Some(k) => to + k,
                None => {
                    let mut out = Vals::new();
                    for i in from..to {
                        let v = self.items(inner, Some(&format!("i:{i}")));
                        join(&mut out, v);
                    }
                    if end.is_none() {
                        // An open range runs past the literal, into what was appended.
                        let v = self.appended(base, None);
                        join(&mut out, v);
                    }
                    return out;
                }
            };
            return if (from..to).contains(&picked) {
                self.items(inner, Some(&format!("i:{picked}")))
            } else {
                Vals::new()
            };
        }
        match index_of(key) {
            Some(k) if k >= 0 && start >= 0 => self.items(inner, Some(&format!("i:{}", start + k))),
            Some(k) if k < 0 && end.is_none_or(|e| e < 0) => {
                self.items(inner, Some(&format!("i:{}", end.unwrap_or(0) + k)))
            }
            _ => self.items(inner, None),
        }
    }

    /// Items appended to a sequence (`xs.append(v)`) that a constant index `key` can reach:
    /// an append lands past the literal's items, so `xs[0]` of `xs = [a]` is never one.
    pub(super) fn appended(&mut self, container: &Val, key: Option<&str>) -> Vals {
        let Val::Container(cf, ce) = container else {
            return Vals::new();
        };
        let len = match self.file(*cf as usize).exprs.get(*ce as usize) {
            Some(PExpr::Seq {
                items,
                indexed: true,
            }) => items.len() as i64,
            Some(PExpr::Seq { .. }) => 0,
            _ => return Vals::new(),
        };
        match index_of(key) {
            Some(k) if (0..len).contains(&k) => Vals::new(),
            _ => self.read_stored(container, Some(APPENDED_KEY)),
        }
    }

    /// What calling an external name returns: an instance when the name is a class's.
    pub(super) fn external_result(q: &str) -> Vals {
        if is_class_name(q) {
            one(Val::ExternalInstance(q.to_owned()))
        } else {
            unknown()
        }
    }

    /// The external class that supplies the unresolved part of `class`'s MRO, when there is
    /// exactly one unresolved base along it and it names a class outside the repository.
    pub(super) fn external_base(&mut self, mro: &[Option<String>]) -> Option<String> {
        if mro.iter().filter(|c| c.is_none()).count() != 1 {
            return None;
        }
        let mut found = None;
        for c in mro.iter().flatten() {
            let &(fi, di) = self.index.classes.get(c.as_str())?;
            let bases: &'a [u32] = &self.file(fi).defs[di].bases;
            for &b in bases {
                match self.expr(fi, b, false).as_slice() {
                    [Val::Class(..)] | [Val::Builtin(_)] => {}
                    [Val::External(q)] if found.is_none() => found = Some(q.clone()),
                    _ => return None,
                }
            }
        }
        found
    }
}

/// Whether `filter`/`list`/`sorted` can keep a value's items as they are.
pub(super) fn is_iterable(v: &Val) -> bool {
    matches!(
        v,
        Val::Container(..) | Val::Values(_) | Val::Entries(_) | Val::Slice(..)
    )
}
