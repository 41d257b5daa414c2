//! The status page in a real browser: headless Chromium (Debian's `chromium`) driven over
//! WebDriver (`chromedriver`, Debian's `chromium-driver`) against a gateway served on a real TCP
//! port, whose database holds an issue with a gap, a finding and a running traced job. Signs in,
//! opens the issue, sees the gap and the finding, opens the job, and sees a trace event written
//! AFTER the page loaded appear without a reload (the page's EventSource on the SSE stream).
//! Saves a screenshot of each page under the target folder.
//!
//! A missing browser or driver fails the test (`.ci/run` installs them); it never skips.

use relay_core::JobId;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use relay_gateway::UiSettings;
use serde_json::json;
use sqlx::PgPool;

use crate::status_fixture::{PLAIN, UI_TOKEN, seed, serve, ui_state, write_events};

/// A guard against a hung browser, never a timing assertion.
pub(crate) const HANG: Duration = Duration::from_secs(20);
const WINDOW: (u32, u32) = (1280, 760);
/// The issue page's screenshot height.
const ISSUE_HEIGHT: u32 = 1600;
/// The operations page's screenshot height.
const OPS_HEIGHT: u32 = 1000;

/// Where the screenshots go (`docs/status-page/` holds copies for the README).
pub(crate) fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("status-page")
}

/// An executable from `$var`, else the first of `candidates` that exists.
fn executable(var: &str, candidates: &[&str]) -> PathBuf {
    if let Ok(path) = std::env::var(var) {
        return PathBuf::from(path);
    }
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "the browser test needs {} (set {var}, or `apt-get install -y chromium chromium-driver`; \
                 .ci/run installs them)",
                candidates.join(" or ")
            )
        })
}

/// chromedriver on a free port, killed when dropped.
pub(crate) struct Driver {
    child: tokio::process::Child,
    url: String,
}

impl Driver {
    pub(crate) async fn start() -> Driver {
        let binary = executable(
            "RELAY_TEST_CHROMEDRIVER",
            &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"],
        );
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let child = tokio::process::Command::new(&binary)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let url = format!("http://127.0.0.1:{port}");
        let ready = async {
            loop {
                if let Ok(r) = reqwest::get(format!("{url}/status")).await
                    && r.status().is_success()
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        tokio::time::timeout(HANG, ready)
            .await
            .expect("chromedriver did not come up");
        Driver { child, url }
    }

    pub(crate) async fn browser(&self) -> Client {
        let chromium = executable(
            "RELAY_TEST_CHROMIUM",
            &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
        );
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--no-first-run",
                         format!("--window-size={},{}", WINDOW.0, WINDOW.1)],
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("chromedriver could not start chromium")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

pub(crate) async fn screenshot(browser: &Client, name: &str) {
    let png = browser.screenshot().await.unwrap();
    let dir = screenshot_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, png).unwrap();
    eprintln!("screenshot: {}", path.display());
}

pub(crate) async fn text_of(browser: &Client, css: &str) -> String {
    match browser
        .wait()
        .at_most(HANG)
        .for_element(Locator::Css(css))
        .await
    {
        Ok(element) => element.text().await.unwrap(),
        Err(e) => {
            let url = browser.current_url().await.map(|u| u.to_string());
            let source = browser.source().await.unwrap_or_default();
            panic!("no {css} on the page ({e}); at {url:?}:\n{source}")
        }
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_browser_signs_in_reads_the_issue_and_watches_the_job_live(pool: PgPool) {
    let seeded = seed(&pool, &PLAIN).await;
    let base = serve(ui_state(pool.clone(), UiSettings::default())).await;
    let driver = Driver::start().await;
    let browser = driver.browser().await;
    let outcome = tokio::time::timeout(HANG * 3, async {
        // Sign in.
        browser.goto(&format!("{base}/ui")).await.unwrap();
        let token = browser
            .find(Locator::Css("input[name=token]"))
            .await
            .unwrap();
        screenshot(&browser, "sign-in").await;
        token.send_keys(UI_TOKEN).await.unwrap();
        browser
            .find(Locator::Css("form button[type=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let list = text_of(&browser, "table.issues").await;
        assert!(list.contains(PLAIN.title), "{list}");
        screenshot(&browser, "issues").await;

        // The issue: its gap and its finding.
        browser
            .find(Locator::Css("a.details"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let gaps = text_of(&browser, "#gaps").await;
        assert!(gaps.contains(PLAIN.gap), "{gaps}");
        let findings = text_of(&browser, "#findings").await;
        assert!(findings.contains(PLAIN.finding), "{findings}");
        assert!(findings.contains("src/client.rs:3-5"), "{findings}");
        // Tall enough for the spec, the spend chart and the jobs.
        browser
            .set_window_size(WINDOW.0, ISSUE_HEIGHT)
            .await
            .unwrap();
        screenshot(&browser, "issue").await;
        browser.set_window_size(WINDOW.0, WINDOW.1).await.unwrap();

        // The job: a trace event written after the page loaded appears without a reload.
        browser
            .find(Locator::Css(&format!("a[href='/ui/jobs/{}']", seeded.job)))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let timeline = text_of(&browser, "#timeline").await;
        assert!(timeline.contains("planner begin"), "{timeline}");
        assert!(!timeline.contains("written-after-load"));
        // A marker that a reload would wipe.
        browser
            .execute("window.relayMarker = 'same page'; return null;", vec![])
            .await
            .unwrap();
        let late = json!({ "stage": "explore", "phase": "written-after-load" });
        write_events(
            &pool,
            seeded.run,
            seeded.job,
            &[("stage", "explore#2", &late)],
        )
        .await;
        let live_row = browser
            .wait()
            .at_most(HANG)
            .for_element(Locator::XPath(
                "//tbody[@id='timeline']/tr[contains(., 'written-after-load')]",
            ))
            .await
            .expect("the event written after the page loaded never appeared");
        assert!(live_row.text().await.unwrap().contains("explore#2"));
        let marker = browser
            .execute("return window.relayMarker || null;", vec![])
            .await
            .unwrap();
        assert_eq!(marker, json!("same page"), "the page was not reloaded");
        screenshot(&browser, "job").await;

        // The job finishes: the stream's `end` reaches the page.
        sqlx::query("UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = $1")
            .bind(seeded.job)
            .execute(&pool)
            .await
            .unwrap();
        relay_store::trace::finish_run(
            &pool,
            seeded.run,
            JobId(seeded.job),
            relay_store::trace::RunOutcome::Succeeded,
            0,
        )
        .await
        .unwrap();
        browser
            .wait()
            .at_most(HANG)
            .for_element(Locator::Css("#live-status[data-live='false']"))
            .await
            .expect("the end of the job never reached the page");

        browser.goto(&format!("{base}/ui/ops")).await.unwrap();
        let ops = text_of(&browser, "#dead").await;
        assert!(ops.contains("429"), "{ops}");
        browser.set_window_size(WINDOW.0, OPS_HEIGHT).await.unwrap();
        screenshot(&browser, "operations").await;

        // Signing out: the pages need signing in again.
        browser
            .find(Locator::Css("form.signout button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        browser
            .wait()
            .at_most(HANG)
            .for_element(Locator::Css("input[name=token]"))
            .await
            .unwrap();
    })
    .await;
    browser.close().await.unwrap();
    drop(driver);
    outcome.expect("the browser test hung");
}
