//! `relay trace JOB_ID [--follow] [--format text|json]`: a job's run trace as a timeline, read
//! from the database, with token totals and cost per role (`[prices]`).

use relay_core::JobId;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use relay_store::PgPool;
use relay_store::trace::{self as store, Event, JobProgress, Run, TraceNotifications};

use super::trace_render::{self, Prices};

/// How often `--follow` reads again without a notification.
const FOLLOW_POLL: Duration = Duration::from_secs(1);

#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    /// The job's id (as in `/api/jobs/{id}` and the logs' `job.id`).
    pub job_id: JobId,
    /// Keep printing new events until the job finishes.
    #[arg(long)]
    pub follow: bool,
    /// `text` (a timeline) or `json` (one event per line, then the runs and totals).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub async fn run(config: Option<&Path>, args: &TraceArgs) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let pool = loaded
        .settings
        .database
        .pool()
        .map_err(anyhow::Error::msg)?;
    let prices = loaded.settings.prices.clone();
    if store::job_progress(&pool, args.job_id)
        .await
        .context("failed to read the job")?
        .is_none()
    {
        anyhow::bail!("job {} does not exist", args.job_id);
    }
    let mut printer = Printer {
        format: args.format,
        streaming: args.follow,
        runs: HashMap::new(),
        events: Vec::new(),
        current_run: None,
    };
    let mut notifications = if args.follow {
        Some(TraceNotifications::connect(&pool).await?)
    } else {
        None
    };
    let mut cursor = 0;
    loop {
        // Progress before events: "finished and nothing new" is then final (the worker finishes
        // a trace before it records the job's outcome).
        let progress = store::job_progress(&pool, args.job_id).await?;
        let page = store::events_after(&pool, args.job_id, cursor, store::MAX_PAGE).await?;
        if let Some(last) = page.last() {
            cursor = last.cursor;
            printer.print(&pool, page).await?;
            continue;
        }
        let live = progress == Some(JobProgress::Live);
        match &mut notifications {
            Some(listener) if live => wait(listener, args.job_id).await,
            _ => break,
        }
    }
    let runs = store::runs(&pool, args.job_id).await?;
    printer.finish(&runs, &prices);
    Ok(())
}

/// Until the job's trace changes or [`FOLLOW_POLL`] passes.
async fn wait(listener: &mut TraceNotifications, job_id: JobId) {
    let poll = tokio::time::sleep(FOLLOW_POLL);
    tokio::pin!(poll);
    loop {
        tokio::select! {
            woke = listener.recv() => match woke {
                Ok(Some(id)) if id == job_id => return,
                Ok(_) => {}
                Err(_) => { (&mut poll).await; return; }
            },
            _ = &mut poll => return,
        }
    }
}

struct Printer {
    format: Format,
    /// Print text lines as events arrive (`--follow`) rather than the whole timeline at the end.
    streaming: bool,
    runs: HashMap<i64, Run>,
    events: Vec<Event>,
    current_run: Option<i64>,
}

impl Printer {
    async fn print(&mut self, pool: &PgPool, page: Vec<Event>) -> anyhow::Result<()> {
        for event in page {
            if !self.runs.contains_key(&event.run_id) {
                for run in store::runs(pool, event.job_id).await? {
                    self.runs.insert(run.id, run);
                }
            }
            match self.format {
                Format::Json => println!("{}", serde_json::to_string(&event)?),
                Format::Text if !self.streaming => {}
                Format::Text => {
                    if self.current_run != Some(event.run_id) {
                        if let Some(run) = self.runs.get(&event.run_id) {
                            println!("{}", trace_render::run_header(run));
                        }
                        self.current_run = Some(event.run_id);
                    }
                    let started = self
                        .runs
                        .get(&event.run_id)
                        .map_or(event.at, |run| run.started_at);
                    println!("{}", trace_render::event_line(&event, started));
                }
            }
            self.events.push(event);
        }
        Ok(())
    }

    fn finish(&self, runs: &[Run], prices: &Prices) {
        let totals = trace_render::totals(&self.events, prices);
        let tool_calls = self.events.iter().filter(|e| e.kind == "tool_call").count();
        match self.format {
            Format::Text if !self.streaming => {
                if runs.is_empty() {
                    println!("(no trace: the job has not run, or ran with [worker] trace = false)");
                }
                print!("{}", trace_render::render(runs, &self.events, prices));
            }
            Format::Text => {
                if runs.is_empty() {
                    println!("(no trace: the job has not run, or ran with [worker] trace = false)");
                }
                // The run headers printed while streaming showed the outcome at that time.
                for run in runs.iter().filter(|r| r.outcome.is_some()) {
                    println!("{}", trace_render::run_header(run));
                }
                print!("{}", trace_render::totals_table(&totals, tool_calls));
            }
            Format::Json => {
                let totals: serde_json::Map<String, serde_json::Value> = totals
                    .iter()
                    .map(|(role, t)| {
                        (
                            role.clone(),
                            serde_json::json!({
                                "calls": t.calls, "tokens_in": t.tokens_in, "tokens_out": t.tokens_out,
                                "tokens_cached": t.tokens_cached, "cost_usd": t.cost, "unpriced_models": t.unpriced,
                            }),
                        )
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::json!({ "runs": runs, "totals": totals, "tool_calls": tool_calls })
                );
            }
        }
    }
}
