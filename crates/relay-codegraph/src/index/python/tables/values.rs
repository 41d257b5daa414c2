//! What an expression denotes ([`Val`]), and sets of values bounded by [`MAX_VALUES`]: what
//! the evaluator answers and the value-flow table holds.

/// At most this many values are tracked for one expression; a larger set becomes unknown
/// (precision first: a call through it produces an unresolved edge, not a guess).
pub(crate) const MAX_VALUES: usize = 12;

/// What an expression denotes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Val {
    Module(String),
    /// A class (`true`: inferred, not declared).
    Class(String, bool),
    Instance(String, bool),
    Func(String, bool),
    /// A method bound to an instance (or a classmethod to its class): its first parameter is
    /// taken.
    Bound(String, bool),
    Super(String),
    Builtin(String),
    /// A name of a module that is not in the repository (`requests.get`).
    External(String),
    /// A container literal or comprehension: (file, expression).
    Container(u32, u32),
    /// The `*args` tuple / `**kwargs` dict of a function.
    Args(String),
    Kwargs(String),
    /// The generator a generator function returns.
    Gen(String),
    /// `d.values()` of a container: iterating yields its items.
    Values(Box<Val>),
    /// `d.items()` of a container: iterating yields [`Val::Entry`] pairs.
    Entries(Box<Val>),
    /// A `(key, value)` pair of a container: item 1 is any of its items.
    Entry(Box<Val>),
    /// `xs[start:end]` of a sequence (`end` `None`: to the end), also what a starred target
    /// binds (`first, *rest = xs` binds `rest` to `xs[1:]`).
    Slice(Box<Val>, i64, Option<i64>),
    /// An instance of a class outside the repository (`requests.Session()`): a capitalised
    /// external name called.
    ExternalInstance(String),
    /// An attribute of an external class reached through an instance or a subclass
    /// (`self.start()` in a `threading.Thread` subclass): calling it calls the external name;
    /// nothing is known of its own attributes or result.
    ExternalMethod(String),
    /// In a parameter's entry of the flow table: a call left the argument out (its default
    /// applies). Never the value of an expression.
    Omitted,
    Unknown,
}

/// The files an evaluation read (indexes into the index's files).
pub(crate) type FilesRead = rustc_hash::FxHashSet<u32>;

/// A sorted, deduplicated set of values.
pub(crate) type Vals = Vec<Val>;

impl Val {
    pub(crate) fn inferred(self) -> Val {
        match self {
            Val::Class(c, _) => Val::Class(c, true),
            Val::Instance(c, _) => Val::Instance(c, true),
            Val::Func(f, _) => Val::Func(f, true),
            Val::Bound(f, _) => Val::Bound(f, true),
            other => other,
        }
    }
}

/// Adds `more` to `into` (bounded by [`MAX_VALUES`]).
pub(crate) fn join(into: &mut Vals, more: Vals) {
    if more.is_empty() {
        return;
    }
    into.extend(more);
    into.sort();
    into.dedup();
    if into.len() > MAX_VALUES {
        *into = vec![Val::Unknown];
    }
}

pub(crate) fn one(v: Val) -> Vals {
    vec![v]
}

pub(crate) fn unknown() -> Vals {
    vec![Val::Unknown]
}
