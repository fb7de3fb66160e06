//! The `/metrics` endpoint on 127.0.0.1:0: what it answers, and that a hostile or silent client
//! is cut off in bounded time while the endpoint serves on; `stop` ends its thread.

use fathom_metrics::{serve, MeshMetrics, Outcome, HEAD_DEADLINE, MAX_CONNECTIONS, OPENMETRICS};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// An endpoint serving a registry with one series, stopped when dropped.
struct Endpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    fn start() -> Endpoint {
        let metrics = Arc::new(MeshMetrics::new(10));
        metrics.outcome("h1", "rr", Outcome::Run);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = serve(listener, metrics, stop.clone()).unwrap();
        Endpoint {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        s
    }

    /// Sends `request` and reads the answer to its end: (status line, whole answer).
    fn ask(&self, request: &str) -> (String, String) {
        let mut s = self.connect();
        s.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        let status = answer.lines().next().unwrap_or_default().to_string();
        (status, answer)
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn get(path: &str, accept: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n")
}

#[test]
fn get_metrics_is_answered_and_anything_else_refused() {
    let e = Endpoint::start();
    let (status, answer) = e.ask(&get("/metrics", "*/*"));
    assert_eq!(status, "HTTP/1.1 200 OK", "{answer}");
    assert!(
        answer.contains(r#"fathom_mesh_tests_total{source="h1",test="rr",outcome="run"} 1"#),
        "{answer}"
    );
    let (status, answer) = e.ask(&get("/", "*/*"));
    assert_eq!(status, "HTTP/1.1 404 Not Found", "{answer}");
    let (status, answer) = e.ask("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed", "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("allow: get"),
        "{answer}"
    );
    let (status, _) = e.ask("NONSENSE\r\n\r\n");
    assert!(
        status.starts_with("HTTP/1.1 4") || status.is_empty(),
        "{status}"
    );
}

#[test]
fn openmetrics_when_asked_for_and_the_prometheus_text_format_otherwise() {
    let e = Endpoint::start();
    let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let (_, answer) = e.ask(&get("/metrics", accept));
    let content_type = format!("content-type: {OPENMETRICS}");
    assert!(
        answer.to_ascii_lowercase().contains(&content_type),
        "{answer}"
    );
    assert!(answer.ends_with("# EOF\n"), "{answer}");
    let (_, answer) = e.ask(&get("/metrics", "text/plain"));
    assert!(
        answer.contains("content-type: text/plain; version=0.0.4"),
        "{answer}"
    );
    assert!(!answer.contains("# EOF"), "{answer}");
}

#[test]
fn a_head_past_the_buffer_is_cut_off_and_the_endpoint_serves_on() {
    let e = Endpoint::start();
    let mut s = e.connect();
    let start = Instant::now();
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nX-Long: ");
    let chunk = vec![b'a'; 64 << 10];
    let mut sent = 0usize;
    while sent < 16 << 20 && s.write_all(&chunk).is_ok() {
        sent += chunk.len();
    }
    assert!(sent < 16 << 20, "the endpoint read 16 MiB of one header");
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let (status, _) = e.ask(&get("/metrics", "*/*"));
    assert_eq!(status, "HTTP/1.1 200 OK");
}

#[test]
fn silent_clients_are_held_in_bounded_numbers_for_a_bounded_time() {
    let e = Endpoint::start();
    let silent: Vec<TcpStream> = (0..MAX_CONNECTIONS + 3).map(|_| e.connect()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let closed = |s: &TcpStream| {
        s.set_nonblocking(true).unwrap();
        let shut = matches!((&*s).read(&mut [0u8; 1]), Ok(0));
        s.set_nonblocking(false).unwrap();
        shut
    };
    let at_once = silent.iter().filter(|s| closed(s)).count();
    assert_eq!(at_once, 3, "the connections past the bound close at once");
    let start = Instant::now();
    for mut s in silent {
        let _ = s.read(&mut [0u8; 1]);
    }
    let limit = HEAD_DEADLINE + Duration::from_secs(2);
    assert!(start.elapsed() < limit, "{:?}", start.elapsed());
    let (status, _) = e.ask(&get("/metrics", "*/*"));
    assert_eq!(status, "HTTP/1.1 200 OK");
}

#[test]
fn stop_ends_the_thread_and_closes_the_port() {
    let mut e = Endpoint::start();
    e.stop.store(true, Ordering::Relaxed);
    let start = Instant::now();
    e.thread.take().unwrap().join().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(
        TcpStream::connect(e.addr).is_err(),
        "the listener is closed"
    );
}
