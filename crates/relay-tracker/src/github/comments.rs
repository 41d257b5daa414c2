//! The thread: listing every page, posting (a reply quotes and links the comment it answers —
//! GitHub issues have no threads), editing, and finding the bot's own marked comment. Every
//! comment addressed by id is first checked to belong to the issue.

use relay_core::NoteSnapshot;
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::model::{self, Comment};
use super::{GitHubClient, MAX_COMMENT_CHARS, repo_path};
use crate::http::{json, json_sized};
use crate::pagination::{self, MAX_LIST_BYTES, MAX_PAGES, PER_PAGE};
use crate::{CommentTarget, IssueRef, NoteRef, PostedComment, Result, ThreadNote, TrackerError};

/// Lines of the answered comment quoted in a reply.
const QUOTE_LINES: usize = 3;
/// Characters kept of each quoted line.
const QUOTE_LINE_CHARS: usize = 200;

impl GitHubClient {
    /// Every comment of the issue, oldest first, following `Link: rel="next"`.
    pub(crate) async fn comments(&self, issue: &IssueRef) -> Result<Vec<Comment>> {
        let repo = repo_path(&issue.project_path)?;
        let url = format!(
            "/repos/{repo}/issues/{}/comments?per_page={PER_PAGE}",
            issue.number
        );
        self.list(issue, url, "comments").await
    }

    /// Every page of a list, following `Link: rel="next"` on the API's own host (`scope` picks
    /// the credential; `what` names the list in errors).
    pub(crate) async fn list<T: DeserializeOwned>(
        &self,
        scope: &IssueRef,
        first: String,
        what: &str,
    ) -> Result<Vec<T>> {
        let mut url = first;
        let mut all = Vec::new();
        let mut bytes = 0usize;
        for _ in 0..MAX_PAGES {
            let response = self.call(Method::GET, &url, scope, None).await?;
            let next = pagination::link_next(response.headers());
            let (page, size): (Vec<T>, usize) = json_sized(response, &format!("GET {url}")).await?;
            bytes = bytes.saturating_add(size);
            if bytes > MAX_LIST_BYTES {
                return Err(TrackerError::Protocol(format!(
                    "the {what} are longer than {} MiB",
                    MAX_LIST_BYTES / (1024 * 1024)
                )));
            }
            all.extend(page);
            match next {
                // Never send the credential to another origin than the configured API's.
                Some(next) if pagination::within_api(&next, &self.api) => url = next,
                Some(next) => {
                    return Err(TrackerError::Protocol(format!(
                        "pagination link leaves the API base: {next}"
                    )));
                }
                None => return Ok(all),
            }
        }
        Err(TrackerError::Protocol(format!(
            "more than {MAX_PAGES} pages of {what}"
        )))
    }

    pub async fn list_thread(&self, issue: &IssueRef) -> Result<Vec<ThreadNote>> {
        let comments = self.comments(issue).await?;
        Ok(comments
            .into_iter()
            .map(|c| {
                let author = c.user.as_ref().map(|u| u.login.clone()).unwrap_or_default();
                ThreadNote {
                    by_bot: self.is_bot(&c),
                    author_role: c.author_association.as_deref().map(model::association_role),
                    note: NoteSnapshot {
                        note_id: c.id.to_string(),
                        discussion_id: None,
                        author,
                        body: c.body.unwrap_or_default(),
                        internal: false,
                        url: Some(c.html_url),
                        created_at: c.created_at,
                        updated_at: c.updated_at,
                    },
                }
            })
            .collect())
    }

    fn is_bot(&self, comment: &Comment) -> bool {
        comment.user.as_ref().is_some_and(|u| {
            self.bot.is(&u.login)
                // `name[bot]` logins are GitHub App accounts; humans cannot have brackets.
                && (!u.login.ends_with("[bot]") || u.kind.as_deref().is_none_or(|k| k == "Bot"))
        })
    }

    /// One comment, checked to belong to `issue` (comment ids are repository-wide).
    pub(crate) async fn issue_comment(&self, issue: &IssueRef, note_id: &str) -> Result<Comment> {
        let id: i64 = note_id.parse().map_err(|_| {
            TrackerError::Validation(format!("{note_id:?} is not a GitHub comment id"))
        })?;
        let repo = repo_path(&issue.project_path)?;
        let path = format!("/repos/{repo}/issues/comments/{id}");
        let comment: Comment = json(
            self.call(Method::GET, &path, issue, None).await?,
            &format!("GET {path}"),
        )
        .await?;
        let suffix = format!("/repos/{repo}/issues/{}", issue.number).to_ascii_lowercase();
        if !comment.issue_url.to_ascii_lowercase().ends_with(&suffix) {
            return Err(TrackerError::NotFound(format!(
                "comment {id} is not a comment of {repo}#{}",
                issue.number
            )));
        }
        Ok(comment)
    }

