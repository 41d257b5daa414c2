//! Findings, gaps and comments across related repositories: a source written `acme/sdk:path` is
//! verified in the SDK's checkout and stored with the SDK's commit; a wrong line or a repository
//! that is not related is refused; and nothing written may name a place of a repository more
//! private than the issue, even a related one.

use relay_actions::{
    BatchId, Executor, RelatedSnapshot, Snapshot, ValidationContext, validate, validate_spec,
};
use relay_core::ProjectVisibility;
use relay_store::PgPool;
use serde_json::json;
use std::sync::Arc;

use crate::support::{MemoryTracker, batch, checkout, insert_issue};

/// The SDK's commit, stored with its sources.
const SDK_COMMIT: &str = "5dcc0mm1t";

/// The issue's checkout (`pkg/export.go`, commit `c0ffee`) with `acme/sdk` related (its
/// `pkg/x.go` has `func Dial` at line 3) at `visibility`.
fn snapshot(visibility: ProjectVisibility) -> (tempfile::TempDir, tempfile::TempDir, Snapshot) {
    let (app, mut snapshot) = checkout();
    let sdk = tempfile::tempdir().unwrap();
    std::fs::create_dir(sdk.path().join("pkg")).unwrap();
    std::fs::write(
        sdk.path().join("pkg/x.go"),
        "package pkg\n\nfunc Dial() error { return nil }\n",
    )
    .unwrap();
    snapshot.related.push(RelatedSnapshot {
        label: "acme/sdk".into(),
        sandbox: relay_tools::sandbox::Sandbox::new(sdk.path()).unwrap(),
        commit_sha: SDK_COMMIT.into(),
        visibility,
    });
    (app, sdk, snapshot)
}

/// A hand-built context for an issue of `visibility` (nothing else on it).
fn context(
    issue: ProjectVisibility,
    sdk: ProjectVisibility,
) -> (Vec<tempfile::TempDir>, ValidationContext) {
    let (app, sdk_dir, snapshot) = snapshot(sdk);
    let ctx = ValidationContext {
        authority: relay_actions::Authority::Unrestricted,
        issue_id: relay_core::IssueId(1),
        tracker: "gl".into(),
        project_id: "42".into(),
        gaps: Vec::new(),
        findings: Vec::new(),
        stale_findings: Vec::new(),
        thread: Vec::new(),
        snapshot: Some(snapshot),
        spec: None,
        default_reply: None,
        private_context: false,
        visibility: issue,
        internal_context: false,
        provenance: Default::default(),
        existing: Default::default(),
    };
    (vec![app, sdk_dir], ctx)
}

fn finding(path: &str, start: u32) -> serde_json::Value {
    json!({"type": "update_findings", "add": [{"synthesis": "Dial never fails",
        "sources": [{"path": path, "start_line": start, "end_line": start}]}]})
}

