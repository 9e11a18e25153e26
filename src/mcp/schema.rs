//! Arguments of an MCP tool call: the lenient coercions our own tools get, then validation
//! against the tool's JSON Schema with the `jsonschema` crate (SPEC §4.2 step 3, issue 17).
//!
//! MCP servers send schemas our subset (`crate::tools::schema`) does not cover (`anyOf`,
//! `$ref`, `pattern`, `additionalProperties`, formats). Coercions follow the schema where it
//! names one type for a value (`"60"` → 60 for an `integer` property, also inside nested
//! objects and arrays); an optional property sent as `null` that the schema does not allow
//! to be null is dropped (models send `null` for "not given"). A schema the validator cannot
//! compile (a remote `$ref`: nothing is fetched) is not checked here; the server checks it.

use serde_json::{Map, Value};

use crate::tools::Args;
use crate::tools::schema::SchemaError;

/// Most validation errors named in one tool result.
const MAX_ERRORS: usize = 3;

/// A tool's input schema, compiled once.
pub(crate) struct ArgumentSchema {
    schema: Value,
    validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for ArgumentSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentSchema")
            .field("schema", &self.schema)
            .field("compiled", &self.validator.is_some())
            .finish()
    }
}

impl ArgumentSchema {
    /// Compiles `schema`; one that does not compile is kept for coercions only.
    pub(crate) fn new(schema: &Value) -> Self {
        Self {
            schema: schema.clone(),
            validator: jsonschema::validator_for(schema).ok(),
        }
    }

    /// Coerces `args`, then validates them.
    ///
    /// # Errors
    /// What is wrong, for `Error: wrong arguments for <tool> (...)`: up to three problems,
    /// each with the field's JSON path, e.g. ``field `count`: "x" is not of type "integer"``.
    pub(crate) fn check(&self, args: Args) -> Result<Args, SchemaError> {
        let args = match coerce(Value::Object(args), &self.schema) {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let Some(validator) = &self.validator else {
            return Ok(args);
        };
        let instance = Value::Object(args);
        let problems: Vec<String> = validator
            .iter_errors(&instance)
            .take(MAX_ERRORS + 1)
            .map(|error| {
                let at = error.instance_path().to_string();
                let at = at.trim_start_matches('/');
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("field `{}`: {error}", at.replace('/', "."))
                }
            })
            .collect();
        if problems.is_empty() {
            let Value::Object(args) = instance else {
                return Ok(Map::new());
            };
            return Ok(args);
        }
        let mut text = problems
            .iter()
            .take(MAX_ERRORS)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if problems.len() > MAX_ERRORS {
            text.push_str("; and more");
        }
        Err(text.into())
    }
}

/// Applies coercions where `schema` names one type for a value.
fn coerce(value: Value, schema: &Value) -> Value {
    let value = match single_type(schema) {
        Some(kind) => crate::tools::schema::coerce(value, kind),
        None => value,
    };
    match value {
        Value::Object(map) => Value::Object(coerce_object(map, schema)),
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(items.into_iter().map(|v| coerce(v, item_schema)).collect())
        }
        other => other,
    }
}

fn coerce_object(map: Map<String, Value>, schema: &Value) -> Map<String, Value> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required = |key: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|r| r.as_str() == Some(key)))
    };
    map.into_iter()
        .filter_map(|(key, value)| match properties.get(&key) {
            Some(property) if value.is_null() && !required(&key) && !allows_null(property) => None,
            Some(property) => {
                let coerced = coerce(value, property);
                Some((key, coerced))
            }
            None => Some((key, value)),
        })
        .collect()
}

/// The one non-null type `schema` names (`"integer"`, or `["integer", "null"]`).
fn single_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(kind) => Some(kind),
        Value::Array(kinds) => {
            let named: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| *k != "null")
                .collect();
            match named.as_slice() {
                [one] => Some(one),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `schema` lets a value be `null` (its type says so, or it names no type).
fn allows_null(schema: &Value) -> bool {
    match schema.get("type") {
        None => {
            schema.get("anyOf").is_some()
                || schema.get("oneOf").is_some()
                || schema.as_object().is_some_and(Map::is_empty)
        }
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "null"),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn check(schema: &Value, args: Value) -> Result<Value, String> {
        let Value::Object(map) = args else {
            return Err("not an object".into());
        };
        ArgumentSchema::new(schema)
            .check(map)
            .map(Value::Object)
            .map_err(|e| e.0)
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string", "pattern": "^[a-z]+$"},
                "count": {"type": "integer", "minimum": 1},
                "draft": {"type": ["boolean", "null"]},
                "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}},
                "target": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "note": {"type": "string"}
            },
            "required": ["owner"],
            "additionalProperties": false,
            "$defs": {"label": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
        })
    }

    #[test]
    fn coercions_come_before_validation() {
        assert_eq!(
            check(
                &schema(),
                json!({"owner": "me", "count": "3", "draft": "true", "note": null, "labels": [{"id": 2}]})
            ),
            Ok(json!({"owner": "me", "count": 3, "draft": true, "labels": [{"id": 2}]}))
        );
    }

    #[test]
    fn what_our_subset_does_not_cover_is_checked() {
        assert_eq!(
            check(&schema(), json!({"owner": "Me"})),
            Err("field `owner`: \"Me\" does not match \"^[a-z]+$\"".into())
        );
        assert_eq!(
            check(&schema(), json!({"owner": "me", "labels": [{"id": "x"}]})),
            Err("field `labels.0.id`: \"x\" is not of type \"integer\"".into())
        );
        assert_eq!(
            check(&schema(), json!({"owner": "me", "target": true})),
            Err("field `target`: true is not valid under any of the schemas listed in the 'anyOf' keyword".into())
        );
        let extra = check(&schema(), json!({"owner": "me", "extra": 1})).unwrap_err();
        assert!(extra.contains("extra"), "{extra}");
        assert_eq!(
            check(&schema(), json!({})),
            Err("\"owner\" is a required property".into())
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_is_left_to_the_server() {
        let remote = json!({"type": "object", "properties": {"n": {"type": "integer"}},
            "$ref": "https://example.com/schema.json"});
        assert_eq!(
            check(&remote, json!({"n": "5", "x": 1})),
            Ok(json!({"n": 5, "x": 1}))
        );
    }
}
