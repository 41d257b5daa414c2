//! The configured secrets, one home: which they are ([`tracker_secrets`], and the binary's
//! `Settings::secrets` for the rest), the process-wide registry ([`register_secret`]) that the
//! outbox scrubs every tracker write with ([`scrub_secrets`]), that prompts are redacted with
//! ([`registered`]) and that job errors are scrubbed with before they are logged or stored, and
//! the one redaction of a URL's credentials ([`redact_url`], [`url_secrets`]).

use std::borrow::Cow;
use std::sync::RwLock;

use secrecy::{ExposeSecret, SecretString};

use crate::TrackerSettings;

/// What a secret found in an outgoing body becomes.
pub const REDACTED: &str = "[REDACTED]";
/// Secrets shorter than this are not scanned for: replacing every `abc` in a comment would
/// mangle it while protecting nothing (a real credential is longer). Such a value is refused at
/// registration, and the registration says so.
pub const MIN_SCANNED_SECRET_CHARS: usize = 8;

/// Every secret of the `[[trackers]]` entries, labelled by its key: tokens, webhook secrets and
/// GitHub App private keys.
pub fn tracker_secrets(trackers: &[TrackerSettings]) -> Vec<(String, SecretString)> {
    let mut secrets = Vec::new();
    for tracker in trackers {
        let name = tracker.name.as_str();
        secrets.push((format!("trackers.{name}.token"), tracker.token.clone()));
        secrets.push((
            format!("trackers.{name}.webhook_secret"),
            tracker.webhook_secret.clone(),
        ));
        if let Some(key) = &tracker.private_key {
            secrets.push((format!("trackers.{name}.private_key"), key.clone()));
        }
    }
    secrets
}

/// Configuration keys whose values are secrets wherever they appear.
const SECRET_SETTING_KEYS: &[&str] = &[
    "token",
    "webhook_secret",
    "password",
    "api_key",
    "secret",
    "private_key",
];

/// Whether a configuration key holds a secret (`token`, `api_key`, `*_token`, `*_secret`, ...):
/// what `relay config show` prints as [`REDACTED`].
pub fn is_secret_setting(key: &str) -> bool {
    SECRET_SETTING_KEYS.contains(&key) || key.ends_with("_token") || key.ends_with("_secret")
}

/// A secret registered for the outgoing scan, with what it is (for the trace, never the value).
struct Registered {
    label: String,
    value: SecretString,
}

/// Every configured secret of this process. Process-wide on purpose: every tracker write passes
/// through the outbox, wherever it was composed, and no caller can forget to pass the list.
static SECRETS: RwLock<Vec<Registered>> = RwLock::new(Vec::new());

/// Whether [`register_secret`] took the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    Added,
    AlreadyKnown,
    /// Empty or shorter than [`MIN_SCANNED_SECRET_CHARS`]: not scanned for.
    TooShort,
}

/// Adds a secret to the outgoing scan. `label` says what it is (`trackers.gitlab.token`) and is
/// what a redaction is traced with.
pub fn register_secret(label: &str, value: &SecretString) -> Registration {
    let chars = value.expose_secret().chars().count();
    if chars < MIN_SCANNED_SECRET_CHARS {
        return Registration::TooShort;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if secrets
        .iter()
        .any(|s| s.value.expose_secret() == value.expose_secret())
    {
        return Registration::AlreadyKnown;
    }
    secrets.push(Registered {
        label: label.to_owned(),
        value: value.clone(),
    });
    Registration::Added
}

/// Adds a secret that rotates (a GitHub App installation token, minted about hourly) to the
/// outgoing scan: it replaces the value registered under the same `label`, so the scan holds one
/// value per label however often it rotates.
pub fn register_rotating_secret(label: &str, value: &SecretString) -> Registration {
    if value.expose_secret().chars().count() < MIN_SCANNED_SECRET_CHARS {
        return Registration::TooShort;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if secrets
        .iter()
        .any(|s| s.value.expose_secret() == value.expose_secret())
    {
        return Registration::AlreadyKnown;
    }
    secrets.retain(|s| s.label != label);
    secrets.push(Registered {
        label: label.to_owned(),
        value: value.clone(),
    });
    Registration::Added
}

/// An outgoing body after the secret scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scrubbed<'a> {
    pub body: Cow<'a, str>,
    /// Labels of the secrets that were found and replaced by [`REDACTED`].
    pub redacted: Vec<String>,
}

/// Replaces every registered secret found in `body` by [`REDACTED`].
pub fn scrub_secrets(body: &str) -> Scrubbed<'_> {
    let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    let mut out = Cow::Borrowed(body);
    let mut redacted = Vec::new();
    // Longest first: a secret that contains another is replaced whole.
    let mut order: Vec<&Registered> = secrets.iter().collect();
    order.sort_by_key(|s| std::cmp::Reverse(s.value.expose_secret().len()));
    for secret in order {
        let value = secret.value.expose_secret();
        if out.contains(value) {
            out = Cow::Owned(out.replace(value, REDACTED));
            redacted.push(secret.label.clone());
        }
    }
    Scrubbed {
        body: out,
        redacted,
    }
}

/// The value of every registered secret: what a prompt is redacted with (a human pasting one
/// into an issue is not echoed to a model).
pub fn registered() -> Vec<SecretString> {
    let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    secrets.iter().map(|s| s.value.clone()).collect()
}

/// Query parameters whose value is a credential (libpq's `password`, `sslpassword`, and the
/// usual token and key names), compared without case.
const SECRET_QUERY_KEYS: [&str; 11] = [
    "password",
    "sslpassword",
    "pass",
    "pwd",
    "token",
    "access_token",
    "private_token",
    "api_key",
    "secret",
    "key",
    "apikey",
];

