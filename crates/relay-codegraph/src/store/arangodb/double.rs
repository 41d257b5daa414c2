//! A local ArangoDB for tests (feature `test-support`): a real HTTP server on 127.0.0.1 that
//! speaks the ArangoDB HTTP API shapes Relay uses (root redirect with `Server: ArangoDB`,
//! `/_api/database/current`, collection and index creation, cursor create and next batch, error
//! documents), answering each AQL text from a script and recording its bind variables. It can
//! start late ([`FakeArango::reserve`], then [`FakeArango::start_at`]) and go away mid-run
//! ([`FakeArango::stop`]), so tests can show a client that reconnects.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use secrecy::SecretString;
use serde_json::{Value, json};

use super::ArangoStore;
use crate::store::ArangoSettings;

/// Attempts to bind a reserved port before giving up.
const BIND_TRIES: u32 = 40;

/// One scripted cursor answer: the exact AQL expected and the rows (or an error document) to return.
pub(crate) struct Expectation {
    query: String,
    reply: Result<Vec<Value>, Value>,
}

#[derive(Default)]
pub(crate) struct FakeState {
    script: VecDeque<Expectation>,
    /// Every cursor request body, in order.
    cursor_requests: Vec<Value>,
    /// Paths of next-batch requests.
    next_batches: Vec<String>,
    authorization: Vec<String>,
    cursors: HashMap<String, VecDeque<Vec<Value>>>,
    next_id: u64,
    failures: Vec<String>,
    /// `collection NAME` / `index COLLECTION` per schema request.
    schema: Vec<String>,
}

type Shared = Arc<Mutex<FakeState>>;

/// Rows per batch: small, so multi-batch cursors are exercised.
const FAKE_BATCH: usize = 2;

/// The double: a local ArangoDB that answers scripted cursor queries (module docs).
pub struct FakeArango {
    pub url: String,
    state: Shared,
    addr: std::net::SocketAddr,
    /// Stops the server (graceful: idle keep-alive connections close too).
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<()>>,
}

impl FakeArango {
    /// Starts on a free port.
    pub async fn start() -> FakeArango {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        FakeArango::serve(listener, Arc::default())
    }

    /// A free local address where nothing listens yet: point a client at it, then
    /// [`FakeArango::start_at`] it (a server that starts late).
    pub fn reserve() -> std::net::SocketAddr {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    }

