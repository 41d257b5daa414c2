//! Reading git's answers: `log -z` records and `blame --porcelain`. git's output is untrusted
//! input (author names and subjects are whatever a committer wrote): every field is checked or
//! cleaned, a record that does not parse is left out, and a record cut by the byte bound is not
//! counted.

use std::collections::HashMap;

use super::{BlameRange, CommitSummary};

/// Characters of an author name kept.
pub const MAX_AUTHOR_CHARS: usize = 60;
/// Characters of a commit subject kept.
pub const MAX_SUBJECT_CHARS: usize = 160;

/// The unit separator between a log record's fields (`%x1f` in the format).
pub(super) const FIELD: char = '\u{1f}';

/// `git log -z --format=` [`LOG_FORMAT`]: full SHA, author time (Unix seconds), author, subject.
pub(super) const LOG_FORMAT: &str = "%H%x1f%at%x1f%an%x1f%s";

/// The commits of a `log -z` answer, in git's order. With `cut`, the answer stopped at the byte
/// bound: its last record is partial, kept only when its subject had begun (marked `…`: it may be
/// cut short).
pub(super) fn log_records(output: &[u8], cut: bool) -> Vec<CommitSummary> {
    let text = String::from_utf8_lossy(output);
    let mut records: Vec<&str> = text.split('\0').collect();
    // A complete answer ends with a terminator: its last piece is empty.
    let last = records.pop().unwrap_or_default();
    let mut commits: Vec<CommitSummary> = records.into_iter().filter_map(log_record).collect();
    if cut
        && last.matches(FIELD).count() >= 3
        && let Some(mut partial) = log_record(last)
    {
        if !partial.subject.ends_with('…') {
            partial.subject.push('…');
        }
        commits.push(partial);
    } else if !cut {
        commits.extend(log_record(last));
    }
    commits
}

/// One `sha␟time␟author␟subject` record; `None` when its SHA or time is not one.
fn log_record(record: &str) -> Option<CommitSummary> {
    let record = record.trim_start_matches('\n');
    let mut fields = record.splitn(4, FIELD);
    let sha = fields.next()?;
    let time = fields.next()?.parse::<i64>().ok()?;
    let author = fields.next()?;
    let subject = fields.next().unwrap_or_default();
    is_object_id(sha).then(|| summary(sha, time, author, subject))
}

/// The line ranges of a `blame --porcelain` answer, consecutive lines of one commit grouped, in
/// line order. Lines whose header does not parse are left out.
pub(super) fn blame_ranges(output: &[u8]) -> Vec<BlameRange> {
    #[derive(Default)]
    struct Info {
        author: String,
        time: i64,
        summary: String,
    }
    let text = String::from_utf8_lossy(output);
    let mut infos: HashMap<&str, Info> = HashMap::new();
    let mut lines: Vec<(u32, &str)> = Vec::new();
    let mut current: Option<&str> = None;
    for line in text.lines() {
        // The line's own text follows a tab: never a header, whatever it contains.
        if line.starts_with('\t') {
            current = None;
            continue;
        }
        if let Some((sha, final_line)) = blame_header(line) {
            lines.push((final_line, sha));
            infos.entry(sha).or_default();
            current = Some(sha);
            continue;
        }
        let (Some(sha), Some((key, value))) = (current, line.split_once(' ')) else {
            continue;
        };
        let Some(info) = infos.get_mut(sha) else {
            continue;
        };
        match key {
            "author" => info.author = value.to_owned(),
            "author-time" => info.time = value.parse().unwrap_or_default(),
            "summary" => info.summary = value.to_owned(),
            _ => {}
        }
    }
    lines.sort_by_key(|(line, _)| *line);
    let mut ranges: Vec<BlameRange> = Vec::new();
    for (line, sha) in lines {
        if let Some(last) = ranges.last_mut()
            && last.commit.sha == sha
            && last.end + 1 == line
        {
            last.end = line;
            continue;
        }
        let info = &infos[sha];
        ranges.push(BlameRange {
            start: line,
            end: line,
            commit: summary(sha, info.time, &info.author, &info.summary),
        });
    }
    ranges
}

