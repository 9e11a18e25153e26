//! Checks tool arguments against the tool's JSON Schema (§4.2 step 3).
//!
//! Supports the subset our tool schemas use: `type` (object, string, integer, number,
//! boolean, array), `properties`, `required`, `enum`, `items`, `minimum`, `maximum`. Unknown
//! fields are errors. Coercions a model commonly needs are applied: `"60"` → 60 for
//! integers and numbers, `"true"`/`"false"` for booleans, `60.0` → 60, and a number where a
//! string is expected.

use serde_json::{Map, Value};

use crate::model::types::json_kind;

/// Which argument is wrong and what was expected, e.g. ``missing required field `command` ``;
/// the model reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaError(pub String);

impl From<String> for SchemaError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for SchemaError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// Validates and coerces `args` against an object `schema`.
///
/// # Errors
/// Which field is wrong and what was expected, e.g. ``missing required field `command` ``.
pub(crate) fn validate(
    args: Map<String, Value>,
    schema: &Value,
) -> Result<Map<String, Value>, SchemaError> {
    match check(Value::Object(args), schema, "")? {
        Value::Object(map) => Ok(map),
        other => Err(format!("expected an object, found {}", json_kind(&other)).into()),
    }
}

fn check(value: Value, schema: &Value, at: &str) -> Result<Value, SchemaError> {
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    let value = coerce(value, kind);
    let field = |what: String| {
        if at.is_empty() {
            what
        } else {
            format!("field `{at}`: {what}")
        }
    };
    let matches = match kind {
        "object" => value.is_object(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        _ => true,
    };
    if !matches {
        return Err(field(format!(
            "expected {}, found {}",
            article(kind),
            json_kind(&value)
        ))
        .into());
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(&value)
    {
        let options: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(field(format!(
            "expected one of {}, found {value}",
            options.join(", ")
        ))
        .into());
    }
    if let Some(number) = value.as_f64() {
        let bound = |key| schema.get(key).and_then(Value::as_f64);
        if let Some(min) = bound("minimum").filter(|min| number < *min) {
            return Err(field(format!("must be at least {min}, found {number}")).into());
        }
        if let Some(max) = bound("maximum").filter(|max| number > *max) {
            return Err(field(format!("must be at most {max}, found {number}")).into());
        }
    }
    match value {
        Value::Object(map) => check_object(map, schema, at).map(Value::Object),
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| check(item, item_schema, &format!("{at}[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        other => Ok(other),
    }
}

fn check_object(
    mut map: Map<String, Value>,
    schema: &Value,
    at: &str,
) -> Result<Map<String, Value>, SchemaError> {
    let path = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if map.get(key).is_none_or(Value::is_null) {
                return Err(format!("missing required field `{}`", path(key)).into());
            }
        }
    }
    // Optional fields sent as null mean "not given".
    map.retain(|key, value| !(value.is_null() && properties.contains_key(key)));
    if let Some(unknown) = map.keys().find(|k| !properties.contains_key(*k)) {
        let known: Vec<&str> = properties.keys().map(String::as_str).collect();
        return Err(format!(
            "unknown field `{}`; expected {}",
            path(unknown),
            known.join(", ")
        )
        .into());
    }
    let mut out = Map::new();
    for (key, value) in map {
        let checked = check(value, &properties[&key], &path(&key))?;
        out.insert(key, checked);
    }
    Ok(out)
}

/// Applies the coercion a model commonly needs for a value whose schema `type` is `kind`
/// (`"60"` → 60 for `integer`, ...); anything else is returned as it is.
pub(crate) fn coerce(value: Value, kind: &str) -> Value {
    match (kind, value) {
        ("integer", Value::String(s)) => match s.trim().parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::String(s),
        },
        ("integer", Value::Number(n))
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && !n.is_i64() && !n.is_u64()) =>
        {
            // Truncation is exact: the fraction is zero (checked above).
            #[expect(clippy::cast_possible_truncation, reason = "whole number checked")]
            let whole = n.as_f64().map_or(0, |f| f as i64);
            Value::from(whole)
        }
        ("number", Value::String(s)) => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => {
                serde_json::Number::from_f64(f).map_or(Value::String(s), Value::Number)
            }
            _ => Value::String(s),
        },
        ("boolean", Value::String(s)) => match s.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(s),
        },
        ("string", Value::Number(n)) => Value::String(n.to_string()),
        (_, other) => other,
    }
}

fn article(kind: &str) -> String {
    match kind {
        "object" | "array" | "integer" => format!("an {kind}"),
        other => format!("a {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout": {"type": "integer", "minimum": 1, "maximum": 600},
                "todos": {"type": "array", "items": {"type": "object",
                    "properties": {"status": {"type": "string", "enum": ["pending", "done"]}},
                    "required": ["status"]}}
            },
            "required": ["command"]
        })
    }

    fn run(args: Value) -> Result<Value, String> {
        let Value::Object(map) = args else {
            return Err("not an object".into());
        };
        validate(map, &schema()).map(Value::Object).map_err(|e| e.0)
    }

    #[test]
    fn coercions() {
        assert_eq!(
            run(json!({"command": "ls", "timeout": "60"})),
            Ok(json!({"command": "ls", "timeout": 60}))
        );
        assert_eq!(
            run(json!({"command": "ls", "timeout": 60.0})),
            Ok(json!({"command": "ls", "timeout": 60}))
        );
        assert_eq!(
            run(json!({"command": "ls", "timeout": null})),
            Ok(json!({"command": "ls"}))
        );
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(
            run(json!({})),
            Err("missing required field `command`".into())
        );
        assert_eq!(
            run(json!({"command": 1.5e300, "x": 1})),
            Err("unknown field `x`; expected command, timeout, todos".into())
        );
        assert_eq!(
            run(json!({"command": ["ls"]})),
            Err("field `command`: expected a string, found an array".into())
        );
        assert_eq!(
            run(json!({"command": "ls", "timeout": 0})),
            Err("field `timeout`: must be at least 1, found 0".into())
        );
        assert_eq!(
            run(json!({"command": "ls", "todos": [{"status": "later"}]})),
            Err(
                "field `todos[0].status`: expected one of \"pending\", \"done\", found \"later\""
                    .into()
            )
        );
    }
}
