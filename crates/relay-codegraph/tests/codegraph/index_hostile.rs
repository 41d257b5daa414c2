//! A repository built to hurt the indexer: nestings deep enough to overflow any recursive walker,
//! a binary blob named `.py`, a file over the size cap, invalid UTF-8 in `.go` and `.py`, a
//! non-UTF-8 `go.mod`, a FIFO and a symlink loop, next to sane files. The index must end normally,
//! index the sane files and count what it skipped.
//!
//! A stack overflow aborts the process, which would take the test harness down with it: the index
//! runs in a child process (this test binary re-executed with [`CHILD_ROOT_ENV`] set), on a thread
//! with the indexer's normal stack size, and the parent asserts that the child exited normally.

use std::path::Path;
use std::process::Command;

use relay_codegraph::index::{INDEX_STACK_BYTES, IndexOptions, IndexOutput, index_repository};

/// Set in the child process: the repository to index.
const CHILD_ROOT_ENV: &str = "RELAY_TEST_HOSTILE_ROOT";

/// 250,000 nested parentheses in Python.
fn nested_parens_py() -> String {
    const DEPTH: usize = 250_000;
    format!("X = {}1{}\n", "(".repeat(DEPTH), ")".repeat(DEPTH))
}

/// A 300,000-term `1+1+…`.
fn long_sum(terms: usize) -> String {
    let mut sum = "1+".repeat(terms - 1);
    sum.push('1');
    sum
}

fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

/// The sane files whose symbols must survive their neighbours.
fn write_sane(root: &Path) {
    write(root, "go.mod", "module example.com/hostile\n");
    write(
        root,
        "sane/sane.go",
        "package sane\n\nfunc Helper() int { return 1 }\n\nfunc Caller() int { return Helper() }\n",
    );
    write(
        root,
        "pkg/sane.py",
        "def helper():\n    return 1\n\ndef caller():\n    return helper()\n",
    );
}

/// Only the nestings (the part that aborts the process without bounded recursion).
fn write_nestings(root: &Path) {
    write(root, "deep/parens.py", nested_parens_py());
    write(root, "deep/sum.py", format!("X = {}\n", long_sum(300_000)));
    write(
        root,
        "deep/sum.go",
        format!("package deep\n\nvar X = {}\n", long_sum(300_000)),
    );
}

/// Everything else hostile.
fn write_other_hostile(root: &Path) {
    // A binary blob named .py.
    let blob: Vec<u8> = (0..64 * 1024u32).map(|i| (i * 7 % 256) as u8).collect();
    write(root, "blob/data.py", blob);
    // A 20 MB single-line file.
    write(
        root,
        "big/one_line.py",
        format!("X = '{}'\n", "a".repeat(20 * 1024 * 1024)),
    );
    // Invalid UTF-8 in .go and .py.
    write(
        root,
        "bad/latin1.py",
        b"def caf\xe9():\n    return '\xff\xfe'\n",
    );
    write(
        root,
        "badgo/latin1.go",
        b"package badgo\n\n// caf\xe9\nfunc F() {}\n",
    );
    // A go.mod that is not UTF-8 (in its own module directory).
    write(
        root,
        "latin/go.mod",
        b"module example.com/caf\xe9\n\ngo 1.21\n",
    );
    write(root, "latin/x.go", "package latin\n\nfunc L() {}\n");
    // A FIFO named like a source file.
    let fifo = root.join("fifo/pipe.py");
    std::fs::create_dir_all(fifo.parent().expect("a parent")).expect("mkdir");
    let status = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo failed");
    // A symlink loop (a directory pointing at itself and a file link pointing at itself).
    std::os::unix::fs::symlink(".", root.join("fifo/loop")).expect("symlink");
    std::os::unix::fs::symlink("self.py", root.join("fifo/self.py")).expect("symlink");
}

fn index_on_index_stack(root: &Path) -> IndexOutput {
    let root = root.to_path_buf();
    std::thread::Builder::new()
        .stack_size(INDEX_STACK_BYTES)
        .spawn(move || {
            index_repository(
                &root,
                &IndexOptions {
                    threads: 2,
                    ..IndexOptions::default()
                },
            )
        })
        .expect("spawn the index thread")
        .join()
        .expect("the index does not panic")
        .expect("the index succeeds")
}

/// The child half: indexes the repository named by [`CHILD_ROOT_ENV`] (a no-op in a normal run)
/// and checks the sane files; a failed assertion or an abort makes the child exit non-zero.
#[test]
fn child_indexes_the_hostile_repository() {
    let Some(root) = std::env::var_os(CHILD_ROOT_ENV) else {
        return;
    };
    let output = index_on_index_stack(Path::new(&root));
    let qnames: Vec<&str> = output
        .graph
        .symbols
        .iter()
        .map(|s| s.qname.as_str())
        .collect();
    for wanted in ["example.com/hostile/sane.Helper", "pkg.sane.helper"] {
        assert!(qnames.contains(&wanted), "{wanted} missing from {qnames:?}");
    }
    assert!(
        output
            .graph
            .edges
            .iter()
            .any(|e| e.from == "pkg.sane.caller" && e.to.as_deref() == Some("pkg.sane.helper")),
        "the sane Python call is resolved"
    );
    let stats = serde_json::to_string(&output.stats).expect("stats serialise");
    println!("{STATS_PREFIX}{stats}");
}

/// Marks the child's stats line on its stdout.
const STATS_PREFIX: &str = "hostile-index-stats: ";

