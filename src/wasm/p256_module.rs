//! `docauto-webhooks-p256.wasm`, the second module of `docauto/webhooks`: p256's ECDSA check and nothing else. The
//! verifier's module asks it (through the loader its entry handed over, see [`super::host_crypto`]) only when no
//! host crypto answered: `verifySync` in workerd, Vercel's edge runtime, browsers, Deno and Bun, or a host that threw.
//! Built alone with the feature `webhooks-p256` (`cargo xtask build`).

use wasm_bindgen::prelude::*;

/// Whether `input` (160 bytes: the key's point `x || y`, the SHA-256 of the signing input, the signature `r || s`)
/// holds a valid ES256 signature; `false` for any other length.
#[wasm_bindgen(js_name = verifyP256)]
pub fn verify_p256(input: &[u8]) -> bool {
    let (Some(point), Some(digest), Some(signature)) = (
        input.get(..64).and_then(|b| <&[u8; 64]>::try_from(b).ok()),
        input
            .get(64..96)
            .and_then(|b| <&[u8; 32]>::try_from(b).ok()),
        input.get(96..).and_then(|b| <&[u8; 64]>::try_from(b).ok()),
    ) else {
        return false;
    };
    crate::webhook::jwk::verify_prehash(point, digest, signature)
}
