//! One living summary comment per issue: posted once with its own marker
//! (`summary-i<issue>`), then edited in place through the outbox, never re-posted. An update that
//! would not change the body writes nothing; an update while the last write has not been
//! attempted yet rewrites that write instead of queueing another, so an issue gets at most one
//! tracker write per change. A post the tracker refused for good is queued again by the next
//! update (same key, the new body): the summary is never given up for good. An edit refused for
//! good is not retried; the next change queues the next edit.
//!
//! With the summary off, a push that makes findings stale posts one short notice instead
//! ([`enqueue_stale_notice`]).

pub mod render;

use relay_store::{PgConnection, PgPool};
use relay_tracker::{CommentTarget, NoteRef, TrackerWrite};

use crate::Result;
use crate::keys;
use crate::outbox::Queued;

use relay_core::{IssueId, JobId};
pub use render::{SummaryInput, render};

/// What an update of the summary did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryWrite {
    /// The body would not change: nothing written.
    Unchanged,
    /// The first summary of the issue: a new comment queued.
    Posted,
    /// A queued write not yet attempted now carries the new body.
    Rewritten,
    /// An edit of the posted comment queued.
    Edited,
    /// The comment is being posted right now (an attempt is in flight): the next update edits it.
    Deferred,
    /// The first post was refused for good: queued again with the new body.
    Reposted,
}

/// Model-written text made safe to show in a comment Relay writes: mentions do not ping
/// (a word joiner after `@`) and nothing can look like Relay's hidden write marker.
pub fn neutralise(text: &str) -> String {
    text.replace('@', "@\u{2060}").replace("<!--", "&lt;!--")
}

/// Queues the summary `content` for the issue in the caller's transaction.
pub async fn enqueue_summary(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: Option<JobId>,
    content: &str,
) -> Result<SummaryWrite> {
    let key = keys::summary_key(issue_id);
    let body = keys::with_marker(content, &key);
    let Some(last) = relay_store::summaries::get_for_update(conn, issue_id).await? else {
        let write = TrackerWrite::Comment {
            target: CommentTarget::NewThread,
            body: body.clone(),
        };
        let posted = crate::outbox::enqueue(
            conn,
            Queued {
                key: &key,
                issue_id,
                job_id,
                write: &write,
            },
        )
        .await?;
        // A concurrent first update queued the post already: give it this body if it is not
        // on its way yet, else leave the next update to edit it.
        if !posted && !relay_store::summaries::rewrite_unsent(conn, &key, &body).await? {
            return Ok(SummaryWrite::Deferred);
        }
        relay_store::summaries::save(conn, issue_id, &body, 1).await?;
        return Ok(if posted {
            SummaryWrite::Posted
        } else {
            SummaryWrite::Rewritten
        });
    };
    // The post was refused for good (the bot could not comment then): post again, once per
    // update, under the same key; the edits start from it once it lands.
    if relay_store::summaries::rearm_refused(conn, &key, &body).await? {
        relay_store::summaries::save(conn, issue_id, &body, 1).await?;
        return Ok(SummaryWrite::Reposted);
    }
    if last.body == body {
        return Ok(SummaryWrite::Unchanged);
    }
    // The last write (the post, or the latest edit) not attempted yet: give it the new body.
    let last_key = if last.revision == 1 {
        key.clone()
    } else {
        keys::summary_edit_key(issue_id, last.revision)
    };
    if relay_store::summaries::rewrite_unsent(conn, &last_key, &body).await? {
        relay_store::summaries::save(conn, issue_id, &body, last.revision).await?;
        return Ok(SummaryWrite::Rewritten);
    }
    let Some(comment) = relay_store::outbox::get(conn, &key).await? else {
        return Ok(SummaryWrite::Deferred);
    };
    let Some(note_id) = comment.note_id.as_deref() else {
        // Posting is in flight (or failed): its outcome decides; the next update edits.
        return Ok(SummaryWrite::Deferred);
    };
    let revision = last.revision + 1;
    let write = TrackerWrite::Edit {
        note: NoteRef {
            note_id: note_id.to_owned(),
            discussion_id: comment.discussion_id.clone(),
        },
        body: body.clone(),
    };
    crate::outbox::enqueue(
        conn,
        Queued {
            key: &keys::summary_edit_key(issue_id, revision),
            issue_id,
            job_id,
            write: &write,
        },
    )
    .await?;
    relay_store::summaries::save(conn, issue_id, &body, revision).await?;
    Ok(SummaryWrite::Edited)
}

