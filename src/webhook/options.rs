//! `VerifierOptions`: the options of `new WebhookVerifier(options)` that are plain data, decoded with serde (unknown
//! names refused) and checked by [`VerifierOptions::validate`], which decides where keys come from (a key-set URL
//! under the shared https-or-loopback rule, static keys, or a seeded remote set) and every limit. The JS handles
//! (`fetch`, `dedupe`, `tracerProvider`, `meterProvider`, and `now` when it is a function) are taken out by the wasm
//! layer before decoding ([`HANDLES`]).

use crate::json::Json;

use super::error::{ErrorCode, Result, WebhookError};
use super::jwk::KeySet;
use super::key_cache::{self, KeyCache, KeysAge};
use super::{body_limit, claims, JWKS_PATH};
use crate::options::{check_table, FieldError, Kind};

/// Options that are JS handles, not data: the host extracts them (and `now` when it is a function).
pub const HANDLES: [&str; 4] = ["fetch", "dedupe", "tracerProvider", "meterProvider"];

/// Default timeout of a key-set fetch, in ms.
pub const DEFAULT_TIMEOUT_MS: f64 = 5000.0;

const fn invalid(detail: &'static str) -> WebhookError {
    WebhookError::new(ErrorCode::InvalidOptions, detail)
}

/// The data options and their kinds: read by table ([`check_table`]), not by a serde derive, to keep the
/// webhook-only wasm module small. [`VerifierOptions::from_json`] reads the members by their index here: the three
/// texts first, then the eight numbers in the order of its fields.
const TABLE: [(&str, Kind); 11] = [
    ("jwksUrl", Kind::String),
    ("baseUrl", Kind::String),
    ("jwks", Kind::StringOrObject),
    ("clockToleranceSeconds", Kind::Number),
    ("now", Kind::Number),
    ("cacheTtlSeconds", Kind::Number),
    ("cooldownSeconds", Kind::Number),
    ("timeoutMs", Kind::Number),
    ("maxBodyBytes", Kind::Number),
    ("bodyTimeoutMs", Kind::Number),
    ("claimTtlSeconds", Kind::Number),
];

/// The data options of `new WebhookVerifier(...)`: one of `jwksUrl`, `baseUrl`, `jwks` (or `jwks` with a URL, to
/// seed the cache). Decoded as JS gives them (camelCase; numbers are JS numbers); the handles (`fetch`, `dedupe`,
/// a function `now`) are added by `WebhookVerifierOptions`.
#[derive(Clone, Debug, Default)]
#[cfg_attr(
    test,
    derive(ts_rs::TS),
    ts(
        optional_fields,
        rename = "WebhookVerifierDataOptions",
        rename_all = "camelCase"
    )
)]
pub struct VerifierOptions {
    /// Address of the key set, such as `https://api.example/v1/webhooks/jwks.json` (https; http only on this
    /// machine's loopback).
    pub jwks_url: Option<String>,
    /// The API's base address; `/v1/webhooks/jwks.json` is appended.
    pub base_url: Option<String>,
    /// Static keys (no I/O), or with a URL the keys saved by `exportKeys()`, trusted until their saved `staleAt`.
    /// A JWKS object or its JSON text.
    #[cfg_attr(test, ts(type = "JsonWebKeySet | string", optional))]
    pub jwks: Option<Json>,
    /// Allowed clock difference in seconds for `exp`, `iat` and `nbf`, both ways (at least 0). Default 5.
    pub clock_tolerance_seconds: Option<f64>,
    /// Current time in epoch seconds, or a function returning it (for tests). A function clock is a handle the wasm
    /// layer takes out before decoding, so this field holds only a number.
    #[cfg_attr(test, ts(type = "number | (() => number)", optional))]
    pub now: Option<f64>,
    /// Freshness of a fetched key set without `max-age`, in seconds (above 0). Default 3600.
    pub cache_ttl_seconds: Option<f64>,
    /// Minimum seconds between two key set fetches (an unknown kid refetches at most this often; at least 0).
    /// Default 30.
    pub cooldown_seconds: Option<f64>,
    /// Timeout of one key set fetch, in milliseconds (above 0). Default 5000.
    pub timeout_ms: Option<f64>,
    /// Largest body accepted, in bytes. Default 1048576 (1 MiB). The signature header is checked for shape first;
    /// then a `Content-Length` above this is refused without reading, a streamed body is read only up to it (then
    /// the stream is cancelled), and a buffer or string above it is refused before hashing. Refusals have code
    /// `body_too_large`.
    pub max_body_bytes: Option<f64>,
    /// Deadline for reading a request's body stream in `verifyRequest`, in milliseconds (above 0). Default 5000. A
    /// body still arriving after it is refused with code `body_timeout`, and its stream is cancelled.
    pub body_timeout_ms: Option<f64>,
    /// Lease of a dedupe claim, in seconds (1 to 604800). Default 60. `handle` renews it at a third of this while the
    /// handler runs; a crashed instance (no renewal) holds the event this long, after which a redelivery is handled.
    pub claim_ttl_seconds: Option<f64>,
}

