//! Tool-sequence learning (migration 0008): per repository, the transitions between the tools
//! of successful explores, and the strongest sequences read back as a hint for the next explore.
//!
//! One run updates all its edges and the run totals in a single statement ([`record_run`]). A
//! run counts at most once per edge, so `count` reads as "runs in which A → B happened".

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::Result;

/// The `from_tool` of a run's first call.
pub const START: &str = "^";
/// How much an imported sequence counts against an observed one when ranking.
pub const IMPORTED_WEIGHT: f64 = 0.5;
/// Tools in one hinted sequence at most.
pub const MAX_SEQUENCE_TOOLS: usize = 3;

/// Where a run's sequence came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Relay's own explores.
    Observed,
    /// Sequences imported from less structured sources (`relay tool-graph --import`).
    Imported,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Observed => "observed",
            Self::Imported => "imported",
        }
    }

    /// Its weight in rankings.
    pub fn weight(self) -> f64 {
        match self {
            Self::Observed => 1.0,
            Self::Imported => IMPORTED_WEIGHT,
        }
    }
}

/// One successful tool call of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// A normalised label: `grep`, `read`, `codegraph callers`, …
    pub tool: String,
    /// Estimated tokens of its result.
    pub result_tokens: i64,
}

/// What one run's update did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorded {
    pub edges_created: u64,
    pub edges_updated: u64,
}

/// A stored transition.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize)]
pub struct Edge {
    pub from_tool: String,
    pub to_tool: String,
    pub source: String,
    pub weight: f64,
    pub count: i64,
    pub successes: i64,
    pub mean_result_tokens: f64,
    pub last_seen: DateTime<Utc>,
}

/// Runs recorded for a repository from one source.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct RunTotals {
    pub source: String,
    pub runs: i64,
    pub successes: i64,
}

/// A chain of strong transitions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Sequence {
    pub tools: Vec<String>,
    /// Runs behind the chain's weakest transition, and how many of those were grounded.
    pub runs: i64,
    pub successes: i64,
}

/// Adds one run's ordered successful calls to `repo`'s graph. `grounded`: its report had at
/// least one verified citation.
pub async fn record_run(
    pool: &PgPool,
    repo: &str,
    source: Source,
    calls: &[Call],
    grounded: bool,
) -> Result<Recorded> {
    if calls.is_empty() {
        return Ok(Recorded::default());
    }
    // Per distinct transition of the run: the mean tokens of its results.
    let mut transitions: BTreeMap<(&str, &str), (i64, i64)> = BTreeMap::new();
    let mut previous = START;
    for call in calls {
        let entry = transitions
            .entry((previous, call.tool.as_str()))
            .or_default();
        entry.0 += 1;
        entry.1 += call.result_tokens.max(0);
        previous = &call.tool;
    }
    let mut froms = Vec::with_capacity(transitions.len());
    let mut tos = Vec::with_capacity(transitions.len());
    let mut tokens = Vec::with_capacity(transitions.len());
    for ((from, to), (n, sum)) in &transitions {
        froms.push(*from);
        tos.push(*to);
        tokens.push(*sum as f64 / *n as f64);
    }
    // Rows are locked in key order (the SELECT's ORDER BY), so concurrent runs on one repository
    // cannot deadlock.
    let (created, updated): (i64, i64) = sqlx::query_as(
        "WITH e AS (
             SELECT * FROM unnest($3::text[], $4::text[], $5::float8[]) AS e(from_tool, to_tool, tokens)
         ),
         up AS (
             INSERT INTO tool_graph_edges (repo, from_tool, to_tool, source, weight, count, successes,
                                           mean_result_tokens, last_seen)
             SELECT $1, from_tool, to_tool, $2, $6, 1, $7, tokens, now() FROM e
             ORDER BY from_tool, to_tool
             ON CONFLICT (repo, from_tool, to_tool, source) DO UPDATE SET
                 count = tool_graph_edges.count + 1,
                 successes = tool_graph_edges.successes + EXCLUDED.successes,
                 mean_result_tokens = tool_graph_edges.mean_result_tokens
                     + (EXCLUDED.mean_result_tokens - tool_graph_edges.mean_result_tokens)
                       / (tool_graph_edges.count + 1),
                 last_seen = now()
             RETURNING (xmax = 0) AS inserted
         ),
         totals AS (
             INSERT INTO tool_graph_runs (repo, source, runs, successes, last_seen)
             VALUES ($1, $2, 1, $7, now())
             ON CONFLICT (repo, source) DO UPDATE SET
                 runs = tool_graph_runs.runs + 1,
                 successes = tool_graph_runs.successes + EXCLUDED.successes,
                 last_seen = now()
         )
         SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up",
    )
    .bind(repo)
    .bind(source.as_str())
    .bind(&froms)
    .bind(&tos)
    .bind(&tokens)
    .bind(source.weight())
    .bind(i64::from(grounded))
    .fetch_one(pool)
    .await?;
    Ok(Recorded {
        edges_created: created as u64,
        edges_updated: updated as u64,
    })
}

