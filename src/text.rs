//! Substring search and replace, for the few places that look for a word in a message (the key in an error, a
//! transport error's wording). Not `str::contains(&str)` / `str::replace(&str, _)`: their Two-Way searcher slices
//! with checked indexes, which links the panic path's string formatting (`slice_error_fail`, `char`'s `Debug`) into
//! the wasm modules; `url::origin`'s one `split_once("://")` alone was 4.9 KB gzip of `docauto/webhooks`. A byte
//! match of valid UTF-8 in valid UTF-8 always falls on character boundaries, so no slice here can fail. The inputs
//! are short (messages, header values): a plain scan is enough.

/// The byte offset of the first `needle` in `haystack` (`Some(0)` for an empty needle).
pub fn find(haystack: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &str, needle: &str) -> bool {
    find(haystack, needle).is_some()
}

/// `haystack` with every `needle` replaced by `with`, left to right without overlaps (as `str::replace`; an empty
/// needle replaces nothing).
pub fn replace(haystack: &str, needle: &str, with: &str) -> String {
    if needle.is_empty() {
        return haystack.to_owned();
    }
    let mut out = String::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = find(rest, needle) {
        out.push_str(rest.get(..at).unwrap_or_default());
        out.push_str(with);
        rest = rest.get(at + needle.len()..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `str`'s own search and replace as the oracle, on ASCII and multi-byte text, overlapping and edge cases.
    #[test]
    fn finds_and_replaces_as_str_does() {
        let haystacks = [
            "",
            "a",
            "aaaa",
            "abcabc",
            "key sk_live_1 and sk_live_1!",
            "ééxé",
            "x😀y😀",
            "tcp connect error: Connection refused",
        ];
        let needles = [
            "",
            "a",
            "aa",
            "abc",
            "sk_live_1",
            "é",
            "xé",
            "😀",
            "😀y",
            "z",
            "tcp connect error",
        ];
        for h in haystacks {
            for n in needles {
                if !n.is_empty() {
                    assert_eq!(find(h, n), h.find(n), "{h:?} {n:?}");
                    assert_eq!(replace(h, n, "[r]"), h.replace(n, "[r]"), "{h:?} {n:?}");
                }
                assert_eq!(contains(h, n), h.contains(n), "{h:?} {n:?}");
            }
        }
        assert_eq!(replace("abc", "", "x"), "abc");
    }
}
