//! Tokens never follow a redirect to another origin: reqwest drops `Authorization` on a
//! cross-host hop but not `PRIVATE-TOKEN`, so a tracker answering with a redirect elsewhere gets
//! its redirect refused, and the other host never sees a request.

use std::sync::{Arc, Mutex};

use relay_tracker::{GitLabClient, IssueRef, http_client};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A one-route HTTP/1.1 server: records every request's head and answers `answer(port)`.
async fn server(
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let record = record.clone();
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65_536 {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    head.extend_from_slice(&buf[..n]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let reply = answer(&head);
                record.lock().unwrap().push(head);
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, seen)
}

#[tokio::test]
async fn a_private_token_never_follows_a_redirect_to_another_origin() {
    let (elsewhere, seen_elsewhere) = server(|_| {
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
            .to_owned()
    })
    .await;
    let (tracker, seen_tracker) = server(move |_| {
        format!(
            "HTTP/1.1 302 Found\r\nlocation: http://localhost:{elsewhere}/stolen\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
    })
    .await;
    let settings = relay_tracker::fake::tracker_settings(
        relay_core::Provider::GitLab,
        format!("http://127.0.0.1:{tracker}"),
        "glpat-redirect-secret",
        "relay",
    );
    let client = GitLabClient::new(&settings, http_client().unwrap()).unwrap();
    let issue = IssueRef {
        project_id: "42".into(),
        project_path: "g/p".into(),
        number: 7,
        installation_id: None,
    };
    let error = client.get_issue(&issue).await.unwrap_err();
    assert!(error.to_string().contains("302"), "{error}");
    let asked = seen_tracker.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0]
            .to_ascii_lowercase()
            .contains("private-token: glpat-redirect-secret"),
        "{asked:?}"
    );
    assert!(
        seen_elsewhere.lock().unwrap().is_empty(),
        "the other origin was never asked"
    );
}

/// An answer larger than the cap (here without a length, streamed until the connection closes)
/// is refused, never held whole.
#[tokio::test]
async fn an_oversized_answer_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n[\"";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 1024 * 1024];
                for _ in 0..40 {
                    if socket.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
                let _ = socket.write_all(b"\"]").await;
            });
        }
    });
    let settings = relay_tracker::fake::tracker_settings(
        relay_core::Provider::GitLab,
        format!("http://127.0.0.1:{port}"),
        "glpat-oversized-0001",
        "relay",
    );
    let client = GitLabClient::new(&settings, http_client().unwrap()).unwrap();
    let issue = IssueRef {
        project_id: "42".into(),
        project_path: "g/p".into(),
        number: 7,
        installation_id: None,
    };
    let error = client.list_thread(&issue).await.unwrap_err();
    assert!(error.to_string().contains("larger than 32 MiB"), "{error}");
}
