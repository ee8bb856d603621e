//! The native outgoing HTTP/1.1 client for fetching documents and delivering webhooks, over `http://` and
//! `https://` (rustls with the `ring` provider; trusted roots: the Mozilla set from `webpki-roots`, plus the PEM
//! certificates of `--ca-file`, for a local test CA). A certificate that does not verify is a failed request
//! (document: 422 `file_fetch_failed`; delivery: a failed attempt with `responseStatus: 0`).

use crate::host::{FetchError, Fetched, MAX_BODY};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::sync::Arc;
use std::time::Duration;

/// Shared client.
#[derive(Clone)]
pub struct HttpClient {
    inner: Option<Client<HttpsConnector<HttpConnector>, Full<Bytes>>>,
}

impl Default for HttpClient {
    fn default() -> Self {
        HttpClient::with_roots(Vec::new())
    }
}

impl HttpClient {
    /// A client that also trusts the PEM certificates of `ca_file` (`--ca-file`).
    ///
    /// # Errors
    /// The file cannot be read or holds no PEM certificate.
    pub fn new(ca_file: Option<&std::path::Path>) -> Result<HttpClient, String> {
        let Some(path) = ca_file else {
            return Ok(HttpClient::default());
        };
        let extra: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("--ca-file: cannot read {}: {e}", path.display()))?
            .collect::<Result<_, _>>()
            .map_err(|e| format!("--ca-file: {}: {e}", path.display()))?;
        if extra.is_empty() {
            return Err(format!(
                "--ca-file: {} holds no PEM certificate",
                path.display()
            ));
        }
        Ok(HttpClient::with_roots(extra))
    }

    fn with_roots(extra: Vec<CertificateDer<'static>>) -> HttpClient {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        for c in extra {
            // a certificate rustls cannot use as a trust anchor is skipped (the rest still count)
            let _ = roots.add(c);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        // cannot fail with the ring provider (it supports the default versions); without it https is refused
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map(|b| b.with_root_certificates(roots).with_no_client_auth())
            .ok();
        let mut conn = HttpConnector::new();
        conn.set_connect_timeout(Some(Duration::from_secs(5)));
        conn.enforce_http(false);
        let inner = tls.map(|cfg| {
            let https = hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(cfg)
                .https_or_http()
                .enable_http1()
                .wrap_connector(conn);
            Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(10))
                .build(https)
        });
        HttpClient { inner }
    }

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
        let uri = crate::host::outgoing_uri(url)?;
        let mut req = hyper::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, v.as_str());
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| FetchError::BadUrl(e.to_string()))?;
        let work = async {
            let client = self
                .inner
                .as_ref()
                .ok_or_else(|| FetchError::Unreachable("no TLS configuration".into()))?;
            let resp = client
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
