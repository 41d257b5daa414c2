//! A validator for the JSON-schema subset schemars emits.
//!
//! Supported keywords: `type` (single or list; `integer` vs `number`), `nullable`, `enum`,
//! `const`, `properties`, `required`, `additionalProperties` (bool or schema), `items`,
//! `prefixItems`, `minItems`/`maxItems`, `minLength`/`maxLength`, `minimum`/`maximum`/
//! `exclusiveMinimum`/`exclusiveMaximum`, `anyOf`, `oneOf`, `allOf` and local `$ref`s into
//! `$defs`/`definitions`. Unknown keywords (`format`, `pattern`, …) are ignored. Error messages are
//! short and addressed to a model: they are sent back verbatim as correction feedback.

use std::fmt;

use serde_json::Value;

use super::schema::lookup_ref;

/// The most errors [`render_errors`] lists; more only distract the model.
const MAX_RENDERED: usize = 20;

/// One reason a value does not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// Where, as a JSONPath-like string (`$.items[0].price`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Validates `value` against `schema` (which is also the root for `$ref`s).
pub fn validate(value: &Value, schema: &Value) -> Vec<ValidationError> {
    validate_with_root(value, schema, schema)
}

/// Validates `value` against `schema`, resolving `$ref`s in `root`.
pub fn validate_with_root(value: &Value, schema: &Value, root: &Value) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    check(value, schema, root, "$", &mut errors, 0);
    errors
}

/// Renders errors as a terse bullet list for the model.
pub fn render_errors(errors: &[ValidationError]) -> String {
    let mut lines: Vec<String> = errors
        .iter()
        .take(MAX_RENDERED)
        .map(|error| format!("- {error}"))
        .collect();
    if errors.len() > MAX_RENDERED {
        lines.push(format!("- … and {} more", errors.len() - MAX_RENDERED));
    }
    lines.join("\n")
}

fn push(errors: &mut Vec<ValidationError>, path: &str, message: String) {
    errors.push(ValidationError {
        path: path.to_owned(),
        message,
    });
}

fn check(
    value: &Value,
    schema: &Value,
    root: &Value,
    path: &str,
    errors: &mut Vec<ValidationError>,
    depth: usize,
) {
    if depth > 128 {
        push(errors, path, "schema nesting too deep".to_owned());
        return;
    }
    let object = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return push(errors, path, "no value is allowed here".to_owned()),
        Value::Object(object) => object,
        _ => return,
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        match lookup_ref(reference, root) {
            Some(target) => check(value, target, root, path, errors, depth + 1),
            None => push(
                errors,
                path,
                format!("schema reference {reference} cannot be resolved"),
            ),
        }
    }
    if value.is_null() && object.get("nullable") == Some(&Value::Bool(true)) {
        return;
    }
    if let Some(kind) = object.get("type") {
        let kinds: Vec<&str> = match kind {
            Value::String(kind) => vec![kind.as_str()],
            Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !kinds.is_empty() && !kinds.iter().any(|kind| has_type(value, kind)) {
            let expected = kinds.join(" or ");
            push(
                errors,
                path,
                format!("expected {expected}, got {}", describe(value)),
            );
            return;
        }
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array)
        && !values.contains(value)
    {
        let allowed: Vec<String> = values.iter().map(Value::to_string).collect();
        push(
            errors,
            path,
            format!("expected one of [{}], got {value}", allowed.join(", ")),
        );
    }
    if let Some(constant) = object.get("const")
        && constant != value
    {
        push(errors, path, format!("expected {constant}, got {value}"));
    }
    match value {
        Value::Object(fields) => check_object(fields, object, root, path, errors, depth),
        Value::Array(items) => check_array(items, object, root, path, errors, depth),
        Value::String(text) => {
            let length = text.chars().count() as u64;
            if let Some(min) = object.get("minLength").and_then(Value::as_u64)
                && length < min
            {
                push(
                    errors,
                    path,
                    format!("string shorter than {min} characters"),
                );
            }
            if let Some(max) = object.get("maxLength").and_then(Value::as_u64)
                && length > max
            {
                push(errors, path, format!("string longer than {max} characters"));
            }
        }
        Value::Number(number) => {
            check_number(number.as_f64().unwrap_or(f64::NAN), object, path, errors)
        }
        _ => {}
    }
    if let Some(branches) = object.get("allOf").and_then(Value::as_array) {
        for branch in branches {
            check(value, branch, root, path, errors, depth + 1);
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(branches) = object.get(key).and_then(Value::as_array) else {
            continue;
        };
        let results: Vec<Vec<ValidationError>> = branches
            .iter()
            .map(|branch| validate_branch(value, branch, root, path, depth))
            .collect();
        let matching = results.iter().filter(|result| result.is_empty()).count();
        if matching == 0 {
            let all_shallow = results
                .iter()
                .all(|result| result.len() == 1 && result[0].path == path);
            if all_shallow {
                // Every alternative failed on the value itself (e.g. its type): list them all.
                let reasons: Vec<&str> = results.iter().map(|r| r[0].message.as_str()).collect();
                push(
                    errors,
                    path,
                    format!(
                        "matches none of the allowed alternatives ({})",
                        reasons.join("; ")
                    ),
                );
            } else if let Some(closest) = results.into_iter().min_by_key(Vec::len) {
                // The alternative with the fewest errors is most likely the one the model meant.
                errors.extend(closest);
            }
        } else if key == "oneOf" && matching > 1 {
            push(
                errors,
                path,
                "matches more than one alternative of oneOf".to_owned(),
            );
        }
    }
}

fn validate_branch(
    value: &Value,
    branch: &Value,
    root: &Value,
    path: &str,
    depth: usize,
) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    check(value, branch, root, path, &mut errors, depth + 1);
    errors
}