    pub async fn post_comment(
        &self,
        issue: &IssueRef,
        body: &str,
        target: &CommentTarget,
    ) -> Result<PostedComment> {
        let body = match target {
            CommentTarget::NewThread => body.to_owned(),
            CommentTarget::Reply(note) => {
                let answered = self.issue_comment(issue, &note.note_id).await?;
                quote_reply(&answered, body)
            }
        };
        check_length(&body)?;
        let repo = repo_path(&issue.project_path)?;
        let path = format!("/repos/{repo}/issues/{}/comments", issue.number);
        let response = self
            .call(Method::POST, &path, issue, Some(&json!({ "body": body })))
            .await?;
        let created: Comment = json(response, &format!("POST {path}")).await?;
        Ok(PostedComment {
            note_id: created.id.to_string(),
            discussion_id: None,
            url: Some(created.html_url),
            created_at: Some(created.created_at),
        })
    }

    pub async fn edit_comment(&self, issue: &IssueRef, note: &NoteRef, body: &str) -> Result<()> {
        check_length(body)?;
        let comment = self.issue_comment(issue, &note.note_id).await?;
        let repo = repo_path(&issue.project_path)?;
        let path = format!("/repos/{repo}/issues/comments/{}", comment.id);
        self.call(Method::PATCH, &path, issue, Some(&json!({ "body": body })))
            .await?;
        Ok(())
    }

    pub async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> Result<Option<PostedComment>> {
        if marker.is_empty() {
            return Err(TrackerError::Validation("empty marker".into()));
        }
        let comments = self.comments(issue).await?;
        Ok(comments
            .into_iter()
            .find(|c| self.is_bot(c) && c.body.as_deref().is_some_and(|b| b.contains(marker)))
            .map(|c| PostedComment {
                note_id: c.id.to_string(),
                discussion_id: None,
                url: Some(c.html_url),
                created_at: Some(c.created_at),
            }))
    }
}

/// Refuses what GitHub would refuse, before sending.
fn check_length(body: &str) -> Result<()> {
    let chars = body.chars().count();
    if chars > MAX_COMMENT_CHARS {
        return Err(TrackerError::Validation(format!(
            "comment body is {chars} characters; GitHub accepts at most {MAX_COMMENT_CHARS}"
        )));
    }
    Ok(())
}

/// The reply body: the first lines of the answered comment as a quote, a link to it, then the
/// reply. Lines carrying HTML comments are not quoted: they may be another write's idempotency
/// marker, which must stay unique to its own comment.
fn quote_reply(answered: &Comment, body: &str) -> String {
    let author = answered
        .user
        .as_ref()
        .map_or("someone", |u| u.login.as_str());
    let mut quote = String::new();
    let lines = answered
        .body
        .as_deref()
        .unwrap_or_default()
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.contains("<!--") && !l.contains("-->"))
        .take(QUOTE_LINES);
    for line in lines {
        let line: String = line.chars().take(QUOTE_LINE_CHARS).collect();
        quote.push_str("> ");
        quote.push_str(&line);
        quote.push('\n');
    }
    if !quote.is_empty() {
        quote.push_str(">\n");
    }
    format!(
        "{quote}> In reply to [this comment by {author}]({url})\n\n{body}",
        url = answered.html_url
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_quotes_first_lines_and_never_a_marker() {
        let answered: Comment = serde_json::from_value(serde_json::json!({
            "id": 1, "html_url": "https://github.com/o/r/issues/1#issuecomment-1",
            "issue_url": "https://api.github.com/repos/o/r/issues/1",
            "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
            "user": {"login": "alice", "type": "User"},
            "body": "<!-- relay:write:abc -->\nfirst\n\nsecond\nthird\nfourth"
        }))
        .unwrap();
        let reply = quote_reply(&answered, "answer");
        assert_eq!(
            reply,
            "> first\n> second\n> third\n>\n> In reply to [this comment by alice](https://github.com/o/r/issues/1#issuecomment-1)\n\nanswer"
        );
    }

    /// The planner's longest comment, with the longest marker, as a reply quoting the longest
    /// lines of the comment it answers, still fits GitHub's limit.
    #[test]
    fn the_longest_reply_with_its_marker_and_quote_fits() {
        let long = "q".repeat(QUOTE_LINE_CHARS * 2);
        let answered: Comment = serde_json::from_value(serde_json::json!({
            "id": 1,
            "html_url": format!(
                "https://github.com/{}/{}/issues/2147483647#issuecomment-9223372036854775807",
                "o".repeat(39),
                "r".repeat(100)
            ),
            "issue_url": "https://api.github.com/repos/o/r/issues/1",
            "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
            "user": {"login": "a".repeat(39), "type": "User"},
            "body": format!("{long}\n{long}\n{long}\n{long}")
        }))
        .unwrap();
        let key = "i9223372036854775807-j9223372036854775807-c2147483647-a9-p9";
        let body = format!(
            "{}\n\n<!-- relay:write:{key} -->",
            "é".repeat(relay_core::action::MAX_COMMENT_CHARS)
        );
        let reply = quote_reply(&answered, &body);
        assert!(check_length(&reply).is_ok(), "{}", reply.chars().count());
    }

    #[test]
    fn length_limit() {
        assert!(check_length(&"é".repeat(MAX_COMMENT_CHARS)).is_ok());
        assert!(matches!(
            check_length(&"x".repeat(MAX_COMMENT_CHARS + 1)),
            Err(TrackerError::Validation(_))
        ));
    }
}
