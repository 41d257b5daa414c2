//! A generated search (issue #33 §2): every short body built from fences, HTML tags, `>>>`,
//! backticks, carriage returns, newlines and commands, enumerated in full up to a length, is
//! escaped by Relay and then run through each ported release of GitLab's quick-action extractor.
//! No command may survive. The same search run against the fence-aware escaping Relay used before
//! finds survivors (the issue's three bodies among them), so the search has the power to see the
//! fault it guards against.

use relay_core::outgoing::neutralize_quick_actions;
use relay_tracker::fake::gitlab_quick::Extractor;

/// Whole lines, joined by `\n`: up to [`MAX_LINES`] of them.
const LINES: [&str; 12] = [
    "```",
    "```sh",
    "`",
    "x`",
    "<details>",
    "</details>",
    ">>>",
    "/close",
    " /close",
    "/move a/b",
    "\r/close",
    "",
];
const MAX_LINES: u32 = 4;

/// Five-line bodies (the length of the issue's three) from the block openers and closers.
const LONG_LINES: [&str; 6] = ["```", "x`", "<details>", "</details>", ">>>", "/close"];
const LONG: u32 = 5;

/// Fragments concatenated as they come (a line may hold several): up to [`MAX_TOKENS`].
const TOKENS: [&str; 9] = ["```", "`", "<a>", "</a>", ">>>", "\n", "\r", " ", "/close"];
const MAX_TOKENS: u32 = 4;

/// Every sequence of exactly `len` items of `alphabet`, joined by `separator`.
fn bodies_of(alphabet: &[&str], len: u32, separator: &str) -> Vec<String> {
    (0..alphabet.len().pow(len))
        .map(|mut n| {
            let mut parts = Vec::with_capacity(len as usize);
            for _ in 0..len {
                parts.push(alphabet[n % alphabet.len()]);
                n /= alphabet.len();
            }
            parts.join(separator)
        })
        .collect()
}

/// Every sequence of 1 to `max` items of `alphabet`, joined by `separator`, in a fixed order.
fn bodies(alphabet: &[&str], max: u32, separator: &str) -> Vec<String> {
    (1..=max)
        .flat_map(|len| bodies_of(alphabet, len, separator))
        .collect()
}

/// About 38,000 bodies: enough to meet every early close of the three releases, few enough for
/// an unoptimised test build.
fn all_bodies() -> Vec<String> {
    let mut all = bodies(&LINES, MAX_LINES, "\n");
    all.extend(bodies_of(&LONG_LINES, LONG, "\n"));
    all.extend(bodies(&TOKENS, MAX_TOKENS, ""));
    all
}

/// Relay's escaping before issue #33: lines inside what it took for a closed ``` block (opened
/// by a line starting with ```, closed by a line that is exactly ```) were left alone. Kept
/// here as the reference the search must be able to catch.
fn fence_aware_escaping(body: &str) -> String {
    let lines: Vec<&str> = body.split('\n').collect();
    let mut fenced = vec![false; lines.len()];
    let mut index = 0;
    while index < lines.len() {
        if lines[index].starts_with("```")
            && let Some(close) =
                (index + 1..lines.len()).find(|&j| lines[j].trim_end_matches('\r') == "```")
        {
            fenced[index..=close].fill(true);
            index = close + 1;
            continue;
        }
        index += 1;
    }
    lines
        .iter()
        .zip(&fenced)
        .map(|(line, in_fence)| {
            if !in_fence && line.trim_start().starts_with('/') {
                let indent = line.len() - line.trim_start().len();
                format!("{}\\{}", &line[..indent], &line[indent..])
            } else {
                (*line).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_generated_body_keeps_a_command_after_escaping() {
    let all = all_bodies();
    assert_eq!(
        all.len(),
        (1..=MAX_LINES)
            .map(|n| LINES.len().pow(n))
            .chain([LONG_LINES.len().pow(LONG)])
            .chain((1..=MAX_TOKENS).map(|n| TOKENS.len().pow(n)))
            .sum::<usize>()
    );
    let mut raw_commands = 0;
    for body in &all {
        let escaped = neutralize_quick_actions(body);
        for version in Extractor::ALL {
            let left = version.extract(&escaped);
            assert!(
                left.is_empty(),
                "{version:?} still runs {left:?} in {escaped:?} (from {body:?})"
            );
        }
        // What the escaping relies on, stated directly.
        assert!(
            !escaped
                .replace('\r', "")
                .split('\n')
                .any(|l| l.starts_with('/')),
            "{escaped:?}"
        );
        if !Extractor::InlineCode.extract(body).is_empty() {
            raw_commands += 1;
        }
    }
    // The bodies do carry commands before escaping (the search is not vacuous).
    assert!(
        raw_commands > all.len() / 4,
        "{raw_commands} of {}",
        all.len()
    );
}

#[test]
fn the_same_search_catches_the_old_fence_aware_escaping() {
    let mut survivors = Vec::new();
    for body in all_bodies() {
        let escaped = fence_aware_escaping(&body);
        if Extractor::ALL
            .iter()
            .any(|version| !version.extract(&escaped).is_empty())
        {
            survivors.push(body);
        }
    }
    assert!(!survivors.is_empty());
    // The issue's three bodies (with `/close` for the command) are among them.
    for body in [
        "<details>\n```\n</details>\n/close\n```",
        "```\n```\n```\n/close\n```",
        ">>>\n```\n>>>\n/close\n```",
    ] {
        assert!(survivors.iter().any(|s| s == body), "{body:?}");
    }
}
