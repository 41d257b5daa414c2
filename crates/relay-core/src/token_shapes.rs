//! Credentials recognised by their shape, whoever's they are: the outgoing scan
//! ([`crate::secrets`]) knows Relay's own configured secrets by value, but a token a model read in
//! a repository, an issue or a tool's output is nobody's configured secret. Every tracker write
//! is scanned for these shapes too ([`scrub_token_shapes`]), and each one found is replaced by
//! [`crate::secrets::REDACTED`].
//!
//! The shapes are the published formats of the commonest credentials, each with a minimum
//! length so that a prefix in prose (`sk-learn`, `AKIA` in a sentence) is left alone:
//! GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab personal access
//! tokens (`glpat-`), OpenAI and Anthropic keys (`sk-`, `sk-ant-`), AWS access key ids (`AKIA`,
//! `ASIA` and sixteen upper-case letters or digits) and PEM private keys (the whole block, or to
//! the end of the text when it has no end line). A shape matches only at the start of a word:
//! `task-…` is not an `sk-` key.

use std::borrow::Cow;

use crate::secrets::REDACTED;

/// One credential format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenShape {
    /// `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and 30 or more letters and digits (GitHub: 36).
    GitHubToken,
    /// `github_pat_` and 40 or more letters, digits and `_` (GitHub: 82).
    GitHubFineGrained,
    /// `glpat-` and 20 or more letters, digits, `_` and `-` (GitLab: 20).
    GitLabToken,
    /// `sk-ant-` and 20 or more letters, digits, `_` and `-`.
    AnthropicKey,
    /// `sk-` and 20 or more letters, digits, `_` and `-`, with at least one digit.
    OpenAiKey,
    /// `AKIA` or `ASIA` and exactly 16 upper-case letters or digits.
    AwsAccessKeyId,
    /// `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE KEY-----` line.
    PemPrivateKey,
}

impl TokenShape {
    /// The label a redaction is logged and counted with.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenShape::GitHubToken => "github_token",
            TokenShape::GitHubFineGrained => "github_fine_grained_token",
            TokenShape::GitLabToken => "gitlab_token",
            TokenShape::AnthropicKey => "anthropic_key",
            TokenShape::OpenAiKey => "openai_key",
            TokenShape::AwsAccessKeyId => "aws_access_key_id",
            TokenShape::PemPrivateKey => "pem_private_key",
        }
    }
}

/// A prefixed token format: what follows the prefix and how much of it there must be.
struct Prefixed {
    prefix: &'static str,
    shape: TokenShape,
    body: fn(u8) -> bool,
    min_len: usize,
    /// Longest body: `Some` for fixed-length formats, which must then end there.
    exact: Option<usize>,
    needs_digit: bool,
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn word_or_dash(b: u8) -> bool {
    word(b) || b == b'-'
}
fn upper_or_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

/// Longest prefix first, so `sk-ant-` wins over `sk-` at the same place.
const PREFIXED: &[Prefixed] = &[
    Prefixed {
        prefix: "github_pat_",
        shape: TokenShape::GitHubFineGrained,
        body: word,
        min_len: 40,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "sk-ant-",
        shape: TokenShape::AnthropicKey,
        body: word_or_dash,
        min_len: 20,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "glpat-",
        shape: TokenShape::GitLabToken,
        body: word_or_dash,
        min_len: 20,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "ghp_",
        shape: TokenShape::GitHubToken,
        body: alnum,
        min_len: 30,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "gho_",
        shape: TokenShape::GitHubToken,
        body: alnum,
        min_len: 30,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "ghu_",
        shape: TokenShape::GitHubToken,
        body: alnum,
        min_len: 30,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "ghs_",
        shape: TokenShape::GitHubToken,
        body: alnum,
        min_len: 30,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "ghr_",
        shape: TokenShape::GitHubToken,
        body: alnum,
        min_len: 30,
        exact: None,
        needs_digit: false,
    },
    Prefixed {
        prefix: "AKIA",
        shape: TokenShape::AwsAccessKeyId,
        body: upper_or_digit,
        min_len: 16,
        exact: Some(16),
        needs_digit: false,
    },
    Prefixed {
        prefix: "ASIA",
        shape: TokenShape::AwsAccessKeyId,
        body: upper_or_digit,
        min_len: 16,
        exact: Some(16),
        needs_digit: false,
    },
    Prefixed {
        prefix: "sk-",
        shape: TokenShape::OpenAiKey,
        body: word_or_dash,
        min_len: 20,
        exact: None,
        needs_digit: true,
    },
];

const PEM_BEGIN: &str = "-----BEGIN ";
const PEM_PRIVATE_KEY: &str = "PRIVATE KEY-----";
const PEM_END: &str = "-----END ";

/// A text after the shape scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeScrubbed<'a> {
    pub body: Cow<'a, str>,
    /// One entry per credential found and replaced, in the order found.
    pub redacted: Vec<TokenShape>,
}