fn refused(ctx: &ValidationContext, actions: serde_json::Value) -> String {
    validate(ctx, &batch(json!({ "actions": actions })))
        .unwrap_err()
        .to_string()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_related_source_is_verified_there_and_stored_with_its_commit(pool: PgPool) {
    let issue = insert_issue(&pool, 7, &[]).await;
    let (_app, _sdk, snapshot) = snapshot(ProjectVisibility::Public);
    let mut conn = pool.acquire().await.unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), Some(snapshot))
        .await
        .unwrap();
    assert_eq!(
        ctx.visibility,
        ProjectVisibility::Public,
        "not known: public"
    );
    let validated = validate(
        &ctx,
        &batch(json!({"actions": [
            {"type": "update_findings", "add": [{"synthesis": "Export dials the SDK, which never fails",
                "sources": [
                    {"path": "acme/sdk:./pkg/x.go", "start_line": 3, "end_line": 3, "quote": "func Dial() error"},
                    {"path": "pkg/export.go", "start_line": 4, "end_line": 4}
                ]}]},
            {"type": "update_gaps", "add": [{"question": "Should Dial retry?", "severity": "low",
              "respondent": "assignee", "evidence": "acme/sdk:pkg/x.go:3 and pkg/export.go:4-5"}]}
        ]})),
    )
    .unwrap();
    Executor::new(pool.clone(), Arc::new(MemoryTracker::default()))
        .execute(
            &validated,
            BatchId {
                job_id: relay_core::JobId(11),
                run: 1,
                cycle: 0,
            },
            None,
        )
        .await
        .unwrap();

    let findings = relay_store::findings::live(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    let sources: Vec<(&str, i32, &str)> = findings[0]
        .sources
        .iter()
        .map(|s| (s.path.as_str(), s.start_line, s.commit_sha.as_str()))
        .collect();
    assert_eq!(
        sources,
        [
            ("acme/sdk:pkg/x.go", 3, SDK_COMMIT),
            ("pkg/export.go", 4, "c0ffee")
        ]
    );
    // A gap's evidence keeps each place at its own repository's commit, as a finding does.
    let evidence = relay_store::gaps::evidence_sources(&mut conn, relay_core::IssueId(issue))
        .await
        .unwrap();
    let places: Vec<(&str, &str)> = evidence
        .iter()
        .map(|e| (e.source.path.as_str(), e.source.commit_sha.as_str()))
        .collect();
    assert_eq!(
        places,
        [
            ("acme/sdk:pkg/x.go", SDK_COMMIT),
            ("pkg/export.go", "c0ffee")
        ]
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_confidential_issue_is_private(pool: PgPool) {
    let issue = insert_issue(&pool, 8, &[]).await;
    sqlx::query(
        "UPDATE issues SET confidential = true, project_visibility = 'public' WHERE id = $1",
    )
    .bind(issue)
    .execute(&pool)
    .await
    .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
        .await
        .unwrap();
    assert_eq!(ctx.visibility, ProjectVisibility::Private);
    sqlx::query(
        "UPDATE issues SET confidential = false, project_visibility = 'internal' WHERE id = $1",
    )
    .bind(issue)
    .execute(&pool)
    .await
    .unwrap();
    let ctx = ValidationContext::load(&mut conn, relay_core::IssueId(issue), None)
        .await
        .unwrap();
    assert_eq!(ctx.visibility, ProjectVisibility::Internal);
}

#[test]
fn a_wrong_line_or_an_unrelated_repository_is_refused() {
    let (_dirs, ctx) = context(ProjectVisibility::Public, ProjectVisibility::Public);
    assert!(
        validate(
            &ctx,
            &batch(json!({"actions": [finding("acme/sdk:pkg/x.go", 3)]}))
        )
        .is_ok()
    );
    assert_eq!(
        refused(&ctx, json!([finding("acme/sdk:pkg/x.go", 9)])),
        "FAILED: update_findings.add[0].sources[0] | acme/sdk:pkg/x.go:9: the file has only 3 lines | permanent"
    );
    assert_eq!(
        refused(&ctx, json!([finding("acme/secret:pkg/x.go", 3)])),
        "FAILED: update_findings.add[0].sources[0] | acme/secret:pkg/x.go:3: repository \"acme/secret\" is not related to this issue; related repositories: acme/sdk | permanent"
    );
    // A bare path is the issue's own repository, where the SDK's file is not.
    assert_eq!(
        refused(&ctx, json!([finding("pkg/x.go", 3)])),
        "FAILED: update_findings.add[0].sources[0] | pkg/x.go: no such file in the explored commit | permanent"
    );
}

#[test]
fn a_more_private_related_repository_is_never_named() {
    let (_dirs, ctx) = context(ProjectVisibility::Public, ProjectVisibility::Private);
    let why = "names a place in acme/sdk, a private repository, on a public issue: leave its code out of what is written here";
    let cases = [
        (
            json!([{"type": "post_comment", "content": "The fix belongs in `acme/sdk:pkg/x.go:3`."}]),
            format!("FAILED: post_comment.content | {why} | permanent"),
        ),
        (
            json!([finding("acme/sdk:pkg/x.go", 3)]),
            format!("FAILED: update_findings.add[0].sources[0] | {why} | permanent"),
        ),
        (
            json!([{"type": "update_findings", "add": [{"synthesis": "Like Acme/SDK:pkg/x.go, Export never fails",
                "sources": [{"path": "pkg/export.go", "start_line": 4, "end_line": 4}]}]}]),
            format!("FAILED: update_findings.add[0].synthesis | {why} | permanent"),
        ),
        (
            json!([{"type": "update_gaps", "add": [{"question": "Should Dial retry?", "severity": "low",
              "respondent": "assignee", "evidence": "see acme/sdk:pkg/x.go:3"}]}]),
            format!("FAILED: update_gaps.add[0].evidence | {why} | permanent"),
        ),
        (
            json!([{"type": "ready_for_spec_generation", "proceed_signal": "go",
              "context_summary": "wrap acme/sdk:pkg/x.go"}]),
            format!("FAILED: ready_for_spec_generation.context_summary | {why} | permanent"),
        ),
    ];
    for (actions, want) in cases {
        let got = refused(&ctx, actions.clone());
        assert!(got.lines().any(|line| line == want), "{actions}\n{got}");
    }
    // Naming the repository is not naming its code.
    assert!(
        validate(
            &ctx,
            &batch(
                json!({"actions": [{"type": "post_comment", "content": "Is acme/sdk involved?"}]})
            )
        )
        .is_ok()
    );
    let spec = format!("# Spec\n\nCall {}.\n", "acme/sdk:pkg/x.go:3");
    assert_eq!(
        validate_spec(&ctx, &spec).unwrap_err().to_string(),
        format!("FAILED: spec.part[1] | {why} | permanent")
    );
    assert!(validate_spec(&ctx, "# Spec\n\nCall pkg/export.go:4.\n").is_ok());
}

/// The rule is public < internal < private, by the issue's visibility.
#[test]
fn a_related_repository_is_cited_on_an_issue_at_least_as_private() {
    use ProjectVisibility::{Internal, Private, Public};
    for (issue, sdk, allowed) in [
        (Public, Public, true),
        (Public, Internal, false),
        (Internal, Internal, true),
        (Internal, Private, false),
        (Private, Private, true),
        (Private, Public, true),
    ] {
        let (_dirs, ctx) = context(issue, sdk);
        let got = validate(
            &ctx,
            &batch(json!({"actions": [
                finding("acme/sdk:pkg/x.go", 3),
                {"type": "post_comment", "content": "See acme/sdk:pkg/x.go:3."}
            ]})),
        );
        assert_eq!(
            got.is_ok(),
            allowed,
            "{issue:?} issue, {sdk:?} sdk: {got:?}"
        );
        assert_eq!(validate_spec(&ctx, "acme/sdk:pkg/x.go:3").is_ok(), allowed);
    }
}
