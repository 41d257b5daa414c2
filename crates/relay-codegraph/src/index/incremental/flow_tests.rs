//! The value-flow table after each update equals that of a full index of the same tree (the
//! replay in `python::flow_update` must reproduce the bounded fixpoint exactly), over edits
//! that add, change and remove flows across modules.

use std::path::Path;

use super::Indexer;

/// Rewrites `rel` under `root`, replacing `from` (which must occur) by `to`, updates the
/// indexer, and asserts its value-flow table and graph equal a full index's.
#[track_caller]
fn step(indexer: &mut Indexer, root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{rel} does not contain {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
    indexer.update(&[path]).expect("update");
    check(indexer, root, &format!("{rel}: {from:?} => {to:?}"));
}

#[track_caller]
fn check(indexer: &Indexer, root: &Path, what: &str) {
    let full = Indexer::full(root).expect("full");
    assert!(
        indexer.py_flow == full.py_flow,
        "value-flow table after {what} differs from a full index's"
    );
    assert!(
        indexer.graph() == full.graph(),
        "graph after {what} differs from a full index's"
    );
}

fn has_edge(indexer: &Indexer, from: &str, to: &str) -> bool {
    indexer
        .graph()
        .edges
        .iter()
        .any(|e| e.from == from && e.to.as_deref() == Some(to))
}

const LIB: &str = "\
def a():
    pass


def b():
    pass


def apply(f):
    f()


def make():
    return a


REG = {}


def register(name, fn):
    REG[name] = fn


def dispatch(name):
    REG[name]()


def keep(x):
    y = x
    return y


def hold(x):
    y = x
    return y


def c0():
    return a


def c1():
    return c0()


class Box:
    def __init__(self, fn):
        self.fn = fn

    def run(self):
        self.fn()
";

const MID: &str = "\
from lib import make, Box, c1, keep, a, b


h = make()
box = Box(a)


def c2():
    return c1()


def c3():
    return c2()


class Sub:
    pass
";

const MAIN: &str = "\
from lib import apply, register, dispatch, keep, a, b
from mid import h, box, c3, Sub

apply(a)
h()
register(\"x\", a)
box.run()
c3()()
Sub().run()
k = keep(a)
k()
";

#[test]
fn replayed_value_flow_equals_full_after_edits() {
    use crate::index::python::flow_update::PATCHED_ENTRIES_LIMIT;
    use std::sync::atomic::Ordering;
    // Each round's table patched entry by entry, then (no entry patched) by the semi-naive
    // step on the round before.
    let limit = PATCHED_ENTRIES_LIMIT.load(Ordering::Relaxed);
    edits();
    PATCHED_ENTRIES_LIMIT.store(0, Ordering::Relaxed);
    edits();
    PATCHED_ENTRIES_LIMIT.store(limit, Ordering::Relaxed);
}

fn edits() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    std::fs::write(root.join("lib.py"), LIB).expect("write");
    std::fs::write(root.join("mid.py"), MID).expect("write");
    std::fs::write(root.join("main.py"), MAIN).expect("write");
    // Thirteen functions: more values than a set holds (`eval::MAX_VALUES`).
    let many: String = (0..13)
        .map(|i| format!("def f{i}():\n    pass\n\n\n"))
        .collect();
    let calls: String = (0..13).map(|i| format!("keep(f{i})\n")).collect();
    std::fs::write(
        root.join("many.py"),
        format!("from lib import keep\n\n\n{many}{calls}"),
    )
    .expect("write");
    let mut indexer = Indexer::full(root).expect("full");
    check(&indexer, root, "the full index");
    assert!(has_edge(&indexer, "main", "lib.a"));

    // A returned function changes in one module and is called in a third (through `mid.h`).
    step(
        &mut indexer,
        root,
        "lib.py",
        "def make():\n    return a\n",
        "def make():\n    return b\n",
    );
    assert!(has_edge(&indexer, "main", "lib.b"));
    // ... and stops being a function: the flow is removed.
    step(
        &mut indexer,
        root,
        "lib.py",
        "def make():\n    return b\n",
        "def make():\n    return None\n",
    );
    // A callback removed, then passed by keyword.
    step(&mut indexer, root, "main.py", "apply(a)\n", "");
    assert!(!has_edge(&indexer, "lib.apply", "lib.a"));
    step(&mut indexer, root, "main.py", "h()\n", "h()\napply(f=b)\n");
    assert!(has_edge(&indexer, "lib.apply", "lib.b"));
    // The parameter is renamed (a body-level edit for the importers' name lookups): the
    // keyword no longer binds it.
    step(
        &mut indexer,
        root,
        "lib.py",
        "def apply(f):\n    f()\n",
        "def apply(g):\n    g()\n",
    );
    step(
        &mut indexer,
        root,
        "lib.py",
        "def apply(g):\n    g()\n",
        "def apply(f):\n    f()\n",
    );
    // A stored value removed, and a different one stored.
    step(
        &mut indexer,
        root,
        "main.py",
        "register(\"x\", a)\n",
        "register(\"x\", b)\n",
    );
    assert!(has_edge(&indexer, "lib.dispatch", "lib.b"));
    // The attribute store of a class in one module, through an instance built in a second
    // and used in a third.
    step(
        &mut indexer,
        root,
        "mid.py",
        "box = Box(a)\n",
        "box = Box(b)\n",
    );
    step(
        &mut indexer,
        root,
        "lib.py",
        "        self.fn = fn\n",
        "        self.fn = a\n",
    );
    // The head of a chain longer than the rounds of the fixpoint changes.
    step(
        &mut indexer,
        root,
        "lib.py",
        "def c0():\n    return a\n",
        "def c0():\n    return b\n",
    );
    step(
        &mut indexer,
        root,
        "mid.py",
        "def c2():\n    return c1()\n",
        "def c2():\n    return c0()\n",
    );
    // A set grows past its bound and shrinks back below it.
    step(
        &mut indexer,
        root,
        "main.py",
        "k = keep(a)\n",
        "k = keep(a)\nkeep(b)\n",
    );
    step(&mut indexer, root, "many.py", "keep(f12)\n", "");
    step(&mut indexer, root, "many.py", "keep(f11)\n", "");
    step(
        &mut indexer,
        root,
        "many.py",
        "keep(f0)\n",
        "keep(f0)\nkeep(f11)\nkeep(f12)\n",
    );
    // A base class appears in another module: the MRO of `Sub` changes.
    step(
        &mut indexer,
        root,
        "mid.py",
        "class Sub:\n",
        "class Sub(Box):\n",
    );
    assert!(has_edge(&indexer, "main", "lib.Box.run"));
    step(
        &mut indexer,
        root,
        "lib.py",
        "class Box:\n",
        "class Base:\n    def run(self):\n        pass\n\n\nclass Box(Base):\n",
    );
    step(
        &mut indexer,
        root,
        "lib.py",
        "    def run(self):\n        self.fn()\n",
        "    def go(self):\n        self.fn()\n",
    );
    // A set that reaches its bound a round after it started to flow: what flowed from it
    // before stays (the fixpoint only adds), even though a module no longer contributes it.
    let held: String = (0..11).map(|i| format!("hold(f{i})\n")).collect();
    std::fs::write(
        root.join("held.py"),
        format!("from lib import hold\n\n\n{many}def mk():\n    return f11\n\n\ndef mk2():\n    return f12\n\n\n{held}hold(mk())\nhold(mk2())\nhold(f0)()\n"),
    )
    .expect("write");
    indexer.update(&[root.join("held.py")]).expect("update");
    check(&indexer, root, "a module added");
    step(
        &mut indexer,
        root,
        "lib.py",
        "def a():\n    pass\n",
        "def a():\n    b()\n",
    );
    step(
        &mut indexer,
        root,
        "held.py",
        "    return f12\n",
        "    return f10\n",
    );
    step(
        &mut indexer,
        root,
        "held.py",
        "    return f10\n",
        "    return f12\n",
    );

    // A base class that did not resolve appears: the MRO of a class whose instances reach a
    // module that reads neither the base's module nor names it changes.
    std::fs::write(root.join("base.py"), "X = 1\n").expect("write");
    std::fs::write(
        root.join("sub.py"),
        "from base import Base\n\n\nclass Sub2(Base):\n    pass\n\n\ndef make_sub():\n    return Sub2()\n",
    )
    .expect("write");
    std::fs::write(
        root.join("user.py"),
        "import sub\nfrom lib import a\n\n\ndef use(s):\n    s.run(a)\n\n\nuse(sub.make_sub())\n",
    )
    .expect("write");
    let added = ["base.py", "sub.py", "user.py"].map(|f| root.join(f));
    indexer.update(&added).expect("update");
    check(&indexer, root, "modules added");
    step(
        &mut indexer,
        root,
        "base.py",
        "X = 1\n",
        "X = 1\n\n\nclass Base:\n    def run(self, fn):\n        fn()\n",
    );
    assert!(has_edge(&indexer, "base.Base.run", "lib.a"));
    step(
        &mut indexer,
        root,
        "base.py",
        "        fn()\n",
        "        pass\n",
    );
    step(
        &mut indexer,
        root,
        "base.py",
        "class Base:\n",
        "class Base2:\n",
    );

    // A function added, a module added and one deleted (a full solve).
    step(
        &mut indexer,
        root,
        "lib.py",
        "def b():\n",
        "def b2():\n    return a\n\n\ndef b():\n",
    );
    std::fs::write(
        root.join("extra.py"),
        "from lib import apply, b2\n\napply(b2())\n",
    )
    .expect("write");
    indexer.update(&[root.join("extra.py")]).expect("update");
    check(&indexer, root, "a module added");
    step(
        &mut indexer,
        root,
        "extra.py",
        "apply(b2())\n",
        "apply(b2)\n",
    );
    std::fs::remove_file(root.join("many.py")).expect("rm");
    indexer.update(&[root.join("many.py")]).expect("update");
    check(&indexer, root, "a module deleted");
    step(&mut indexer, root, "main.py", "k()\n", "k()\nkeep(keep)\n");
}

const ORDER_LIB: &str = "\
def a():
    pass


def b():
    pass


HANDLER = a
HANDLER = b


def run(cb=a):
    cb()


class Box:
    def __init__(self, fn):
        self.fn = fn

    def change(self, fn):
        self.fn = fn


class Base:
    def go(self):
        self.hook()

    def hook(self):
        pass


class Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def work(self):
        pass
";

const ORDER_OTHER: &str = "\
def a():
    pass
";

const ORDER_MAIN: &str = "\
from lib import *
from other import *
from lib import HANDLER, run, Box, Base, Ctx, b


class Sub(Base):
    def hook(self):
        pass


HANDLER()
a()
run(b)
box = Box(a)
box.change(b)
box.fn()
Sub().go()
with Ctx() as c:
    c.work()
";

/// The flows that follow the order of statements (names rebound, star imports in order,
/// per-object attributes, defaults left out, `self` as the receivers' classes, `with`) after
/// edits on both sides of each: the replayed table and the graph equal a full index's.
#[test]
fn ordered_flows_replayed_equal_full_after_edits() {
    use crate::index::python::flow_update::PATCHED_ENTRIES_LIMIT;
    use std::sync::atomic::Ordering;
    let limit = PATCHED_ENTRIES_LIMIT.load(Ordering::Relaxed);
    ordered_edits();
    PATCHED_ENTRIES_LIMIT.store(0, Ordering::Relaxed);
    ordered_edits();
    PATCHED_ENTRIES_LIMIT.store(limit, Ordering::Relaxed);
}

fn ordered_edits() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    std::fs::write(root.join("lib.py"), ORDER_LIB).expect("write");
    std::fs::write(root.join("other.py"), ORDER_OTHER).expect("write");
    std::fs::write(root.join("main.py"), ORDER_MAIN).expect("write");
    let mut indexer = Indexer::full(root).expect("full");
    check(&indexer, root, "the full index");
    assert!(has_edge(&indexer, "main", "lib.b"));
    assert!(has_edge(&indexer, "main", "other.a"));
    assert!(!has_edge(&indexer, "main", "lib.a"));
    assert!(!has_edge(&indexer, "lib.run", "lib.a"));
    assert!(has_edge(&indexer, "lib.Base.go", "main.Sub.hook"));
    assert!(has_edge(&indexer, "main", "lib.Ctx.__enter__"));
    // The module's last binding of an exported name swaps.
    step(
        &mut indexer,
        root,
        "lib.py",
        "HANDLER = a\nHANDLER = b\n",
        "HANDLER = b\nHANDLER = a\n",
    );
    assert!(has_edge(&indexer, "main", "lib.a"));
    // The later star import stops shadowing `a`, then shadows it again.
    step(&mut indexer, root, "other.py", "def a():\n", "def z():\n");
    step(&mut indexer, root, "other.py", "def z():\n", "def a():\n");
    // A call leaves the default out.
    step(&mut indexer, root, "main.py", "run(b)\n", "run(b)\nrun()\n");
    assert!(has_edge(&indexer, "lib.run", "lib.a"));
    // The method no longer sets the attribute on every return.
    step(
        &mut indexer,
        root,
        "lib.py",
        "    def change(self, fn):\n        self.fn = fn\n",
        "    def change(self, fn):\n        if fn:\n            self.fn = fn\n",
    );
    assert!(has_edge(&indexer, "main", "lib.a"));
    // `Base` itself receives `go`: `self` is a `Base` too.
    step(
        &mut indexer,
        root,
        "main.py",
        "Sub().go()\n",
        "Sub().go()\nBase().go()\n",
    );
    assert!(has_edge(&indexer, "lib.Base.go", "lib.Base.hook"));
    // `__enter__` returns something else.
    step(
        &mut indexer,
        root,
        "lib.py",
        "    def __enter__(self):\n        return self\n",
        "    def __enter__(self):\n        return a\n",
    );
    assert!(!has_edge(&indexer, "main", "lib.Ctx.work"));
}