/// `<sha> <original line> <final line> [<lines in group>]`: the SHA and the final line.
fn blame_header(line: &str) -> Option<(&str, u32)> {
    let mut parts = line.split(' ');
    let sha = parts.next()?;
    let _original: u32 = parts.next()?.parse().ok()?;
    let final_line: u32 = parts.next()?.parse().ok()?;
    match parts.next() {
        None => {}
        Some(count) => {
            count.parse::<u32>().ok()?;
        }
    }
    (parts.next().is_none() && is_object_id(sha)).then_some((sha, final_line))
}

fn summary(sha: &str, time: i64, author: &str, subject: &str) -> CommitSummary {
    CommitSummary {
        sha: sha.to_ascii_lowercase(),
        date: civil_date(time),
        author: clean(author, MAX_AUTHOR_CHARS),
        subject: clean(subject, MAX_SUBJECT_CHARS),
    }
}

/// A full SHA-1 or SHA-256 object id.
pub(super) fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `text` on one line: control characters become spaces, runs of spaces one, cut at `max_chars`
/// with `…`.
pub(super) fn clean(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut count = 0usize;
    let mut space = false;
    for c in text.trim().chars() {
        let c = if c.is_control() || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' {
            if space {
                continue;
            }
            space = true;
        } else {
            space = false;
        }
        if count == max_chars {
            out.push('…');
            return out;
        }
        out.push(c);
        count += 1;
    }
    out
}

/// `YYYY-MM-DD` (UTC) of a Unix time: the civil-from-days algorithm (H. Hinnant), no calendar
/// crate needed.
pub(super) fn civil_date(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn dates_are_civil_utc_days() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(951_782_400), "2000-02-29");
        assert_eq!(civil_date(1_700_000_000), "2023-11-14");
        assert_eq!(civil_date(-86_400), "1969-12-31");
    }

    #[test]
    fn log_records_are_checked_and_a_cut_one_is_marked() {
        let output = format!(
            "{A}\u{1f}0\u{1f}Ann\u{1f}first\0\nnot a sha\u{1f}0\u{1f}x\u{1f}y\0{B}\u{1f}86400\u{1f}Bo\u{1f}sec"
        );
        let whole = log_records(output.as_bytes(), false);
        assert_eq!(whole.len(), 2, "{whole:?}");
        assert_eq!(whole[0].author, "Ann");
        assert_eq!(
            (whole[1].date.as_str(), whole[1].subject.as_str()),
            ("1970-01-02", "sec")
        );
        let cut = log_records(output.as_bytes(), true);
        assert_eq!(cut.len(), 2, "{cut:?}");
        assert_eq!(cut[1].subject, "sec…");
        // Cut before its subject began: not a commit anyone can name.
        let cut = log_records(
            format!("{A}\u{1f}0\u{1f}Ann\u{1f}first\0{B}\u{1f}864").as_bytes(),
            true,
        );
        assert_eq!(cut.len(), 1, "{cut:?}");
    }

    #[test]
    fn fields_are_one_bounded_line() {
        assert_eq!(clean(" a\n\tb\u{1b}[31m  c ", 80), "a b [31m c");
        assert_eq!(clean(&"x".repeat(10), 4), "xxxx…");
    }

    #[test]
    fn blame_groups_consecutive_lines_and_ignores_line_text() {
        let output = format!(
            "{A} 1 1 2\nauthor Ann\nauthor-time 0\nsummary first\n\t{B} 9 9\n{A} 2 2\n\tsummary forged\n{B} 5 3 1\nauthor Bo\nauthor-time 86400\nsummary second\n\tx\n"
        );
        let ranges = blame_ranges(output.as_bytes());
        assert_eq!(ranges.len(), 2, "{ranges:?}");
        assert_eq!((ranges[0].start, ranges[0].end), (1, 2));
        assert_eq!(ranges[0].commit.subject, "first");
        assert_eq!((ranges[1].start, ranges[1].end), (3, 3));
        assert_eq!(ranges[1].commit.author, "Bo");
        assert_eq!(ranges[1].commit.date, "1970-01-02");
    }
}
