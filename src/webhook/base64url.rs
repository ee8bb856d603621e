//! Strict base64url (RFC 4648 section 5, no padding, canonical trailing bits), as JWS requires.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

/// Decodes strict unpadded base64url; `None` for any other input (padding, `+`, `/`, whitespace, stray bits).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// Encodes bytes as unpadded base64url.
pub fn encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_padding_and_standard_alphabet() {
        assert_eq!(decode("AQ"), Some(vec![1]));
        assert_eq!(decode("AQ=="), None);
        assert_eq!(decode("+/"), None);
        assert_eq!(decode("A Q"), None);
    }

    #[test]
    fn rejects_non_canonical_trailing_bits() {
        // "AR" decodes to 0x01 with non-zero leftover bits: not canonical.
        assert_eq!(decode("AR"), None);
    }

    #[test]
    fn round_trips() {
        let data = [0u8, 255, 10, 200, 7];
        assert_eq!(decode(&encode(&data)), Some(data.to_vec()));
    }
}
