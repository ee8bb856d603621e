//! When to fetch the key set: the sans-IO policy of the remote JWKS cache.
//!
//! The I/O layer asks [`KeyCache::lookup`] for a `kid`; it answers with the key, or tells it to fetch. Rules:
//! - a fetched set is fresh for the response's `max-age` (clamped to 60 s .. 24 h) or, without one, the configured
//!   ttl (default one hour);
//! - an unknown `kid` triggers a refresh, but fetches (of any reason) are at least `cooldown` apart (default 30 s),
//!   so a flood of tokens with random kids cannot become a flood of fetches;
//! - when a refresh fails, the keys already held stay in use (stale-if-error) for at most [`STALE_IF_ERROR`] past
//!   their freshness; after that, or when no key set was ever obtained, `jwks_unavailable` is reported;
//! - a cache keeps its age across isolates: [`KeyCache::export`] gives the keys with when they were fetched and when
//!   they go stale, and [`KeyCache::seed`] restores exactly that remaining freshness. A seed without an age (a plain
//!   JWKS) or past its stale time is fetched again before it is trusted (it serves only as the stale-if-error
//!   fallback).
//!
//! Single flight (concurrent lookups sharing one fetch, safe across edge requests) is decided by
//! [`super::key_fetch`]; the I/O layer only runs the fetch and the waits it asks for.

use super::error::{err, ErrorCode, Result};
use super::jwk::{KeySet, PublicKey};

/// Default freshness of a fetched key set, in seconds.
pub const DEFAULT_TTL: f64 = 3600.0;
/// Default minimum gap between two fetches, in seconds.
pub const DEFAULT_COOLDOWN: f64 = 30.0;
/// Bounds applied to a response's `max-age`, in seconds.
pub const MAX_AGE_BOUNDS: (f64, f64) = (60.0, 86_400.0);
/// How long past its freshness a key set is still used when refreshing it fails: one day.
pub const STALE_IF_ERROR: f64 = 86_400.0;

/// The age of a held key set: when it was fetched and when it goes stale (epoch seconds of the verifier's clock).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeysAge {
    /// When the key set was fetched from the service.
    pub fetched_at: f64,
    /// When it stops being fresh (then it is fetched again before use).
    pub stale_at: f64,
}

/// Answer of a lookup.
#[derive(Debug)]
pub enum Lookup<'a> {
    /// The key to verify with.
    Found(&'a PublicKey),
    /// Fetch the key set, then look up again with `after_fetch = true`.
    Fetch,
    /// No such key, and no fetch is allowed now.
    Unknown,
    /// No key set is held and none may be fetched now.
    Unavailable,
}

/// The cache state: static keys, or a remote set with its fetch history.
#[derive(Debug)]
pub struct KeyCache {
    keys: Option<KeySet>,
    remote: bool,
    ttl: f64,
    cooldown: f64,
    fresh_until: f64,
    fetched_at: Option<f64>,
    last_attempt: Option<f64>,
}

impl KeyCache {
    /// A cache over static keys: never fetches.
    pub fn fixed(keys: KeySet) -> Self {
        Self {
            keys: Some(keys),
            remote: false,
            ttl: 0.0,
            cooldown: 0.0,
            fresh_until: f64::INFINITY,
            fetched_at: None,
            last_attempt: None,
        }
    }

    /// A cache of a remote key set, empty until the first fetch.
    pub fn remote(ttl: f64, cooldown: f64) -> Self {
        Self {
            keys: None,
            remote: true,
            ttl,
            cooldown,
            fresh_until: f64::NEG_INFINITY,
            fetched_at: None,
            last_attempt: None,
        }
    }

