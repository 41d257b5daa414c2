//! Splitting a spec longer than one tracker comment into numbered parts (`Spec (part 1/3)`).

/// Most characters of one spec part, header included. GitHub's limit is 65,536 characters; the
/// rest is room for the hidden marker.
pub const SPEC_PART_CHARS: usize = 60_000;

/// Room kept in each part for its `Spec (part 999/999)\n\n` header.
const HEADER_CHARS: usize = 24;
/// Below this share of a part, a chunk is not cut early at a heading.
const MIN_FILL_BEFORE_HEADING_CUT: f64 = 0.6;

/// Splits `body` into parts of at most `limit` characters each, header included. A body that fits
/// is one part without a header.
///
/// Parts end at line ends (a single longer line is cut mid-line), preferably before a heading once
/// a part is well filled. A part never ends inside a fenced code block: the fence is closed at the
/// end of the part and reopened, with its info string, at the start of the next, so every part
/// renders on its own.
pub fn split_spec(body: &str, limit: usize) -> Vec<String> {
    if body.chars().count() <= limit {
        return vec![body.to_owned()];
    }
    let room = limit.saturating_sub(HEADER_CHARS).max(1);
    let mut chunks = Chunks {
        room,
        done: Vec::new(),
        current: String::new(),
        len: 0,
        open: None,
    };
    for line in body.split_inclusive('\n') {
        chunks.push_line(line);
    }
    chunks.finish();
    let total = chunks.done.len();
    chunks
        .done
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| format!("Spec (part {}/{total})\n\n{chunk}", i + 1))
        .collect()
}

/// An open code fence: its opening line (reopened in the next part) and its closing line.
#[derive(Debug, Clone)]
struct Fence {
    opening: String,
    closing: String,
    marker: char,
    width: usize,
}

impl Fence {
    /// The fence `line` opens, if it is an opening fence (three or more backticks or tildes).
    fn opened_by(line: &str) -> Option<Fence> {
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() > 3 {
            return None;
        }
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let width = trimmed.chars().take_while(|c| *c == marker).count();
        if width < 3 {
            return None;
        }
        let mut opening = line.trim_end_matches(['\n', '\r']).to_owned();
        opening.push('\n');
        Some(Fence {
            opening,
            closing: format!("{}\n", marker.to_string().repeat(width)),
            marker,
            width,
        })
    }

    /// Whether `line` closes this fence.
    fn closed_by(&self, line: &str) -> bool {
        let trimmed = line.trim();
        let width = trimmed.chars().take_while(|c| *c == self.marker).count();
        width >= self.width && trimmed.chars().all(|c| c == self.marker)
    }
}

struct Chunks {
    room: usize,
    done: Vec<String>,
    current: String,
    len: usize,
    /// The fence open at the end of `current`.
    open: Option<Fence>,
}

impl Chunks {
    fn push_line(&mut self, line: &str) {
        // The fence state after this line.
        let after = match &self.open {
            Some(fence) if fence.closed_by(line) => None,
            Some(fence) => Some(fence.clone()),
            None => Fence::opened_by(line),
        };
        let is_heading = self.open.is_none() && line.starts_with('#');
        if is_heading && self.len as f64 >= self.room as f64 * MIN_FILL_BEFORE_HEADING_CUT {
            self.cut();
        }
        let mut rest = line;
        loop {
            let len = rest.chars().count();
            // A part that ends inside a fence needs room to close it.
            let closing = after.as_ref().map_or(0, |f| f.closing.chars().count());
            if self.len + len + closing <= self.room {
                self.current.push_str(rest);
                self.len += len;
                break;
            }
            if self.has_content() {
                self.cut();
                continue;
            }
            // Alone in a part and still too long: cut the line.
            let fit = self.room.saturating_sub(self.len + closing).max(1);
            let cut = rest.char_indices().nth(fit).map_or(rest.len(), |(i, _)| i);
            self.current.push_str(&rest[..cut]);
            self.len += fit.min(len);
            rest = &rest[cut..];
            if rest.is_empty() {
                break;
            }
            // Mid-line: the part ends without a line break, so close the fence on its own line.
            if self.open.is_some() {
                self.current.push('\n');
            }
            self.cut();
        }
        self.open = after;
    }

    /// Whether `current` holds more than the reopened fence line.
    fn has_content(&self) -> bool {
        let reopened = self.open.as_ref().map_or(0, |f| f.opening.chars().count());
        self.len > reopened
    }