/// Replaces every credential of a known shape in `body` by [`REDACTED`] (module docs).
pub fn scrub_token_shapes(body: &str) -> ShapeScrubbed<'_> {
    let bytes = body.as_bytes();
    let mut out = String::new();
    let mut redacted = Vec::new();
    // Bytes of `body` already copied to `out` (or skipped as redacted).
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let Some((shape, end)) = match_at(body, at) else {
            at += 1;
            continue;
        };
        out.push_str(&body[copied..at]);
        out.push_str(REDACTED);
        redacted.push(shape);
        copied = end;
        at = end;
    }
    if redacted.is_empty() {
        return ShapeScrubbed {
            body: Cow::Borrowed(body),
            redacted,
        };
    }
    out.push_str(&body[copied..]);
    ShapeScrubbed {
        body: Cow::Owned(out),
        redacted,
    }
}

/// The credential that starts at byte `at`, with the byte where it ends.
fn match_at(body: &str, at: usize) -> Option<(TokenShape, usize)> {
    let bytes = body.as_bytes();
    if at > 0 && word_or_dash(bytes[at - 1]) {
        return None;
    }
    // Bytes, not `&str`: `at` may be inside a character; every prefix is ASCII, so a match
    // starts on a character boundary.
    let rest = &bytes[at..];
    if rest.starts_with(PEM_BEGIN.as_bytes()) {
        return pem_block(body, at).map(|end| (TokenShape::PemPrivateKey, end));
    }
    for format in PREFIXED {
        if !rest.starts_with(format.prefix.as_bytes()) {
            continue;
        }
        let start = at + format.prefix.len();
        let len = bytes[start..]
            .iter()
            .take_while(|b| (format.body)(**b))
            .count();
        let len = match format.exact {
            // A fixed-length id followed by more of its alphabet is something else.
            Some(exact) if len != exact => continue,
            _ => len,
        };
        if len < format.min_len {
            continue;
        }
        let end = start + len;
        if format.needs_digit && !bytes[start..end].iter().any(u8::is_ascii_digit) {
            continue;
        }
        return Some((format.shape, end));
    }
    None
}

/// The end of the PEM private key block whose `-----BEGIN ` is at `at`: after its end line, or
/// the end of the text when there is none (a key cut short is still a key).
fn pem_block(body: &str, at: usize) -> Option<usize> {
    let header_end = body[at..].find('\n').map_or(body.len(), |i| at + i);
    let header = &body[at..header_end];
    let header = header.trim_end_matches('\r');
    if !header.ends_with(PEM_PRIVATE_KEY) {
        return None;
    }
    let Some(end_line) = body[header_end..].find(PEM_END).map(|i| header_end + i) else {
        return Some(body.len());
    };
    let after = body[end_line..]
        .find(PEM_PRIVATE_KEY)
        .map_or(body.len(), |i| end_line + i + PEM_PRIVATE_KEY.len());
    Some(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, expected: &str, shapes: &[TokenShape]) {
        let scrubbed = scrub_token_shapes(input);
        assert_eq!(scrubbed.body, expected, "{input}");
        assert_eq!(scrubbed.redacted, shapes, "{input}");
    }

    #[test]
    fn every_listed_shape_is_redacted() {
        use TokenShape::*;
        let github = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
        check(
            &format!("token: {github}."),
            "token: [REDACTED].",
            &[GitHubToken],
        );
        check(
            &format!("gho_{} and ghs_{}", "x9".repeat(18), "Y8".repeat(18)),
            "[REDACTED] and [REDACTED]",
            &[GitHubToken, GitHubToken],
        );
        check(
            &format!("github_pat_{}_{}", "11ABCDEFG0".repeat(2), "z".repeat(59)),
            "[REDACTED]",
            &[GitHubFineGrained],
        );
        check(
            "export GITLAB=glpat-AbCdEf0123456789_-xy",
            "export GITLAB=[REDACTED]",
            &[GitLabToken],
        );
        check(
            "key sk-proj-AbCdEf0123456789AbCdEf0123456789 end",
            "key [REDACTED] end",
            &[OpenAiKey],
        );
        check(
            "sk-ant-api03-AbCdEf0123456789_AbCdEf-0123",
            "[REDACTED]",
            &[AnthropicKey],
        );
        check(
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
            "aws_access_key_id = [REDACTED]\n",
            &[AwsAccessKeyId],
        );
        check(
            "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc=\n-----END RSA PRIVATE KEY-----\nafter",
            "before\n[REDACTED]\nafter",
            &[PemPrivateKey],
        );
        check(
            "cut: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk",
            "cut: [REDACTED]",
            &[PemPrivateKey],
        );
    }

    #[test]
    fn prose_and_near_misses_are_left_alone() {
        for text in [
            "use sk-learn for the model",
            "the task-0123456789abcdefghijklmnop id",
            "ghp_short",
            "AKIA is the prefix of AWS key ids",
            "AKIAIOSFODNN7EXAMPLEX is seventeen",
            "sk-no-digits-in-this-long-identifier",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "-----BEGIN PUBLIC KEY-----",
            "résumé — ünïcode ✓ stays",
        ] {
            let scrubbed = scrub_token_shapes(text);
            assert!(matches!(scrubbed.body, Cow::Borrowed(_)), "{text}");
            assert!(scrubbed.redacted.is_empty(), "{text}");
        }
    }
}
