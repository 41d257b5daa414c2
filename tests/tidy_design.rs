//! Tidy rules about what the docs say of the design and of the defaults: the deviation list has a
//! row for every deviation the fidelity audits named, the evaluation's suites are all named, and
//! the code graph's store defaults are said per layer, each as the code, the configuration and
//! the compose file have it.

use super::{files, read};

/// The deviations from the design documents the audits named (issue #47 §5), each by words its
/// row in ARCHITECTURE.md's deviation list starts with (the bold lead).
const DEVIATIONS: [&str; 12] = [
    "tree-sitter, not a compiler front end",
    "Six explore tools where the design lists nine",
    "The grep ladder",
    "`clarification` is an optional field",
    "Where the execution and integration outputs live",
    "Output formats",
    "PostgreSQL is the code graph's store outside compose",
    "The evaluation runs the explorer, and the planner only for questions",
    "The `log` payload",
    "Tool arguments are traced by name",
    "Closing a gap as `answered`",
    "The traversal state keeps",
];

/// ARCHITECTURE.md's deviation list: from its heading to the next one.
fn deviation_list() -> String {
    let text = read("ARCHITECTURE.md");
    let start = text
        .find("## Decisions and deviations from STYLE.md and the design documents")
        .expect("the deviation list");
    let rest = &text[start + 3..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
}

#[test]
fn the_deviation_list_has_a_row_for_each_deviation_the_audit_named() {
    let list = deviation_list();
    let missing: Vec<&str> = DEVIATIONS
        .iter()
        .filter(|lead| !list.contains(&format!("- **{lead}")))
        .copied()
        .collect();
    assert!(missing.is_empty(), "deviations without a row: {missing:?}");
    // A row says why: each named row has its reason.
    for lead in DEVIATIONS {
        let at = list.find(&format!("- **{lead}")).unwrap();
        let row = &list[at..];
        let row = &row[..row[2..].find("\n- **").map_or(row.len(), |end| end + 2)];
        assert!(row.contains("Why:"), "the row {lead:?} gives no reason");
    }
}

/// Every suite in `eval/` is named where the docs list the explorer's evaluation.
#[test]
fn every_evaluation_suite_is_named_where_the_evaluation_is_described() {
    let suites: Vec<String> = files()
        .into_iter()
        .filter(|f| f.starts_with("eval/") && f.ends_with(".toml") && f.matches('/').count() == 1)
        .collect();
    assert!(suites.len() >= 4, "{suites:?}");
    let architecture = read("ARCHITECTURE.md");
    let row = architecture
        .lines()
        .find(|line| line.starts_with("| the explorer's evaluation |"))
        .expect("ARCHITECTURE's Where-is row of the evaluation");
    let readme = read("README.md");
    for suite in &suites {
        let file = suite.trim_start_matches("eval/");
        assert!(
            row.contains(file),
            "ARCHITECTURE's evaluation row does not name {suite}"
        );
        assert!(
            readme.contains(&format!("`{suite}`")),
            "README does not name {suite}"
        );
    }
}

/// The code graph's default store differs by layer: the crate's `StoreBackend` default, the
/// binary's embedded configuration and the compose file. The code-graph README says which is
/// which, each as the layer itself has it, and nothing describes `auto` as what compose uses
/// (compose sets its backend itself).
#[test]
fn the_code_graph_store_defaults_are_said_per_layer() {
    let settings = read("crates/relay-codegraph/src/store/settings.rs");
    let enum_start = settings
        .find("pub enum StoreBackend")
        .expect("StoreBackend");
    let body = &settings[enum_start..];
    let body = &body[..body.find("\n}").unwrap()];
    let after_default = &body[body.find("#[default]").expect("a #[default] backend")..];
    let crate_default = after_default
        .lines()
        .skip(1)
        .map(str::trim)
        .find(|line| !line.starts_with("//") && !line.starts_with('#'))
        .unwrap()
        .trim_end_matches(',')
        .to_lowercase();
    let config = read("config/relay.toml");
    let codegraph = &config[config.find("\n[codegraph]\n").expect("[codegraph]")..];
    let configured = codegraph
        .lines()
        .find_map(|line| line.strip_prefix("backend = "))
        .expect("[codegraph] backend")
        .trim_matches('"')
        .to_owned();
    let compose = read("docker-compose.yml");
    let composed = compose
        .lines()
        .find_map(|line| line.trim().strip_prefix("RELAY__CODEGRAPH__BACKEND: "))
        .expect("compose's backend")
        .trim()
        .to_owned();

    let readme = read("crates/relay-codegraph/README.md");
    let row = |layer: &str| -> String {
        readme
            .lines()
            .find(|line| line.starts_with('|') && line.contains(layer))
            .unwrap_or_else(|| panic!("the code-graph README has no default row for {layer}"))
            .to_owned()
    };
    for (layer, default) in [
        ("`StoreBackend::default()`", &crate_default),
        ("`config/relay.toml`", &configured),
        ("`docker-compose.yml`", &composed),
    ] {
        let row = row(layer);
        assert!(
            row.contains(&format!("| `{default}`")),
            "the README's row for {layer} does not give its default `{default}`: {row}"
        );
    }
    if composed != "auto" {
        let auto_doc = &body[..body.find("Auto,").expect("Auto")];
        let auto_doc = &auto_doc[auto_doc.rfind("Arangodb,").unwrap_or(0)..];
        let comment: String = codegraph
            .lines()
            .take_while(|line| !line.starts_with("backend = "))
            .collect();
        for (what, text) in [
            ("StoreBackend::Auto's doc", auto_doc),
            ("[codegraph]'s comment", &comment),
        ] {
            assert!(
                !text.contains("profile"),
                "{what} ties `auto` to a compose profile, but compose sets `{composed}`: {text}"
            );
        }
    }
}
