//! Error helpers shared by every crate.

/// `error: cause: cause` on one line: the error's message followed by each source's.
///
/// Library errors keep their sources (`#[source]`) and say only their own part in `Display`, so a
/// log line or an answer that needs the database's or the network's reason formats the whole chain
/// with this one helper.
pub fn cause_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        // Some errors repeat their source's message in their own; don't print it twice.
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cause_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("middle")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn every_cause_once_in_order() {
        let error = Outer(Middle(std::io::Error::other("connection refused")));
        assert_eq!(cause_chain(&error), "outer: middle: connection refused");
    }

    #[test]
    fn an_error_without_sources_is_its_message() {
        assert_eq!(cause_chain(&std::io::Error::other("plain")), "plain");
    }
}
