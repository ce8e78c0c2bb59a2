//! `remote-odeon floor [--quick]`: what a round trip costs this machine with no runtime
//! at all, so that the `rtt` figures can be read against it. Two processes on
//! loopback, one TCP connection, a 16-byte ping answered by a 16-byte pong, one
//! thread on each side:
//!
//! - `blocking`: both threads sleep in `read` until the other side writes (what any
//!   runtime pays when its threads park between messages);
//! - `spinning`: both threads poll a non-blocking socket without ever sleeping (the
//!   floor of the network path itself; it burns a core on each side).
//!
//! On the project's VM (2 vCPUs, 2026-11-26) the blocking round trip took 78–84 µs at
//! the median, and 6.3 µs with both processes pinned to one vCPU: waking a thread whose
//! vCPU has halted costs some 35–40 µs each way there, which is most of any runtime's
//! round trip (`docs/bench/remote-latency-2026-11-26.md`).

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;

const MSG: usize = 16;

/// The client side: starts `floor-serve` in another process and measures.
pub(crate) fn floor(quick: bool) -> Result<(), String> {
    for mode in ["blocking", "spinning"] {
        let spin = mode == "spinning";
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut child = Command::new(exe)
            .arg("floor-serve")
            .arg(mode)
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the floor server: {e}"))?;
        let res = (|| -> Result<(), String> {
            let out = child.stdout.take().ok_or("no server stdout")?;
            let mut line = String::new();
            BufReader::new(out)
                .read_line(&mut line)
                .map_err(|e| e.to_string())?;
            let port: u16 = line
                .trim()
                .parse()
                .map_err(|e| format!("floor server port {line:?}: {e}"))?;
            let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
            setup(&s, spin)?;
            let (warm, n) = if quick { (500, 2_000) } else { (5_000, 20_000) };
            let mut samples = Vec::with_capacity(n);
            let mut buf = [0u8; MSG];
            for i in 0..warm + n {
                let t = Instant::now();
                s.write_all(&buf).map_err(|e| e.to_string())?;
                read_exact(&mut s, &mut buf)?;
                if i >= warm {
                    samples.push(t.elapsed().as_nanos() as f64 / 1_000.0);
                }
            }
            samples.sort_by(f64::total_cmp);
            let pct = |p: f64| {
                samples[((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1]
            };
            crate::emit(json!({
                "runtime": "tcp", "bench": format!("floor_{mode}"),
                "p50_us": pct(0.50), "p90_us": pct(0.90), "p99_us": pct(0.99), "samples": n,
            }));
            Ok(())
        })();
        let _ = child.kill();
        let _ = child.wait();
        res?;
    }
    Ok(())
}

/// The server side: echoes every 16 bytes until the client goes.
pub(crate) fn serve(mode: Option<&str>) -> Result<(), String> {
    let spin = mode == Some("spinning");
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    println!("{port}");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let (mut s, _) = listener.accept().map_err(|e| e.to_string())?;
    setup(&s, spin)?;
    let mut buf = [0u8; MSG];
    while read_exact(&mut s, &mut buf).is_ok() {
        if s.write_all(&buf).is_err() {
            break;
        }
    }
    Ok(())
}

fn setup(s: &TcpStream, spin: bool) -> Result<(), String> {
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_nonblocking(spin).map_err(|e| e.to_string())
}

/// Reads exactly `buf.len()` bytes, polling without sleeping on a non-blocking socket.
fn read_exact(s: &mut TcpStream, buf: &mut [u8]) -> Result<(), String> {
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err("closed".into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}
