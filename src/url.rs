//! Minimal URL handling: origins (for the Authorization rule), percent-encoding of path
//! segments and query pairs, and the one rule for URLs that must be https (http only on this
//! machine's loopback): webhook endpoints the client registers, the key set the verifier fetches.
//! Deliberately strict: a URL this parser is unsure about has no origin, and a URL without an
//! origin never receives the API key.

/// The normalized origin `scheme://host:port` of an absolute `http`/`https` URL, or `None`.
///
/// Returns `None` (so the key is withheld) for anything ambiguous: other schemes, whitespace or
/// control characters, backslashes (browsers read them as `/`), user info (`user@host`), an empty
/// host or a bad port.
pub fn origin(url: &str) -> Option<String> {
    if url
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    {
        return None;
    }
    let (scheme, rest) = split_scheme(url)?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest.get(..end)?;
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (host, port) = split_host_port(authority)?;
    let port = match port {
        None => default_port,
        Some("") => default_port,
        Some(p) => {
            if !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 5 {
                return None;
            }
            p.parse::<u16>().ok()?
        }
    };
    if host.is_empty() {
        return None;
    }
    Some(format!("{scheme}://{}:{port}", host.to_ascii_lowercase()))
}

/// `scheme://rest` as `(scheme, rest)`. Not `split_once("://")`: see [`crate::text`].
fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let at = crate::text::find(url, "://")?;
    Some((url.get(..at)?, url.get(at + 3..)?))
}

/// Splits `host[:port]`, with IPv6 literals in brackets.
fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.starts_with('[') {
        let close = authority.find(']')?;
        let host = authority.get(..=close)?;
        let after = authority.get(close + 1..)?;
        if after.is_empty() {
            Some((host, None))
        } else {
            Some((host, Some(after.strip_prefix(':')?)))
        }
    } else {
        match authority.split_once(':') {
            Some((h, p)) => Some((h, Some(p))),
            None => Some((authority, None)),
        }
    }
}

/// Whether `url` is on exactly the origin `base_origin` (as returned by [`origin`]).
pub fn same_origin(url: &str, base_origin: &str) -> bool {
    origin(url).is_some_and(|o| o == base_origin)
}

/// The absolute URL a `Location` header points to, read against the URL of the request that got it: an absolute
/// `http(s)` URL, a scheme-relative `//host/...` or an absolute path `/...`. `None` for anything else (a relative
/// path, another scheme, a URL [`origin`] cannot read): such a redirect is not followed.
pub fn resolve_location(location: &str, request_url: &str) -> Option<String> {
    let location = location.trim();
    let (scheme, rest) = split_scheme(request_url)?;
    let resolved = if location.starts_with("//") {
        format!("{scheme}:{location}")
    } else if location.starts_with('/') {
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        format!("{scheme}://{}{location}", rest.get(..end)?)
    } else {
        location.to_owned()
    };
    origin(&resolved).map(|_| resolved)
}

/// Whether `target` is plain `http` while the API's origin (`base_origin`, as [`origin`] makes it) is `https`: bytes
/// sent to or read from it would travel unencrypted although the caller chose an encrypted API.
pub fn downgrades(base_origin: &str, target: &str) -> bool {
    base_origin.starts_with("https://")
        && split_scheme(target).is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("http"))
}

/// The path of a URL without query or fragment, for log lines (signed query strings never logged).
#[inline(never)]
pub fn path_for_log(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    url.get(..end).unwrap_or("")
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(hex_digit(byte >> 4));
            out.push(hex_digit(byte & 0x0f));
        }
    }
    out
}

fn hex_digit(nibble: u8) -> char {
    char::from_digit(u32::from(nibble), 16)
        .map(|c| c.to_ascii_uppercase())
        .unwrap_or('0')
}

