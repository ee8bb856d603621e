//! A minimal outgoing HTTP/1.1 client (plain `http://` only) for fetching documents and delivering webhooks.
//!
//! The emulator has no TLS client on purpose: `https://` targets fail with a clear error, which webhook delivery
//! logs as a failed attempt (`responseStatus: 0`).

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::HeaderMap;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

/// Largest body read from a remote (25 MiB).
pub const MAX_BODY: usize = 25 * 1024 * 1024;

/// An answer from a remote.
#[derive(Debug)]
pub struct Fetched {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes (at most [`MAX_BODY`]).
    pub body: Bytes,
}

/// Why a request failed before an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// The URL is not a usable `http://` URL.
    BadUrl(String),
    /// Connection refused, reset or timed out.
    Unreachable(String),
    /// The body was larger than [`MAX_BODY`].
    TooLarge,
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::BadUrl(m) | FetchError::Unreachable(m) => f.write_str(m),
            FetchError::TooLarge => f.write_str("body larger than 25 MiB"),
        }
    }
}

/// Shared client.
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<HttpConnector, Full<Bytes>>,
}

impl Default for HttpClient {
    fn default() -> Self {
        let mut conn = HttpConnector::new();
        conn.set_connect_timeout(Some(Duration::from_secs(5)));
        HttpClient {
            inner: Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(10))
                .build(conn),
        }
    }
}

impl HttpClient {
    /// Sends one request.
    ///
    /// # Errors
    /// [`FetchError`] when the URL is unusable, the peer unreachable, or the answer too large.
    pub async fn send(
        &self,
        method: hyper::Method,
        url: &str,
        headers: &[(&str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<Fetched, FetchError> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|_| FetchError::BadUrl("not a valid URL".into()))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(FetchError::Unreachable(
                    "https is not supported by the emulator's outgoing client".into(),
                ))
            }
            _ => return Err(FetchError::BadUrl("URL must be http or https".into())),
        }
        let mut req = hyper::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, v.as_str());
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| FetchError::BadUrl(e.to_string()))?;
        let work = async {
            let resp = self
                .inner
                .request(req)
                .await
                .map_err(|e| FetchError::Unreachable(format!("request failed: {e}")))?;
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let body = Limited::new(resp.into_body(), MAX_BODY)
                .collect()
                .await
                .map_err(|e| {
                    if e.is::<http_body_util::LengthLimitError>() {
                        FetchError::TooLarge
                    } else {
                        FetchError::Unreachable(format!("body read failed: {e}"))
                    }
                })?
                .to_bytes();
            Ok(Fetched {
                status,
                headers,
                body,
            })
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| FetchError::Unreachable("timed out".into()))?
    }
}
