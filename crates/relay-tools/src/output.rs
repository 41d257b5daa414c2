//! Shared output helpers: the size note every result ends with, line cutting, number formatting.

/// Rough token estimate used for budgeting: one token per four characters, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Appends the size note (`[~N tokens, M lines]`) that every tool result ends with.
///
/// `N` estimates the tokens of the body and `M` counts its lines; the note itself is not counted.
pub fn finish(mut body: String) -> String {
    while body.ends_with('\n') {
        body.pop();
    }
    let lines = if body.is_empty() {
        0
    } else {
        body.lines().count()
    };
    let tokens = estimate_tokens(&body);
    if !body.is_empty() {
        body.push('\n');
    }
    body.push_str(&format!(
        "[~{} tokens, {} lines]",
        group_thousands(tokens),
        group_thousands(lines)
    ));
    body
}

/// Cuts `line` to at most `max_chars` characters, marking how much was dropped.
pub fn cut_line(line: &str, max_chars: usize) -> String {
    let mut chars = line.char_indices();
    match chars.nth(max_chars) {
        None => line.to_string(),
        Some((byte_index, _)) => {
            let rest = line[byte_index..].chars().count();
            format!(
                "{}… [line cut, {} more chars]",
                &line[..byte_index],
                group_thousands(rest)
            )
        }
    }
}

/// Formats `n` with thousands separators: `1234567` becomes `1,234,567`.
pub fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `1 match` / `2 matches`.
pub fn plural(n: usize, singular: &str, plural: &str) -> String {
    format!(
        "{} {}",
        group_thousands(n),
        if n == 1 { singular } else { plural }
    )
}

/// Bytes to text for display: invalid UTF-8 is replaced and the line terminator removed.
pub fn line_text(bytes: &[u8]) -> String {
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
    String::from_utf8_lossy(trimmed).into_owned()
}

/// Cuts `body` at a line boundary so that it stays within `max_tokens` (a call's cap), saying
/// how much was left out.
pub fn cap_tokens(body: String, max_tokens: usize) -> String {
    if estimate_tokens(&body) <= max_tokens {
        return body;
    }
    let max_chars = max_tokens.saturating_mul(4);
    let mut kept = String::new();
    let mut kept_chars = 0usize;
    let total_lines = body.lines().count();
    let mut kept_lines = 0usize;
    for line in body.lines() {
        let line_chars = line.chars().count() + 1;
        if kept_chars + line_chars > max_chars {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        kept_chars += line_chars;
        kept_lines += 1;
    }
    kept.push_str(&format!(
        "… output cut at ~{} tokens: {} of {} lines not shown — narrow the request",
        group_thousands(max_tokens),
        group_thousands(total_lines - kept_lines),
        group_thousands(total_lines)
    ));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1234), "1,234");
        assert_eq!(group_thousands(1234567), "1,234,567");
    }

    #[test]
    fn size_note() {
        assert_eq!(
            finish("abcd\nefgh\n".into()),
            "abcd\nefgh\n[~3 tokens, 2 lines]"
        );
        assert_eq!(finish(String::new()), "[~0 tokens, 0 lines]");
    }

    #[test]
    fn cutting() {
        assert_eq!(cut_line("short", 10), "short");
        assert_eq!(cut_line("ééééé", 2), "éé… [line cut, 3 more chars]");
    }

    #[test]
    fn cap_keeps_whole_lines() {
        let body = (0..100)
            .map(|index| format!("line {index:03}"))
            .collect::<Vec<_>>()
            .join("\n");
        let capped = cap_tokens(body, 10);
        assert!(
            capped.starts_with("line 000\nline 001\nline 002\nline 003\n…"),
            "{capped}"
        );
        assert!(capped.contains("96 of 100 lines not shown"), "{capped}");
    }
}
