//! `ClientOptions`: the options of `new DocAuto(options)` that are plain data, read from JSON against their table
//! ([`CLIENT_OPTIONS`]: unknown names refused, the field at fault named) and checked by [`ClientOptions::validate`], which applies the environment
//! fallbacks and the browser guard and builds the [`ClientConfig`]. The JS handles (`fetch`, `logger`,
//! `tracerProvider`, `meterProvider`) are taken out by the wasm layer before decoding ([`HANDLES`]).

use serde::Deserialize;
use serde_json::{Map, Value};

use super::params::{check_value, Field, Kind, Table, ANY_OBJECT};
use super::{ApiError, CallOptions, ClientConfig, HostFacts, LogLevel};
use crate::options::{whole_number, MAX_SAFE_INTEGER};

/// Options that are JS handles, not data: the host extracts them and checks their shape.
pub const HANDLES: [&str; 4] = ["fetch", "logger", "tracerProvider", "meterProvider"];

/// Largest `maxRetries` (client-wide and per call).
pub const MAX_RETRIES_LIMIT: f64 = 100.0;

/// The data options of `new DocAuto(...)`, as JS gives them (camelCase; numbers are JS numbers); the handles
/// (`fetch`, `logger`) are added by `ClientOptions`.
#[derive(Clone, Default, Deserialize)]
#[cfg_attr(
    test,
    derive(ts_rs::TS),
    ts(optional_fields, rename = "ClientDataOptions")
)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientOptions {
    /// The secret API key. Default: `DOCAUTO_API_KEY` from the environment (Node, Bun, Deno).
    pub api_key: Option<String>,
    /// The API's address (an absolute http(s) URL, optionally with a path prefix); the key is sent to this origin
    /// only. Default: `DOCAUTO_BASE_URL` from the environment.
    pub base_url: Option<String>,
    /// Retries after the first attempt (0 to 100). Default: `2`.
    pub max_retries: Option<f64>,
    /// Per-attempt timeout in milliseconds (at least 1). Default: `600000` (10 minutes).
    pub timeout_ms: Option<f64>,
    /// Largest `Retry-After` honoured, in milliseconds; a longer one ends the call with the error, `retryAfter` set.
    /// Default: `60000`.
    pub max_retry_after_ms: Option<f64>,
    /// Headers added to every request to `baseUrl` (never `authorization` or `idempotency-key`; never to other
    /// hosts). Values must be strings. Default: none.
    #[cfg_attr(test, ts(type = "Record<string, string>", optional))]
    pub default_headers: Option<Map<String, Value>>,
    /// Allows construction in a browser page or worker, where the secret key would be visible to anyone. Default:
    /// `false`.
    pub dangerously_allow_browser: Option<bool>,
    /// How much the client logs: `off`, `error` (calls that failed after their retries), `warn` (and each retry),
    /// `info` (and every call's end), `debug` (and every attempt: method, path, status, request id, attempt and
    /// elapsed ms). Default: `DOCAUTO_LOG` from the environment, else `warn`.
    #[cfg_attr(test, ts(type = "LogLevel", optional))]
    pub log_level: Option<String>,
}

/// The fields of [`ClientOptions`] and their JSON kinds (a native test checks them against the struct).
pub const CLIENT_OPTIONS: Table = Table {
    fields: &[
        Field::opt("apiKey", Kind::Str),
        Field::opt("baseUrl", Kind::Str),
        Field::opt("maxRetries", Kind::Number),
        Field::opt("timeoutMs", Kind::Number),
        Field::opt("maxRetryAfterMs", Kind::Number),
        Field::opt("defaultHeaders", ANY_OBJECT),
        Field::opt("dangerouslyAllowBrowser", Kind::Bool),
        Field::opt("logLevel", Kind::Str),
    ],
    keep_others: false,
};

/// Prints neither the key nor header values.
impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("base_url", &self.base_url)
            .field("max_retries", &self.max_retries)
            .field("timeout_ms", &self.timeout_ms)
            .field("max_retry_after_ms", &self.max_retry_after_ms)
            .field(
                "default_headers",
                &self
                    .default_headers
                    .as_ref()
                    .map(|h| h.keys().collect::<Vec<_>>()),
            )
            .field("dangerously_allow_browser", &self.dangerously_allow_browser)
            .field("log_level", &self.log_level)
            .finish()
    }
}