/// Renders the issue's summary from the store and queues it (one transaction).
pub async fn refresh_summary(
    pool: &PgPool,
    issue_id: IssueId,
    job_id: Option<JobId>,
    prices: &relay_core::prices::Prices,
) -> Result<SummaryWrite> {
    let mut tx = pool.begin().await.map_err(relay_store::Error::from)?;
    let Some(state) = relay_store::issue_state::load(&mut tx, issue_id).await? else {
        return Ok(SummaryWrite::Unchanged);
    };
    let internal_gaps = relay_store::gaps::internal_numbers(&mut tx, issue_id).await?;
    let internal_findings = relay_store::findings::internal_numbers(&mut tx, issue_id).await?;
    let spend = relay_store::status::spend_by_role_and_model(pool, issue_id).await?;
    let content = render(&SummaryInput {
        issue_url: &state.issue.url,
        gaps: &state.gaps,
        gap_evidence: &state.gap_evidence,
        findings: &state.findings,
        internal_gaps: &internal_gaps,
        internal_findings: &internal_findings,
        spec: state.spec.as_ref(),
        spend: &spend,
        prices,
    });
    let written = enqueue_summary(&mut tx, issue_id, job_id, &content).await?;
    tx.commit().await.map_err(relay_store::Error::from)?;
    Ok(written)
}