/// Where the keys come from.
#[derive(Clone, Debug)]
pub enum KeySource {
    /// Static keys only: never fetched.
    Fixed(KeySet),
    /// A key set fetched from `url`, optionally seeded.
    Remote {
        /// The key set's URL.
        url: String,
        /// Freshness without `Cache-Control`, in seconds.
        ttl: f64,
        /// Least time between fetches, in seconds.
        cooldown: f64,
        /// Keys to start with, and their age when `exportKeys()` saved it.
        seed: Option<(KeySet, Option<KeysAge>)>,
    },
}

/// A verifier's checked configuration.
#[derive(Clone, Debug)]
pub struct VerifierConfig {
    /// Where the keys come from.
    pub keys: KeySource,
    /// Clock tolerance, in seconds.
    pub tolerance: f64,
    /// Key-set fetch timeout, in ms.
    pub timeout_ms: f64,
    /// Largest body, in bytes.
    pub max_body: u64,
    /// Deadline for reading a request's body stream, in ms.
    pub body_timeout_ms: f64,
    /// The fixed clock, when `now` was a number.
    pub fixed_now: Option<f64>,
    /// Lease of a dedupe claim, in seconds.
    pub claim_ttl: f64,
}

impl VerifierConfig {
    /// The key cache this configuration starts with; `now` (epoch seconds) dates a seed without an age.
    pub fn key_cache(&self, now: f64) -> KeyCache {
        match &self.keys {
            KeySource::Fixed(keys) => KeyCache::fixed(keys.clone()),
            KeySource::Remote {
                ttl,
                cooldown,
                seed,
                ..
            } => {
                let mut cache = KeyCache::remote(*ttl, *cooldown);
                if let Some((keys, age)) = seed {
                    cache.seed(keys.clone(), *age, now);
                }
                cache
            }
        }
    }

    /// The key set's URL (`None` for static keys).
    pub fn jwks_url(&self) -> Option<&str> {
        match &self.keys {
            KeySource::Fixed(_) => None,
            KeySource::Remote { url, .. } => Some(url),
        }
    }
}

impl VerifierOptions {
    /// Decodes the options from their JSON form (the wasm layer converts the JS object without its handles; `null`
    /// means "not given").
    ///
    /// # Errors
    /// `invalid_options`: an unknown name, a value of the wrong type, or options that are not an object.
    pub fn from_json(value: Json) -> Result<Self> {
        let members = check_table(value, &TABLE).map_err(table_error)?;
        // By index in TABLE (check_table vouched for each kind): jwksUrl, baseUrl, jwks, then the numbers in order.
        let mut out = Self::default();
        let mut numbers = [None; 8];
        for (index, field) in members {
            match (index, field) {
                (0, Json::String(url)) => out.jwks_url = Some(url),
                (1, Json::String(url)) => out.base_url = Some(url),
                (2, jwks) => out.jwks = Some(jwks),
                (i, Json::Number(n)) => {
                    if let Some(slot) = numbers.get_mut(i.wrapping_sub(3)) {
                        *slot = Some(n);
                    }
                }
                _ => {}
            }
        }
        let [clock, now, cache_ttl, cooldown, timeout, max_body, body_timeout, claim_ttl] = numbers;
        out.clock_tolerance_seconds = clock;
        out.now = now;
        out.cache_ttl_seconds = cache_ttl;
        out.cooldown_seconds = cooldown;
        out.timeout_ms = timeout;
        out.max_body_bytes = max_body;
        out.body_timeout_ms = body_timeout;
        out.claim_ttl_seconds = claim_ttl;
        Ok(out)
    }

