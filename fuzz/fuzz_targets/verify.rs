//! The whole verification over arbitrary (header, body) pairs against a fixed key set (RFC 7515 appendix A.3's
//! public key under kid `k1`): never a panic, and never an acceptance, since a mutating fuzzer cannot compute an
//! ECDSA signature over its own claims: an `Ok` would mean the signature check let a forgery through.
#![no_main]

use libfuzzer_sys::fuzz_target;

const JWKS: &[u8] = br#"{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","use":"sig","alg":"ES256",
"x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(keys) = docauto::webhook::jwk::KeySet::from_json(JWKS) else {
        return;
    };
    let split = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let (header, body) = data.split_at(split);
    let Ok(header) = std::str::from_utf8(header) else {
        return;
    };
    let verifier = docauto::webhook::Verifier::new(keys);
    assert!(verifier.verify(body, header, 1_790_000_000.0).is_err());
});
