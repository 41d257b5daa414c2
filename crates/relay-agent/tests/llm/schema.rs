//! Strict-mode schema adaptation and the null stripping that makes strict replies deserialize.

use std::collections::HashMap;

use relay_agent::llm::schema::{schema_for, strip_optional_nulls, to_strict};
use relay_agent::llm::validate::validate;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Confidence {
    Low,
    Medium,
    High,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Location {
    path: String,
    line: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Evidence {
    Code { location: Location },
    Comment { text: String },
}

/// A finding.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Finding {
    /// What was found.
    summary: String,
    /// How sure the explorer is.
    confidence: Confidence,
    location: Option<Location>,
    #[serde(default)]
    tags: Vec<String>,
    evidence: Vec<Evidence>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "fields exist for the schema")]
struct WithMap {
    counts: HashMap<String, u32>,
}

/// Checks OpenAI's strict rules on every object of a schema.
fn assert_strict_rules(node: &Value, path: &str) {
    match node {
        Value::Object(object) => {
            if object.get("type") == Some(&json!("object")) || object.contains_key("properties") {
                assert_eq!(
                    object.get("additionalProperties"),
                    Some(&json!(false)),
                    "{path}"
                );
                let properties: Vec<&String> =
                    object["properties"].as_object().unwrap().keys().collect();
                let required: Vec<&str> = object["required"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                assert_eq!(
                    properties.len(),
                    required.len(),
                    "{path}: every property is required"
                );
                for property in properties {
                    assert!(required.contains(&property.as_str()), "{path}.{property}");
                }
            }
            if object.contains_key("$ref") {
                assert_eq!(
                    object.len(),
                    1,
                    "{path}: $ref must stand alone in strict mode"
                );
            }
            for forbidden in ["format", "minimum", "default", "oneOf", "$schema", "allOf"] {
                assert!(
                    !object.contains_key(forbidden),
                    "{path}: {forbidden} left in strict schema"
                );
            }
            for (key, child) in object {
                assert_strict_rules(child, &format!("{path}/{key}"));
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| assert_strict_rules(item, path)),
        _ => {}
    }
}

#[test]
fn strict_schema_follows_the_rules_and_is_stable() {
    let strict = to_strict(&schema_for::<Finding>()).unwrap();
    assert_strict_rules(&strict, "$");
    insta::assert_json_snapshot!(strict);
}

#[test]
fn optional_fields_become_nullable() {
    let strict = to_strict(&schema_for::<Finding>()).unwrap();
    let location = &strict["properties"]["location"];
    let branches = location["anyOf"]
        .as_array()
        .expect("optional struct ref is an anyOf");
    assert!(branches.contains(&json!({"type": "null"})), "{location}");
    // `tags` has a serde default: optional for schemars, so nullable in strict mode.
    assert_eq!(
        strict["properties"]["tags"]["type"],
        json!(["array", "null"])
    );
    // A required enum stays non-nullable.
    assert!(!strict["$defs"]["Confidence"].to_string().contains("null"));
    // An optional integer keeps its type and gains null, without the unsupported `format`.
    assert_eq!(
        strict["$defs"]["Location"]["properties"]["line"]["type"],
        json!(["integer", "null"])
    );
}

#[test]
fn maps_do_not_qualify_for_strict_mode() {
    let error = to_strict(&schema_for::<WithMap>()).unwrap_err();
    assert!(error.contains("maps with arbitrary keys"), "{error}");
}

#[test]
fn non_object_roots_do_not_qualify() {
    assert!(to_strict(&schema_for::<Vec<String>>()).is_err());
}

#[test]
fn a_strict_mode_reply_with_nulls_deserializes() {
    let schema = schema_for::<Finding>();
    let mut reply = json!({
        "summary": "signature check skipped",
        "confidence": "high",
        "location": null,
        "tags": null,
        "evidence": [
            {"kind": "code", "location": {"path": "src/lib.rs", "line": null}},
            {"kind": "comment", "text": "see #12"}
        ]
    });
    // Strict mode may send `tags: null`, which a Vec with a serde default cannot take.
    assert!(serde_json::from_value::<Finding>(reply.clone()).is_err());
    strip_optional_nulls(&mut reply, &schema);
    assert_eq!(validate(&reply, &schema), vec![]);
    let finding: Finding = serde_json::from_value(reply).unwrap();
    assert_eq!(finding.tags, Vec::<String>::new());
    assert_eq!(finding.location, None);
    assert_eq!(
        finding.evidence[0],
        Evidence::Code {
            location: Location {
                path: "src/lib.rs".into(),
                line: None
            }
        }
    );
}

#[test]
fn nulls_are_kept_where_the_original_schema_forbids_dropping_them() {
    let schema = schema_for::<Finding>();
    let mut reply = json!({"summary": null, "confidence": "low", "evidence": []});
    strip_optional_nulls(&mut reply, &schema);
    assert_eq!(
        reply["summary"],
        Value::Null,
        "required fields are not touched"
    );
    let errors = validate(&reply, &schema);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "$.summary: expected string, got null"
    );
}