fn check_object(
    fields: &serde_json::Map<String, Value>,
    schema: &serde_json::Map<String, Value>,
    root: &Value,
    path: &str,
    errors: &mut Vec<ValidationError>,
    depth: usize,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                push(errors, path, format!("missing required property `{name}`"));
            }
        }
    }
    for (name, field) in fields {
        let field_path = format!("{path}.{name}");
        if let Some(property) = properties.and_then(|properties| properties.get(name)) {
            check(field, property, root, &field_path, errors, depth + 1);
            continue;
        }
        match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => push(errors, path, format!("unexpected property `{name}`")),
            Some(extra @ Value::Object(_)) => {
                check(field, extra, root, &field_path, errors, depth + 1)
            }
            _ => {}
        }
    }
}

fn check_array(
    items: &[Value],
    schema: &serde_json::Map<String, Value>,
    root: &Value,
    path: &str,
    errors: &mut Vec<ValidationError>,
    depth: usize,
) {
    let length = items.len() as u64;
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && length < min
    {
        push(
            errors,
            path,
            format!("expected at least {min} items, got {length}"),
        );
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
        && length > max
    {
        push(
            errors,
            path,
            format!("expected at most {max} items, got {length}"),
        );
    }
    let prefix = schema.get("prefixItems").and_then(Value::as_array);
    let prefix_len = prefix.map_or(0, Vec::len);
    for (index, item) in items.iter().enumerate() {
        let item_path = format!("{path}[{index}]");
        if let Some(item_schema) = prefix.and_then(|prefix| prefix.get(index)) {
            check(item, item_schema, root, &item_path, errors, depth + 1);
        } else if let Some(item_schema) = schema.get("items")
            && index >= prefix_len
        {
            check(item, item_schema, root, &item_path, errors, depth + 1);
        }
    }
}

fn check_number(
    number: f64,
    schema: &serde_json::Map<String, Value>,
    path: &str,
    errors: &mut Vec<ValidationError>,
) {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(min) = bound("minimum")
        && number < min
    {
        push(errors, path, format!("must be at least {min}"));
    }
    if let Some(max) = bound("maximum")
        && number > max
    {
        push(errors, path, format!("must be at most {max}"));
    }
    if let Some(min) = bound("exclusiveMinimum")
        && number <= min
    {
        push(errors, path, format!("must be greater than {min}"));
    }
    if let Some(max) = bound("exclusiveMaximum")
        && number >= max
    {
        push(errors, path, format!("must be less than {max}"));
    }
}

fn has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(number) => {
                number.is_i64()
                    || number.is_u64()
                    || number.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => "boolean".to_owned(),
        Value::Number(number) => format!("number {number}"),
        Value::String(text) if text.chars().count() <= 40 => format!("string {value}"),
        Value::String(_) => "string".to_owned(),
        Value::Array(_) => "array".to_owned(),
        Value::Object(_) => "object".to_owned(),
    }
}

#[cfg(test)]
mod tests;
