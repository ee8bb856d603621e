//! Any string given as `x-svc-signature`: parsing must return Ok or a coded error, never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(token) = std::str::from_utf8(data) {
        if let Ok(jws) = docauto::webhook::jws::parse_compact(token) {
            // Accessors of a parsed token must not panic either.
            let _ = (jws.kid(), jws.signing_input(), jws.payload(), jws.signature_bytes());
        }
    }
});
