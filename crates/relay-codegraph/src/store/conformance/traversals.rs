//! Call traversals (callers and callees).

use super::{builders::step, load};
use crate::model::Confidence;
use crate::store::{Direction, GraphStore};

/// Callers and callees, depth 1 to 3, with cycles, dynamic, external and unresolved edges.
pub async fn traversals(store: &dyn GraphStore) {
    use Confidence::*;
    let backend = store.backend();
    let snap = load(store, "conformance/traversals", "c1").await;
    let helper = "example.com/app/brain.helper";
    let llm_plan = "example.com/app/brain.LLMPlanner.Plan";
    let run = "example.com/app/cmd.run";
    let main = "example.com/app/cmd.main";
    let walk = |qname: &'static str, direction: Direction, depth: u8| {
        let snap = snap.clone();
        async move {
            store
                .traverse_calls(&snap, qname, direction, depth)
                .await
                .unwrap_or_else(|e| panic!("[{backend}] traverse {qname}: {e}"))
        }
    };

    let depth1 = vec![
        step(
            1,
            Some(llm_plan),
            helper,
            "helper",
            "brain/planner.go",
            32,
            Exact,
        ),
        step(
            1,
            Some(llm_plan),
            helper,
            "helper",
            "brain/planner.go",
            35,
            Exact,
        ),
    ];
    assert_eq!(
        walk(helper, Direction::Incoming, 1).await,
        depth1,
        "[{backend}] callers depth 1"
    );
    assert_eq!(
        walk(helper, Direction::Incoming, 0).await,
        depth1,
        "[{backend}] depth 0 clamps to 1"
    );
    let mut depth3 = depth1.clone();
    depth3.push(step(
        2,
        Some(run),
        llm_plan,
        "Plan",
        "cmd/main.go",
        22,
        Dynamic,
    ));
    depth3.push(step(3, Some(main), run, "run", "cmd/main.go", 12, Exact));
    assert_eq!(
        walk(helper, Direction::Incoming, 3).await,
        depth3,
        "[{backend}] callers depth 3 (the cycle back to the start is not a result)"
    );
    assert_eq!(
        walk(helper, Direction::Incoming, 9).await,
        depth3,
        "[{backend}] depth 9 clamps to 3"
    );

    let callees1 = vec![
        step(
            1,
            Some("example.com/app/brain.NewLLMPlanner"),
            main,
            "NewLLMPlanner",
            "cmd/main.go",
            11,
            Exact,
        ),
        step(1, Some(run), main, "run", "cmd/main.go", 12, Exact),
        step(
            1,
            Some("fmt.Println"),
            main,
            "Println",
            "cmd/main.go",
            13,
            Exact,
        ),
        step(1, None, main, "Exit", "cmd/main.go", 14, Exact),
    ];
    assert_eq!(
        walk(main, Direction::Outgoing, 1).await,
        callees1,
        "[{backend}] callees depth 1"
    );
    let mut callees3 = callees1.clone();
    callees3.extend([
        step(
            2,
            Some("example.com/app/brain.LLMPlanner.Plan"),
            run,
            "Plan",
            "cmd/main.go",
            22,
            Dynamic,
        ),
        step(
            2,
            Some("example.com/app/brain.Planner.Plan"),
            run,
            "Plan",
            "cmd/main.go",
            22,
            Exact,
        ),
        step(
            2,
            Some("example.com/app/brain.StubPlanner.Plan"),
            run,
            "Plan",
            "cmd/main.go",
            22,
            Dynamic,
        ),
        step(
            3,
            Some(helper),
            llm_plan,
            "helper",
            "brain/planner.go",
            32,
            Exact,
        ),
        step(
            3,
            Some(helper),
            llm_plan,
            "helper",
            "brain/planner.go",
            35,
            Exact,
        ),
    ]);
    assert_eq!(
        walk(main, Direction::Outgoing, 3).await,
        callees3,
        "[{backend}] callees depth 3"
    );

    assert_eq!(
        walk(llm_plan, Direction::Outgoing, 3).await,
        vec![
            step(
                1,
                Some(helper),
                llm_plan,
                "helper",
                "brain/planner.go",
                32,
                Exact
            ),
            step(
                1,
                Some(helper),
                llm_plan,
                "helper",
                "brain/planner.go",
                35,
                Exact
            ),
        ],
        "[{backend}] a cycle stops at the start symbol"
    );
    assert_eq!(
        walk("pkg.mod.helper_fn", Direction::Incoming, 2).await,
        vec![
            step(
                1,
                Some("pkg.mod.Child.run"),
                "pkg.mod.helper_fn",
                "helper_fn",
                "pkg/mod.py",
                12,
                Exact
            ),
            step(
                1,
                Some("pkg.mod"),
                "pkg.mod.helper_fn",
                "helper_fn",
                "pkg/mod.py",
                20,
                Exact
            ),
        ],
        "[{backend}] module-level callers"
    );
    assert!(
        walk("fmt.Println", Direction::Outgoing, 3).await.is_empty(),
        "[{backend}] an external symbol has no callees"
    );
    assert!(
        walk(main, Direction::Incoming, 3).await.is_empty(),
        "[{backend}] main has no callers"
    );
}
