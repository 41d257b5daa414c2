//! [`SandboxSet`]: the issue's own checkout and its related repositories' checkouts, and the
//! routing of a place (`acme/sdk:pkg/x.go`) to the one it names.

use crate::place::{self, label_like_prefix, split_place};
use crate::sandbox::Sandbox;

/// The checkouts one job may cite: the issue's own (bare paths) and each related repository's
/// (paths written `label:path`).
#[derive(Debug, Clone)]
pub struct SandboxSet {
    /// The issue's own repository.
    pub primary: Sandbox,
    /// The related repositories, by label (distinct labels; the caller bounds how many).
    pub related: Vec<RelatedSandbox>,
}

/// One related repository's checkout.
#[derive(Debug, Clone)]
pub struct RelatedSandbox {
    /// The repository's tracker path (`acme/sdk`), as written before a place's `:`.
    pub label: String,
    pub sandbox: Sandbox,
}

/// Where a place leads: the checkout and the path inside it.
#[derive(Debug, Clone, Copy)]
pub struct Routed<'s, 'p> {
    /// The related repository's label (`None`: the issue's own).
    pub label: Option<&'s str>,
    pub sandbox: &'s Sandbox,
    /// The path inside that checkout (the label cut off).
    pub path: &'p str,
}

/// A place names a repository that is not related to the issue. Its text is what the model (or
/// the planner) reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "repository \"{label}\" is not related to this issue; {}",
    related_list(related)
)]
pub struct NotRelated {
    /// The label as written (escaped and bounded).
    pub label: String,
    /// The labels of the related repositories.
    pub related: Vec<String>,
}

impl NotRelated {
    /// The refusal of `label` given the related repositories' `labels`.
    pub fn new<L: AsRef<str>>(label: &str, labels: &[L]) -> NotRelated {
        NotRelated {
            label: crate::sandbox::display_input(label),
            related: labels.iter().map(|l| l.as_ref().to_owned()).collect(),
        }
    }
}

fn related_list(related: &[String]) -> String {
    if related.is_empty() {
        "this issue has no related repositories".to_owned()
    } else {
        format!("related repositories: {}", related.join(", "))
    }
}

impl SandboxSet {
    /// The issue's own checkout, with no related repository.
    pub fn new(primary: Sandbox) -> SandboxSet {
        SandboxSet {
            primary,
            related: Vec::new(),
        }
    }

    /// This set with the related repository `label` checked out in `sandbox`.
    #[must_use]
    pub fn with_related(mut self, label: impl Into<String>, sandbox: Sandbox) -> SandboxSet {
        self.related.push(RelatedSandbox {
            label: label.into(),
            sandbox,
        });
        self
    }

    /// The related repositories' labels, in order.
    pub fn labels(&self) -> Vec<&str> {
        self.related.iter().map(|r| r.label.as_str()).collect()
    }

    /// The checkout of the related repository `label`.
    pub fn get(&self, label: &str) -> Option<&Sandbox> {
        self.related
            .iter()
            .find(|r| r.label == label)
            .map(|r| &r.sandbox)
    }

    /// The checkout `path` names: a known label's, the issue's own for a bare path, or
    /// [`NotRelated`] when the path starts with something written like a label that is not one
    /// of the related repositories (nothing is read then).
    pub fn route<'s, 'p>(&'s self, path: &'p str) -> Result<Routed<'s, 'p>, NotRelated> {
        let labels = self.labels();
        let place = split_place(&labels, path);
        if let Some(related) = place
            .label
            .and_then(|label| self.related.iter().find(|r| r.label == label))
        {
            return Ok(Routed {
                label: Some(related.label.as_str()),
                sandbox: &related.sandbox,
                path: place.path,
            });
        }
        if let Some(prefix) = label_like_prefix(path) {
            return Err(NotRelated::new(prefix, &labels));
        }
        Ok(Routed {
            label: None,
            sandbox: &self.primary,
            path,
        })
    }

    /// The label a place names among the related repositories (`None`: the issue's own).
    pub fn label_of(&self, path: &str) -> Option<&str> {
        let labels = self.labels();
        let label = split_place(&labels, path).label?;
        self.related
            .iter()
            .find(|r| r.label == label)
            .map(|r| r.label.as_str())
    }

    /// `path` of the repository `label` written as a place.
    pub fn place(label: Option<&str>, path: &str) -> String {
        place::write_place(label, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> (tempfile::TempDir, tempfile::TempDir, SandboxSet) {
        let app = tempfile::tempdir().unwrap();
        let sdk = tempfile::tempdir().unwrap();
        let set = SandboxSet::new(Sandbox::new(app.path()).unwrap())
            .with_related("acme/sdk", Sandbox::new(sdk.path()).unwrap());
        (app, sdk, set)
    }

    #[test]
    fn places_route_to_their_checkout() {
        let (_app, sdk, set) = set();
        let routed = set.route("acme/sdk:pkg/x.go").unwrap();
        assert_eq!(routed.label, Some("acme/sdk"));
        assert_eq!(routed.path, "pkg/x.go");
        assert_eq!(routed.sandbox.root(), sdk.path().canonicalize().unwrap());
        let routed = set.route("pkg/x.go").unwrap();
        assert_eq!(routed.label, None);
        assert_eq!(routed.path, "pkg/x.go");
    }

    #[test]
    fn an_unknown_label_is_not_related() {
        let (_app, _sdk, set) = set();
        let error = set.route("acme/secret:x.go").unwrap_err();
        assert_eq!(
            error.to_string(),
            "repository \"acme/secret\" is not related to this issue; related repositories: acme/sdk"
        );
        let alone = SandboxSet::new(set.primary.clone());
        assert_eq!(
            alone.route("acme/sdk:x.go").unwrap_err().to_string(),
            "repository \"acme/sdk\" is not related to this issue; this issue has no related repositories"
        );
    }
}