/// What the host knows that the rules need: its environment variables and whether it is a browser.
pub struct ClientHost<'a> {
    /// `process.env[name]` or `Deno.env.get(name)`; `None` where the runtime has no environment.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The host's facts for the browser guard.
    pub facts: HostFacts,
}

fn invalid(field: &str, message: &str) -> ApiError {
    ApiError::invalid_config(field, message)
}

fn whole(value: Option<f64>, field: &str, min: f64, max: f64) -> Result<Option<u64>, ApiError> {
    match value {
        None => Ok(None),
        Some(n) => whole_number(n, min, max)
            .map(Some)
            .ok_or_else(|| invalid(field, "must be a whole number >= 0")),
    }
}

impl ClientOptions {
    /// Decodes the options from their JSON form (the wasm layer converts the JS object without its handles;
    /// `null` values mean "not given", as `undefined` does).
    ///
    /// # Errors
    /// `invalid_config` naming the option: unknown, or of the wrong type; `options` for a non-object.
    pub fn from_json(value: Value) -> Result<Self, ApiError> {
        let mut map = match value {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            _ => return Err(invalid("options", "must be an object")),
        };
        map.retain(|_, v| !v.is_null());
        let field = |name: &str| CLIENT_OPTIONS.fields.iter().find(|f| f.name == name);
        // As serde's `deny_unknown_fields` read did: an unknown name first, then the first field of a wrong type,
        // both in the object's order.
        if let Some(name) = map.keys().find(|name| field(name).is_none()) {
            return Err(invalid(name, "is not a client option"));
        }
        for (name, value) in &mut map {
            if let Some(f) = field(name) {
                if check_value(value, f.kind, name).is_err() {
                    return Err(invalid(name, expectation(name)));
                }
            }
        }
        let mut text = |name: &str| match map.remove(name) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let (api_key, base_url, log_level) = (text("apiKey"), text("baseUrl"), text("logLevel"));
        let number = |name: &str| map.get(name).and_then(Value::as_f64);
        Ok(Self {
            api_key,
            base_url,
            max_retries: number("maxRetries"),
            timeout_ms: number("timeoutMs"),
            max_retry_after_ms: number("maxRetryAfterMs"),
            dangerously_allow_browser: map.get("dangerouslyAllowBrowser").and_then(Value::as_bool),
            default_headers: match map.remove("defaultHeaders") {
                Some(Value::Object(headers)) => Some(headers),
                _ => None,
            },
            log_level,
        })
    }

    /// Checks every rule, applies the environment fallbacks and the defaults, and builds the configuration.
    ///
    /// # Errors
    /// `browser_not_allowed` in a browser without `dangerouslyAllowBrowser: true`; `invalid_config` with the
    /// option's path for a missing key or base URL, a number out of range, a bad header or log level.
    pub fn validate(&self, host: &ClientHost<'_>) -> Result<ClientConfig, ApiError> {
        if host.facts.is_browser() && self.dangerously_allow_browser != Some(true) {
            return Err(ApiError::validation(
                "browser_not_allowed",
                "dangerouslyAllowBrowser",
                "running in a browser would expose your secret API key to anyone who opens the page; \
                 call the API from a server, or pass dangerouslyAllowBrowser: true if you understand the risk",
            ));
        }
        let api_key = self
            .api_key
            .clone()
            .or_else(|| (host.env)("DOCAUTO_API_KEY"))
            .ok_or_else(|| invalid("apiKey", "is required (pass apiKey or set DOCAUTO_API_KEY)"))?;
        let base_url = self
            .base_url
            .clone()
            .or_else(|| (host.env)("DOCAUTO_BASE_URL"))
            .ok_or_else(|| {
                invalid(
                    "baseUrl",
                    "is required (pass baseUrl or set DOCAUTO_BASE_URL)",
                )
            })?;
        let mut config = ClientConfig::new(&api_key, &base_url)?;
        if let Some(n) = whole(self.max_retries, "maxRetries", 0.0, MAX_RETRIES_LIMIT)? {
            config.max_retries = n as u32;
        }
        if let Some(n) = whole(self.timeout_ms, "timeoutMs", 0.0, MAX_SAFE_INTEGER)? {
            if n == 0 {
                return Err(invalid("timeoutMs", "must be greater than 0"));
            }
            config.timeout_ms = n;
        }
        if let Some(n) = whole(
            self.max_retry_after_ms,
            "maxRetryAfterMs",
            0.0,
            MAX_SAFE_INTEGER,
        )? {
            config.max_retry_after_ms = n;
        }
        if let Some(headers) = &self.default_headers {
            let mut out = Vec::with_capacity(headers.len());
            for (name, value) in headers {
                let Some(text) = value.as_str() else {
                    return Err(invalid(
                        &format!("defaultHeaders.{name}"),
                        "must be a string",
                    ));
                };
                out.push((name.clone(), text.to_owned()));
            }
            config.set_default_headers(out)?;
        }
        if let Some(level) = self.log_level.clone().or_else(|| (host.env)("DOCAUTO_LOG")) {
            config.log_level = LogLevel::parse(&level)?;
        }
        Ok(config)
    }
}

