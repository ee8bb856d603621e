//! A forwarding HTTP proxy between the browser and the page server of `wasm-bindgen-test-runner`.
//!
//! The runner (0.2.130) serves the test page with rouille over tiny_http 0.12. tiny_http hands each accepted
//! connection to a pool thread, and that thread stays with the connection for as long as the browser keeps it alive.
//! A new connection gets a new thread only when no thread is counted idle at accept time; when Chromium opens a
//! burst of connections (the test glue imports five modules at once), more tasks are queued than there are idle
//! threads, and the one left in the queue waits behind keep-alive connections that never end: the page stays at
//! "Loading scripts...", one request sits unread in the socket, and ChromeDriver gives up after its 300 s page-load
//! wait. Seen in about one run in three here and in two CI runs in a row.
//!
//! Chromium is pointed at this proxy (`--proxy-server`, with `<-loopback>` so loopback goes through it too), and each
//! request reaches the runner on a connection of its own with `Connection: close`: every runner thread is free again
//! after one answer, so a queued connection is served as soon as any other request is answered. The proxy answers
//! the browser with `Connection: close` too and runs one thread per browser connection; it forwards to loopback only.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

/// The longest request head the proxy reads (the test page's requests are a few hundred bytes).
const MAX_HEAD: usize = 64 * 1024;

/// Starts the proxy on a free loopback port, serving until the process exits; returns the port.
pub fn start() -> io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            thread::spawn(move || {
                if let Err(e) = serve(conn) {
                    eprintln!("xtask: page proxy: {e}");
                }
            });
        }
    });
    Ok(port)
}

/// One request from the browser: read its head (and body, if any), forward it on a fresh connection, copy the
/// answer back, close.
fn serve(client: TcpStream) -> io::Result<()> {
    client.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut reader = BufReader::new(client.try_clone()?);
    let head = read_head(&mut reader)?;
    if head.is_empty() {
        return Ok(()); // the browser opened a connection and closed it unused
    }
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let Some((method, target, version)) = split_request_line(request_line) else {
        return refuse(client, "400 Bad Request", "unreadable request line");
    };
    let Some((authority, path)) = loopback_target(target) else {
        return refuse(
            client,
            "502 Bad Gateway",
            "this proxy forwards to loopback only",
        );
    };
    let mut forwarded = format!("{method} {path} {version}\r\n");
    let mut body_len = 0usize;
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if name.eq_ignore_ascii_case("content-length") {
            body_len = line[name.len() + 1..].trim().parse().unwrap_or(0);
        }
        let hop_by_hop = ["connection", "proxy-connection", "keep-alive"];
        if !hop_by_hop.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            forwarded.push_str(line);
            forwarded.push_str("\r\n");
        }
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    let mut body = vec![0u8; body_len];
    reader.read_exact(&mut body)?;

    let mut upstream = TcpStream::connect(authority)?;
    upstream.set_read_timeout(Some(Duration::from_secs(600)))?;
    upstream.write_all(forwarded.as_bytes())?;
    upstream.write_all(&body)?;
    let mut client = client;
    copy_answer(&mut upstream, &mut client)?;
    let _ = client.shutdown(Shutdown::Both);
    Ok(())
}

/// Reads up to and including the blank line that ends a request head; empty when the connection closed first.
fn read_head(reader: &mut impl BufRead) -> io::Result<String> {
    let mut head = String::new();
    loop {
        let before = head.len();
        let n = reader.read_line(&mut head)?;
        if n == 0 {
            return if head.is_empty() {
                Ok(head)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "request head cut short",
                ))
            };
        }
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too long",
            ));
        }
        if head[before..] == *"\r\n" {
            return Ok(head);
        }
    }
}