/// Every edge of `repo`, by transition then source.
pub async fn edges(pool: &PgPool, repo: &str) -> Result<Vec<Edge>> {
    Ok(sqlx::query_as(
        "SELECT from_tool, to_tool, source, weight, count, successes, mean_result_tokens, last_seen
         FROM tool_graph_edges WHERE repo = $1 ORDER BY from_tool, to_tool, source",
    )
    .bind(repo)
    .fetch_all(pool)
    .await?)
}

/// The runs recorded for `repo`, per source.
pub async fn run_totals(pool: &PgPool, repo: &str) -> Result<Vec<RunTotals>> {
    Ok(sqlx::query_as(
        "SELECT source, runs, successes FROM tool_graph_runs WHERE repo = $1 ORDER BY source",
    )
    .bind(repo)
    .fetch_all(pool)
    .await?)
}

/// The strongest sequences of `repo` (see [`sequences`]).
pub async fn strongest_sequences(
    pool: &PgPool,
    repo: &str,
    limit: usize,
    min_runs: i64,
) -> Result<Vec<Sequence>> {
    Ok(sequences(&edges(pool, repo).await?, limit, min_runs))
}

/// Transition totals over sources: raw counts for display, a weighted score for ranking.
#[derive(Debug, Clone, Copy, Default)]
struct Merged {
    count: i64,
    successes: i64,
    score: f64,
}

