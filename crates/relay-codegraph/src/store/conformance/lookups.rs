//! Symbols by qname and children by parent.

use super::{load, qnames};
use crate::store::GraphStore;

/// `symbols` and `children`.
pub async fn lookups(store: &dyn GraphStore) {
    let backend = store.backend();
    let snap = load(store, "conformance/lookups", "c1").await;
    let found = store
        .symbols(
            &snap,
            &[
                "pkg.mod.Child".to_owned(),
                "example.com/app/cmd.init".to_owned(),
                "does.not.exist".to_owned(),
                "example.com/app/brain.helper".to_owned(),
            ],
        )
        .await
        .expect("symbols");
    assert_eq!(
        found
            .iter()
            .map(|s| (s.qname.as_str(), s.file.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("example.com/app/brain.helper", "brain/planner.go"),
            ("example.com/app/cmd.init", "cmd/flags.go"),
            ("example.com/app/cmd.init", "cmd/main.go"),
            ("pkg.mod.Child", "pkg/mod.py"),
        ],
        "[{backend}] symbols by qname: ordered, duplicates kept, unknown skipped"
    );
    let helper = &found[0];
    assert_eq!(
        helper.signature.as_deref(),
        Some("func helper(p *LLMPlanner) error"),
        "[{backend}] signature round trip"
    );
    assert_eq!(helper.end_line, 55, "[{backend}] end line round trip");

    let children = store
        .children(&snap, "example.com/app/brain.LLMPlanner")
        .await
        .expect("children");
    assert_eq!(
        qnames(&children),
        vec![
            "example.com/app/brain.LLMPlanner.client",
            "example.com/app/brain.LLMPlanner.Plan",
        ],
        "[{backend}] children ordered by file and line"
    );
    assert!(
        store
            .children(&snap, "nope")
            .await
            .expect("children")
            .is_empty(),
        "[{backend}] no children"
    );
}