/// With the summary off: one short comment naming the findings a push made stale and the commit
/// (key `stale-i<issue>-<commit>`: a retried push never posts it twice). `false`: nothing to say
/// or already queued.
pub async fn enqueue_stale_notice(
    conn: &mut PgConnection,
    issue_id: IssueId,
    job_id: Option<JobId>,
    commit: &str,
    findings: &[i32],
) -> Result<bool> {
    if findings.is_empty() {
        return Ok(false);
    }
    let key = keys::stale_findings_key(issue_id, commit);
    let names = findings
        .iter()
        .map(|n| format!("finding {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let short = &commit[..commit.len().min(12)];
    let content = format!(
        "The code changed at `{short}`: {names} no longer match{} what {} cited, so I treat {} as stale.",
        if findings.len() == 1 { "es" } else { "" },
        if findings.len() == 1 { "it" } else { "they" },
        if findings.len() == 1 { "it" } else { "them" },
    );
    let write = TrackerWrite::Comment {
        target: CommentTarget::NewThread,
        body: keys::with_marker(&content, &key),
    };
    crate::outbox::enqueue(
        conn,
        Queued {
            key: &key,
            issue_id,
            job_id,
            write: &write,
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn posted_once_then_edited_and_never_sent_unchanged(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let rows = |rows: Vec<relay_store::outbox::OutboxRow>| {
            rows.into_iter()
                .map(|r| (r.idempotency_key, r.kind, r.body, r.target_note_id))
                .collect::<Vec<_>>()
        };
        let check = |content: &str| keys::with_marker(content, "summary-i7");
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(7), None, "a")
                .await
                .unwrap(),
            SummaryWrite::Posted
        );
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(7), None, "a")
                .await
                .unwrap(),
            SummaryWrite::Unchanged
        );
        // Not sent yet: the queued post takes the new body.
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(7), None, "b")
                .await
                .unwrap(),
            SummaryWrite::Rewritten
        );
        let queued = relay_store::outbox::for_issue(&mut conn, IssueId(7))
            .await
            .unwrap();
        assert_eq!(
            rows(queued.clone()),
            [("summary-i7".into(), "comment".into(), check("b"), None)]
        );
        // In flight (an attempt started): the next update waits for its outcome.
        relay_store::outbox::start_attempt(&mut conn, queued[0].id)
            .await
            .unwrap();
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(7), None, "c")
                .await
                .unwrap(),
            SummaryWrite::Deferred
        );
        relay_store::outbox::mark_sent(&mut conn, queued[0].id, Some("n1"), None)
            .await
            .unwrap();
        // Posted: an edit of that note, then (unsent) rewritten, never a second post.
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(7), None, "c")
                .await
                .unwrap(),
            SummaryWrite::Edited
        );
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(7), None, "d")
                .await
                .unwrap(),
            SummaryWrite::Rewritten
        );
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(7), None, "d")
                .await
                .unwrap(),
            SummaryWrite::Unchanged
        );
        let all = rows(
            relay_store::outbox::for_issue(&mut conn, IssueId(7))
                .await
                .unwrap(),
        );
        assert_eq!(
            all,
            [
                ("summary-i7".into(), "comment".into(), check("b"), None),
                (
                    "summary-i7-r2".into(),
                    "edit".into(),
                    check("d"),
                    Some("n1".into())
                ),
            ]
        );
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_post_refused_for_good_is_posted_again_by_the_next_update(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(5), None, "a")
                .await
                .unwrap(),
            SummaryWrite::Posted
        );
        let post = relay_store::outbox::get(&mut conn, "summary-i5")
            .await
            .unwrap()
            .unwrap();
        relay_store::outbox::start_attempt(&mut conn, post.id)
            .await
            .unwrap();
        relay_store::outbox::mark_failed(&mut conn, post.id, "403 forbidden")
            .await
            .unwrap();
        // Even an unchanged body: the summary is not on the tracker at all.
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(5), None, "a")
                .await
                .unwrap(),
            SummaryWrite::Reposted
        );
        let again = relay_store::outbox::get(&mut conn, "summary-i5")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (again.id, again.status.as_str(), again.attempts, again.body),
            (post.id, "pending", 0, keys::with_marker("a", "summary-i5")),
            "the same write, queued again"
        );
        relay_store::outbox::mark_sent(&mut conn, again.id, Some("n9"), None)
            .await
            .unwrap();
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(5), None, "b")
                .await
                .unwrap(),
            SummaryWrite::Edited
        );
        let rows = relay_store::outbox::for_issue(&mut conn, IssueId(5))
            .await
            .unwrap();
        assert_eq!(rows.len(), 2, "one post, one edit: never a second comment");
    }

    /// Every body that reaches the outbox is scrubbed: the first post, the rewrite of a queued
    /// write and the re-armed refused post alike.
    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn every_summary_body_is_scrubbed_of_secrets(pool: PgPool) {
        use secrecy::SecretString;
        let secret = "ghs_summary_scrub_secret_0001";
        relay_core::secrets::register_secret(
            "trackers.test.token",
            &SecretString::from(secret.to_owned()),
        );
        let mut conn = pool.acquire().await.unwrap();
        async fn body(conn: &mut PgConnection) -> relay_store::outbox::OutboxRow {
            relay_store::outbox::get(conn, "summary-i6")
                .await
                .unwrap()
                .unwrap()
        }
        enqueue_summary(&mut conn, IssueId(6), None, &format!("a {secret}"))
            .await
            .unwrap();
        assert!(!body(&mut conn).await.body.contains(secret));
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(6), None, &format!("b {secret}"))
                .await
                .unwrap(),
            SummaryWrite::Rewritten
        );
        let row = body(&mut conn).await;
        assert!(row.body.starts_with("b [REDACTED]"), "{}", row.body);
        relay_store::outbox::start_attempt(&mut conn, row.id)
            .await
            .unwrap();
        relay_store::outbox::mark_failed(&mut conn, row.id, "403 forbidden")
            .await
            .unwrap();
        assert_eq!(
            enqueue_summary(&mut conn, IssueId(6), None, &format!("c {secret}"))
                .await
                .unwrap(),
            SummaryWrite::Reposted
        );
        let row = body(&mut conn).await;
        assert!(row.body.starts_with("c [REDACTED]"), "{}", row.body);
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_stale_notice_names_the_findings_and_the_commit_once(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let commit = "0123456789abcdef0123456789abcdef01234567";
        assert!(
            !enqueue_stale_notice(&mut conn, IssueId(3), None, commit, &[])
                .await
                .unwrap()
        );
        assert!(
            enqueue_stale_notice(&mut conn, IssueId(3), None, commit, &[1, 4])
                .await
                .unwrap()
        );
        assert!(
            !enqueue_stale_notice(&mut conn, IssueId(3), None, commit, &[1, 4])
                .await
                .unwrap()
        );
        let rows = relay_store::outbox::for_issue(&mut conn, IssueId(3))
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert!(rows[0].body.starts_with(
            "The code changed at `0123456789ab`: finding 1, finding 4 no longer match what they cited"
        ), "{}", rows[0].body);
    }
}
