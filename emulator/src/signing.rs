//! ES256 signing of webhook deliveries and the served key set (JWKS).
//!
//! Token format, fixed to the letter because the SDK verifies it:
//! `b64url(JOSE header) . b64url(claims) . b64url(r || s)`, the header exactly
//! `{"alg":"ES256","kid":"<kid>"}`, the claims `{bodySha256, eventId, exp, iat, iss, processingId, type}`
//! with `exp = iat + 300`, the signature the raw 64-byte `r || s` of ECDSA P-256 over SHA-256.

use crate::util::b64url;
use p256::ecdsa::{signature::Signer as _, Signature, SigningKey};
use sha2::{Digest, Sha256};

/// Lifetime of a delivery token in seconds.
pub const TOKEN_LIFETIME_SECS: i64 = 300;
/// Issuer claim.
pub const ISSUER: &str = "svc-process";

/// The service's signing key and its key id.
#[derive(Clone)]
pub struct Signer {
    key: SigningKey,
    /// Key id (`kid`), derived from the public key.
    pub kid: String,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("kid", &self.kid).finish()
    }
}

impl Signer {
    /// A fresh random key.
    pub fn generate() -> Signer {
        Signer::from_key(SigningKey::random(&mut crate::host::OsRng))
    }

    /// Restores a key from its 32-byte secret scalar.
    ///
    /// # Errors
    /// `None` when the bytes are not a valid scalar.
    pub fn from_secret(bytes: &[u8]) -> Option<Signer> {
        SigningKey::from_slice(bytes).ok().map(Signer::from_key)
    }

    fn from_key(key: SigningKey) -> Signer {
        let point = key.verifying_key().to_encoded_point(false);
        let digest = Sha256::digest(point.as_bytes());
        let kid = format!("emu-{}", hex(digest.get(..8).unwrap_or_default()));
        Signer { key, kid }
    }

    /// The 32-byte secret scalar (for the state file only).
    pub fn secret(&self) -> Vec<u8> {
        self.key.to_bytes().to_vec()
    }

    /// The JWKS document.
    pub fn jwks(&self) -> serde_json::Value {
        let point = self.key.verifying_key().to_encoded_point(false);
        let x = point.x().map(|x| b64url(x)).unwrap_or_default();
        let y = point.y().map(|y| b64url(y)).unwrap_or_default();
        serde_json::json!({"keys": [{
            "kty": "EC", "crv": "P-256", "x": x, "y": y, "use": "sig", "alg": "ES256", "kid": self.kid,
        }]})
    }

    /// Signs one delivery attempt of `body` at `iat` (unix seconds).
    pub fn token(
        &self,
        processing_id: &str,
        event_id: &str,
        kind: &str,
        body: &[u8],
        iat: i64,
    ) -> String {
        let header = format!("{{\"alg\":\"ES256\",\"kid\":{}}}", json_str(&self.kid));
        let claims = serde_json::json!({
            "iss": ISSUER,
            "processingId": processing_id,
            "eventId": event_id,
            "type": kind,
            "bodySha256": b64url(&Sha256::digest(body)),
            "iat": iat,
            "exp": iat + TOKEN_LIFETIME_SECS,
        });
        let signing_input = format!(
            "{}.{}",
            b64url(header.as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let sig: Signature = self.key.sign(signing_input.as_bytes());
        format!("{signing_input}.{}", b64url(&sig.to_bytes()))
    }
}

fn json_str(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use p256::ecdsa::{signature::Verifier, VerifyingKey};

    #[test]
    fn token_verifies_against_jwks_and_header_is_exact() {
        let s = Signer::generate();
        let body = br#"{"eventId":"evt_1"}"#;
        let t = s.token("agr_1", "evt_1", "agent_run.completed", body, 1_000);
        let parts: Vec<&str> = t.split('.').collect();
        let dec = |p: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap()
        };
        assert_eq!(
            String::from_utf8(dec(parts[0])).unwrap(),
            format!("{{\"alg\":\"ES256\",\"kid\":\"{}\"}}", s.kid)
        );
        let claims: serde_json::Value = serde_json::from_slice(&dec(parts[1])).unwrap();
        assert_eq!(claims["exp"], 1_300);
        assert_eq!(claims["iss"], "svc-process");
        let jwk = &s.jwks()["keys"][0];
        let mut sec1 = vec![4u8];
        sec1.extend(dec(jwk["x"].as_str().unwrap()));
        sec1.extend(dec(jwk["y"].as_str().unwrap()));
        let vk = VerifyingKey::from_sec1_bytes(&sec1).unwrap();
        let sig = Signature::from_slice(&dec(parts[2])).unwrap();
        vk.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        let restored = Signer::from_secret(&s.secret()).unwrap();
        assert_eq!(restored.kid, s.kid);
    }
}
