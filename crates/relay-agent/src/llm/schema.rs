//! JSON schemas from Rust types, and their adaptation to OpenAI's strict mode.
//!
//! Strict mode (`strict: true` on tools and `response_format: json_schema`) accepts only a subset
//! of JSON Schema: every object sets `additionalProperties: false`, every property is listed in
//! `required` (optional ones become nullable), and keywords outside the subset are rejected. The
//! adapted schema is only what the provider sees; replies are validated against the original
//! schemars schema (see [`super::validate`]), after [`strip_optional_nulls`] removed the `null`s
//! strict mode forces the model to send for absent optional fields.

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

/// Keywords kept in strict schemas; everything else (formats, numeric bounds, defaults, examples)
/// is dropped because strict mode rejects or ignores it. Bounds are still enforced by our own
/// validation against the original schema.
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
];

/// The schemars schema of `T` as JSON, without the `$schema` marker.
pub fn schema_for<T: JsonSchema>() -> Value {
    let schema = schemars::schema_for!(T);
    cleaned(&schema.to_value())
}

/// JSON Schema's own `format` values; schemars also emits Rust-specific ones (`uint32`,
/// `double`, …) that providers do not know and some reject.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uuid",
];

/// `schema` without the `$schema` marker and non-standard `format`s (providers do not want them).
pub fn cleaned(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    drop_rust_formats(&mut schema);
    schema
}

fn drop_rust_formats(node: &mut Value) {
    match node {
        Value::Object(object) => {
            let rust_format = object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| !STANDARD_FORMATS.contains(&format));
            if rust_format {
                object.remove("format");
            }
            object.values_mut().for_each(drop_rust_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_rust_formats),
        _ => {}
    }
}

/// Adapts a schemars schema to OpenAI strict mode, or explains why it cannot be.
///
/// Errors name the first construct that does not qualify; callers then send the schema with
/// `strict: false` and rely on validation.
pub fn to_strict(schema: &Value) -> Result<Value, String> {
    let mut schema = cleaned(schema);
    let root_is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    if !root_is_object {
        return Err("the root schema is not an object".to_owned());
    }
    let original = schema.clone();
    adapt(&mut schema, "$", &original, 0)?;
    Ok(schema)
}

fn adapt(node: &mut Value, path: &str, root: &Value, depth: usize) -> Result<(), String> {
    if depth > 64 {
        return Err(format!(
            "{path}: schema nested too deeply (recursive type?)"
        ));
    }
    let Some(object) = node.as_object_mut() else {
        return Err(format!("{path}: boolean schemas are not supported"));
    };
    // Strict mode rejects `$ref` next to other keywords (schemars puts a field's doc comment
    // there), so such references are inlined, as the official SDK does.
    if object.len() > 1
        && let Some(reference) = object.get("$ref").and_then(Value::as_str)
    {
        let target = lookup_ref(reference, root)
            .and_then(Value::as_object)
            .ok_or_else(|| format!("{path}: unresolvable reference {reference}"))?
            .clone();
        object.remove("$ref");
        for (key, value) in target {
            if !matches!(key.as_str(), "$defs" | "definitions") {
                object.entry(key).or_insert(value);
            }
        }
    }
    if let Some(one_of) = object.remove("oneOf") {
        let mut branches = one_of.as_array().cloned().unwrap_or_default();
        if let Some(Value::Array(any_of)) = object.remove("anyOf") {
            branches.extend(any_of);
        }
        object.insert("anyOf".to_owned(), Value::Array(branches));
    }
    if let Some(all_of) = object.remove("allOf") {
        match all_of.as_array().map(Vec::as_slice) {
            Some([single]) if single.is_object() => {
                for (key, value) in single.as_object().into_iter().flatten() {
                    object.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            _ => return Err(format!("{path}: allOf is not supported")),
        }
    }
    object.retain(|key, _| STRICT_KEYWORDS.contains(&key.as_str()));
    if object.is_empty() || (object.len() == 1 && object.contains_key("description")) {
        return Err(format!(
            "{path}: a schema that accepts any value is not supported"
        ));
    }

    let is_object = object.get("type").and_then(Value::as_str) == Some("object")
        || object.contains_key("properties");
    if is_object {
        match object.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(format!(
                    "{path}: maps with arbitrary keys are not supported"
                ));
            }
        }
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
        let required: Vec<String> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut all = Vec::new();
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            for (name, property) in properties.iter_mut() {
                adapt(property, &format!("{path}.{name}"), root, depth + 1)?;
                if !required.contains(name) {
                    make_nullable(property);
                }
                all.push(Value::String(name.clone()));
            }
        }
        object.insert("required".to_owned(), Value::Array(all));
    }
    if let Some(items) = object.get_mut("items") {
        adapt(items, &format!("{path}[]"), root, depth + 1)?;
    }
    if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        for branch in branches {
            adapt(branch, path, root, depth + 1)?;
        }
    }
    for defs_key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = object.get_mut(defs_key) {
            for (name, def) in defs.iter_mut() {
                adapt(def, &format!("#/{defs_key}/{name}"), root, depth + 1)?;
            }
        }
    }
    Ok(())
}

