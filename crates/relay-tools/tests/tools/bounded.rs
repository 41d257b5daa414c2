//! The tools stay bounded whatever the repository holds: grep keeps lines only for the files it
//! can show, caps the line buffer, and every call stops when cancelled or past its deadline.

use std::sync::Arc;
use std::time::Duration;

use crate::common::write;
use relay_tools::control::{CallControl, Stop};
use relay_tools::sandbox::Sandbox;
use relay_tools::search::{MAX_LINE_BUFFER_BYTES, SearchLimits, SearchQuery, search};
use relay_tools::{ToolContext, ToolError, ToolLimits, ToolRegistry};

const LIMITS: SearchLimits = SearchLimits {
    keep_matches: 50,
    max_line_chars: 300,
};

/// 400 files with 3 matches each.
fn many_matching_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..400 {
        write(
            dir.path(),
            &format!("src/f{index:03}.txt"),
            "needle one\nhay\nneedle two\nneedle three\n",
        );
    }
    dir
}

fn query(sandbox: &Sandbox) -> SearchQuery {
    SearchQuery {
        pattern: "needle".into(),
        literal: true,
        case_insensitive: false,
        start: sandbox.resolve(".").unwrap(),
        glob: None,
        context: 0,
    }
}

#[test]
fn grep_keeps_lines_only_for_the_files_it_can_show() {
    let dir = many_matching_files();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let outcome = search(&sandbox, &query(&sandbox), LIMITS, &CallControl::default()).unwrap();
    // Every match is counted...
    assert_eq!(outcome.total_matches, 1_200);
    assert_eq!(outcome.total_files(), 400);
    assert_eq!(outcome.stopped, None);
    // ...but lines are kept only for the first files by path that fill the shown cap.
    let kept: Vec<&str> = outcome.files.iter().map(|f| f.path.as_str()).collect();
    let expected: Vec<String> = (0..17).map(|i| format!("src/f{i:03}.txt")).collect();
    assert_eq!(kept, expected);

    let result = crate::common::ok(
        dir.path(),
        "grep",
        serde_json::json!({ "pattern": "needle" }),
    );
    assert!(
        result.starts_with("src/f000.txt:1: needle one\n"),
        "{result}"
    );
    assert!(
        result.contains("src/f016.txt:3: needle two\n") && !result.contains("src/f016.txt:4:"),
        "{result}"
    );
    assert!(
        result.contains("Showing 50 of 1,200 matches in 400 files"),
        "{result}"
    );
}

#[test]
fn a_line_longer_than_the_buffer_cap_is_not_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut line = "x".repeat(MAX_LINE_BUFFER_BYTES + 1024);
    line.push_str(" needle\n");
    write(dir.path(), "min.js", &line);
    write(dir.path(), "ok.txt", "needle\n");
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let outcome = search(&sandbox, &query(&sandbox), LIMITS, &CallControl::default()).unwrap();
    assert_eq!(outcome.long_line_files, 1);
    assert_eq!(outcome.total_matches, 1);
    let result = crate::common::ok(
        dir.path(),
        "grep",
        serde_json::json!({ "pattern": "needle" }),
    );
    assert!(
        result.contains("1 match in 1 file; 1 file with a line over 2 MiB not searched"),
        "{result}"
    );
}

#[test]
fn a_cancelled_grep_stops() {
    let dir = many_matching_files();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let control = CallControl::default();
    control.cancel();
    assert_eq!(
        search(&sandbox, &query(&sandbox), LIMITS, &control).unwrap_err(),
        ToolError::Cancelled
    );
}

#[test]
fn past_its_deadline_grep_answers_with_lower_bounds_and_walks_fail() {
    let dir = many_matching_files();
    let context = ToolContext::new(dir.path(), ToolLimits::default())
        .unwrap()
        .with_control(CallControl::with_timeout(Duration::ZERO));
    assert_eq!(context.control().stop(), Some(Stop::DeadlineExceeded));
    let registry = ToolRegistry::standard();
    let grep = registry
        .call_controlled(&context, "grep", r#"{"pattern": "needle"}"#)
        .unwrap();
    assert!(
        grep.starts_with("No matches before the call's deadline stopped the search"),
        "{grep}"
    );
    for (tool, arguments) in [("glob", r#"{"pattern": "**/*.txt"}"#), ("tree", "{}")] {
        let error = registry
            .call_controlled(&context, tool, arguments)
            .unwrap_err();
        assert_eq!(error, ToolError::DeadlineExceeded { seconds: 60 }, "{tool}");
    }
}

/// Dropping the future that awaits a call (the explore or job was cancelled) cancels the
/// blocking work: the tool sees the flag and the call ends as cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_caller_cancels_the_blocking_call() {
    let dir = many_matching_files();
    let registry = Arc::new(ToolRegistry::standard());
    let context = ToolContext::new(dir.path(), ToolLimits::default()).unwrap();
    let control = CallControl::with_timeout(Duration::from_secs(3600));
    let seen = control.clone();
    let call = registry.call_async_with(
        context,
        control,
        "grep".into(),
        r#"{"pattern": "needle"}"#.into(),
    );
    // Poll once so the blocking task is spawned, then drop the caller.
    let mut call = Box::pin(call);
    let _ = futures_poll_once(call.as_mut()).await;
    drop(call);
    assert_eq!(seen.stop(), Some(Stop::Cancelled));
}

/// Polls a future once.
async fn futures_poll_once<F: std::future::Future + Unpin>(future: F) -> Option<F::Output> {
    let mut future = future;
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
            std::task::Poll::Ready(value) => Some(value),
            std::task::Poll::Pending => None,
        })
    })
    .await
}