/// Copies the runner's answer to the browser, rewriting its head to say `Connection: close` (the proxy closes the
/// browser's connection after each answer, so the browser must not count on reusing it).
fn copy_answer(upstream: &mut TcpStream, client: &mut TcpStream) -> io::Result<()> {
    let mut reader = BufReader::new(upstream);
    let head = read_head(&mut reader)?;
    let mut out = String::with_capacity(head.len() + 20);
    for line in head.split("\r\n").filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if !name.eq_ignore_ascii_case("connection") && !name.eq_ignore_ascii_case("keep-alive") {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    client.write_all(out.as_bytes())?;
    io::copy(&mut reader, client)?;
    client.flush()
}

fn refuse(mut client: TcpStream, status: &str, why: &str) -> io::Result<()> {
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{why}",
        why.len()
    );
    client.write_all(answer.as_bytes())
}

/// `GET http://127.0.0.1:8000/run.js HTTP/1.1` → (`GET`, `http://127.0.0.1:8000/run.js`, `HTTP/1.1`).
fn split_request_line(line: &str) -> Option<(&str, &str, &str)> {
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    (parts.next().is_none() && !method.is_empty() && version.starts_with("HTTP/"))
        .then_some((method, target, version))
}

/// The authority and path of an absolute-form `http://` target on loopback (`127.0.0.1`, `localhost`, `[::1]`).
fn loopback_target(target: &str) -> Option<(&str, &str)> {
    let rest = target.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = match authority.rfind(':') {
        Some(i) if !authority.ends_with(']') => &authority[..i],
        _ => authority,
    };
    matches!(host, "127.0.0.1" | "localhost" | "[::1]").then_some((authority, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_loopback_targets_are_forwarded() {
        assert_eq!(
            loopback_target("http://127.0.0.1:41234/run.js"),
            Some(("127.0.0.1:41234", "/run.js"))
        );
        assert_eq!(
            loopback_target("http://localhost:8000"),
            Some(("localhost:8000", "/"))
        );
        assert_eq!(
            loopback_target("http://[::1]:9/a?b"),
            Some(("[::1]:9", "/a?b"))
        );
        assert_eq!(loopback_target("http://example.com/x"), None);
        assert_eq!(loopback_target("http://127.0.0.1.evil.test:80/"), None);
        assert_eq!(loopback_target("https://127.0.0.1:443/"), None);
        assert_eq!(loopback_target("/relative"), None);
    }

    #[test]
    fn request_lines_need_three_parts() {
        assert_eq!(
            split_request_line("GET http://127.0.0.1:1/ HTTP/1.1"),
            Some(("GET", "http://127.0.0.1:1/", "HTTP/1.1"))
        );
        assert_eq!(split_request_line("GET /"), None);
        assert_eq!(split_request_line("GET / HTTP/1.1 extra"), None);
    }

    /// A server that, like tiny_http's pool, serves one connection at a time and keeps it open for as long as the
    /// peer does: two requests through the proxy are both answered, because the proxy closes each connection.
    #[test]
    fn each_request_reaches_a_one_connection_server_on_its_own_connection() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        thread::spawn(move || {
            for conn in server.incoming().flatten() {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut conn = conn;
                // Keep-alive loop: answer every request on this connection until the peer closes it.
                while let Ok(head) = read_head(&mut reader) {
                    if head.is_empty() {
                        break;
                    }
                    let closes = head.to_ascii_lowercase().contains("connection: close");
                    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{path}",
                        path.len()
                    );
                    conn.write_all(answer.as_bytes()).unwrap();
                    if closes {
                        break;
                    }
                }
            }
        });
        let port = start().unwrap();
        for path in ["/one", "/two"] {
            let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            write!(conn, "GET http://{addr}{path} HTTP/1.1\r\nHost: {addr}\r\nProxy-Connection: keep-alive\r\n\r\n").unwrap();
            let mut answer = String::new();
            conn.read_to_string(&mut answer).unwrap();
            assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
            assert!(answer.contains("Connection: close\r\n"), "{answer}");
            assert!(!answer.contains("keep-alive"), "{answer}");
            assert!(answer.ends_with(path), "{answer}");
        }
    }
}
