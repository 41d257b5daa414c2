//! One module per job kind.

pub mod process_issue;

use relay_core::JobKind;

use crate::handler::Registry;

/// The registry with every built-in job handler.
pub fn registry() -> Registry {
    Registry::new().register(
        JobKind::ProcessIssue.as_str(),
        process_issue::ProcessIssueJob,
    )
}
