//! Who answers "is this `r || s` valid under this key": the one place that decides, per call kind.
//!
//! | runtime (package entry) | `verify` | `verifySync` |
//! | --- | --- | --- |
//! | Node (`node.js`, `index.cjs`) | `node:crypto` | `node:crypto` |
//! | Bun (`node.js`), Deno (`deno.js`) | WebCrypto | p256 in wasm |
//! | workerd, Vercel edge, browsers | WebCrypto | p256 in wasm |
//! | no WebCrypto (insecure browser context) | p256 in wasm | p256 in wasm |
//!
//! Only the Node entry hands `node:crypto` over (`__useNodeCrypto`, before any export is used; it reads it with
//! `process.getBuiltinModule`). Bun and Deno could, but measured by `tests/js/cold-start.mjs` it costs their cold
//! start more than the whole verifier (Deno starts its Node compatibility layer on the first touch of `process` or
//! `node:crypto`; Bun loads its `node:crypto` module), and their WebCrypto verifies as fast or faster (Bun: about 5 000
//! against 2 000 verifications/s). The other entries never import it (bundlers and edge runtimes would refuse it). The host only answers; the
//! core parsed the token (shape, scalar ranges) before, and maps the answer to a verdict after
//! ([`crate::webhook::jwk::PublicKey::verify_host_answer`]). A host that throws or refuses the key answers `None`,
//! and p256 checks in wasm instead.
//!
//! "p256 in wasm" is a second module, `docauto-webhooks-p256.wasm` (the core's [`crate::webhook::jwk::verify_prehash`]
//! and nothing else): most runtimes never need it, so the verifier's own module carries no curve arithmetic beyond
//! a key set's point check, and a cold start compiles less. Every entry hands over a loader with `__useP256`;
//! it is called on the first check that no host answered, and makes the module's instance (synchronously: from the
//! `.wasm` import of workerd and the edge entry, from the file in Node, Deno and Bun, from the module compiled with
//! the page's in browsers).
//!
//! The body's SHA-256 is computed where it is cheapest (measured in Node by `cargo xtask bench`, microseconds per
//! body: 745 B 1.4 by `node:crypto` `hash` against 3.2 by sha2 in wasm including the copy into wasm, 64 KiB 35
//! against 174, 1 MiB 583 against 3 051; WebCrypto's async `digest` 14.5 / 65 / 1 893): by `node:crypto` wherever
//! it was handed over, with the body kept in JS (never copied into wasm memory); by sha2 in wasm elsewhere.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::platform::Subtle;
use crate::webhook::jwk::PublicKey;
use crate::webhook::jws::CompactJws;

#[wasm_bindgen(module = "/src/wasm/host_crypto.js")]
extern "C" {
    /// `globalThis.crypto.subtle`, when the runtime has it (host_crypto.js).
    #[wasm_bindgen(catch, js_name = hostSubtle)]
    fn host_subtle() -> Result<JsValue, JsValue>;
    /// Starts importing a point `x || y` as a verification key: the entry `verify_with` takes (host_crypto.js).
    #[wasm_bindgen(catch, js_name = importKey)]
    fn import_key(subtle: &Subtle, point: &[u8]) -> Result<JsValue, JsValue>;
    /// WebCrypto's verdict under an entry of `import_key`, once its import has finished (host_crypto.js).
    #[wasm_bindgen(catch, js_name = verifyWith)]
    fn verify_with(
        subtle: &Subtle,
        entry: &JsValue,
        signature: &[u8],
        data: &[u8],
    ) -> Result<js_sys::Promise, JsValue>;
    /// `verify_with`, and WebCrypto's SHA-256 of `body` beside it: `[verdict, digest]` (host_crypto.js).
    #[wasm_bindgen(catch, js_name = verifyAndDigest)]
    fn verify_and_digest(
        subtle: &Subtle,
        entry: &JsValue,
        signature: &[u8],
        data: &[u8],
        body: &[u8],
    ) -> Result<js_sys::Promise, JsValue>;
    /// `node:crypto`'s verify options (`{ key, dsaEncoding }`) for a point `x || y` (host_crypto.js).
    #[wasm_bindgen(catch, js_name = nodeKey)]
    fn node_key(crypto: &NodeCrypto, point: &[u8]) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen]