/// Replaces the credentials of a URL with `[REDACTED]`: the password of its userinfo
/// (`scheme://user:pass@host`) and the value of every credential query parameter
/// (`?password=…`, `&sslpassword=…`, `?token=…`). The user name is kept (operators need it).
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return "[REDACTED]".to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let (userinfo, host) = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            let redacted = if userinfo.contains(':') {
                format!("{user}:[REDACTED]@")
            } else {
                format!("{user}@")
            };
            (redacted, &authority[at + 1..])
        }
        None => (String::new(), authority),
    };
    let tail = &rest[authority_end..];
    format!(
        "{}://{userinfo}{host}{}",
        &url[..scheme_end],
        redact_query(tail)
    )
}

/// `path?query#fragment` with the value of every credential parameter replaced.
fn redact_query(tail: &str) -> String {
    let Some(question) = tail.find('?') else {
        return tail.to_owned();
    };
    let (path, after) = tail.split_at(question);
    let after = &after[1..];
    let (query, fragment) = match after.find('#') {
        Some(hash) => after.split_at(hash),
        None => (after, ""),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if is_secret_key(key) => format!("{key}=[REDACTED]"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{path}?{}{fragment}", pairs.join("&"))
}

fn is_secret_key(key: &str) -> bool {
    SECRET_QUERY_KEYS
        .iter()
        .any(|secret| key.eq_ignore_ascii_case(secret))
}

/// The credentials written into a URL (the database's): the userinfo password and the values of
/// credential query parameters (percent-decoding is not attempted: the scan looks for the text
/// as configured, and a decoded form would appear in no comment anyway).
pub fn url_secrets(url: &str) -> Vec<SecretString> {
    let mut found = Vec::new();
    let Some(scheme_end) = url.find("://") else {
        return found;
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some(at) = rest[..authority_end].rfind('@')
        && let Some((_, password)) = rest[..at].split_once(':')
        && !password.is_empty()
    {
        found.push(SecretString::from(password.to_owned()));
    }
    if let Some(question) = rest.find('?') {
        let query = rest[question + 1..].split('#').next().unwrap_or_default();
        for pair in query.split('&') {
            if let Some((key, value)) = pair.split_once('=')
                && is_secret_key(key)
                && !value.is_empty()
            {
                found.push(SecretString::from(value.to_owned()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_scrubbed_and_labelled() {
        let token = SecretString::from("glpat-outgoing-scan-0001".to_owned());
        assert_eq!(
            register_secret("trackers.test.token", &token),
            Registration::Added
        );
        assert_eq!(register_secret("again", &token), Registration::AlreadyKnown);
        assert_eq!(
            register_secret("short", &SecretString::from("abc".to_owned())),
            Registration::TooShort
        );
        let scrubbed = scrub_secrets("the token is glpat-outgoing-scan-0001, ok");
        assert_eq!(scrubbed.body, "the token is [REDACTED], ok");
        assert_eq!(scrubbed.redacted, ["trackers.test.token"]);
        let clean = scrub_secrets("nothing here abc");
        assert!(matches!(clean.body, Cow::Borrowed(_)));
        assert!(clean.redacted.is_empty());
    }

    #[test]
    fn database_url_secrets_are_found_for_the_outgoing_scan() {
        let found: Vec<String> =
            url_secrets("postgres://relay:s3cret-pw@db/relay?password=other-pw&sslmode=require")
                .iter()
                .map(|s| s.expose_secret().to_owned())
                .collect();
        assert_eq!(found, ["s3cret-pw", "other-pw"]);
        assert!(url_secrets("postgres://relay@db/relay").is_empty());
    }

    #[test]
    fn redacts_passwords() {
        let cases = [
            (
                "postgres://u:p@h:5432/db",
                "postgres://u:[REDACTED]@h:5432/db",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://h/db?x=1", "postgres://h/db?x=1"),
            ("postgres://u:p@ss@h/db", "postgres://u:[REDACTED]@h/db"),
            ("garbage", "[REDACTED]"),
            (
                "postgres://u@h/db?sslmode=require&password=hunter2",
                "postgres://u@h/db?sslmode=require&password=[REDACTED]",
            ),
            (
                "postgresql:///db?host=/run&PASSWORD=x&sslpassword=y#f",
                "postgresql:///db?host=/run&PASSWORD=[REDACTED]&sslpassword=[REDACTED]#f",
            ),
            (
                "https://x:tok@h?token=abc",
                "https://x:[REDACTED]@h?token=[REDACTED]",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(redact_url(input), expected, "{input}");
        }
    }

    #[test]
    fn a_rotating_secret_replaces_its_predecessor() {
        let first = SecretString::from("ghs_rotating_secret_one_0001".to_owned());
        let second = SecretString::from("ghs_rotating_secret_two_0002".to_owned());
        assert_eq!(
            register_rotating_secret("github.installation.1.r.token", &first),
            Registration::Added
        );
        assert_eq!(
            register_rotating_secret("github.installation.1.r.token", &second),
            Registration::Added
        );
        let scrubbed = scrub_secrets("a ghs_rotating_secret_two_0002 b");
        assert_eq!(scrubbed.body, "a [REDACTED] b");
        let held = SECRETS
            .read()
            .unwrap()
            .iter()
            .filter(|s| s.label == "github.installation.1.r.token")
            .count();
        assert_eq!(held, 1, "one value per label");
    }
}