/// Up to `limit` chains: from each of the strongest first tools, the strongest next transition
/// to a tool not yet in the chain, up to [`MAX_SEQUENCE_TOOLS`]. Only transitions seen in at least
/// `min_runs` runs count. Ranked by weighted grounded runs (observed 1.0, imported
/// [`IMPORTED_WEIGHT`]), then weighted runs.
pub fn sequences(edges: &[Edge], limit: usize, min_runs: i64) -> Vec<Sequence> {
    let mut merged: BTreeMap<(&str, &str), Merged> = BTreeMap::new();
    for edge in edges {
        let m = merged
            .entry((edge.from_tool.as_str(), edge.to_tool.as_str()))
            .or_default();
        m.count += edge.count;
        m.successes += edge.successes;
        // Grounded runs dominate; runs break ties.
        m.score += edge.weight * (edge.successes as f64 + edge.count as f64 / 1_000.0);
    }
    merged.retain(|_, m| m.count >= min_runs);
    let strongest_from = |from: &str, exclude: &[String]| {
        merged
            .iter()
            .filter(|((f, t), _)| *f == from && *t != from && !exclude.iter().any(|e| e == t))
            .max_by(|(ka, a), (kb, b)| a.score.total_cmp(&b.score).then(kb.1.cmp(ka.1)))
            .map(|((_, t), m)| (t.to_string(), *m))
    };
    let mut starts: Vec<(&str, Merged)> = merged
        .iter()
        .filter(|((f, _), _)| *f == START)
        .map(|((_, t), m)| (*t, *m))
        .collect();
    starts.sort_by(|(ta, a), (tb, b)| b.score.total_cmp(&a.score).then(ta.cmp(tb)));

    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (first, edge) in starts {
        let mut tools = vec![first.to_owned()];
        let mut weakest = edge;
        while tools.len() < MAX_SEQUENCE_TOOLS {
            let last = tools.last().expect("a chain starts with one tool").clone();
            let Some((next, m)) = strongest_from(&last, &tools) else {
                break;
            };
            if m.count < weakest.count {
                weakest = m;
            }
            tools.push(next);
        }
        if seen.insert(tools.clone()) {
            out.push(Sequence {
                tools,
                runs: weakest.count,
                successes: weakest.successes,
            });
        }
        if out.len() == limit {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(tools: &[&str]) -> Vec<Call> {
        tools
            .iter()
            .enumerate()
            .map(|(i, tool)| Call {
                tool: (*tool).to_owned(),
                result_tokens: 100 * (i as i64 + 1),
            })
            .collect()
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn runs_update_counts_successes_means_and_totals_exactly(pool: PgPool) {
        let repo = "github:acme/app";
        let first = record_run(
            &pool,
            repo,
            Source::Observed,
            &calls(&["grep", "read", "grep", "read"]),
            true,
        )
        .await
        .unwrap();
        // ^→grep, grep→read, read→grep: a run counts once per transition.
        assert_eq!(
            first,
            Recorded {
                edges_created: 3,
                edges_updated: 0
            }
        );
        let second = record_run(
            &pool,
            repo,
            Source::Observed,
            &calls(&["grep", "read"]),
            false,
        )
        .await
        .unwrap();
        assert_eq!(
            second,
            Recorded {
                edges_created: 0,
                edges_updated: 2
            }
        );
        record_run(
            &pool,
            "github:other/repo",
            Source::Observed,
            &calls(&["read"]),
            true,
        )
        .await
        .unwrap();

        let edges = edges(&pool, repo).await.unwrap();
        let summary: Vec<(&str, &str, i64, i64)> = edges
            .iter()
            .map(|e| {
                (
                    e.from_tool.as_str(),
                    e.to_tool.as_str(),
                    e.count,
                    e.successes,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("^", "grep", 2, 1),
                ("grep", "read", 2, 1),
                ("read", "grep", 1, 1)
            ]
        );
        // grep→read: run 1 read results 200 and 400 tokens (mean 300), run 2: 200 → mean 250.
        assert_eq!(edges[1].mean_result_tokens, 250.0);
        assert_eq!(edges[0].weight, 1.0);
        let totals = run_totals(&pool, repo).await.unwrap();
        assert_eq!(
            totals,
            [RunTotals {
                source: "observed".into(),
                runs: 2,
                successes: 1
            }]
        );

        record_run(&pool, repo, Source::Imported, &calls(&["glob"]), true)
            .await
            .unwrap();
        let imported: Vec<_> = edges_of(&pool, repo, "imported").await;
        assert_eq!(
            imported,
            [("^".to_owned(), "glob".to_owned(), IMPORTED_WEIGHT)]
        );
        assert!(
            record_run(&pool, repo, Source::Observed, &[], true)
                .await
                .unwrap()
                == Recorded::default()
        );
    }

    async fn edges_of(pool: &PgPool, repo: &str, source: &str) -> Vec<(String, String, f64)> {
        edges(pool, repo)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.source == source)
            .map(|e| (e.from_tool, e.to_tool, e.weight))
            .collect()
    }

    fn edge(from: &str, to: &str, source: Source, count: i64, successes: i64) -> Edge {
        Edge {
            from_tool: from.into(),
            to_tool: to.into(),
            source: source.as_str().into(),
            weight: source.weight(),
            count,
            successes,
            mean_result_tokens: 0.0,
            last_seen: Utc::now(),
        }
    }

    #[test]
    fn sequences_follow_the_strongest_transitions_and_weigh_sources() {
        use Source::*;
        let edges = vec![
            edge("^", "codegraph search", Observed, 14, 12),
            edge("codegraph search", "codegraph callers", Observed, 13, 12),
            edge("codegraph callers", "read", Observed, 14, 13),
            edge("codegraph callers", "codegraph search", Observed, 20, 20),
            edge("^", "grep", Observed, 6, 4),
            edge("grep", "read", Observed, 6, 4),
            // Imported evidence counts half: 10 grounded imported runs (5) still beat 4 observed.
            edge("^", "glob", Imported, 10, 10),
            edge("glob", "read", Imported, 2, 2),
        ];
        let got = sequences(&edges, 3, 3);
        let rendered: Vec<(String, i64, i64)> = got
            .iter()
            .map(|s| (s.tools.join(" → "), s.successes, s.runs))
            .collect();
        assert_eq!(
            rendered,
            [
                // The chain never revisits a tool (callers → search is excluded).
                (
                    "codegraph search → codegraph callers → read".to_owned(),
                    12,
                    13
                ),
                // glob→read was seen in fewer than min_runs runs: the chain stops at glob.
                ("glob".to_owned(), 10, 10),
                ("grep → read".to_owned(), 4, 6),
            ]
        );
        assert_eq!(sequences(&edges, 1, 3).len(), 1);
        assert!(sequences(&edges, 3, 100).is_empty());
    }
}