/// Makes an adapted schema also accept `null`.
fn make_nullable(node: &mut Value) {
    if allows_null_shallow(node) {
        return;
    }
    let Some(object) = node.as_object_mut() else {
        return;
    };
    if let Some(kind) = object.get("type").cloned() {
        let mut kinds = match kind {
            Value::Array(kinds) => kinds,
            other => vec![other],
        };
        kinds.push(json!("null"));
        object.insert("type".to_owned(), Value::Array(kinds));
        if let Some(Value::Array(values)) = object.get_mut("enum") {
            values.push(Value::Null);
        }
    } else if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
    } else {
        let inner = std::mem::take(object);
        let mut wrapper = Map::new();
        if let Some(description) = inner.get("description") {
            wrapper.insert("description".to_owned(), description.clone());
        }
        wrapper.insert(
            "anyOf".to_owned(),
            json!([Value::Object(inner), {"type": "null"}]),
        );
        *object = wrapper;
    }
}

fn allows_null_shallow(node: &Value) -> bool {
    match node.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "null"),
        _ => node
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(allows_null_shallow)),
    }
}

/// Removes `null` values of optional properties that the original schema does not allow to be
/// `null`, so a strict-mode reply deserializes into types with `#[serde(default)]` fields.
pub fn strip_optional_nulls(value: &mut Value, schema: &Value) {
    strip(value, schema, schema, 0);
}

fn strip(value: &mut Value, node: &Value, root: &Value, depth: usize) {
    if depth > 64 {
        return;
    }
    let node = resolve(node, root);
    if let Value::Object(fields) = value
        && let Some(properties) = node.get("properties").and_then(Value::as_object)
    {
        let required = node.get("required").and_then(Value::as_array);
        let is_required =
            |name: &str| required.is_some_and(|names| names.iter().any(|n| n == name));
        fields.retain(|name, field| {
            let keep_null = is_required(name)
                || properties
                    .get(name)
                    .is_none_or(|property| allows_null(property, root, 0));
            !field.is_null() || keep_null
        });
        for (name, field) in fields.iter_mut() {
            if let Some(property) = properties.get(name) {
                strip(field, property, root, depth + 1);
            }
        }
    }
    if let Value::Array(items) = value
        && let Some(item_schema) = node.get("items")
    {
        for item in items {
            strip(item, item_schema, root, depth + 1);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = node.get(key).and_then(Value::as_array) {
            for branch in branches {
                let mut candidate = value.clone();
                strip(&mut candidate, branch, root, depth + 1);
                if super::validate::validate_with_root(&candidate, branch, root).is_empty() {
                    *value = candidate;
                    break;
                }
            }
        }
    }
    if let Some(branches) = node.get("allOf").and_then(Value::as_array) {
        for branch in branches {
            strip(value, branch, root, depth + 1);
        }
    }
}

/// Follows `$ref`s (`#`, `#/$defs/…`, `#/definitions/…`) to the schema they name.
pub fn resolve<'a>(node: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = node;
    for _ in 0..32 {
        match current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| lookup_ref(r, root))
        {
            Some(target) => current = target,
            None => break,
        }
    }
    current
}

/// The schema a local `$ref` points to.
pub fn lookup_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// Whether a schema accepts `null`.
pub fn allows_null(node: &Value, root: &Value, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    let node = resolve(node, root);
    match node {
        Value::Bool(accepts) => *accepts,
        Value::Object(object) => {
            if object.get("nullable") == Some(&Value::Bool(true)) {
                return true;
            }
            if let Some(kind) = object.get("type") {
                return match kind {
                    Value::String(kind) => kind == "null",
                    Value::Array(kinds) => kinds.iter().any(|kind| kind == "null"),
                    _ => false,
                };
            }
            if let Some(values) = object.get("enum").and_then(Value::as_array) {
                return values.contains(&Value::Null);
            }
            if let Some(constant) = object.get("const") {
                return constant.is_null();
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(branches) = object.get(key).and_then(Value::as_array) {
                    return branches
                        .iter()
                        .any(|branch| allows_null(branch, root, depth + 1));
                }
            }
            !object.contains_key("$ref")
                && !object.contains_key("allOf")
                && !object.contains_key("properties")
        }
        _ => false,
    }
}
