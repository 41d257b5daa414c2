//! Splitting a spec longer than one tracker comment into numbered parts (`Spec (part 1/3)`).

/// Most characters of one spec part, header included. GitHub's limit is 65,536 characters; the
/// rest is room for the hidden marker.
pub const SPEC_PART_CHARS: usize = 60_000;

/// Splits `body` into parts of at most `limit` characters each, header included, cutting at line
/// ends when a line fits (a single longer line is cut mid-line). A body that fits is one part
/// without a header.
pub fn split_spec(body: &str, limit: usize) -> Vec<String> {
    if body.chars().count() <= limit {
        return vec![body.to_owned()];
    }
    // Room for "Spec (part 999/999)\n\n".
    let room = limit.saturating_sub(24).max(1);
    let mut chunks: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut current_len = 0;
    for line in body.split_inclusive('\n') {
        let mut rest = line;
        loop {
            let len = rest.chars().count();
            if current_len + len <= room {
                current.push_str(rest);
                current_len += len;
                break;
            }
            if current_len > 0 {
                chunks.push(std::mem::take(&mut current));
                current_len = 0;
                continue;
            }
            let cut = rest.char_indices().nth(room).map_or(rest.len(), |(i, _)| i);
            chunks.push(rest[..cut].to_owned());
            rest = &rest[cut..];
        }
    }
    if current_len > 0 {
        chunks.push(current);
    }
    let total = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| format!("Spec (part {}/{total})\n\n{chunk}", i + 1))
        .collect()
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

    #[test]
    fn a_single_huge_line_is_cut() {
        let body = "é".repeat(250);
        let parts = split_spec(&body, 100);
        assert_eq!(parts.len(), 4);
        assert!(parts.iter().all(|p| p.chars().count() <= 100));
    }
}
