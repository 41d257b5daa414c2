//! The baseline for `relay bench-intake`: single-row `INSERT … ; COMMIT` of a payload, the ceiling
//! a webhook intake on the same Postgres can hope to approach.

use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::PgPool;

use crate::Result;

/// Inserts `count` rows of `payload` with `concurrency` connections, one transaction each, into a
/// scratch table that is dropped afterwards. Returns each insert's latency.
pub async fn insert_ceiling(
    pool: &PgPool,
    payload: &Value,
    count: usize,
    concurrency: usize,
) -> Result<Vec<Duration>> {
    sqlx::query("DROP TABLE IF EXISTS relay_bench_ceiling")
        .execute(pool)
        .await?;
    sqlx::query(
        "CREATE TABLE relay_bench_ceiling (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
             delivery_key TEXT NOT NULL UNIQUE, payload JSONB NOT NULL)",
    )
    .execute(pool)
    .await?;
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let pool = pool.clone();
        let payload = payload.clone();
        let next = next.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= count {
                    return Ok::<_, crate::Error>(latencies);
                }
                let started = Instant::now();
                let mut tx = pool.begin().await?;
                sqlx::query(
                    "INSERT INTO relay_bench_ceiling (delivery_key, payload) VALUES ($1, $2)",
                )
                .bind(format!("bench-{i}"))
                .bind(&payload)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                latencies.push(started.elapsed());
            }
        });
    }
    let mut all = Vec::with_capacity(count);
    while let Some(joined) = tasks.join_next().await {
        all.extend(joined.expect("bench task panicked")?);
    }
    sqlx::query("DROP TABLE relay_bench_ceiling")
        .execute(pool)
        .await?;
    Ok(all)
}

/// A throwaway database for a benchmark: created next to the one `admin_url` names, dropped by
/// [`ScratchDatabase::drop_database`] (benchmarks never touch a real database's data).
pub struct ScratchDatabase {
    admin: sqlx::PgConnection,
    name: String,
    /// The scratch database's URL.
    pub url: String,
}

impl ScratchDatabase {
    /// Creates `<prefix>_<pid>` on the server of `admin_url` (e.g. `DATABASE_URL`).
    pub async fn create(admin_url: &str, prefix: &str) -> Result<ScratchDatabase> {
        use sqlx::Connection as _;
        let name = format!("{prefix}_{}", std::process::id());
        let (base, _) = admin_url.rsplit_once('/').ok_or_else(|| {
            crate::Error::Database(sqlx::Error::Configuration(
                "the database URL has no database name".into(),
            ))
        })?;
        let mut admin = sqlx::PgConnection::connect(admin_url).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await?;
        Ok(ScratchDatabase {
            url: format!("{base}/{name}"),
            admin,
            name,
        })
    }

    /// Drops the database, closing whatever still uses it.
    pub async fn drop_database(mut self) -> Result<()> {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE {} WITH (FORCE)",
            self.name
        )))
        .execute(&mut self.admin)
        .await?;
        Ok(())
    }
}

/// The p50 and p99 of `times` (sorted in place; nearest rank). `times` must not be empty.
pub fn p50_p99(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}
