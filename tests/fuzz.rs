//! Fuzzing the gateway and intake over real HTTP: thousands of correctly signed deliveries derived
//! from the recorded fixtures (values swapped for other JSON types, keys deleted, NULs and odd Unicode
//! inserted, bodies truncated or bit-flipped). Every answer must be 2xx, 400 or 422 (the database is
//! up, so never 503 and never 500), and nothing may be half-stored.
//!
//! The seed is fixed, so a failure reproduces; the failing case's description and body are printed.
//! To explore further, `RELAY_FUZZ_SEED=<n> RELAY_FUZZ_CASES=<n>` run another seed or more cases.

use std::collections::BTreeSet;
use std::time::Duration;

use futures::StreamExt;
use relay_core::Provider;
use serde_json::{Map, Value, json};
use sqlx::PgPool;

use crate::helpers::*;

/// Fixed so that every run sends the same deliveries.
const SEED: u64 = 0x1400_0000_5EED;
/// Enough to hit every mutation on every fixture many times; about half a minute on a loaded
/// 2-core machine in a debug build.
const CASES: usize = 3000;
/// Requests in flight at once: concurrency is part of what intake must survive.
const IN_FLIGHT: usize = 8;
/// Structural mutations applied to one payload before it is serialized.
const MAX_MUTATIONS: u64 = 3;

/// SplitMix64: tiny, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }

    fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }
}

/// Text that has broken someone's webhook handler somewhere.
const ODD_TEXT: &[&str] = &[
    "\0",
    "a\0b",
    "\u{FFFD}",
    "\u{202E}reversed",
    "\u{200B}",
    "\u{FEFF}",
    "😀",
    "\u{10FFFF}",
    "e\u{301}",
    "\u{FFFF}",
    "\\",
    "\"",
    "'; DROP TABLE deliveries; --",
    "@relay-bot",
    "@relay",
    "```\n@relay-bot\n```",
    "\r\n",
    "\u{7F}\u{1}\u{1F}",
    "",
    " ",
    "2015-05-17 17:06:40 UTC",
    "refs/heads/main",
    "0000000000000000000000000000000000000000",
];

/// Timestamps at and past the edges of what chrono parses and Postgres stores (4713 BC to 294276 AD).
const ODD_TIMES: &[&str] = &[
    "-10000-01-01 00:00:00 +0000",
    "-4714-01-01 00:00:00 UTC",
    "-4713-11-24 00:00:00 +0000",
    "+200000-12-31 23:59:59 +0000",
    "+262143-12-31 23:59:59 +0000",
    "9999-12-31T23:59:59Z",
    "9999-12-31T23:59:59-14:00",
    "0000-01-01T00:00:00Z",
    "1970-01-01T00:00:00+14:00",
    "2015-05-17 17:06:40 UTC",
    "2015-02-30T00:00:00Z",
];

/// Keys whose values intake turns into typed columns.
const AIMED_KEYS: &[&str] = &[
    "_at",
    "/id",
    "/iid",
    "/number",
    "/body",
    "/description",
    "/note",
    "/login",
    "/username",
    "/labels",
    "/assignees",
    "/action",
    "/ref",
    "/after",
    "/default_branch",
    "/full_name",
    "/path_with_namespace",
    "/confidential",
    "/internal",
    "/discussion_id",
    "/state",
    "/title",
];

fn odd_value(rng: &mut Rng) -> Value {
    match rng.below(16) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => json!(0),
        3 => json!(-1),
        4 => json!(i64::MAX),
        5 => json!(u64::MAX),
        6 => json!(1.5),
        7 => json!(-1e300),
        8 => json!([]),
        9 => json!([rng.pick(ODD_TEXT)]),
        10 => json!({}),
        11 => {
            json!({ "name": rng.pick(ODD_TEXT), "login": rng.pick(ODD_TEXT), "title": rng.pick(ODD_TEXT) })
        }
        12 => Value::String("x".repeat(10_000)),
        13 => json!(i64::MIN),
        _ => Value::String((*rng.pick(ODD_TEXT)).to_owned()),
    }
}