    /// Checks every rule and applies the defaults; `now_is_function`: the host was given a function clock.
    ///
    /// # Errors
    /// `invalid_options` for a duration out of range, both or neither of the key sources, a key-set URL that is not
    /// https (http only on loopback), a bad `maxBodyBytes`; `invalid_jwks` for static keys that do not parse or hold
    /// no usable key.
    pub fn validate(&self, now_is_function: bool) -> Result<VerifierConfig> {
        let tolerance = self
            .clock_tolerance_seconds
            .unwrap_or(claims::DEFAULT_CLOCK_TOLERANCE);
        let non_negative = |v: Option<f64>| v.is_none_or(|v| v.is_finite() && v >= 0.0);
        let positive = |v: Option<f64>| v.is_none_or(|v| v.is_finite() && v > 0.0);
        let durations_ok = non_negative(Some(tolerance))
            && positive(self.cache_ttl_seconds)
            && non_negative(self.cooldown_seconds)
            && positive(self.timeout_ms);
        if !durations_ok {
            return Err(invalid(
                "durations must be positive (tolerance and cooldown may be 0)",
            ));
        }
        let max_body = body_limit::parse_option(self.max_body_bytes)?;
        let body_timeout_ms = body_limit::parse_timeout_option(self.body_timeout_ms)?;
        if self.now.is_some_and(|n| !n.is_finite()) || (self.now.is_some() && now_is_function) {
            return Err(invalid("now must be a number or a function"));
        }
        let url = match (&self.jwks_url, &self.base_url) {
            (Some(_), Some(_)) => return Err(invalid("give jwksUrl or baseUrl, not both")),
            (Some(url), None) => Some(url.clone()),
            (None, Some(base)) => Some(format!("{}{JWKS_PATH}", base.trim_end_matches('/'))),
            (None, None) => None,
        };
        if let Some(url) = &url {
            if !crate::url::is_https_or_loopback(url) {
                return Err(invalid(
                    "the key set URL must be https (http only on localhost)",
                ));
            }
        }
        let jwks = self.jwks.as_ref();
        let keys = match (url, jwks) {
            (None, None) => return Err(invalid("give one of jwksUrl, baseUrl or jwks")),
            (None, Some(jwks)) => KeySource::Fixed(static_keys(jwks)?),
            (Some(url), seed) => KeySource::Remote {
                url,
                ttl: self.cache_ttl_seconds.unwrap_or(key_cache::DEFAULT_TTL),
                cooldown: self.cooldown_seconds.unwrap_or(key_cache::DEFAULT_COOLDOWN),
                seed: match seed {
                    Some(jwks) => Some((static_keys(jwks)?, seed_age(jwks))),
                    None => None,
                },
            },
        };
        Ok(VerifierConfig {
            keys,
            tolerance,
            timeout_ms: self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
            max_body,
            body_timeout_ms,
            fixed_now: self.now,
            claim_ttl: super::dedupe::claim_ttl(self.claim_ttl_seconds)?,
        })
    }
}

/// The clock's answer (a `now` function's return): epoch seconds, a finite number.
///
/// # Errors
/// `invalid_options` for anything else (a non-number, NaN, an infinity, or a clock that threw: `None`).
pub fn clock_reading(answer: Option<f64>) -> Result<f64> {
    answer
        .filter(|n| n.is_finite())
        .ok_or(invalid("now() must return epoch seconds"))
}

/// The error of an options object [`check_table`] refused. Its own function, never inlined: a cold start that
/// constructs a verifier from good options never compiles it.
#[cold]
#[inline(never)]
fn table_error(e: FieldError) -> WebhookError {
    match e {
        FieldError::Unknown(_) => {
            invalid("unknown option (see WebhookVerifierOptions for the accepted names)")
        }
        FieldError::WrongType(name) if name == "jwks" => WebhookError::new(
            ErrorCode::InvalidJwks,
            "jwks must be a JWKS object or JSON text",
        ),
        FieldError::WrongType(name) => invalid(expectation(&name)),
        FieldError::NotAnObject => {
            invalid("options must be an object: { jwksUrl } | { baseUrl } | { jwks }")
        }
    }
}