/// Runs the child half on `root`, asserts it exited normally and returns its index stats.
#[track_caller]
fn assert_child_indexes(root: &Path) -> serde_json::Value {
    let exe = std::env::current_exe().expect("the test binary");
    let output = Command::new(exe)
        .args([
            "--exact",
            "index_hostile::child_indexes_the_hostile_repository",
            "--nocapture",
        ])
        .env(CHILD_ROOT_ENV, root)
        .output()
        .expect("the child runs");
    assert!(
        output.status.success(),
        "the child index failed ({:?}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix(STATS_PREFIX))
        .unwrap_or_else(|| panic!("no stats line in the child's output:\n{stdout}"));
    serde_json::from_str(line).expect("the stats line is JSON")
}

#[test]
fn deep_nesting_does_not_abort_the_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_sane(dir.path());
    write_nestings(dir.path());
    let stats = assert_child_indexes(dir.path());
    // The three nestings are indexed down to the limit, not skipped.
    assert_eq!(stats["depth_limited"], 3, "{stats}");
    assert_eq!(stats["skipped"], serde_json::json!({}), "{stats}");
}

#[test]
fn hostile_files_are_skipped_and_counted_and_the_sane_ones_indexed() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_sane(dir.path());
    write_nestings(dir.path());
    write_other_hostile(dir.path());
    let stats = assert_child_indexes(dir.path());
    assert_eq!(
        stats["skipped"],
        serde_json::json!({
            "binary": 1,
            "not_utf8": 2,
            "too_large": 1,
            // The FIFO and the self-referencing symlink.
            "not_regular_file": 2,
        }),
        "{stats}"
    );
    // sane.go, sane.py, the three nestings and latin/x.go (its go.mod read leniently).
    assert_eq!(stats["files"], 6, "{stats}");
}

/// The generator for `relay index` figures: writes the hostile repository (or, with
/// `RELAY_HOSTILE_BASELINE=1`, only its sane files) to `RELAY_HOSTILE_OUT`. A no-op otherwise.
#[test]
fn generate_hostile_repository_for_figures() {
    let Some(out) = std::env::var_os("RELAY_HOSTILE_OUT") else {
        return;
    };
    let root = Path::new(&out);
    write_sane(root);
    if std::env::var_os("RELAY_HOSTILE_BASELINE").is_none() {
        write_nestings(root);
        write_other_hostile(root);
    }
}

/// Programs built to blow up the value flow that follows statement order (`body/order.rs`):
/// thousands of names cloned at hundreds of nested branches, a name rebound thousands of times
/// in a loop, hundreds of star imports, and chains of thousands of stores and method calls on
/// one object. The index finishes (every state and set is bounded), the sane call beside them
/// resolves, and a value that overflowed a set is unresolved rather than guessed.
#[test]
fn hostile_orders_of_statements_stay_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write_sane(root);
    write(root, "flow/__init__.py", "");
    let names: String = (0..1_500).map(|i| format!("    n{i} = g\n")).collect();
    let mut nested = String::new();
    for depth in 0..300 {
        let pad = "    ".repeat(depth + 1);
        nested.push_str(&format!("{pad}if c:\n{pad}    n{depth} = h\n{pad}else:\n"));
    }
    nested.push_str(&format!("{}pass\n", "    ".repeat(301)));
    write(
        root,
        "flow/branches.py",
        format!(
            "def g():\n    pass\n\n\ndef h():\n    pass\n\n\ndef f(c):\n{names}{nested}    n0()\n"
        ),
    );
    let rebinds: String = (0..5_000)
        .map(|i| format!("        x = f{}\n        x()\n", i % 20))
        .collect();
    let funcs: String = (0..20)
        .map(|i| format!("def f{i}():\n    pass\n\n\n"))
        .collect();
    write(
        root,
        "flow/rebind.py",
        format!("{funcs}def run(xs):\n    x = f0\n    for i in xs:\n{rebinds}    x()\n"),
    );
    let exported: String = (0..2_000)
        .map(|i| format!("def e{i}():\n    pass\n\n\n"))
        .collect();
    write(root, "flow/names.py", exported);
    let stars: String = (0..500).map(|_| "from flow.names import *\n").collect();
    let reads: String = (0..2_000).map(|i| format!("e{i}()\n")).collect();
    write(root, "flow/stars.py", format!("{stars}{reads}"));
    let stores: String = (0..5_000)
        .map(|i| format!("    d[\"k\"] = f{}\n    box.change(f{})\n", i % 20, i % 20))
        .collect();
    write(
        root,
        "flow/events.py",
        format!(
            "{funcs}class Box:\n    def __init__(self, fn):\n        self.fn = fn\n\n    \
             def change(self, fn):\n        self.fn = fn\n\n\n\
             def run():\n    d = {{}}\n    box = Box(f0)\n{stores}    d[\"k\"]()\n    box.fn()\n"
        ),
    );
    let output = index_on_index_stack(root);
    let calls = |from: &str| -> Vec<Option<String>> {
        output
            .graph
            .edges
            .iter()
            .filter(|e| e.from == from && e.kind == relay_codegraph::model::EdgeKind::Calls)
            .map(|e| e.to.clone())
            .collect()
    };
    assert!(
        calls("pkg.sane.caller").contains(&Some("pkg.sane.helper".to_owned())),
        "the sane Python call is resolved"
    );
    // The last store and the last method call win, however long the chain.
    let events = calls("flow.events.run");
    assert!(
        events.contains(&Some("flow.events.f19".to_owned())),
        "{events:?}"
    );
    assert!(
        !events.contains(&Some("flow.events.f0".to_owned())),
        "{events:?}"
    );
    // The later star imports are the same module: every read resolves to it.
    assert!(calls("flow.stars").contains(&Some("flow.names.e1999".to_owned())));
    // 1,500 names in one scope: past the tracked names, the scope is flow-insensitive, and
    // the value of `n0` (`g`, or `h` on one branch) still resolves.
    assert!(calls("flow.branches.f").contains(&Some("flow.branches.g".to_owned())));
}
