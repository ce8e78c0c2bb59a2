//! Just enough of a WebDriver client (W3C protocol, JSON over HTTP/1.1) to drive
//! chromedriver from a test: a session, a page, a script, a screenshot. A crate
//! (fantoccini, thirtyfour) would bring hyper and a TLS stack for four requests.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A chromedriver process and one headless chromium session; both end on drop.
pub(crate) struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
}

/// The path of `program` if it is on `PATH`.
pub(crate) fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn request(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> Value {
    let mut s = TcpStream::connect(addr).expect("chromedriver reachable");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // chromedriver may keep the connection open: read the head, then Content-Length
    // bytes (or chunks).
    let mut answer = Vec::new();
    let mut chunk = [0u8; 8192];
    let split = loop {
        if let Some(i) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "chromedriver closed before answering");
        answer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let lower = head.to_ascii_lowercase();
    let length = lower.lines().find_map(|l| {
        l.strip_prefix("content-length:")
            .and_then(|v| v.trim().parse::<usize>().ok())
    });
    let mut body = answer[split + 4..].to_vec();
    match length {
        Some(len) => {
            while body.len() < len {
                let n = s.read(&mut chunk).unwrap();
                assert!(n > 0, "chromedriver closed mid-answer");
                body.extend_from_slice(&chunk[..n]);
            }
        }
        None => {
            // Chunked or close-delimited: up to the last chunk or the end.
            while !body.ends_with(b"0\r\n\r\n") {
                let n = s.read(&mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        }
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    let body = if lower.contains("transfer-encoding: chunked") {
        dechunk(&body)
    } else {
        body
    };
    let value: Value = serde_json::from_str(&body)
        .unwrap_or_else(|e| panic!("chromedriver answered {head}\n{body}: {e}"));
    assert!(
        head.starts_with("HTTP/1.1 200"),
        "{method} {path}: {head}\n{value}"
    );
    value["value"].clone()
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

impl Browser {
    /// Starts chromedriver on a free port and a headless chromium session of
    /// `width` × `height` pixels.
    pub(crate) fn start(
        chromium: &std::path::Path,
        chromedriver: &std::path::Path,
        width: u32,
        height: u32,
    ) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "chromedriver never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", format!("--window-size={width},{height}")],
            },
        }}});
        let mut browser = Self {
            driver,
            addr,
            session: String::new(),
        };
        let session = request(addr, "POST", "/session", Some(&caps));
        browser.session = session["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        browser
    }

    fn path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    /// Loads `url`.
    pub(crate) fn goto(&self, url: &str) {
        request(
            self.addr,
            "POST",
            &self.path("/url"),
            Some(&json!({ "url": url })),
        );
    }

    /// Runs `script` (a function body) in the page and returns what it returns.
    pub(crate) fn eval(&self, script: &str) -> Value {
        let body = json!({ "script": script, "args": [] });
        request(self.addr, "POST", &self.path("/execute/sync"), Some(&body))
    }

    /// A PNG of the viewport.
    pub(crate) fn screenshot(&self) -> Vec<u8> {
        use base64::Engine;
        let b64 = request(self.addr, "GET", &self.path("/screenshot"), None);
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().expect("base64"))
            .expect("a PNG in base64")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let (addr, path) = (self.addr, self.path(""));
            let _ = std::panic::catch_unwind(move || request(addr, "DELETE", &path, None));
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
