//! Finding a cited text in a file's new version: at the cited lines, or moved elsewhere in the
//! file. Whitespace-normalised, as the citation checker compares (`collapse_whitespace`).

use relay_tools::citation::collapse_whitespace;

/// An inclusive, 1-based line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    fn len(self) -> usize {
        self.end + 1 - self.start
    }
}

/// What must still stand in the cited lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected<'a> {
    /// The stored quote: it must occur in the lines.
    Quote(&'a str),
    /// The cited lines' text when verified: the lines must equal it.
    Lines(&'a str),
}

/// Where the expected text stands in `content`: `at` itself when it still does, else the window
/// of the same height that holds it nearest to `at` (with `anchor`, the cited lines' old text,
/// preferred among quote matches so a moved block keeps its shape), else `None`.
pub fn locate(
    content: &str,
    expected: Expected<'_>,
    at: Span,
    anchor: Option<&str>,
) -> Option<Span> {
    let lines: Vec<String> = content.lines().map(collapse_whitespace).collect();
    let wanted = match expected {
        Expected::Quote(quote) => collapse_whitespace(quote),
        Expected::Lines(text) => collapse_whitespace(text),
    };
    let exact = matches!(expected, Expected::Lines(_)) || wanted.is_empty();
    // An empty quote says nothing: fall back to the lines themselves.
    let wanted = if exact && matches!(expected, Expected::Quote(_)) {
        anchor.map(collapse_whitespace)?
    } else {
        wanted
    };
    let anchor = anchor.map(collapse_whitespace);
    let height = at.len();
    if at.start == 0 || height > lines.len() {
        return None;
    }
    let window = |start: usize| -> String {
        lines[start - 1..start - 1 + height]
            .iter()
            .filter(|line| !line.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let holds = |text: &str| {
        if exact {
            text == wanted
        } else {
            text.contains(&wanted)
        }
    };
    if at.end <= lines.len() && holds(&window(at.start)) {
        return Some(at);
    }
    let mut best: Option<(bool, usize, usize)> = None;
    for start in 1..=lines.len() + 1 - height {
        let text = window(start);
        if !holds(&text) {
            continue;
        }
        let shaped = anchor.as_deref().is_some_and(|anchor| text == anchor);
        let distance = start.abs_diff(at.start);
        let better = match best {
            None => true,
            Some((best_shaped, best_distance, _)) => {
                (shaped && !best_shaped) || (shaped == best_shaped && distance < best_distance)
            }
        };
        if better {
            best = Some((shaped, distance, start));
        }
    }
    best.map(|(_, _, start)| Span {
        start,
        end: start + height - 1,
    })
}

/// The text of lines `at` in `content`, if the file has them.
pub fn lines_of(content: &str, at: Span) -> Option<String> {
    if at.start == 0 {
        return None;
    }
    let lines: Vec<&str> = content.lines().collect();
    (at.end <= lines.len()).then(|| lines[at.start - 1..at.end].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str =
        "import os\n\nclass Settings:\n    debug = False\n\n    TIMEOUT = 30\n    RETRIES = 3\n";

    #[track_caller]
    fn check(
        content: &str,
        expected: Expected<'_>,
        at: (usize, usize),
        anchor: Option<&str>,
        want: Option<(usize, usize)>,
    ) {
        let got = locate(
            content,
            expected,
            Span {
                start: at.0,
                end: at.1,
            },
            anchor,
        );
        assert_eq!(got.map(|s| (s.start, s.end)), want);
    }

    #[test]
    fn finds_text_in_place_moved_or_gone() {
        let moved = format!("# a\n# b\n# c\n{FILE}");
        // In place, whitespace-normalised.
        check(
            FILE,
            Expected::Quote("TIMEOUT   =  30"),
            (6, 6),
            None,
            Some((6, 6)),
        );
        check(
            FILE,
            Expected::Lines("TIMEOUT = 30\nRETRIES = 3"),
            (6, 7),
            None,
            Some((6, 7)),
        );
        // Three lines inserted above.
        check(
            &moved,
            Expected::Quote("TIMEOUT = 30"),
            (6, 6),
            None,
            Some((9, 9)),
        );
        check(
            &moved,
            Expected::Lines("TIMEOUT = 30\n  RETRIES = 3"),
            (6, 7),
            None,
            Some((9, 10)),
        );
        // A quote on the second line of a two-line citation keeps the block's shape with the anchor.
        check(
            &moved,
            Expected::Quote("RETRIES = 3"),
            (6, 7),
            Some("    TIMEOUT = 30\n    RETRIES = 3"),
            Some((9, 10)),
        );
        // Gone or changed.
        check(
            &FILE.replace("30", "60"),
            Expected::Quote("TIMEOUT = 30"),
            (6, 6),
            None,
            None,
        );
        check("x\n", Expected::Lines("TIMEOUT = 30"), (6, 6), None, None);
        // Nearest of two occurrences.
        let twice = "a = 1\nb\nc\nd\ne\na = 1\n";
        check(twice, Expected::Lines("a = 1"), (5, 5), None, Some((6, 6)));
        // An empty quote falls back to the anchor.
        check(
            &moved,
            Expected::Quote("  "),
            (6, 6),
            Some("TIMEOUT = 30"),
            Some((9, 9)),
        );
    }

    #[test]
    fn reads_lines() {
        assert_eq!(
            lines_of(FILE, Span { start: 6, end: 7 }).unwrap(),
            "    TIMEOUT = 30\n    RETRIES = 3"
        );
        assert_eq!(lines_of(FILE, Span { start: 7, end: 9 }), None);
    }
}