    /// Starts on `addr` (one from [`FakeArango::reserve`], or a stopped double's).
    pub async fn start_at(addr: std::net::SocketAddr) -> FakeArango {
        // The port was free a moment ago; another test may race for it, so try a few times.
        let mut tries = 0;
        let listener = loop {
            match tokio::net::TcpListener::bind(addr).await {
                Ok(listener) => break listener,
                Err(error) if tries < BIND_TRIES => {
                    tries += 1;
                    tracing::debug!(%error, "rebinding the ArangoDB double");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                Err(error) => panic!("bind the ArangoDB double to {addr}: {error}"),
            }
        };
        FakeArango::serve(listener, Arc::default())
    }

    fn serve(listener: tokio::net::TcpListener, state: Shared) -> FakeArango {
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/", get(root))
            .route("/_db/_system/_admin/aardvark/index.html", get(aardvark))
            .route("/_db/{db}/_api/database/current", get(current_database))
            .route("/_db/{db}/_api/collection", post(create_collection))
            .route("/_db/{db}/_api/collection/{name}", get(collection_info))
            .route("/_db/{db}/_api/index", post(create_index))
            .route("/_db/{db}/_api/cursor", post(create_cursor))
            .route("/_db/{db}/_api/cursor/{id}", put(next_batch))
            .fallback(unknown)
            .with_state(state.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        FakeArango {
            url: format!("http://{addr}"),
            state,
            addr,
            stop: Some(stop),
            served: Some(served),
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Goes away: stops accepting, closes every connection, and frees the port. Returns the
    /// address, to [`FakeArango::start_at`] a new double there (a server that comes back).
    pub async fn stop(mut self) -> std::net::SocketAddr {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            let _ = served.await;
        }
        self.addr
    }

    /// `Authorization` headers received so far.
    pub fn authorization(&self) -> Vec<String> {
        self.state.lock().unwrap().authorization.clone()
    }

    /// Paths of the next-batch requests so far.
    pub fn next_batches(&self) -> Vec<String> {
        self.state.lock().unwrap().next_batches.clone()
    }

    /// Collections and indexes created so far (`collection NAME`, `index COLLECTION`).
    pub fn schema_requests(&self) -> Vec<String> {
        self.state.lock().unwrap().schema.clone()
    }

    /// Scripts the next cursor query: its exact AQL text and the rows to answer.
    pub fn expect(&self, query: impl Into<String>, rows: Vec<Value>) {
        self.state.lock().unwrap().script.push_back(Expectation {
            query: query.into(),
            reply: Ok(rows),
        });
    }

    /// Scripts the next cursor query to fail with this error document.
    pub fn expect_error(&self, query: impl Into<String>, error: Value) {
        self.state.lock().unwrap().script.push_back(Expectation {
            query: query.into(),
            reply: Err(error),
        });
    }

    /// Settings pointing at the double (database `relay`, `root:secret`).
    pub fn settings(&self) -> ArangoSettings {
        ArangoSettings {
            url: self.url.clone(),
            database: "relay".into(),
            username: "root".into(),
            password: SecretString::from("secret".to_owned()),
        }
    }

    /// A store connected to the double.
    pub async fn store(&self) -> ArangoStore {
        ArangoStore::connect(&self.settings())
            .await
            .expect("connect to the fake server")
    }

    /// Cursor request bodies so far; panics if a request did not match the script or script is left.
    #[track_caller]
    pub fn finish(&self) -> Vec<Value> {
        let state = self.state.lock().unwrap();
        assert!(
            state.failures.is_empty(),
            "unexpected requests: {:#?}",
            state.failures
        );
        assert!(
            state.script.is_empty(),
            "expected queries were not sent: {:#?}",
            state.script.iter().map(|e| &e.query).collect::<Vec<_>>()
        );
        state.cursor_requests.clone()
    }
}

fn arango_headers() -> [(header::HeaderName, &'static str); 2] {
    [
        (header::SERVER, "ArangoDB"),
        (header::CONTENT_TYPE, "application/json; charset=utf-8"),
    ]
}

/// A real server answers `GET /` with a redirect to the web UI.
async fn root() -> Response {
    (
        StatusCode::MOVED_PERMANENTLY,
        [
            (header::SERVER, "ArangoDB"),
            (header::LOCATION, "/_db/_system/_admin/aardvark/index.html"),
        ],
    )
        .into_response()
}

async fn aardvark() -> Response {
    (
        StatusCode::OK,
        [
            (header::SERVER, "ArangoDB"),
            (header::CONTENT_TYPE, "text/html"),
        ],
        "<!doctype html><title>ArangoDB Web Interface</title>",
    )
        .into_response()
}

/// `POST /_api/collection`: a real server answers 409 with error 1207 when it exists; the double
/// creates each name once.
async fn create_collection(State(state): State<Shared>, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let name = request["name"].as_str().unwrap_or_default().to_owned();
    let mut s = state.lock().unwrap();
    let entry = format!("collection {name}");
    if s.schema.contains(&entry) {
        return error_response(StatusCode::CONFLICT, 409, 1207, "duplicate name");
    }
    s.schema.push(entry);
    let kind = request["type"].as_u64().unwrap_or(2);
    let body = json!({
        "error": false, "code": 200, "id": "1001", "name": name, "status": 3, "type": kind,
        "isSystem": false, "globallyUniqueId": "h1001", "waitForSync": false,
        "keyOptions": {"type": "traditional", "allowUserKeys": true, "lastValue": 0},
        "schema": null, "computedValues": null, "cacheEnabled": false, "syncByRevision": true,
        "statusString": "loaded", "writeConcern": 1, "replicationFactor": 1, "numberOfShards": 1,
        "shardKeys": ["_key"], "shardingStrategy": "hash", "isSmart": false, "isDisjoint": false,
        "distributeShardsLike": "", "smartGraphAttribute": "", "usesRevisionsAsDocumentIds": true,
        "minReplicationFactor": 1, "internalValidatorType": 0
    });
    (StatusCode::OK, arango_headers(), body.to_string()).into_response()
}

/// `GET /_api/collection/NAME` (arangors reads a collection back after creating it).
async fn collection_info(
    Path((_db, name)): Path<(String, String)>,
    State(state): State<Shared>,
) -> Response {
    let s = state.lock().unwrap();
    if !s.schema.contains(&format!("collection {name}")) {
        return error_response(
            StatusCode::NOT_FOUND,
            404,
            1203,
            "collection or view not found",
        );
    }
    let kind = if name.ends_with("_calls") || name.ends_with("_edges") {
        3
    } else {
        2
    };
    let body = json!({
        "error": false, "code": 200, "id": "1001", "name": name, "status": 3, "type": kind,
        "isSystem": false, "globallyUniqueId": format!("h{name}")
    });
    (StatusCode::OK, arango_headers(), body.to_string()).into_response()
}

/// `POST /_api/index?collection=NAME`: creating an index that exists answers 200, a new one 201.
async fn create_index(
    State(state): State<Shared>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    body: String,
) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let collection = query
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("collection=").map(str::to_owned))
        .unwrap_or_default();
    state
        .lock()
        .unwrap()
        .schema
        .push(format!("index {collection}"));
    let body = json!({
        "error": false, "code": 201, "id": format!("{collection}/77"), "name": request["name"],
        "type": "persistent", "fields": request["fields"], "unique": false, "sparse": false,
        "deduplicate": false, "estimates": true, "cacheEnabled": false, "inBackground": false,
        "isNewlyCreated": true, "selectivityEstimate": 1
    });
    (StatusCode::CREATED, arango_headers(), body.to_string()).into_response()
}

/// A path the double does not serve: recorded as a failure ([`FakeArango::finish`] reports it),
/// answered with ArangoDB's error document.
async fn unknown(
    State(state): State<Shared>,
    method: axum::http::Method,
    uri: axum::http::Uri,
) -> Response {
    state
        .lock()
        .unwrap()
        .failures
        .push(format!("unserved request: {method} {uri}"));
    error_response(StatusCode::NOT_FOUND, 404, 404, "unknown path")
}

async fn current_database(
    Path(db): Path<String>,
    State(state): State<Shared>,
    headers: HeaderMap,
) -> Response {
    record_auth(&state, &headers);
    let body = json!({
        "error": false,
        "code": 200,
        "result": {"name": db, "id": "8017", "path": "/var/lib/arangodb3/databases/database-8017", "isSystem": false}
    });
    (StatusCode::OK, arango_headers(), body.to_string()).into_response()
}

fn record_auth(state: &Shared, headers: &HeaderMap) {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        state
            .lock()
            .unwrap()
            .authorization
            .push(value.to_str().unwrap().to_owned());
    }
}

fn cursor_body(batch: Vec<Value>, id: Option<&str>, code: u16) -> Value {
    let mut body = json!({
        "result": batch,
        "hasMore": id.is_some(),
        "cached": false,
        "extra": {"warnings": [], "stats": {"writesExecuted": 0, "writesIgnored": 0, "scannedFull": 0,
                   "scannedIndex": 0, "filtered": 0, "httpRequests": 0, "executionTime": 0.0004,
                   "peakMemoryUsage": 0}},
        "error": false,
        "code": code
    });
    if let Some(id) = id {
        body["id"] = json!(id);
    }
    body
}

async fn create_cursor(State(state): State<Shared>, headers: HeaderMap, body: String) -> Response {
    record_auth(&state, &headers);
    let request: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("bad json: {e}")).into_response(),
    };
    let mut s = state.lock().unwrap();
    s.cursor_requests.push(request.clone());
    let query = request["query"].as_str().unwrap_or_default().to_owned();
    let Some(expectation) = s.script.pop_front() else {
        s.failures.push(format!("unscripted query: {query}"));
        return error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            500,
            4,
            "unscripted query",
        );
    };
    if expectation.query != query {
        s.failures.push(format!(
            "expected query:\n{}\ngot:\n{query}",
            expectation.query
        ));
        return error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            500,
            4,
            "unexpected query",
        );
    }
    match expectation.reply {
        Err(error) => {
            (StatusCode::BAD_REQUEST, arango_headers(), error.to_string()).into_response()
        }
        Ok(rows) => {
            let mut batches: VecDeque<Vec<Value>> =
                rows.chunks(FAKE_BATCH).map(<[Value]>::to_vec).collect();
            let first = batches.pop_front().unwrap_or_default();
            let id = if batches.is_empty() {
                None
            } else {
                s.next_id += 1;
                let id = format!("{}", 41_000 + s.next_id);
                s.cursors.insert(id.clone(), batches);
                Some(id)
            };
            let body = cursor_body(first, id.as_deref(), 201);
            (StatusCode::CREATED, arango_headers(), body.to_string()).into_response()
        }
    }
}

async fn next_batch(
    Path((db, id)): Path<(String, String)>,
    State(state): State<Shared>,
) -> Response {
    let mut s = state.lock().unwrap();
    s.next_batches.push(format!("/_db/{db}/_api/cursor/{id}"));
    let Some(batches) = s.cursors.get_mut(&id) else {
        return error_response(StatusCode::NOT_FOUND, 404, 1600, "cursor not found");
    };
    let batch = batches.pop_front().unwrap_or_default();
    let more = !batches.is_empty();
    if !more {
        s.cursors.remove(&id);
    }
    let body = cursor_body(batch, more.then_some(id.as_str()), 200);
    (StatusCode::OK, arango_headers(), body.to_string()).into_response()
}

fn error_response(status: StatusCode, code: u16, num: u16, message: &str) -> Response {
    let body = json!({"error": true, "code": code, "errorNum": num, "errorMessage": message});
    (status, arango_headers(), body.to_string()).into_response()
}