extern "C" {
    /// The part of `node:crypto` used here: `verify` and `hash` (and `createPublicKey`, in host_crypto.js).
    #[derive(Clone)]
    pub type NodeCrypto;
    #[wasm_bindgen(catch, method, js_name = verify)]
    fn node_verify(
        this: &NodeCrypto,
        algorithm: &JsValue,
        data: &[u8],
        key: &JsValue,
        signature: &[u8],
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, js_name = hash)]
    fn node_hash(
        this: &NodeCrypto,
        algorithm: &JsValue,
        data: &JsValue,
        encoding: &JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, js_name = hash)]
    fn node_hash_bytes(
        this: &NodeCrypto,
        algorithm: &JsValue,
        data: &[u8],
        encoding: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

#[derive(Clone)]
struct Handed {
    crypto: NodeCrypto,
    for_verify: bool,
    /// Whether it has `hash` (Node 20.12+, Bun, Deno); without it bodies are copied and hashed in wasm.
    hashes: bool,
    /// The arguments of `verify` and `hash`: `"sha256"` and `"buffer"`.
    sha256: JsValue,
    buffer: JsValue,
}

thread_local! {
    static NODE_CRYPTO: RefCell<Option<Handed>> = const { RefCell::new(None) };
    /// The entry's loader of the P-256 module, then (once it answered) the module's `verifyP256`.
    static P256: RefCell<P256> = const { RefCell::new(P256::Absent) };
}

/// The second module's state.
enum P256 {
    Absent,
    Loader(js_sys::Function),
    Loaded(js_sys::Function),
}

/// Called by every entry of `docauto/webhooks` right after `initSync`: `load()` makes the P-256 module's instance
/// and returns its `verifyP256(input)` (`input`: point `x || y`, SHA-256 of the signing input, `r || s`; 160 bytes).
/// Hidden from the package's exports.
#[wasm_bindgen(js_name = __useP256)]
pub fn use_p256(load: JsValue) {
    if load.is_function() {
        P256.with(|p| *p.borrow_mut() = P256::Loader(load.unchecked_into()));
    }
}

/// p256's verdict on `token` under `key`, from the P-256 module (made on first use); `None` when it cannot be
/// loaded or its call fails.
fn p256_verdict(key: &PublicKey, token: &CompactJws<'_>) -> Option<bool> {
    let verify = P256.with(|p| match &*p.borrow() {
        P256::Absent => None,
        P256::Loaded(f) => Some(Ok(f.clone())),
        P256::Loader(load) => Some(Err(load.clone())),
    })?;
    let verify = match verify {
        Ok(f) => f,
        Err(load) => {
            let f = load.call0(&JsValue::UNDEFINED).ok()?;
            let f: js_sys::Function = f.is_function().then(|| f.unchecked_into())?;
            P256.with(|p| *p.borrow_mut() = P256::Loaded(f.clone()));
            f
        }
    };
    let mut input = [0u8; 160];
    let (point, rest) = input.split_at_mut(64);
    let (digest, signature) = rest.split_at_mut(32);
    point.copy_from_slice(key.point());
    digest.copy_from_slice(&crate::webhook::claims::sha256(token.signing_input()));
    signature.copy_from_slice(&token.signature_bytes());
    let input = js_sys::Uint8Array::from(&input[..]);
    verify.call1(&JsValue::UNDEFINED, &input).ok()?.as_bool()
}

/// Called by the Node entry right after `initSync`: `crypto` is `node:crypto`; `forVerify` says
/// whether `verify` uses it too (else only `verifySync`). Hidden from the package's exports.
#[wasm_bindgen(js_name = __useNodeCrypto)]
pub fn use_node_crypto(crypto: JsValue, for_verify: bool) {
    let hashes = js_sys::Reflect::get(&crypto, &"hash".into()).is_ok_and(|h| h.is_function());
    let handed = crypto.is_object().then(|| Handed {
        crypto: crypto.unchecked_into(),
        for_verify,
        hashes,
        sha256: JsValue::from_str("sha256"),
        buffer: JsValue::from_str("buffer"),
    });
    NODE_CRYPTO.with(|n| *n.borrow_mut() = handed);
}

/// Which host checks a signature.
enum Host<'a> {
    Node(&'a Handed),
    WebCrypto(&'a Subtle),
    Wasm,
}

/// The kind of call asking.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `verify` / `verifyRequest`: may wait for a Promise.
    Async,
    /// `verifySync`: must answer now.
    Sync,
}

/// WebCrypto's pending answer ([`HostCrypto::pending_answer`]).
pub enum PendingAnswer {
    /// Resolves to the verdict (or rejects).
    Verdict(js_sys::Promise),
    /// Resolves to `[verdict, digest]`, either `undefined` when its call failed; never rejects.
    Digesting(js_sys::Promise),
}

impl PendingAnswer {
    /// Whether the body's digest comes with the answer (so it is not hashed in wasm meanwhile).
    pub fn digests(&self) -> bool {
        matches!(self, Self::Digesting(_))
    }

    /// The Promise to continue (read what it settles with by [`settled`]).
    pub fn into_promise(self) -> js_sys::Promise {
        match self {
            Self::Verdict(p) | Self::Digesting(p) => p,
        }
    }
}

/// What a [`PendingAnswer`]'s Promise settled with: the verdict (`None`: it failed, and p256 checks instead) and
/// the body's SHA-256 when WebCrypto computed it.
pub fn settled(value: &JsValue) -> (Option<bool>, Option<[u8; 32]>) {
    if !js_sys::Array::is_array(value) {
        return (value.as_bool(), None);
    }
    let pair: &js_sys::Array = value.unchecked_ref();
    let digest = pair
        .get(1)
        .dyn_into::<js_sys::Uint8Array>()
        .ok()
        .filter(|d| d.length() == 32)
        .map(|d| {
            let mut out = [0u8; 32];
            d.copy_to(&mut out);
            out
        });
    (pair.get(0).as_bool(), digest)
}

/// The signature hosts of one verifier and their per-kid keys (cleared when the key set changes).
pub struct HostCrypto {
    node: Option<Handed>,
    subtle: Option<Subtle>,
    node_keys: KidMap,
    crypto_keys: KidMap,
}

impl HostCrypto {
    /// The hosts of this runtime: `node:crypto` if the entry handed it over, WebCrypto if the runtime has it.
    pub fn detect() -> Self {
        Self {
            node: NODE_CRYPTO.with(|n| n.borrow().clone()),
            subtle: host_subtle()
                .ok()
                .filter(JsValue::is_object)
                .map(JsCast::unchecked_into),
            node_keys: KidMap::default(),
            crypto_keys: KidMap::default(),
        }
    }

    /// The decision: who answers for a call of this kind.
    fn host(&self, call: Call) -> Host<'_> {
        match (&self.node, &self.subtle, call) {
            (Some(node), _, Call::Sync) => Host::Node(node),
            (Some(node), _, Call::Async) if node.for_verify => Host::Node(node),
            (_, Some(subtle), Call::Async) => Host::WebCrypto(subtle),
            _ => Host::Wasm,
        }
    }

    /// Whether a call of this kind is answered without waiting (so `verify` needs no Promise of its own).
    pub fn answers_now(&self, call: Call) -> bool {
        !matches!(self.host(call), Host::WebCrypto(_))
    }

    /// The answer of a host that answers now (`None`: p256 checks; also for a WebCrypto host, which cannot).
    pub fn answer_now(&self, call: Call, key: &PublicKey, token: &CompactJws<'_>) -> Option<bool> {
        match self.host(call) {
            Host::Node(node) => self.node_answer(node, key, token),
            Host::WebCrypto(_) | Host::Wasm => None,
        }
    }

    /// The answer of the host for `call`, waiting for WebCrypto where it is the host.
    pub async fn answer(
        &self,
        call: Call,
        key: &PublicKey,
        token: &CompactJws<'_>,
    ) -> Option<bool> {
        match self.host(call) {
            Host::WebCrypto(_) => self.webcrypto_answer(key, token).await,
            _ => self.answer_now(call, key, token),
        }
    }

    /// WebCrypto's pending answer, when WebCrypto answers calls of this kind: chained on the kid's key import when
    /// it is still running (started here at the key's first use), so the first `verify` of a held key needs no
    /// Rust future. `None` when another host answers, or when WebCrypto threw (p256 checks instead).
    ///
    /// `body` (in wasm memory) is hashed by WebCrypto too when this call starts the key's import: a verifier's
    /// first delivery then never runs sha2 in wasm, whose code V8 would compile for that one call. The
    /// Promise then resolves to `[verdict, digest]` ([`PendingAnswer::Digesting`]); read it with [`settled`].
    pub fn pending_answer(
        &self,
        call: Call,
        key: &PublicKey,
        token: &CompactJws<'_>,
        body: Option<&[u8]>,
    ) -> Option<PendingAnswer> {
        let Host::WebCrypto(subtle) = self.host(call) else {
            return None;
        };
        let (entry, started) = self.crypto_key(subtle, key)?;
        let signature = token.signature_bytes();
        match body {
            Some(body) if started => {
                verify_and_digest(subtle, &entry, &signature, token.signing_input(), body)
                    .ok()
                    .map(PendingAnswer::Digesting)
            }
            _ => verify_with(subtle, &entry, &signature, token.signing_input())
                .ok()
                .map(PendingAnswer::Verdict),
        }
    }

    /// The kid's key entry (`host_crypto.js`), its import started at its first use and kept until the key set
    /// changes, and whether this call started it. An import that fails is kept too: each check under it answers
    /// `None` and p256 checks instead.
    fn crypto_key(&self, subtle: &Subtle, key: &PublicKey) -> Option<(JsValue, bool)> {
        if let Some(entry) = self.crypto_keys.get(key.kid()) {
            return Some((entry, false));
        }
        let entry = import_key(subtle, key.point()).ok()?;
        self.crypto_keys.insert(key.kid(), entry.clone());
        Some((entry, true))
    }

    /// p256's answer, from the P-256 module: asked when no host answered (there is none for this call, or it threw).
    pub fn p256_answer(&self, key: &PublicKey, token: &CompactJws<'_>) -> Option<bool> {
        p256_verdict(key, token)
    }

    /// Whether bodies stay in JS and are hashed by the host (`node:crypto`): the decision of where to hash.
    pub fn keeps_bodies(&self) -> bool {
        self.hasher().is_some()
    }

    fn hasher(&self) -> Option<&Handed> {
        self.node.as_ref().filter(|n| n.hashes)
    }

    /// SHA-256 of a body kept in JS (a string or an ArrayBuffer view), by `node:crypto`; `None` without it or when
    /// it throws (the caller then copies the body into wasm and hashes it there).
    pub fn digest_kept(&self, body: &JsValue) -> Option<[u8; 32]> {
        let node = self.hasher()?;
        digest_bytes(
            node.crypto
                .node_hash(&node.sha256, body, &node.buffer)
                .ok()?,
        )
    }

    /// SHA-256 of a body already in wasm memory, by `node:crypto` (reading it in place); `None` without it.
    pub fn digest_copied(&self, body: &[u8]) -> Option<[u8; 32]> {
        let node = self.hasher()?;
        digest_bytes(
            node.crypto
                .node_hash_bytes(&node.sha256, body, &node.buffer)
                .ok()?,
        )
    }

    /// Forgets the per-kid keys (the key set changed: a kid may now name another key).
    pub fn clear(&self) {
        self.node_keys.clear();
        self.crypto_keys.clear();
    }

    fn node_answer(&self, node: &Handed, key: &PublicKey, token: &CompactJws<'_>) -> Option<bool> {
        let cached = self.node_keys.get(key.kid());
        let options = match cached {
            Some(options) => options,
            None => {
                let options = node_key(&node.crypto, key.point()).ok()?;
                self.node_keys.insert(key.kid(), options.clone());
                options
            }
        };
        node.crypto
            .node_verify(
                &node.sha256,
                token.signing_input(),
                &options,
                &token.signature_bytes(),
            )
            .ok()?
            .as_bool()
    }

    async fn webcrypto_answer(&self, key: &PublicKey, token: &CompactJws<'_>) -> Option<bool> {
        let verdict = self.pending_answer(Call::Async, key, token, None)?;
        JsFuture::from(verdict.into_promise()).await.ok()?.as_bool()
    }
}