/// JSON pointers of every value in `value` (the root is `""`).
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                pointers(item, format!("{at}/{escaped}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Applies one structural mutation; returns what it did.
fn mutate(payload: &mut Value, rng: &mut Rng) -> String {
    let mut all = Vec::new();
    pointers(payload, String::new(), &mut all);
    match rng.below(3) {
        // Swap a value for another JSON type (never the root: that is the 400 case, tested elsewhere).
        0 => {
            // Half the time aim at the fields intake reads (times, ids, numbers), where a type or
            // range surprise reaches Postgres.
            let aimed = rng.chance(50);
            let candidates: Vec<&String> = all
                .iter()
                .filter(|p| !p.is_empty())
                .filter(|p| !aimed || AIMED_KEYS.iter().any(|key| p.ends_with(key)))
                .collect();
            if candidates.is_empty() {
                return "swap: nothing".into();
            }
            let at = (*rng.pick(&candidates)).clone();
            let replacement = if at.ends_with("_at") && rng.chance(50) {
                Value::from(*rng.pick(ODD_TIMES))
            } else {
                odd_value(rng)
            };
            let description = format!("swap {at} = {}", short(&replacement));
            *payload.pointer_mut(&at).expect("pointer from the walk") = replacement;
            description
        }
        // Delete a key.
        1 => {
            let objects: Vec<&String> = all
                .iter()
                .filter(|p| {
                    payload
                        .pointer(p)
                        .and_then(Value::as_object)
                        .is_some_and(|m| !m.is_empty())
                })
                .collect();
            if objects.is_empty() {
                return "delete: nothing".into();
            }
            let at = (*rng.pick(&objects)).clone();
            let map: &mut Map<String, Value> = payload
                .pointer_mut(&at)
                .and_then(Value::as_object_mut)
                .expect("an object");
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = rng.pick(&keys).clone();
            map.remove(&key);
            format!("delete {at}/{key}")
        }
        // Insert odd text into a string.
        _ => {
            let strings: Vec<&String> = all
                .iter()
                .filter(|p| payload.pointer(p).is_some_and(Value::is_string))
                .collect();
            if strings.is_empty() {
                return "insert: nothing".into();
            }
            let at = (*rng.pick(&strings)).clone();
            let odd = *rng.pick(ODD_TEXT);
            let Some(Value::String(text)) = payload.pointer_mut(&at) else {
                unreachable!("filtered to strings")
            };
            let boundaries: Vec<usize> = text
                .char_indices()
                .map(|(i, _)| i)
                .chain([text.len()])
                .collect();
            let position = *rng.pick(&boundaries);
            text.insert_str(position, odd);
            format!("insert {odd:?} into {at} at {position}")
        }
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    text.chars().take(40).collect()
}

struct Seed {
    provider: Provider,
    event: &'static str,
    payload: Value,
}

/// File names in a fixture folder, sorted: directory order differs between machines and the cases
/// must not.
fn fixture_names(folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join(folder))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn seeds() -> Vec<Seed> {
    let mut seeds = Vec::new();
    for name in fixture_names("webhooks/github") {
        let event = match name.split('.').next().unwrap() {
            "issues" => "issues",
            "issue_comment" => "issue_comment",
            "ping" => "ping",
            other => panic!("a new GitHub fixture kind {other}: add its event here"),
        };
        seeds.push(Seed {
            provider: Provider::GitHub,
            event,
            payload: fixture_json(&format!("webhooks/github/{name}")),
        });
    }
    for name in fixture_names("webhooks/gitlab") {
        let event = match name.split('.').next().unwrap() {
            "issue_hook" => "Issue Hook",
            "note_hook" => "Note Hook",
            "confidential_issue_hook" => "Confidential Issue Hook",
            "confidential_note_hook" => "Confidential Note Hook",
            other => panic!("a new GitLab fixture kind {other}: add its event here"),
        };
        seeds.push(Seed {
            provider: Provider::GitLab,
            event,
            payload: fixture_json(&format!("webhooks/gitlab/{name}")),
        });
    }
    // No push fixture is recorded; these follow the providers' documented shape.
    seeds.push(Seed {
        provider: Provider::GitHub,
        event: "push",
        payload: json!({
            "ref": "refs/heads/main", "before": "0000000000000000000000000000000000000000",
            "after": "1111111111111111111111111111111111111111", "created": false, "deleted": false,
            "repository": { "id": 77, "full_name": "octo/repo", "default_branch": "main" },
            "sender": { "login": "alice", "type": "User" }
        }),
    });
    seeds.push(Seed {
        provider: Provider::GitLab,
        event: "Push Hook",
        payload: json!({
            "object_kind": "push", "ref": "refs/heads/main",
            "before": "0000000000000000000000000000000000000000",
            "after": "2222222222222222222222222222222222222222", "project_id": 15,
            "project": { "id": 15, "path_with_namespace": "group/project", "default_branch": "main" },
            "user_username": "alice"
        }),
    });
    seeds
}

/// Events sent with a payload of another kind now and then.
const OTHER_EVENTS: &[&str] = &[
    "issues",
    "issue_comment",
    "ping",
    "push",
    "Issue Hook",
    "Note Hook",
    "Push Hook",
    "Confidential Note Hook",
    "pull_request",
    "",
];

/// One signed delivery.
#[derive(Clone)]
struct Case {
    description: String,
    provider: Provider,
    event: String,
    delivery: String,
    body: Vec<u8>,
}

fn case(number: usize, seeds: &[Seed], rng: &mut Rng) -> Case {
    let seed = rng.pick(seeds);
    let mut payload = seed.payload.clone();
    let mut description = Vec::new();
    for _ in 0..=rng.below(MAX_MUTATIONS) {
        description.push(mutate(&mut payload, rng));
    }
    let mut body = serde_json::to_vec(&payload).unwrap();
    if rng.chance(10) {
        let at = rng.index(body.len());
        body.truncate(at);
        description.push(format!("truncate at {at}"));
    }
    if rng.chance(10) {
        let at = rng.index(body.len());
        let bit = rng.below(8);
        if let Some(byte) = body.get_mut(at) {
            *byte ^= 1 << bit;
        }
        description.push(format!("flip bit {bit} of byte {at}"));
    }
    if rng.chance(10) {
        let escaped = String::from_utf8_lossy(&body).replace("\\u0000", "\0");
        body = escaped.into_bytes();
        description.push("raw NUL bytes".into());
    }
    let event = if rng.chance(10) {
        (*rng.pick(OTHER_EVENTS)).to_owned()
    } else {
        seed.event.to_owned()
    };
    Case {
        description: description.join("; "),
        provider: seed.provider,
        event,
        delivery: format!("fuzz-{number}"),
        body,
    }
}

fn env_number(name: &str) -> Option<u64> {
    let raw = std::env::var(name).ok()?;
    Some(
        raw.parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {raw:?}")),
    )
}

/// What the gateway answered.
struct Outcome {
    status: u16,
    body: Value,
}

async fn send(client: &reqwest::Client, origin: &str, case: &Case) -> Result<Outcome, String> {
    let request = match case.provider {
        Provider::GitHub => client
            .post(format!("{origin}/webhooks/github"))
            .header("x-github-event", &case.event)
            .header("x-github-delivery", &case.delivery)
            .header("x-github-hook-id", "1")
            .header(
                "x-hub-signature-256",
                relay_gateway::providers::github::sign(&case.body, GITHUB_SECRET.as_bytes()),
            ),
        Provider::GitLab => client
            .post(format!("{origin}/webhooks/gitlab"))
            .header("x-gitlab-event", &case.event)
            .header("x-gitlab-event-uuid", &case.delivery)
            .header("x-gitlab-token", GITLAB_SECRET),
    };
    let response = request
        .header("content-type", "application/json")
        .body(case.body.clone())
        .send()
        .await
        .map_err(|e| format!("transport error (a panic drops the connection): {e}"))?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await.map_err(|e| e.to_string())?;
    Ok(Outcome {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    })
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn signed_mutated_payloads_never_fail_the_server(pool: PgPool) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let app = relay_gateway::app(state(pool.clone()));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();

    let seed = env_number("RELAY_FUZZ_SEED").unwrap_or(SEED);
    let count = env_number("RELAY_FUZZ_CASES").map_or(CASES, |n| n as usize);
    eprintln!("fuzz: seed {seed}, {count} cases");
    let seeds = seeds();
    let mut rng = Rng(seed);
    let mut cases: Vec<Case> = (0..count).map(|n| case(n, &seeds, &mut rng)).collect();
    // Redeliveries: every 20th case is sent again, unchanged, after all the others.
    let redeliveries: Vec<Case> = cases.iter().step_by(20).cloned().collect();
    let first_round = cases.len();
    cases.extend(redeliveries);

    let answers: Vec<(usize, Result<Outcome, String>)> = {
        let client = &client;
        let origin = origin.as_str();
        let first: Vec<_> = futures::stream::iter(cases[..first_round].iter().enumerate())
            .map(|(i, case)| async move { (i, send(client, origin, case).await) })
            .buffer_unordered(IN_FLIGHT)
            .collect()
            .await;
        let again: Vec<_> = futures::stream::iter(cases[first_round..].iter().enumerate())
            .map(|(i, case)| async move { (first_round + i, send(client, origin, case).await) })
            .buffer_unordered(IN_FLIGHT)
            .collect()
            .await;
        first.into_iter().chain(again).collect()
    };

    let mut failures = Vec::new();
    let mut stored_ids = BTreeSet::new();
    let mut first_status = std::collections::HashMap::new();
    // First-round cases whose content repeats an earlier case's event (same comment, same
    // action and stamp): duplicates by content identity, not by delivery id.
    let mut content_duplicates = 0;
    let (mut accepted, mut ignored, mut rejected, mut duplicates) = (0, 0, 0, 0);
    let mut sorted = answers;
    sorted.sort_by_key(|(i, _)| *i);
    for (i, answer) in &sorted {
        let case = &cases[*i];
        let describe = || {
            format!(
                "{} {} {}: {} — body {}",
                case.delivery,
                case.event,
                case.description,
                match answer {
                    Ok(o) => format!("{} {}", o.status, o.body),
                    Err(e) => e.clone(),
                },
                String::from_utf8_lossy(&case.body)
                    .chars()
                    .take(300)
                    .collect::<String>()
            )
        };
        let Ok(outcome) = answer else {
            failures.push(describe());
            continue;
        };
        match outcome.status {
            200 | 202 => {
                match outcome.body["outcome"].as_str() {
                    Some("accepted") => accepted += 1,
                    Some("ignored") => ignored += 1,
                    Some("duplicate") => {
                        duplicates += 1;
                        if *i < first_round {
                            content_duplicates += 1;
                        }
                    }
                    _ => failures.push(format!("no outcome: {}", describe())),
                }
                if let Some(id) = outcome.body["delivery"].as_i64() {
                    stored_ids.insert(id);
                }
            }
            400 | 422 => rejected += 1,
            _ => failures.push(describe()),
        }
        // A redelivery of a stored delivery is a duplicate; of a rejected one, rejected again.
        if *i >= first_round {
            let before: u16 = first_status[&case.delivery];
            let as_expected = match before {
                200 | 202 => outcome.status == 200 && outcome.body["outcome"] == "duplicate",
                rejected => outcome.status == rejected,
            };
            if !as_expected {
                failures.push(format!("redelivery after {before}: {}", describe()));
            }
        } else {
            first_status.insert(case.delivery.clone(), outcome.status);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} deliveries failed; the first ones:\n{}",
        failures.len(),
        sorted.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!(
        "fuzz: {} deliveries: accepted {accepted}, ignored {ignored}, rejected {rejected}, duplicates {duplicates}",
        sorted.len()
    );
    // The fuzz reaches every branch: otherwise it proves little.
    assert!(
        accepted > 0 && ignored > 0 && rejected > 0 && duplicates > 0,
        "accepted {accepted}, ignored {ignored}, rejected {rejected}, duplicates {duplicates}"
    );
    assert_eq!(
        duplicates - content_duplicates,
        cases.len()
            - first_round
            - sorted[first_round..]
                .iter()
                .filter(|(_, a)| matches!(a, Ok(o) if o.status == 400 || o.status == 422))
                .count()
    );

    // Nothing half-stored: exactly the answered deliveries are on disk, and every issue, note and
    // job hangs off one of them.
    let on_disk: BTreeSet<i64> = sqlx::query_scalar("SELECT id FROM deliveries")
        .fetch_all(&pool)
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(
        on_disk, stored_ids,
        "deliveries on disk = deliveries answered 2xx"
    );
    assert_eq!(on_disk.len(), accepted + ignored);
    let orphans: Vec<(String, i64)> = sqlx::query_as(
        "SELECT 'accepted without job', count(*) FROM deliveries WHERE outcome = 'accepted' AND job_id IS NULL
         UNION ALL
         SELECT 'job without delivery', count(*) FROM jobs j
             WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.job_id = j.id)
         UNION ALL
         SELECT 'issue without delivery', count(*) FROM issues i
             WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.issue_id = i.id)
         UNION ALL
         SELECT 'note without delivery', count(*) FROM issue_notes n
             WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.issue_id = n.issue_id AND d.note_id = n.note_id)",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for (what, count) in orphans {
        assert_eq!(count, 0, "{what}");
    }
}