/// Encodes `pairs` as a query string (without the leading `?`).
pub fn encode_query(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode_component(k), encode_component(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Whether `url` is an absolute `https` URL, or an `http` URL on this machine's loopback
/// (`localhost`, `127.0.0.0/8`, `[::1]`): the rule for webhook endpoints and key-set URLs. A URL
/// without an origin (see [`origin`]) never passes.
pub fn is_https_or_loopback(url: &str) -> bool {
    let Some(origin) = origin(url) else {
        return false;
    };
    match origin.strip_prefix("http://") {
        None => origin.starts_with("https://"),
        Some(authority) => {
            let host = authority
                .rsplit_once(':')
                .map_or(authority, |(host, _)| host);
            host == "localhost" || host == "[::1]" || is_loopback_v4(host)
        }
    }
}

/// Whether `url` is an absolute `ws://` or `wss://` URL (lower-case scheme, as `RealtimeTranscriber`'s `url` option
/// takes it) whose authority [`origin`] reads as it reads an `http(s)` one: a host, no user info, no whitespace,
/// control characters or backslashes, a valid port.
pub fn is_websocket_url(url: &str) -> bool {
    let http = if let Some(rest) = url.strip_prefix("wss://") {
        format!("https://{rest}")
    } else if let Some(rest) = url.strip_prefix("ws://") {
        format!("http://{rest}")
    } else {
        return false;
    };
    origin(&http).is_some()
}

fn is_loopback_v4(host: &str) -> bool {
    let mut parts = 0;
    for part in host.split('.') {
        parts += 1;
        let digits =
            !part.is_empty() && part.len() <= 3 && part.bytes().all(|b| b.is_ascii_digit());
        if !digits || part.parse::<u8>().is_err() || (parts == 1 && part != "127") {
            return false;
        }
    }
    parts == 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_normalizes_scheme_host_and_default_port() {
        assert_eq!(
            origin("HTTPS://API.Example.com/v1").as_deref(),
            Some("https://api.example.com:443")
        );
        assert_eq!(
            origin("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin("https://api.example.com:443/x"),
            origin("https://api.example.com")
        );
        assert_eq!(origin("http://[::1]:9/").as_deref(), Some("http://[::1]:9"));
    }

    #[test]
    fn websocket_urls_are_absolute_ws_or_wss_with_a_host() {
        for url in [
            "wss://h/x?ticket=t",
            "ws://127.0.0.1:8787/v1/realtime/socket?ticket=t",
            "wss://[::1]:9/rt",
            "wss://rt.example.com",
        ] {
            assert!(is_websocket_url(url), "{url}");
        }
        for url in [
            "https://h/x?ticket=t",
            "http://h/x",
            "",
            "wss://",
            "wss:///x",
            "wss://user@h/x",
            " wss://h/x",
            "wss://h /x",
            "WSS://h/x",
            "ws:/h/x",
            "/v1/realtime/socket?ticket=t",
            "wss://h:99999/x",
        ] {
            assert!(!is_websocket_url(url), "{url}");
        }
    }

    #[test]
    fn ambiguous_urls_have_no_origin() {
        for url in [
            "ftp://api.example.com/",
            "https://api.example.com@evil.com/",
            "https://evil.com\\@api.example.com/",
            "https://api.example.com:99999/",
            "https://api.example.com:8a/",
            "https:///path",
            "https://api.example.com /",
            "//api.example.com/",
            "/v1/runs",
        ] {
            assert_eq!(origin(url), None, "{url}");
        }
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(encode_component("a b/c?d#e"), "a%20b%2Fc%3Fd%23e");
        assert_eq!(encode_component("exr_1-A.b~"), "exr_1-A.b~");
        assert_eq!(encode_component("é"), "%C3%A9");
    }

    #[test]
    fn log_paths_drop_signed_queries() {
        assert_eq!(
            path_for_log("https://store.example/u/1?X-Sig=secret"),
            "https://store.example/u/1"
        );
    }

    #[test]
    fn https_or_loopback_admits_https_and_http_on_this_machine_only() {
        for ok in [
            "https://hooks.example/x",
            "http://localhost:8080/jwks",
            "http://127.0.0.1/x",
            "http://127.1.2.3:9/x",
            "http://[::1]:3000/x",
        ] {
            assert!(is_https_or_loopback(ok), "{ok}");
        }
        for bad in [
            "http://hooks.example/x",
            "http://127.0.0.1.evil.example/x",
            "http://localhost.evil.example/x",
            "http://128.0.0.1/x",
            "http://127.0.0/x",
            "http://user@localhost/x",
            "ftp://localhost/x",
            "https://",
            "localhost/x",
        ] {
            assert!(!is_https_or_loopback(bad), "{bad}");
        }
    }
}