/// What a field of the wrong type should have been.
fn expectation(field: &str) -> &'static str {
    match field {
        "jwksUrl" | "baseUrl" => "jwksUrl and baseUrl must be strings",
        "jwks" => "jwks must be a JWKS object or JSON text",
        "clockToleranceSeconds" => "clockToleranceSeconds must be a number",
        "now" => "now must be a number or a function",
        "cacheTtlSeconds" => "cacheTtlSeconds must be a number",
        "cooldownSeconds" => "cooldownSeconds must be a number",
        "timeoutMs" => "timeoutMs must be a number",
        "maxBodyBytes" => "maxBodyBytes must be a number",
        "bodyTimeoutMs" => "bodyTimeoutMs must be a number",
        "claimTtlSeconds" => "claimTtlSeconds must be a number",
        _ => "an option has the wrong type",
    }
}

fn static_keys(jwks: &Json) -> Result<KeySet> {
    // Read from the value itself (no serializing it back to text, which would link a float printer into the wasm).
    let keys = match jwks {
        Json::String(text) => KeySet::from_json(text.as_bytes())?,
        Json::Object(_) => KeySet::from_value(jwks)?,
        _ => {
            return Err(WebhookError::new(
                ErrorCode::InvalidJwks,
                "jwks must be a JWKS object or JSON text",
            ))
        }
    };
    if keys.is_empty() {
        return Err(WebhookError::new(
            ErrorCode::InvalidJwks,
            "jwks holds no usable ES256 P-256 key",
        ));
    }
    Ok(keys)
}