    /// Ends the current part (closing an open fence) and starts the next (reopening it).
    fn cut(&mut self) {
        if !self.has_content() {
            return;
        }
        let mut chunk = std::mem::take(&mut self.current);
        if let Some(fence) = &self.open {
            if !chunk.ends_with('\n') {
                chunk.push('\n');
            }
            chunk.push_str(&fence.closing);
        }
        self.done.push(chunk);
        self.len = 0;
        if let Some(fence) = &self.open {
            self.current.push_str(&fence.opening);
            self.len = fence.opening.chars().count();
        }
    }

    fn finish(&mut self) {
        if self.has_content() {
            let chunk = std::mem::take(&mut self.current);
            self.done.push(chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_specs_are_one_part_without_header() {
        assert_eq!(split_spec("# Spec\nbody", 100), vec!["# Spec\nbody"]);
    }

    #[test]
    fn long_specs_split_at_lines_into_numbered_parts() {
        let body: String = (0..30)
            .map(|i| format!("line {i:02} of the spec\n"))
            .collect();
        let parts = split_spec(&body, 124);
        assert!(parts.len() > 1);
        for (i, part) in parts.iter().enumerate() {
            assert!(part.chars().count() <= 124, "{part:?}");
            assert!(part.starts_with(&format!("Spec (part {}/{})\n\n", i + 1, parts.len())));
        }
        let rejoined: String = parts
            .iter()
            .map(|p| p.split_once("\n\n").unwrap().1)
            .collect();
        assert_eq!(rejoined, body);
    }

    /// Fence lines of `part` (opening or closing), for the balance check.
    fn fence_lines(part: &str) -> usize {
        part.lines()
            .filter(|l| l.trim_start().starts_with("```") || l.trim_start().starts_with("~~~"))
            .count()
    }

    #[test]
    fn a_part_never_ends_inside_a_code_fence() {
        let mut body = String::from("# Spec\n\nIntro.\n\n```rust\n");
        for i in 0..40 {
            body.push_str(&format!("let x{i} = compute({i});\n"));
        }
        body.push_str("```\n\n## Tests\n\nMore text.\n~~~~ text\nquoted ``` inside\n~~~~\nend\n");
        for limit in [150, 200, 333, 600] {
            let parts = split_spec(&body, limit);
            assert!(parts.len() > 1, "{limit}");
            for part in &parts {
                assert!(part.chars().count() <= limit, "{limit}: {part:?}");
                assert_eq!(fence_lines(part) % 2, 0, "{limit}: unbalanced {part:?}");
            }
            // Every part after the fence opened and before it closed reopens it with its info.
            let inside: Vec<&String> = parts
                .iter()
                .skip(1)
                .filter(|p| p.contains("let x") && !p.contains("Intro."))
                .collect();
            assert!(inside.iter().all(|p| p.contains("```rust\n")), "{limit}");
            // Without the fence lines Relay added, the text is the body.
            let rejoined: String = parts
                .iter()
                .map(|p| p.split_once("\n\n").unwrap().1)
                .collect();
            let strip = |s: &str| -> String {
                s.lines()
                    .filter(|l| !l.starts_with("```") && !l.starts_with("~~~"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            assert_eq!(strip(&rejoined), strip(&body), "{limit}");
        }
    }

    #[test]
    fn a_fenced_line_longer_than_a_part_is_cut_and_still_fenced() {
        let body = format!("```\n{}\n```\n", "x".repeat(500));
        let parts = split_spec(&body, 120);
        assert!(parts.len() > 4);
        for part in &parts {
            assert!(part.chars().count() <= 120, "{part:?}");
            assert_eq!(fence_lines(part) % 2, 0, "{part:?}");
        }
    }

    #[test]
    fn a_heading_starts_a_new_part_once_the_part_is_well_filled() {
        let mut body = String::new();
        for section in 0..4 {
            body.push_str(&format!("## Section {section}\n"));
            for i in 0..3 {
                body.push_str(&format!("line {i} of section {section}\n"));
            }
        }
        let parts = split_spec(&body, 124);
        for part in parts.iter().skip(1) {
            let text = part.split_once("\n\n").unwrap().1;
            assert!(text.starts_with("## Section"), "{part:?}");
        }
    }

    #[test]
    fn a_single_huge_line_is_cut() {
        let body = "é".repeat(250);
        let parts = split_spec(&body, 100);
        assert_eq!(parts.len(), 4);
        assert!(parts.iter().all(|p| p.chars().count() <= 100));
    }
}