    /// Seeds a remote cache with keys saved earlier (for example by a previous isolate) with the age they were saved
    /// with: fresh until `age.stale_at`, bounded by `fetched_at + MAX_AGE_BOUNDS.1` (a seed cannot claim more
    /// freshness than any response could give). Without an age, or with a `fetched_at` in the future (beyond
    /// `now + 300 s`), the seed counts as stale: it is fetched again before it is trusted.
    pub fn seed(&mut self, keys: KeySet, age: Option<KeysAge>, now: f64) {
        self.keys = Some(keys);
        match age.filter(|a| {
            a.fetched_at.is_finite() && a.stale_at.is_finite() && a.fetched_at <= now + 300.0
        }) {
            Some(a) => {
                self.fetched_at = Some(a.fetched_at);
                self.fresh_until = a.stale_at.min(a.fetched_at + MAX_AGE_BOUNDS.1);
            }
            None => {
                self.fetched_at = None;
                self.fresh_until = f64::NEG_INFINITY;
            }
        }
    }

    /// The keys held and their age, for saving (`exportKeys`); `None` before any key set is held. Static keys and
    /// seeds without an age have no `fetched_at`.
    pub fn export(&self) -> Option<(&KeySet, Option<KeysAge>)> {
        let keys = self.keys.as_ref()?;
        let age = self.fetched_at.map(|fetched_at| KeysAge {
            fetched_at,
            stale_at: self.fresh_until,
        });
        Some((keys, age))
    }

    /// Whether the keys come from a URL.
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// The keys held now, if any.
    pub fn keys(&self) -> Option<&KeySet> {
        self.keys.as_ref()
    }

    fn may_fetch(&self, now: f64) -> bool {
        self.remote
            && self
                .last_attempt
                .is_none_or(|t| now - t >= self.cooldown || now < t)
    }

    /// Finds the key for `kid`, or says to fetch. `after_fetch` is true on the lookup that follows a fetch
    /// (successful or not), which never asks to fetch again.
    pub fn lookup(&self, kid: &str, now: f64, after_fetch: bool) -> Lookup<'_> {
        let may_fetch = !after_fetch && self.may_fetch(now);
        match &self.keys {
            None if may_fetch => Lookup::Fetch,
            None => Lookup::Unavailable,
            Some(_) if may_fetch && now >= self.fresh_until => Lookup::Fetch,
            // Stale-if-error is bounded: keys past their freshness by more than STALE_IF_ERROR are not used.
            Some(_) if self.remote && now >= self.fresh_until + STALE_IF_ERROR => {
                Lookup::Unavailable
            }
            Some(keys) => match keys.get(kid) {
                Some(key) => Lookup::Found(key),
                None if may_fetch => Lookup::Fetch,
                None => Lookup::Unknown,
            },
        }
    }

    /// Whether a forced refresh may start now (only the cooldown is ignored by a forced refresh).
    pub fn can_refresh(&self) -> bool {
        self.remote
    }

    /// Records the start of a fetch.
    pub fn on_fetch_started(&mut self, now: f64) {
        self.last_attempt = Some(now);
    }

    /// Applies a fetch response.
    ///
    /// # Errors
    /// `jwks_unavailable` when the status is not 2xx or the body is not a key set; the keys held before stay.
    pub fn on_response(
        &mut self,
        now: f64,
        status: u16,
        cache_control: Option<&str>,
        body: &[u8],
    ) -> Result<()> {
        if !(200..300).contains(&status) {
            return Err(err(
                ErrorCode::JwksUnavailable,
                "key set endpoint answered with a non-2xx status",
            ));
        }
        let keys = KeySet::from_json(body).map_err(|_| {
            err(
                ErrorCode::JwksUnavailable,
                "key set endpoint did not answer with a JWKS document",
            )
        })?;
        let ttl = cache_control.and_then(max_age).map_or(self.ttl, |age| {
            age.clamp(MAX_AGE_BOUNDS.0, MAX_AGE_BOUNDS.1)
        });
        self.keys = Some(keys);
        self.fresh_until = now + ttl;
        self.fetched_at = Some(now);
        Ok(())
    }
}