/// The `fetchedAt` / `staleAt` that `exportKeys()` saved with a key set (an object, or its JSON text).
fn seed_age(jwks: &Json) -> Option<KeysAge> {
    let parsed;
    let doc = match jwks {
        Json::String(text) => {
            parsed = Json::parse_lone_surrogates_as_null(text)?;
            &parsed
        }
        other => other,
    };
    Some(KeysAge {
        fetched_at: doc.get("fetchedAt")?.as_f64()?,
        stale_at: doc.get("staleAt")?.as_f64()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const JWK: &str = r#"{"kty":"EC","crv":"P-256","kid":"k1","use":"sig","alg":"ES256",
        "x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}"#;

    fn jwks() -> Value {
        json!({"keys": [serde_json::from_str::<Value>(JWK).unwrap()]})
    }

    fn config(v: Value) -> Result<VerifierConfig> {
        VerifierOptions::from_json(Json::from(&v))?.validate(false)
    }

    fn detail(r: Result<VerifierConfig>) -> (String, String) {
        let e = r.unwrap_err();
        (e.code().as_str().to_owned(), e.to_string())
    }

    #[test]
    fn the_body_read_deadline_is_an_option_with_a_default() {
        let c = config(json!({"baseUrl": "https://api.example"})).unwrap();
        assert_eq!(c.body_timeout_ms, body_limit::DEFAULT_BODY_TIMEOUT_MS);
        let c = config(json!({"baseUrl": "https://api.example", "bodyTimeoutMs": 250})).unwrap();
        assert_eq!(c.body_timeout_ms, 250.0);
        for bad in [json!(0), json!(-5), json!("NaN"), json!("soon")] {
            let (code, _) = detail(config(
                json!({"baseUrl": "https://api.example", "bodyTimeoutMs": bad}),
            ));
            assert_eq!(code, "invalid_options", "{bad}");
        }
    }

    #[test]
    fn a_clock_must_answer_finite_epoch_seconds() {
        assert_eq!(clock_reading(Some(1_800_000_000.5)), Ok(1_800_000_000.5));
        for bad in [
            None,
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
        ] {
            assert_eq!(
                clock_reading(bad).unwrap_err().code(),
                ErrorCode::InvalidOptions,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_base_url_names_the_service_key_set() {
        let c = config(json!({"baseUrl": "https://api.example/"})).unwrap();
        assert_eq!(
            c.jwks_url(),
            Some("https://api.example/v1/webhooks/jwks.json")
        );
        assert_eq!(c.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert_eq!(c.max_body, body_limit::DEFAULT_MAX_BODY_BYTES);
    }

    #[test]
    fn key_set_urls_follow_the_shared_https_or_loopback_rule() {
        for ok in [
            "https://k.example/jwks",
            "http://localhost:4010/jwks",
            "http://127.0.0.2/j",
        ] {
            assert!(config(json!({ "jwksUrl": ok })).is_ok(), "{ok}");
        }
        for bad in [
            "http://k.example/jwks",
            "http://127.0.0.1.evil.example/j",
            "https://user@k.example/",
        ] {
            let (code, text) = detail(config(json!({ "jwksUrl": bad })));
            assert_eq!(code, "invalid_options", "{bad}");
            assert!(text.contains("https"), "{text}");
        }
    }

    #[test]
    fn exactly_one_key_source_is_required_or_a_url_with_a_seed() {
        assert!(detail(config(json!({}))).1.contains("give one of"));
        assert!(detail(config(
            json!({"jwksUrl": "https://a.example/j", "baseUrl": "https://a.example"})
        ))
        .1
        .contains("not both"));
        assert!(matches!(
            config(json!({ "jwks": jwks() })).unwrap().keys,
            KeySource::Fixed(_)
        ));
        let seeded = config(json!({"baseUrl": "https://a.example", "jwks": jwks()})).unwrap();
        assert!(matches!(
            seeded.keys,
            KeySource::Remote { seed: Some(_), .. }
        ));
    }

    #[test]
    fn an_exported_seed_keeps_its_age_as_object_or_text() {
        let mut doc = jwks();
        doc["fetchedAt"] = json!(1_000.0);
        doc["staleAt"] = json!(4_600.0);
        for seed in [doc.clone(), Value::String(doc.to_string())] {
            let c = config(json!({"baseUrl": "https://a.example", "jwks": seed})).unwrap();
            let KeySource::Remote {
                seed: Some((_, age)),
                ..
            } = c.keys
            else {
                panic!()
            };
            let age = age.unwrap();
            assert_eq!((age.fetched_at, age.stale_at), (1_000.0, 4_600.0));
        }
    }

    #[test]
    fn static_keys_that_hold_no_usable_key_are_invalid_jwks() {
        assert_eq!(
            detail(config(json!({"jwks": {"keys": []}}))).0,
            "invalid_jwks"
        );
        assert_eq!(detail(config(json!({"jwks": 7}))).0, "invalid_jwks");
        assert_eq!(
            detail(config(json!({"jwks": "not json"}))).0,
            "invalid_jwks"
        );
    }

    #[test]
    fn durations_and_limits_are_checked() {
        for bad in [
            json!({"clockToleranceSeconds": -1}),
            json!({"cacheTtlSeconds": 0}),
            json!({"cooldownSeconds": -0.5}),
            json!({"timeoutMs": 0}),
        ] {
            let mut v = bad.clone();
            v["baseUrl"] = json!("https://a.example");
            assert!(detail(config(v)).1.contains("durations"), "{bad}");
        }
        let (code, _) = detail(config(
            json!({"baseUrl": "https://a.example", "maxBodyBytes": 1.5}),
        ));
        assert_eq!(code, "invalid_options");
        let ok = config(
            json!({"baseUrl": "https://a.example", "cooldownSeconds": 0, "clockToleranceSeconds": 0}),
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn unknown_names_and_wrong_types_are_refused() {
        let (code, text) = detail(config(
            json!({"baseUrl": "https://a.example", "jwks_url": "x"}),
        ));
        assert_eq!(code, "invalid_options");
        assert!(text.contains("unknown option"), "{text}");
        let (_, text) = detail(config(
            json!({"baseUrl": "https://a.example", "timeoutMs": "NaN"}),
        ));
        assert!(text.contains("timeoutMs must be a number"), "{text}");
        let (_, text) = detail(config(json!({"baseUrl": 5})));
        assert!(text.contains("must be strings"), "{text}");
    }

    #[test]
    fn a_fixed_clock_is_a_finite_number_and_not_also_a_function() {
        let c = config(json!({"baseUrl": "https://a.example", "now": 1_800_000_000})).unwrap();
        assert_eq!(c.fixed_now, Some(1_800_000_000.0));
        let both = VerifierOptions::from_json(Json::from(
            &json!({"baseUrl": "https://a.example", "now": 5}),
        ))
        .unwrap()
        .validate(true);
        assert!(detail(both).1.contains("now must be"));
    }
}
