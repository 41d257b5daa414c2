//! What the status pages show, over real HTTP: every page's content from a seeded database, and
//! tracker and model text (an issue titled `<script>…`, markup in gaps, findings, the spec and the
//! trace) rendered as text under a strict Content-Security-Policy, with no form that writes.

use relay_gateway::UiSettings;
use reqwest::StatusCode;
use reqwest::header::CONTENT_SECURITY_POLICY;
use serde_json::json;
use sqlx::PgPool;

use crate::status_fixture::{
    COMMIT, PLAIN, SeedText, get, seed, serve, sign_in, ui_state, write_events,
};

const HOSTILE: SeedText<'static> = SeedText {
    title: "<script>alert('title')</script> retries",
    gap: "Why <img src=x onerror=alert('gap')>?",
    finding: "It calls <b onclick=\"alert('finding')\">retry</b>",
    spec: "# Spec\n\n<script>alert('spec')</script>\n\n<iframe src=\"https://evil.example\"></iframe>\n\n[click](javascript:alert('link'))\n",
};

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn tracker_and_model_text_renders_as_text_under_a_strict_csp(pool: PgPool) {
    let seeded = seed(&pool, &HOSTILE).await;
    // A model's trace event with markup in it.
    let hostile = json!({ "decision": "<script>alert('trace')</script>" });
    write_events(
        &pool,
        seeded.run,
        seeded.job,
        &[("decision", "planner", &hostile)],
    )
    .await;
    let base = serve(ui_state(pool, UiSettings::default())).await;
    let cookie = sign_in(&base).await;
    let pages = [
        "/ui".to_owned(),
        format!("/ui/issues/{}", seeded.issue),
        format!("/ui/jobs/{}", seeded.job),
        "/ui/ops".to_owned(),
    ];
    for path in &pages {
        let response = get(&base, path, Some(&cookie)).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let csp = response.headers()[CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(csp, relay_gateway::ui::CONTENT_SECURITY_POLICY);
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "frame-ancestors 'none'",
            "form-action 'self'",
        ] {
            assert!(csp.contains(directive), "{csp}");
        }
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        assert_eq!(response.headers()["cache-control"], "no-store");
        let html = response.text().await.unwrap();
        for raw in [
            "<script>alert",
            "<img",
            "<iframe",
            "<b onclick",
            "javascript:",
        ] {
            assert!(
                !html.contains(raw),
                "{path} renders {raw} as markup:\n{html}"
            );
        }
        // The only script is the embedded live-trace file, and the only forms sign out (here, or
        // everywhere).
        let scripts: Vec<&str> = html
            .match_indices("<script")
            .map(|(i, _)| &html[i..i + 45])
            .collect();
        assert!(
            scripts
                .iter()
                .all(|s| s.starts_with(r#"<script src="/ui/assets/live.js""#)),
            "{scripts:?}"
        );
        let posts: Vec<&str> = html
            .match_indices("<form")
            .map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()])
            .filter(|form| form.contains(r#"method="post""#))
            .collect();
        assert!(
            posts.iter().all(|f| f.contains(r#"action="/ui/logout""#)
                || f.contains(r#"action="/ui/logout/everywhere""#)),
            "{path}: {posts:?}"
        );
        assert!(!html.contains("method=\"post\" action=\"/api"), "{path}");
    }
    let issue = get(&base, &pages[1], Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        issue.contains("&lt;script&gt;alert('title')&lt;/script&gt; retries"),
        "{issue}"
    );
    assert!(
        issue.contains("Why &lt;img src=x onerror=alert('gap')&gt;?"),
        "{issue}"
    );
    assert!(
        issue.contains("&lt;b onclick=&quot;alert('finding')&quot;&gt;retry&lt;/b&gt;"),
        "{issue}"
    );
    assert!(
        issue.contains("&lt;script&gt;alert('spec')&lt;/script&gt;"),
        "{issue}"
    );
    assert!(
        issue.contains("<h1>Spec</h1>"),
        "the spec's Markdown is rendered: {issue}"
    );
    let list = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    assert!(
        list.contains("&lt;script&gt;alert('title')&lt;/script&gt; retries"),
        "{list}"
    );
    let job = get(&base, &pages[2], Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        job.contains("&lt;script&gt;alert('trace')&lt;/script&gt;"),
        "{job}"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn each_page_shows_what_relay_knows(pool: PgPool) {
    let seeded = seed(&pool, &PLAIN).await;
    let base = serve(ui_state(pool, UiSettings::default())).await;
    let cookie = sign_in(&base).await;

    let list = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    for expected in [
        "github",
        "Codertocat/Hello-World",
        r#"href="https://github.com/Codertocat/Hello-World/issues/1""#,
        "#1 Retries are not configurable",
        // Open gaps 1, findings 1, the latest spec's state, tokens 7,100 + 1,775.
        r#"<td class="num">1</td><td class="num">1</td><td>draft</td>"#,
        "8,875",
        &format!(r#"href="/ui/issues/{}""#, seeded.issue),
    ] {
        assert!(
            list.contains(expected),
            "issues list lacks {expected}:\n{list}"
        );
    }
    let filtered = get(&base, "/ui?project=gitlab/none", Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    assert!(filtered.contains("No issues yet.") && !filtered.contains(PLAIN.title));

    let issue = get(
        &base,
        &format!("/ui/issues/{}", seeded.issue),
        Some(&cookie),
    )
    .await
    .text()
    .await
    .unwrap();
    for expected in [
        PLAIN.gap,
        "closed: inferred",
        "the code has a constant delay",
        PLAIN.finding,
        &format!(
            r#"href="https://github.com/Codertocat/Hello-World/blob/{COMMIT}/src/client.rs#L3-L5""#
        ),
        "<h1>Configurable retries</h1>",
        "<strong>3</strong>",
        "Version 1",
        "Version 2",
        "<svg",
        "planner",
        "explore",
        &format!(r#"href="/ui/jobs/{}""#, seeded.job),
        "dead",
    ] {
        assert!(
            issue.contains(expected),
            "issue page lacks {expected}:\n{issue}"
        );
    }
    let blocking = issue.find("blocking").unwrap();
    let low = issue.find(">low<").unwrap();
    assert!(blocking < low, "severities in order");

    let job = get(&base, &format!("/ui/jobs/{}", seeded.job), Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    for expected in [
        "planner begin",
        "grep retry ok",
        "1200/300",
        r#"data-live="true""#,
        "gpt-5-mini",
        // explore: (5000 - 833) × 0.25 + 833 × 0.025 + 1250 × 2.0, per million = $0.0036.
        "$0.0036",
    ] {
        assert!(job.contains(expected), "job page lacks {expected}:\n{job}");
    }

    let ops = get(&base, "/ui/ops", Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    for expected in [
        "llm: 429 too many requests (3 attempts)",
        // The dead job's root cause, and where its trace is.
        "llm rate_limited",
        "#trace\">trace</a>",
        "github: 403 resource not accessible",
        "not_mentioned",
        "engaged",
        "mention",
        "running",
    ] {
        assert!(
            ops.contains(expected),
            "operations page lacks {expected}:\n{ops}"
        );
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn stale_findings_are_counted_apart_and_marked(pool: PgPool) {
    let seeded = seed(&pool, &PLAIN).await;
    let base = serve(ui_state(pool.clone(), UiSettings::default())).await;
    let cookie = sign_in(&base).await;
    let list = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    assert!(!list.contains("stale"), "nothing is stale yet:\n{list}");

    // A push re-anchored the source, then another found its text gone.
    sqlx::query(
        "UPDATE finding_sources SET status = 'stale', moved_from_path = 'src/old.rs',
                moved_from_start = 1, moved_from_end = 3",
    )
    .execute(&pool)
    .await
    .unwrap();
    let list = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    assert!(
        list.contains(r#"<td class="num">1 <span class="stale">(1 stale)</span></td>"#),
        "the list counts the stale finding apart:\n{list}"
    );
    let issue = get(
        &base,
        &format!("/ui/issues/{}", seeded.issue),
        Some(&cookie),
    )
    .await
    .text()
    .await
    .unwrap();
    for expected in [
        r#"<span class="stale">stale</span>"#,
        "stale: the cited code changed after this commit",
        "moved from src/old.rs:1-3",
    ] {
        assert!(
            issue.contains(expected),
            "issue page lacks {expected}:\n{issue}"
        );
    }
}

/// An open gap's evidence cites code: the issue page lists those places like a finding's sources
/// and marks the gap once a push found the cited code changed.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_gaps_evidence_is_listed_and_marked_stale(pool: PgPool) {
    let seeded = seed(&pool, &PLAIN).await;
    let gap: i64 = sqlx::query_scalar("SELECT id FROM gaps WHERE issue_id = $1 AND number = 1")
        .bind(seeded.issue)
        .fetch_one(&pool)
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let place = relay_store::findings::Position {
        path: "src/client.rs".into(),
        start_line: 12,
        end_line: 14,
    };
    relay_store::gaps::add_evidence_sources(
        &mut conn,
        gap,
        &[relay_store::gaps::EvidencePlace {
            place: &place,
            commit_sha: "0123456789abcdef",
        }],
    )
    .await
    .unwrap();
    drop(conn);
    let base = serve(ui_state(pool.clone(), UiSettings::default())).await;
    let cookie = sign_in(&base).await;
    let page = |base: String, cookie: String| async move {
        get(
            &base,
            &format!("/ui/issues/{}", seeded.issue),
            Some(&cookie),
        )
        .await
        .text()
        .await
        .unwrap()
    };
    let issue = page(base.clone(), cookie.clone()).await;
    assert!(
        issue.contains("src/client.rs:12-14 @ 0123456789"),
        "the evidence's place is listed:\n{issue}"
    );
    assert!(!issue.contains("evidence stale"), "{issue}");

    sqlx::query("UPDATE gap_sources SET status = 'stale'")
        .execute(&pool)
        .await
        .unwrap();
    let issue = page(base, cookie).await;
    for expected in [
        r#"<span class="stale">evidence stale</span>"#,
        "stale: the cited code changed after this commit",
    ] {
        assert!(
            issue.contains(expected),
            "issue page lacks {expected}:\n{issue}"
        );
    }
}