/// The `max-age` of a Cache-Control value in seconds; `no-store`/`no-cache` count as the lower bound.
pub fn max_age(cache_control: &str) -> Option<f64> {
    let mut found = None;
    for directive in cache_control.split(',') {
        let directive = directive.trim().to_ascii_lowercase();
        if directive == "no-store" || directive == "no-cache" {
            return Some(0.0);
        }
        if let Some(value) = directive.strip_prefix("max-age=") {
            found = value.trim_matches('"').parse::<u32>().ok().map(f64::from);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const JWKS: &str = r#"{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"k1"}]}"#;

    fn fetched(now: f64, cc: Option<&str>) -> KeyCache {
        let mut c = KeyCache::remote(DEFAULT_TTL, DEFAULT_COOLDOWN);
        assert!(matches!(c.lookup("k1", now, false), Lookup::Fetch));
        c.on_fetch_started(now);
        c.on_response(now, 200, cc, JWKS.as_bytes()).unwrap();
        c
    }

    #[test]
    fn first_lookup_fetches_then_finds() {
        let c = fetched(0.0, None);
        assert!(matches!(c.lookup("k1", 1.0, false), Lookup::Found(_)));
    }

    #[test]
    fn cache_is_fresh_for_an_hour_by_default() {
        let c = fetched(0.0, None);
        assert!(matches!(c.lookup("k1", 3599.0, false), Lookup::Found(_)));
        assert!(matches!(c.lookup("k1", 3600.0, false), Lookup::Fetch));
    }

    #[test]
    fn max_age_sets_freshness_within_bounds() {
        let c = fetched(0.0, Some("public, max-age=600"));
        assert!(matches!(c.lookup("k1", 599.0, false), Lookup::Found(_)));
        assert!(matches!(c.lookup("k1", 600.0, false), Lookup::Fetch));
        let c = fetched(0.0, Some("no-store"));
        assert!(matches!(c.lookup("k1", 59.0, false), Lookup::Found(_)));
        let c = fetched(0.0, Some("max-age=9999999"));
        assert!(matches!(c.lookup("k1", 86_399.0, false), Lookup::Found(_)));
    }

    #[test]
    fn unknown_kid_refetches_at_most_once_per_cooldown() {
        let c = fetched(0.0, None);
        assert!(matches!(c.lookup("nope", 10.0, false), Lookup::Unknown));
        assert!(matches!(c.lookup("nope", 30.0, false), Lookup::Fetch));
        assert!(matches!(c.lookup("nope", 30.0, true), Lookup::Unknown));
    }

    #[test]
    fn failed_refresh_keeps_stale_keys() {
        let mut c = fetched(0.0, None);
        c.on_fetch_started(4000.0);
        let e = c.on_response(4000.0, 503, None, b"").unwrap_err();
        assert_eq!(e.code(), ErrorCode::JwksUnavailable);
        assert!(matches!(c.lookup("k1", 4000.0, true), Lookup::Found(_)));
        assert!(
            matches!(c.lookup("k1", 4010.0, false), Lookup::Found(_)),
            "cooldown holds refetch back"
        );
    }

    #[test]
    fn never_fetched_and_failing_is_unavailable_until_cooldown() {
        let mut c = KeyCache::remote(DEFAULT_TTL, DEFAULT_COOLDOWN);
        c.on_fetch_started(0.0);
        assert!(c.on_response(0.0, 200, None, b"<html>").is_err());
        assert!(matches!(c.lookup("k1", 0.0, true), Lookup::Unavailable));
        assert!(matches!(c.lookup("k1", 5.0, false), Lookup::Unavailable));
        assert!(matches!(c.lookup("k1", 31.0, false), Lookup::Fetch));
    }

    #[test]
    fn fixed_keys_never_fetch() {
        let keys = KeySet::from_json(JWKS.as_bytes()).unwrap();
        let c = KeyCache::fixed(keys);
        assert!(matches!(c.lookup("k1", 1e12, false), Lookup::Found(_)));
        assert!(matches!(c.lookup("k2", 0.0, false), Lookup::Unknown));
        let _ = json!({});
    }

    #[test]
    fn parses_cache_control() {
        assert_eq!(max_age("max-age=60"), Some(60.0));
        assert_eq!(
            max_age("public, MAX-AGE=3600, must-revalidate"),
            Some(3600.0)
        );
        assert_eq!(max_age("no-cache"), Some(0.0));
        assert_eq!(max_age("public"), None);
        assert_eq!(max_age("max-age=-1"), None);
    }

    fn keys() -> KeySet {
        KeySet::from_json(JWKS.as_bytes()).unwrap()
    }

    #[test]
    fn export_then_seed_keeps_the_remaining_freshness() {
        let c = fetched(1000.0, None);
        let (_, age) = c.export().unwrap();
        let age = age.unwrap();
        assert_eq!(
            age,
            KeysAge {
                fetched_at: 1000.0,
                stale_at: 4600.0
            }
        );
        let mut seeded = KeyCache::remote(DEFAULT_TTL, DEFAULT_COOLDOWN);
        seeded.seed(keys(), Some(age), 2000.0);
        assert!(matches!(
            seeded.lookup("k1", 4599.0, false),
            Lookup::Found(_)
        ));
        assert!(matches!(seeded.lookup("k1", 4600.0, false), Lookup::Fetch));
        assert_eq!(seeded.export().unwrap().1, Some(age));
    }

    #[test]
    fn an_expired_seed_is_fetched_before_it_is_trusted() {
        let age = KeysAge {
            fetched_at: 0.0,
            stale_at: 3600.0,
        };
        let mut c = KeyCache::remote(DEFAULT_TTL, DEFAULT_COOLDOWN);
        c.seed(keys(), Some(age), 3600.0 + 7200.0);
        assert!(matches!(c.lookup("k1", 10_800.0, false), Lookup::Fetch));
        // The fetch failed: the seed is the stale-if-error fallback.
        c.on_fetch_started(10_800.0);
        assert!(matches!(c.lookup("k1", 10_800.0, true), Lookup::Found(_)));
    }

    #[test]
    fn a_seed_without_age_or_from_the_future_is_stale() {
        for age in [
            None,
            Some(KeysAge {
                fetched_at: 1e12,
                stale_at: 1e12 + 3600.0,
            }),
        ] {
            let mut c = KeyCache::remote(DEFAULT_TTL, DEFAULT_COOLDOWN);
            c.seed(keys(), age, 100.0);
            assert!(matches!(c.lookup("k1", 100.0, false), Lookup::Fetch));
            assert_eq!(c.export().unwrap().1, None);
        }
    }

    #[test]
    fn a_seed_cannot_claim_more_than_a_day_of_freshness() {
        let mut c = KeyCache::remote(DEFAULT_TTL, DEFAULT_COOLDOWN);
        c.seed(
            keys(),
            Some(KeysAge {
                fetched_at: 0.0,
                stale_at: 1e9,
            }),
            0.0,
        );
        assert!(matches!(c.lookup("k1", 86_399.0, false), Lookup::Found(_)));
        assert!(matches!(c.lookup("k1", 86_400.0, false), Lookup::Fetch));
    }

    #[test]
    fn stale_if_error_is_bounded_to_a_day() {
        let mut c = fetched(0.0, None);
        c.on_fetch_started(3600.0 + STALE_IF_ERROR - 1.0);
        assert!(matches!(
            c.lookup("k1", 3600.0 + STALE_IF_ERROR - 1.0, true),
            Lookup::Found(_)
        ));
        c.on_fetch_started(3600.0 + STALE_IF_ERROR);
        assert!(matches!(
            c.lookup("k1", 3600.0 + STALE_IF_ERROR, true),
            Lookup::Unavailable
        ));
    }
}
