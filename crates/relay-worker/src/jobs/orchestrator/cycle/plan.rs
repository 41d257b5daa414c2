//! A cycle's planning: the Planner over the loaded context, with the job's explorers and the
//! write-back Validator as the judge of its `submit_actions` (failures go back to the planner).

use std::sync::Arc;

use relay_agent::planner::{PlanOutcome, Planner, PlannerLimits};

use super::super::validator::ActionsValidator;
use super::env::CycleEnv;
use super::load::CycleView;

/// What the planner decided, and the validator that judged it (it holds the accepted batch's
/// typed form for the executor).
pub async fn plan(env: &CycleEnv, loaded: &CycleView) -> (PlanOutcome, Arc<ActionsValidator>) {
    let validator = Arc::new(ActionsValidator::new(loaded.validation.clone()));
    let planner = Planner::new(
        env.planner.clone(),
        env.explorer.clone(),
        validator.clone(),
        PlannerLimits::from(&env.settings),
    )
    .with_tracer(&env.run.tracer);
    (planner.plan(&loaded.context).await, validator)
}
