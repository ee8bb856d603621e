//! Any bytes served as the key set: parsing must return Ok or a coded error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(set) = docauto::webhook::jwk::KeySet::from_json(data) {
        // A parsed set round-trips through its JWK form.
        let again = docauto::webhook::jwk::KeySet::from_value(&set.to_value());
        assert!(again.map(|s| s.len() == set.len()).unwrap_or(false));
    }
});