/// The per-call option names (a method may accept more, such as `until` or `deadlineMs`, which it reads itself).
pub const CALL_OPTION_NAMES: [&str; 5] = [
    "wait",
    "idempotencyKey",
    "timeoutMs",
    "maxRetries",
    "signal",
];

/// A per-call option as the host read it. Per-call options are read on every call, so the host reads the four
/// data fields directly (no JSON round trip) and the core decides what they mean.
#[derive(Clone, Debug, PartialEq)]
pub enum RawOption {
    /// Not given (`undefined`).
    Absent,
    /// A JS number (possibly `NaN` or infinite).
    Number(f64),
    /// A string.
    Text(String),
    /// Anything else (`null`, an object, a boolean).
    Other,
}

/// The per-call options of one method call, as the host read them.
#[derive(Clone, Debug)]
pub struct CallOptionsInput<'a> {
    /// Every option name given, to refuse unknown ones.
    pub names: Vec<String>,
    /// The method's own option names.
    pub extra: &'a [&'a str],
    /// `wait`.
    pub wait: RawOption,
    /// `idempotencyKey`.
    pub idempotency_key: RawOption,
    /// `timeoutMs`.
    pub timeout_ms: RawOption,
    /// `maxRetries`.
    pub max_retries: RawOption,
}

fn request_error(field: &str, message: &str) -> ApiError {
    ApiError::validation("invalid_request", field, message)
}

fn call_whole(raw: &RawOption, field: &str, max: f64) -> Result<Option<u64>, ApiError> {
    match raw {
        RawOption::Absent => Ok(None),
        RawOption::Number(n) => whole_number(*n, 0.0, max)
            .map(Some)
            .ok_or_else(|| request_error(field, "must be a whole number >= 0")),
        _ => Err(request_error(field, "must be a whole number >= 0")),
    }
}

/// Checks the per-call options: no unknown name, `idempotencyKey` a string, `wait` and `maxRetries` whole numbers
/// in range, `timeoutMs` a whole number above 0.
///
/// # Errors
/// `invalid_request` naming the option.
pub fn call_options(input: &CallOptionsInput<'_>) -> Result<CallOptions, ApiError> {
    if let Some(name) = input
        .names
        .iter()
        .find(|n| !CALL_OPTION_NAMES.contains(&n.as_str()) && !input.extra.contains(&n.as_str()))
    {
        return Err(request_error(
            name,
            "is not a request option (wait, idempotencyKey, timeoutMs, maxRetries, signal)",
        ));
    }
    let idempotency_key = match &input.idempotency_key {
        RawOption::Absent => None,
        RawOption::Text(key) => Some(key.clone()),
        _ => return Err(request_error("idempotencyKey", "must be a string")),
    };
    let wait = call_whole(&input.wait, "wait", f64::from(u32::MAX))?.map(|w| w as u32);
    let max_retries =
        call_whole(&input.max_retries, "maxRetries", MAX_RETRIES_LIMIT)?.map(|w| w as u32);
    let timeout_ms = call_whole(&input.timeout_ms, "timeoutMs", MAX_SAFE_INTEGER)?;
    if timeout_ms == Some(0) {
        return Err(request_error("timeoutMs", "must be greater than 0"));
    }
    Ok(CallOptions {
        wait,
        idempotency_key,
        timeout_ms,
        max_retries,
    })
}

