//! Fakes for the planner's seams and a client for the scripted server.

use std::collections::VecDeque;
use std::sync::Mutex;

use relay_agent::llm::{LlmClient, LlmSettings, RetryPolicy, Role};
use relay_agent::planner::{
    BatchValidator, ExploreFailure, ExploreOutcome, ExploreRequest, Explorer, Verdict,
};
use relay_core::{ActionBatch, Citation};

/// The API key the scripted server is called with; no request body may contain it.
pub const API_KEY: &str = "sk-test-secret-planner";

/// A client for `role` against the scripted server, with a fast retry policy.
pub fn client(base_url: &str, role: Role) -> LlmClient {
    let settings: LlmSettings = toml::from_str(&format!(
        r#"
        [default]
        provider = "openai"
        base_url = "{base_url}"
        model = "scripted"
        api_key = "{API_KEY}"
        timeout_secs = 10
        "#
    ))
    .expect("settings parse");
    LlmClient::from_settings(&settings, role)
        .expect("client builds")
        .with_retry_policy(RetryPolicy {
            initial_backoff: std::time::Duration::from_millis(1),
            max_backoff: std::time::Duration::from_millis(5),
            jitter: false,
            ..Default::default()
        })
}

/// An explorer that answers every question with one citation and records the questions.
#[derive(Default)]
pub struct FakeExplorer {
    pub requests: Mutex<Vec<ExploreRequest>>,
    pub fail: bool,
}

#[async_trait::async_trait]
impl Explorer for FakeExplorer {
    async fn explore(&self, request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        self.requests.lock().unwrap().push(request.clone());
        if self.fail {
            return Err(ExploreFailure {
                message: "snapshot unavailable".into(),
                tokens: 7,
            });
        }
        Ok(ExploreOutcome {
            answer: format!(
                "about {:?}: retries are read in config.go",
                request.question
            ),
            evidence: vec![Citation {
                path: "config.go".into(),
                start_line: 10,
                end_line: 12,
                quote: Some("Retries int".into()),
            }],
            confidence: "high".into(),
            unanswered: Vec::new(),
            dropped_citations: 1,
            tokens: 1_000,
        })
    }
}

/// A validator answering with scripted verdicts (then accepting), recording the batches.
#[derive(Default)]
pub struct FakeValidator {
    pub verdicts: Mutex<VecDeque<Verdict>>,
    pub batches: Mutex<Vec<ActionBatch>>,
}

impl FakeValidator {
    pub fn rejecting(times: usize, failures: &str) -> Self {
        Self {
            verdicts: Mutex::new(
                std::iter::repeat_n(
                    Verdict::Rejected {
                        failures: failures.to_owned(),
                    },
                    times,
                )
                .collect(),
            ),
            batches: Mutex::default(),
        }
    }
}

#[async_trait::async_trait]
impl BatchValidator for FakeValidator {
    async fn validate(&self, batch: &ActionBatch) -> Verdict {
        self.batches.lock().unwrap().push(batch.clone());
        self.verdicts
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Verdict::Accepted)
    }
}