/// A host's per-kid values (a `CryptoKey` entry, `node:crypto`'s verify options). A key set holds a handful of keys and
/// only a key it holds gets an entry (the map is cleared when the set changes), so a scan beats hashing the kid, and
/// no hash table is compiled on a cold start's first verification.
#[derive(Default)]
struct KidMap(RefCell<Vec<(String, JsValue)>>);

impl KidMap {
    fn get(&self, kid: &str) -> Option<JsValue> {
        let entries = self.0.borrow();
        entries
            .iter()
            .find(|(k, _)| k == kid)
            .map(|(_, v)| v.clone())
    }

    fn insert(&self, kid: &str, value: JsValue) {
        let mut entries = self.0.borrow_mut();
        match entries.iter_mut().find(|(k, _)| k == kid) {
            Some(entry) => entry.1 = value,
            None => entries.push((kid.to_owned(), value)),
        }
    }

    fn clear(&self) {
        self.0.borrow_mut().clear();
    }
}

/// The 32 bytes of a digest `Buffer`; `None` for anything else.
fn digest_bytes(value: JsValue) -> Option<[u8; 32]> {
    if !js_sys::ArrayBuffer::is_view(&value) {
        return None;
    }
    let view: js_sys::Uint8Array = value.unchecked_into();
    let mut out = [0u8; 32];
    (view.length() == 32).then(|| view.copy_to(&mut out))?;
    Some(out)
}
