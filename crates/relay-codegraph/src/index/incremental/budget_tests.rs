//! The parse memory budget and the per-file cap, through a whole index: however many threads
//! parse, the parses in flight stay within `parse_memory_bytes`, and a file over `max_file_bytes`
//! is counted as skipped `too_large`.

use super::Indexer;
use crate::index::IndexOptions;
use crate::index::budget::parse_cost;

/// A Go file of `funcs` small functions, each calling the previous one.
fn generated_go(funcs: usize) -> String {
    let mut out = String::from("package gen\n\n");
    for i in 0..funcs {
        let prev = i.saturating_sub(1);
        out.push_str(&format!(
            "func F{i}(x int) int {{ return F{prev}(x) + {i} }}\n"
        ));
    }
    out
}

fn repo_of_eight() -> (tempfile::TempDir, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("go.mod"), "module example.com/gen\n").expect("go.mod");
    let text = generated_go(400);
    for i in 0..8 {
        std::fs::write(dir.path().join(format!("gen{i}.go")), &text).expect("write");
    }
    (dir, text.len() as u64)
}

#[test]
fn the_parses_in_flight_stay_within_the_budget_at_any_thread_count() {
    let (dir, len) = repo_of_eight();
    // Room for one parse of these files at a time, with sixteen threads.
    let opts = IndexOptions {
        threads: 16,
        parse_memory_bytes: parse_cost(len) + parse_cost(len) / 2,
        ..IndexOptions::default()
    };
    let indexer = Indexer::full_with(dir.path(), opts).expect("index");
    assert_eq!(indexer.parse_peak, 1);
    assert_eq!(indexer.stats().go_files, 8);
    // The budget changes nothing but the schedule.
    let unbounded = IndexOptions {
        threads: 16,
        parse_memory_bytes: 0,
        ..IndexOptions::default()
    };
    let free = Indexer::full_with(dir.path(), unbounded).expect("index");
    assert_eq!(free.graph(), indexer.graph());
    assert!(free.parse_peak >= 1);
}

#[test]
fn files_over_the_cap_are_skipped_as_too_large_and_updates_keep_the_cap() {
    let (dir, len) = repo_of_eight();
    std::fs::write(
        dir.path().join("small.go"),
        "package gen\n\nfunc Small() {}\n",
    )
    .expect("small");
    let opts = IndexOptions {
        max_file_bytes: len - 1,
        ..IndexOptions::default()
    };
    let mut indexer = Indexer::full_with(dir.path(), opts).expect("index");
    assert_eq!(indexer.stats().go_files, 1);
    assert_eq!(indexer.stats().skipped.get("too_large"), Some(&8));
    // An update that grows the small file past the cap skips it too.
    let small = dir.path().join("small.go");
    std::fs::write(&small, generated_go(400)).expect("grow");
    indexer.update(&[small]).expect("update");
    assert_eq!(indexer.stats().go_files, 0);
    assert_eq!(indexer.stats().skipped.get("too_large"), Some(&9));
}
