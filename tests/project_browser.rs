//! The repository's configuration and learnings on the status page, in a real browser (headless
//! Chromium over chromedriver, as `status_browser`): a mention runs under a `.relay.toml` that
//! narrows, refuses a widening and adds instructions; a learning is used, another forgotten by a
//! command. Signed in, the Projects page lists the repository; its page shows every key in
//! effect with its origin and commit, the refused widening, and the learnings with their
//! provenance, use and who forgot which; the issue page shows its cap and spend.

use fantoccini::Locator;
use relay_core::IssueId;
use sqlx::PgPool;

use crate::repo_config_harness::*;
use crate::status_browser::{Driver, HANG, screenshot, text_of};
use crate::status_fixture::{UI_TOKEN, serve, ui_state};

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_project_page_shows_the_config_in_effect_and_the_learnings(pool: PgPool) {
    let files = repository(&[(
        ".relay.toml",
        "instructions = \"Prefer small changes.\"\nexclude = [\"generated/\"]\n\n[engage]\npublic = [\"owner\"]\n\n[budget]\nissue_tokens = 9000000\n",
    )]);
    let h = Harness::github(pool.clone(), &files, agent()).await;
    h.set_role("Codertocat", Role::Maintainer);
    h.script(comment_only("Looking."));
    h.say("Codertocat", "@relay-bot can retries be configured?")
        .await;
    let project_id = h.project_id().await;
    let issue = h.issue_id().await;
    let mut conn = pool.acquire().await.unwrap();
    for content in ["Retries are read in config.go.", "Timeouts live in net/."] {
        relay_store::learnings::propose(
            &mut conn,
            &relay_store::learnings::NewLearning {
                tracker: "github",
                project_id: &project_id,
                kind: "code",
                content,
                issue_id: Some(IssueId(issue)),
                run: None,
                restricted: false,
                note_id: Some("1000001"),
                guidance_digest: None,
            },
        )
        .await
        .unwrap();
    }
    drop(conn);
    let forgotten: i64 = sqlx::query_scalar("SELECT max(id) FROM learnings")
        .fetch_one(&pool)
        .await
        .unwrap();
    h.say("Codertocat", &format!("@relay-bot forget {forgotten}"))
        .await;

    let base = serve(ui_state(pool.clone(), Default::default())).await;
    let driver = Driver::start().await;
    let browser = driver.browser().await;
    let outcome = tokio::time::timeout(HANG * 3, async {
        browser.goto(&format!("{base}/ui")).await.unwrap();
        let token = browser.find(Locator::Css("input[name=token]")).await.unwrap();
        token.send_keys(UI_TOKEN).await.unwrap();
        browser
            .find(Locator::Css("form button[type=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        text_of(&browser, "table.issues").await;
        browser
            .find(Locator::LinkText("Projects"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let projects = text_of(&browser, "#projects").await;
        assert!(projects.contains(GH_REPO), "{projects}");
        browser
            .find(Locator::Css("#projects a"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();

        let keys = text_of(&browser, "#config-keys").await;
        for line in ["engage.public owner repository @", "exclude generated/ repository @", "budget.issue_tokens 500000 server"] {
            assert!(keys.contains(line), "{line} in {keys}");
        }
        let refused = text_of(&browser, "#config-refused").await;
        assert!(
            refused.contains(".relay.toml:8: `budget.issue_tokens`: 9000000 tokens would raise the server's cap of 500000 tokens per issue (not applied)"),
            "{refused}"
        );
        let config = text_of(&browser, "#config").await;
        assert!(config.contains(".relay.toml (instructions)"), "{config}");
        let learnings = text_of(&browser, "#learnings-table").await;
        assert!(learnings.contains("Retries are read in config.go."), "{learnings}");
        assert!(learnings.contains("in use"), "{learnings}");
        assert!(learnings.contains("forgotten by @Codertocat"), "{learnings}");
        assert!(learnings.contains("note 1000001"), "{learnings}");
        browser.set_window_size(1280, 1200).await.unwrap();
        screenshot(&browser, "project").await;

        browser.goto(&format!("{base}/ui/issues/{issue}")).await.unwrap();
        let budget = text_of(&browser, "#budget").await;
        assert!(budget.contains("tokens spent of 500,000 tokens"), "{budget}");
    })
    .await;
    browser.close().await.unwrap();
    drop(driver);
    outcome.expect("the browser test hung");
}