/// What a field of the wrong type should have been.
fn expectation(field: &str) -> &'static str {
    match field {
        "maxRetries" | "timeoutMs" | "maxRetryAfterMs" => "must be a whole number >= 0",
        "dangerouslyAllowBrowser" => "must be a boolean",
        "defaultHeaders" => "must be an object of strings",
        _ => "must be a string",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SERVER: HostFacts = HostFacts {
        page: false,
        worker_scope: false,
        server_runtime: true,
    };
    const PAGE: HostFacts = HostFacts {
        page: true,
        worker_scope: false,
        server_runtime: false,
    };

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn config(value: Value) -> Result<ClientConfig, ApiError> {
        ClientOptions::from_json(value)?.validate(&ClientHost {
            env: &no_env,
            facts: SERVER,
        })
    }

    fn field_of(e: &ApiError) -> (String, String) {
        (e.code.clone(), e.to_string())
    }

    fn base() -> Value {
        json!({"apiKey": "sk_test", "baseUrl": "https://api.example"})
    }

    fn with(extra: Value) -> Value {
        let mut v = base();
        for (k, x) in extra.as_object().cloned().unwrap_or_default() {
            v[k] = x;
        }
        v
    }

    #[test]
    fn defaults_apply_when_only_key_and_base_url_are_given() {
        let c = config(base()).unwrap();
        assert_eq!(c.max_retries, super::super::DEFAULT_MAX_RETRIES);
        assert_eq!(c.timeout_ms, super::super::DEFAULT_TIMEOUT_MS);
        assert_eq!(c.base_url(), "https://api.example");
    }

    /// The doc comment of a field as the declarations show it (the JSDoc just before `name?:`).
    fn declared_doc(name: &str) -> String {
        use ts_rs::TS;
        let decl = ClientOptions::decl();
        let at = decl.find(&format!("{name}?:")).unwrap();
        let start = decl[..at].rfind("/**").unwrap();
        decl[start..at]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_declared_defaults_are_the_ones_applied() {
        for (name, default) in [
            ("maxRetries", u64::from(super::super::DEFAULT_MAX_RETRIES)),
            ("timeoutMs", super::super::DEFAULT_TIMEOUT_MS),
            ("maxRetryAfterMs", super::super::DEFAULT_MAX_RETRY_AFTER_MS),
        ] {
            let doc = declared_doc(name);
            assert!(
                doc.contains(&format!("Default: `{default}`")),
                "{name}: {doc}"
            );
        }
        assert_eq!(LogLevel::default(), LogLevel::Warn);
        assert!(declared_doc("logLevel").contains("else `warn`."));
    }

    #[test]
    fn null_means_not_given() {
        let c = config(with(json!({"maxRetries": null, "logLevel": null}))).unwrap();
        assert_eq!(c.max_retries, super::super::DEFAULT_MAX_RETRIES);
    }

    #[test]
    fn an_unknown_option_is_refused_by_name() {
        let e = config(with(json!({"api_key": "sk_x"}))).unwrap_err();
        assert_eq!(e.code, "invalid_config");
        assert!(e.to_string().contains("api_key"), "{e}");
        assert!(!e.to_string().contains("sk_x"), "{e}");
    }

    #[test]
    fn a_wrong_type_names_the_field_and_says_what_it_must_be() {
        for (field, value, expect) in [
            ("apiKey", json!(42), "must be a string"),
            ("maxRetries", json!("3"), "whole number"),
            ("maxRetries", json!(1.5), "whole number"),
            ("maxRetries", json!(-1), "whole number"),
            ("maxRetries", json!(101), "whole number"),
            ("timeoutMs", json!(0), "greater than 0"),
            ("dangerouslyAllowBrowser", json!("yes"), "boolean"),
            ("defaultHeaders", json!("x"), "object of strings"),
            ("logLevel", json!("loud"), "off, error"),
        ] {
            let e = config(with(json!({ field: value }))).unwrap_err();
            let (code, text) = field_of(&e);
            assert_eq!(code, "invalid_config", "{field}");
            assert!(
                text.contains(field) && text.contains(expect),
                "{field}: {text}"
            );
        }
    }

    #[test]
    fn a_header_value_that_is_not_a_string_is_named_by_its_path() {
        let e = config(with(json!({"defaultHeaders": {"x-team": 7}}))).unwrap_err();
        assert!(e.to_string().contains("defaultHeaders.x-team"), "{e}");
    }

    #[test]
    fn key_and_base_url_fall_back_to_the_environment() {
        let env = |name: &str| match name {
            "DOCAUTO_API_KEY" => Some("sk_env".to_owned()),
            "DOCAUTO_BASE_URL" => Some("http://127.0.0.1:4010/".to_owned()),
            "DOCAUTO_LOG" => Some("debug".to_owned()),
            _ => None,
        };
        let c = ClientOptions::default()
            .validate(&ClientHost {
                env: &env,
                facts: SERVER,
            })
            .unwrap();
        assert_eq!(c.base_url(), "http://127.0.0.1:4010");
        assert_eq!(c.log_level, LogLevel::Debug);
        let missing = ClientOptions::default()
            .validate(&ClientHost {
                env: &no_env,
                facts: SERVER,
            })
            .unwrap_err();
        assert!(missing.to_string().contains("apiKey"), "{missing}");
    }

    #[test]
    fn a_browser_needs_the_explicit_opt_in() {
        let page = |v: Value| {
            ClientOptions::from_json(v)?.validate(&ClientHost {
                env: &no_env,
                facts: PAGE,
            })
        };
        assert_eq!(page(base()).unwrap_err().code, "browser_not_allowed");
        assert!(page(with(json!({"dangerouslyAllowBrowser": true}))).is_ok());
    }

    #[test]
    fn debug_never_prints_the_key_or_header_values() {
        let o =
            ClientOptions::from_json(with(json!({"defaultHeaders": {"x-token": "tok_secret"}})))
                .unwrap();
        let text = format!("{o:?}");
        assert!(
            !text.contains("sk_test") && !text.contains("tok_secret"),
            "{text}"
        );
    }

    #[test]
    fn a_non_object_is_refused() {
        let e = ClientOptions::from_json(json!("sk_live")).unwrap_err();
        assert!(
            e.to_string().contains("options") && !e.to_string().contains("sk_live"),
            "{e}"
        );
    }

    fn input(names: &[&str]) -> CallOptionsInput<'static> {
        CallOptionsInput {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            extra: &["until"],
            wait: RawOption::Absent,
            idempotency_key: RawOption::Absent,
            timeout_ms: RawOption::Absent,
            max_retries: RawOption::Absent,
        }
    }

    #[test]
    fn call_options_read_whole_numbers_and_a_string_key() {
        let mut i = input(&[
            "wait",
            "idempotencyKey",
            "timeoutMs",
            "maxRetries",
            "until",
            "signal",
        ]);
        i.wait = RawOption::Number(30.0);
        i.idempotency_key = RawOption::Text("k-1".into());
        i.timeout_ms = RawOption::Number(1_500.0);
        i.max_retries = RawOption::Number(0.0);
        let o = call_options(&i).unwrap();
        assert_eq!(
            (
                o.wait,
                o.idempotency_key.as_deref(),
                o.timeout_ms,
                o.max_retries
            ),
            (Some(30), Some("k-1"), Some(1_500), Some(0))
        );
    }

    #[test]
    fn a_bad_call_option_is_named() {
        let unknown = call_options(&input(&["idempotency_key"])).unwrap_err();
        assert!(unknown.to_string().contains("idempotency_key"), "{unknown}");
        type Set = fn(&mut CallOptionsInput<'static>);
        let cases: [(&str, Set); 6] = [
            ("wait", |i| i.wait = RawOption::Number(1.5)),
            ("maxRetries", |i| i.max_retries = RawOption::Number(101.0)),
            ("timeoutMs", |i| i.timeout_ms = RawOption::Number(0.0)),
            ("timeoutMs", |i| i.timeout_ms = RawOption::Number(f64::NAN)),
            ("timeoutMs", |i| i.timeout_ms = RawOption::Other),
            ("idempotencyKey", |i| {
                i.idempotency_key = RawOption::Number(7.0)
            }),
        ];
        for (field, set) in cases {
            let mut i = input(&[]);
            set(&mut i);
            let e = call_options(&i).unwrap_err();
            assert_eq!(e.code, "invalid_request", "{field}");
            assert!(e.to_string().contains(field), "{field}: {e}");
        }
    }
}
