//! Strict base64url (RFC 4648 section 5, no padding, canonical trailing bits), as JWS requires.
//!
//! Written out rather than taken from the `base64` crate: its generic engine was 3.9 KB of code in the
//! webhook-only wasm module, this is a few hundred bytes, and a token's three segments are its only input.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The 6-bit value of a base64url character; `None` for any other byte.
fn sextet(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decodes strict unpadded base64url; `None` for any other input (padding, `+`, `/`, whitespace, stray bits).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3 + 2);
    let mut groups = bytes.chunks_exact(4);
    for group in &mut groups {
        let n = group
            .iter()
            .try_fold(0u32, |n, &c| Some(n << 6 | sextet(c)?))?;
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    let rest = groups.remainder();
    let n = rest
        .iter()
        .try_fold(0u32, |n, &c| Some(n << 6 | sextet(c)?))?;
    // The bits past the last whole byte must be 0 (canonical): 4 of 2 characters' 12, 2 of 3 characters' 18.
    match rest.len() {
        2 if n & 0xF == 0 => out.push((n >> 4) as u8),
        3 if n & 0x3 == 0 => out.extend_from_slice(&[(n >> 10) as u8, (n >> 2) as u8]),
        0 => {}
        _ => return None,
    }
    Some(out)
}

/// Encodes bytes as unpadded base64url.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let mut n = 0u32;
        for (i, &b) in group.iter().enumerate() {
            n |= u32::from(b) << (16 - 8 * i);
        }
        // 1 byte makes 2 characters, 2 bytes 3, 3 bytes 4.
        for i in 0..=group.len() {
            let index = (n >> (18 - 6 * i)) & 63;
            out.push(char::from(
                ALPHABET.get(index as usize).copied().unwrap_or(b'A'),
            ));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
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

    /// The `base64` crate (a dev-dependency) as the oracle: every string of up to 3 characters over the alphabet
    /// and the bytes around it, and 4 to 6 characters over a sample, decode alike (strict, canonical, no padding).
    #[test]
    fn decodes_as_the_base64_crate_does() {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine as _;
        let mut chars: Vec<char> = ALPHABET.iter().map(|&c| char::from(c)).collect();
        chars.extend(['=', '+', '/', ' ', '.', '\u{e9}']);
        let oracle = |t: &str| URL_SAFE_NO_PAD.decode(t).ok();
        let mut texts = vec![String::new()];
        for len in 1..=3 {
            let mut longer = Vec::new();
            for t in texts.iter().filter(|t| t.chars().count() == len - 1) {
                for &c in &chars {
                    longer.push(format!("{t}{c}"));
                }
            }
            texts.extend(longer);
        }
        for t in &texts {
            assert_eq!(decode(t), oracle(t), "{t:?}");
        }
        let sample = [
            "AQID", "AQIDBA", "AQIDBQ", "_-_-", "AAAA=", "AQID AQ", "A+ID", "AQIDB",
        ];
        for t in sample {
            assert_eq!(decode(t), oracle(t), "{t:?}");
        }
    }

    #[test]
    fn encodes_as_the_base64_crate_does() {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine as _;
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in 0..bytes.len() {
            for start in [0, 1, 2, 97] {
                let part = &bytes[start..(start + len).min(bytes.len())];
                assert_eq!(encode(part), URL_SAFE_NO_PAD.encode(part), "{part:?}");
                assert_eq!(decode(&encode(part)).as_deref(), Some(part));
            }
        }
    }

    #[test]
    fn round_trips() {
        let data = [0u8, 255, 10, 200, 7];
        assert_eq!(decode(&encode(&data)), Some(data.to_vec()));
    }
}
