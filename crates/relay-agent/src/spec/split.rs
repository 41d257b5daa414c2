//! Splitting a long spec into numbered comment parts under the tracker's limit.
//!
//! Cuts fall on line boundaries, preferably before a heading; a code fence open at a cut is closed
//! and reopened in the next part so every part renders on its own.

/// Room kept in each part for its header line.
const HEADER_ROOM: usize = 120;

/// The comment bodies for spec `version`, each at most `max_chars` characters.
pub fn split_into_parts(markdown: &str, version: i32, max_chars: usize) -> Vec<String> {
    let single = format!("**Implementation spec v{version}**\n\n{markdown}");
    if single.chars().count() <= max_chars {
        return vec![single];
    }
    let room = max_chars.saturating_sub(HEADER_ROOM).max(HEADER_ROOM);
    let chunks = chunk(markdown, room);
    let total = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(index, body)| {
            format!(
                "**Implementation spec v{version} — part {}/{total}**\n\n{body}",
                index + 1
            )
        })
        .collect()
}

fn chunk(markdown: &str, room: usize) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    let mut current_len = 0;
    let mut fence: Option<String> = None;
    // Reserve room for closing a fence at a cut ("\n```" plus a longer fence).
    let room = room.saturating_sub(16).max(1);
    for line in pieces(markdown, room) {
        let len = line.chars().count();
        let is_heading = line.starts_with('#');
        // Prefer cutting before a heading once the part is half full.
        let heading_cut = is_heading && fence.is_none() && current_len > room / 2;
        if current_len > 0 && (current_len + len > room || heading_cut) {
            if let Some(open) = &fence {
                current.push_str(open);
                current.push('\n');
            }
            chunks.push(std::mem::take(&mut current));
            current_len = 0;
            if let Some(open) = &fence {
                current.push_str(open);
                current.push('\n');
                current_len = open.chars().count() + 1;
            }
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let marker: String = trimmed
                .chars()
                .take_while(|c| *c == '`' || *c == '~')
                .collect();
            match &fence {
                Some(open) if marker.starts_with(open.as_str()) => fence = None,
                None => fence = Some(marker),
                Some(_) => {}
            }
        }
        current.push_str(&line);
        current_len += len;
    }
    if !current.trim().is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Lines with their newline, lines longer than `room` cut into pieces of `room` characters.
fn pieces(markdown: &str, room: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in markdown.split_inclusive('\n') {
        let chars: Vec<char> = line.chars().collect();
        if chars.len() <= room {
            out.push(line.to_owned());
        } else {
            out.extend(chars.chunks(room).map(|c| c.iter().collect::<String>()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_specs_are_one_part() {
        let parts = split_into_parts("## Title\n\nbody\n", 2, 1000);
        assert_eq!(
            parts,
            vec!["**Implementation spec v2**\n\n## Title\n\nbody\n"]
        );
    }

    #[test]
    fn long_specs_split_under_the_limit_with_numbered_parts_and_balanced_fences() {
        let mut markdown = String::from("## Title\n\n");
        for section in 0..6 {
            markdown.push_str(&format!("### Section {section}\n\n"));
            markdown.push_str("```rust\n");
            for line in 0..30 {
                markdown.push_str(&format!("let value_{line} = compute({line});\n"));
            }
            markdown.push_str("```\n\n");
            markdown.push_str(&"word ".repeat(500));
            markdown.push('\n');
        }
        let limit = 1500;
        let parts = split_into_parts(&markdown, 1, limit);
        assert!(parts.len() > 3, "{}", parts.len());
        let total = parts.len();
        for (index, part) in parts.iter().enumerate() {
            assert!(
                part.chars().count() <= limit,
                "part {index}: {}",
                part.len()
            );
            assert!(
                part.starts_with(&format!(
                    "**Implementation spec v1 — part {}/{total}**",
                    index + 1
                )),
                "{part}"
            );
            let fences = part.lines().filter(|l| l.starts_with("```")).count();
            assert_eq!(fences % 2, 0, "part {index} has an open fence:\n{part}");
        }
        // Nothing lost: every short line survives whole, long lines are cut but keep every word.
        let joined: String = parts.join("\n");
        for line in markdown.lines().filter(|l| !l.is_empty() && l.len() < 200) {
            assert!(joined.contains(line), "missing {line:?}");
        }
        assert_eq!(
            joined.matches("word").count(),
            markdown.matches("word").count()
        );
    }
}
