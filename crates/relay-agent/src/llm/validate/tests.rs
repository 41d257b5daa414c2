//! Table-driven tests of the validator.

use serde_json::{Value, json};

use super::validate;

#[track_caller]
fn check(schema: Value, value: Value, expected: &[&str]) {
    let errors: Vec<String> = validate(&value, &schema)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(errors, expected, "value {value} against {schema}");
}

#[test]
fn types() {
    check(json!({"type": "integer"}), json!(3), &[]);
    check(json!({"type": "integer"}), json!(3.0), &[]);
    check(
        json!({"type": "integer"}),
        json!(3.5),
        &["$: expected integer, got number 3.5"],
    );
    check(json!({"type": "number"}), json!(3), &[]);
    check(json!({"type": ["string", "null"]}), json!(null), &[]);
    check(
        json!({"type": "boolean"}),
        json!("yes"),
        &["$: expected boolean, got string \"yes\""],
    );
    check(
        json!({"type": "string", "nullable": true}),
        json!(null),
        &[],
    );
    check(json!(true), json!({"anything": 1}), &[]);
    check(json!(false), json!(1), &["$: no value is allowed here"]);
}

#[test]
fn objects() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer", "minimum": 0}},
        "required": ["a"],
        "additionalProperties": false
    });
    check(schema.clone(), json!({"a": "x"}), &[]);
    check(
        schema.clone(),
        json!({"b": -1, "c": true}),
        &[
            "$: missing required property `a`",
            "$.b: must be at least 0",
            "$: unexpected property `c`",
        ],
    );
    let map = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    check(map.clone(), json!({"x": 1}), &[]);
    check(
        map,
        json!({"x": "1"}),
        &["$.x: expected integer, got string \"1\""],
    );
}

#[test]
fn arrays_enums_and_consts() {
    let schema = json!({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2});
    check(schema.clone(), json!(["a", "b"]), &[]);
    check(
        schema,
        json!(["a", "c", "b"]),
        &[
            "$: expected at most 2 items, got 3",
            "$[1]: expected one of [\"a\", \"b\"], got \"c\"",
        ],
    );
    check(
        json!({"const": "x"}),
        json!("y"),
        &["$: expected \"x\", got \"y\""],
    );
    let tuple = json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]});
    check(
        tuple,
        json!(["a", "b"]),
        &["$[1]: expected integer, got string \"b\""],
    );
}

#[test]
fn refs_and_alternatives() {
    let schema = json!({
        "type": "object",
        "properties": {"step": {"$ref": "#/$defs/Step"}},
        "$defs": {
            "Step": {
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "read"}, "path": {"type": "string"}}, "required": ["kind", "path"]},
                    {"type": "object", "properties": {"kind": {"const": "done"}}, "required": ["kind"]}
                ]
            }
        }
    });
    check(
        schema.clone(),
        json!({"step": {"kind": "read", "path": "a"}}),
        &[],
    );
    check(schema.clone(), json!({"step": {"kind": "done"}}), &[]);
    // The closest alternative's errors are reported.
    check(
        schema,
        json!({"step": {"kind": "read"}}),
        &["$.step: missing required property `path`"],
    );
    check(
        json!({"$ref": "#/$defs/Missing"}),
        json!(1),
        &["$: schema reference #/$defs/Missing cannot be resolved"],
    );
    check(
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        json!(true),
        &[
            "$: matches none of the allowed alternatives (expected string, got boolean; expected integer, got boolean)",
        ],
    );
    check(
        json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
        json!(1),
        &["$: matches more than one alternative of oneOf"],
    );
    check(
        json!({"allOf": [{"type": "string"}, {"maxLength": 2}]}),
        json!("abc"),
        &["$: string longer than 2 characters"],
    );
}
