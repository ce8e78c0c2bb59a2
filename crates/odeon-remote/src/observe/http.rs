//! The HTTP side: `GET /metrics`, the dashboard (`GET /`, `GET /api/snapshot`,
//! `GET /api/events`), one request per connection.
//!
//! Why no hyper or axum: neither is in odeon's dependency tree, and a scrape is one
//! request whose answer is one page. A responder that reads the request head, answers
//! and closes (`Connection: close`, which every Prometheus version handles) is a few
//! dozen lines, and bounded: the head may be at most `MAX_HEAD` bytes and must arrive
//! within `READ_TIMEOUT`, so a client that never finishes cannot hold a task for long.
//! The event stream (`/api/events`, server-sent events) is the one answer that stays
//! open: a snapshot per sample until the client goes or the node is dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::dashboard::collector::{Collector, Latest};
use crate::{Metrics, NodeError};

/// The dashboard page: HTML, CSS and JS in one file, no external resource.
const DASHBOARD: &str = include_str!("dashboard.html");

/// The most bytes of request head read before giving up on a client.
const MAX_HEAD: usize = 8 * 1024;
/// How long a client has to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// After answering `431`, how much more of the head is read and dropped (and for how
/// long) before closing: closing with unread bytes makes the OS send a reset, which
/// can destroy the answer before the client reads it.
const DRAIN_MAX: usize = 1024 * 1024;
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// A running endpoint; dropping it stops accepting (answers being written finish).
#[derive(Debug)]
pub(crate) struct MetricsServer {
    addr: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
    /// The dashboard's sampler; dropped with the endpoint.
    _collector: Collector,
}

impl MetricsServer {
    /// Binds `addr` on the node's runtime and starts serving.
    pub(crate) async fn start(
        io: &tokio::runtime::Handle,
        addr: SocketAddr,
        node: String,
        metrics: Metrics,
        collector: Collector,
    ) -> Result<Self, NodeError> {
        super::install();
        let listener = io
            .spawn(async move { TcpListener::bind(addr).await })
            .await
            .map_err(|e| super::bind_error(addr, std::io::Error::other(e)))?
            .map_err(|e| super::bind_error(addr, e))?;
        let bound = listener
            .local_addr()
            .map_err(|e| super::bind_error(addr, e))?;
        let page: Page = Arc::new(move || super::page(&node, &metrics));
        let accepting = io.spawn(accept_loop(listener, page, collector.latest()));
        tracing::info!(%bound, "serving GET /metrics and the dashboard at /");
        Ok(Self {
            addr: bound,
            accepting,
            _collector: collector,
        })
    }

    /// The bound address (with the port the OS chose for port 0).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

type Page = Arc<dyn Fn() -> String + Send + Sync>;

async fn accept_loop(listener: TcpListener, page: Page, latest: Latest) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(serve(stream, page.clone(), latest.clone()));
            }
            Err(e) => {
                // Out of descriptors and the like: wait a little instead of spinning.
                tracing::debug!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Answers one request and closes the connection.
async fn serve(mut stream: TcpStream, page: Page, latest: Latest) {
    let head = match tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await {
        Ok(Head::Complete(head)) => head,
        Ok(Head::TooLarge) => return refuse_large(stream).await,
        Ok(Head::Gone) | Err(_) => return,
    };
    const TEXT: &str = "text/plain; charset=utf-8";
    let (status, kind, body) = match route(&head) {
        Route::Metrics => ("200 OK", "text/plain; version=0.0.4; charset=utf-8", page()),
        Route::Dashboard => ("200 OK", "text/html; charset=utf-8", DASHBOARD.to_owned()),
        Route::Snapshot => {
            let json = latest.borrow().to_string();
            ("200 OK", "application/json", json)
        }
        Route::Events => return events(stream, latest).await,
        Route::NotFound => (
            "404 Not Found",
            TEXT,
            "not found: try GET /metrics, / or /api/snapshot\n".to_owned(),
        ),
        Route::BadMethod => ("405 Method Not Allowed", TEXT, "only GET\n".to_owned()),
    };
    // A 405 names the allowed method (RFC 9110: the server "MUST generate an Allow
    // header field in a 405 response").
    let allow = if status.starts_with("405") {
        "Allow: GET\r\n"
    } else {
        ""
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nCache-Control: no-store\r\n\
         {allow}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if let Err(e) = stream.write_all(response.as_bytes()).await {
        tracing::debug!(error = %e, "metrics endpoint: write failed");
    }
    let _ = stream.shutdown().await;
}

/// A request head over `MAX_HEAD` bytes: `431` (RFC 6585), then the rest of what the
/// client sends is read and dropped (bounded) so that closing does not reset the
/// connection under the answer.
async fn refuse_large(mut stream: TcpStream) {
    let body = "request head too large\n";
    let response = format!(
        "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; \
         charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(response.as_bytes()).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    let drain = async {
        let mut chunk = [0u8; 4096];
        let mut drained = 0;
        while drained < DRAIN_MAX {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, drain).await;
}

/// `GET /api/events`: server-sent events, one `data:` line with the whole snapshot
/// per sample, the current one first, until the client goes or the sampler stops.
async fn events(mut stream: TcpStream, mut latest: Latest) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                Cache-Control: no-store\r\nConnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    loop {
        let json = latest.borrow_and_update().clone();
        let event = format!("data: {json}\n\n");
        if stream.write_all(event.as_bytes()).await.is_err() {
            return;
        }
        if latest.changed().await.is_err() {
            break;
        }
    }
    let _ = stream.shutdown().await;
}

/// What [`read_head`] got.
enum Head {
    /// Up to the blank line that ends a request head.
    Complete(Vec<u8>),
    /// More than `MAX_HEAD` bytes without the end of a head.
    TooLarge,
    /// The client closed first, or the read failed.
    Gone,
}

/// Reads up to the blank line that ends a request head.
async fn read_head(stream: &mut TcpStream) -> Head {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return Head::Gone,
            Ok(n) => n,
        };
        // Only the bytes that can complete the terminator are searched again.
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if buf[from..].windows(4).any(|w| w == b"\r\n\r\n") {
            return Head::Complete(buf);
        }
        if buf.len() > MAX_HEAD {
            return Head::TooLarge;
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Route {
    Metrics,
    Dashboard,
    Snapshot,
    Events,
    NotFound,
    BadMethod,
}

fn route(head: &[u8]) -> Route {
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (method, target) = (parts.next(), parts.next());
    let path = target.map(|t| t.split(|&b| b == b'?').next().unwrap_or_default());
    match (method, path) {
        (Some(b"GET"), Some(b"/metrics")) => Route::Metrics,
        (Some(b"GET"), Some(b"/" | b"/index.html")) => Route::Dashboard,
        (Some(b"GET"), Some(b"/api/snapshot")) => Route::Snapshot,
        (Some(b"GET"), Some(b"/api/events")) => Route::Events,
        (Some(b"GET"), _) => Route::NotFound,
        _ => Route::BadMethod,
    }
}

#[cfg(test)]
mod tests {
    use super::{Route, route};

    #[test]
    fn only_the_known_paths_are_served() {
        assert_eq!(route(b"GET /metrics HTTP/1.1\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.0\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n"), Route::Dashboard);
        assert_eq!(
            route(b"GET /api/snapshot HTTP/1.1\r\n\r\n"),
            Route::Snapshot
        );
        assert_eq!(route(b"GET /api/events HTTP/1.1\r\n\r\n"), Route::Events);
        assert_eq!(route(b"GET /api HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"GET /metricsx HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"POST /metrics HTTP/1.1\r\n\r\n"), Route::BadMethod);
    }
}
