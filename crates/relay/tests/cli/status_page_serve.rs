//! The real `relay serve` serves the status page with `[api] token`, reads `[ui]` (a Secure
//! cookie with `secure_cookie = true`, its lifetime) and signs in with the token; without
//! `trusted_proxies` it warns at start-up that a proxy's clients would share one address, and
//! once more when a peer it does not trust forwards a request.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "serve-status-page-token-of-32-characters";

struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn relay_serve_serves_the_status_page_with_its_settings() {
    let base =
        std::env::var("DATABASE_URL").expect("DATABASE_URL must point at the test PostgreSQL");
    let database = format!("relay_status_page_{}", std::process::id());
    let (prefix, _) = base
        .rsplit_once('/')
        .expect("DATABASE_URL has a database name");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("relay.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\nadmin_listen = \"off\"\n[api]\ntoken = \"{TOKEN}\"\n\
             [ui]\nsession_ttl_secs = 600\nsecure_cookie = true\n\
             [repo]\ndata_dir = \"{}\"\n",
            dir.path().join("data").display()
        ),
    )
    .unwrap();
    let log_path = dir.path().join("stderr.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["--config", config.to_str().unwrap(), "serve"])
        .env("DATABASE_URL", format!("{prefix}/{database}"))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("relay starts");
    let server = Server { child };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let origin = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    loop {
        let ready = client.get(format!("{origin}/readyz")).send().await;
        if ready.is_ok_and(|r| r.status() == 200) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "relay never became ready"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let form = client.get(format!("{origin}/ui")).send().await.unwrap();
    assert_eq!(form.status(), 200);
    assert!(form.text().await.unwrap().contains(r#"name="token""#));
    let login = client
        .post(format!("{origin}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 303);
    let cookie = login.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("; Secure") && cookie.contains("Max-Age=600"),
        "{cookie}"
    );
    let issues = client
        .get(format!("{origin}/ui"))
        .header("cookie", cookie.split(';').next().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(issues.status(), 200);
    assert!(issues.text().await.unwrap().contains("<h1>Issues</h1>"));

    let log_text = || std::fs::read_to_string(&log_path).unwrap_or_default();
    assert!(
        log_text().contains("trusted_proxies is empty"),
        "{}",
        log_text()
    );
    // A peer it does not trust forwards a request: the log says so (once).
    let forwarded = client
        .get(format!("{origin}/healthz"))
        .header("x-forwarded-for", "198.51.100.7")
        .send()
        .await
        .unwrap();
    assert_eq!(forwarded.status(), 200);
    let started = Instant::now();
    while !log_text().contains("not in [server] trusted_proxies") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no warning: {}",
            log_text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    drop(server);
    let dropped = Command::new("psql")
        .args([
            &base,
            "-qc",
            &format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"),
        ])
        .status();
    assert!(
        dropped.is_ok_and(|s| s.success()),
        "failed to drop {database}"
    );
}
