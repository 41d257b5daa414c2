//! End-to-end tests against the real PostgreSQL (`DATABASE_URL`, required: tests fail loudly without it).
//!
//! Layout: `helpers` (test app, signing, fixtures, a TCP proxy to cut the database), `gateway`
//! (every recorded webhook, authentication, redelivery, limits), `engagement` (mention and thread
//! rules end to end), `outage` (database down mid-test), `queue` (leases, concurrency, retries,
//! shutdown), `process_issue` (the issue job's bookkeeping).

mod engagement;
mod gateway;
mod helpers;
mod installation;
mod outage;
mod process_issue;
mod push;
mod queue;
