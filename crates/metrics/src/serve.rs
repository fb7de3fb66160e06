//! `GET /metrics` over HTTP/1.1 (hyper), on one thread of its own, until told to stop.
//!
//! What a client can hold is bounded, so a slow or hostile one cannot stall the agent (which
//! never waits on this thread) or grow its memory: at most [`MAX_CONNECTIONS`] connections at
//! once (a further one is closed at once), a request's head read within [`HEAD_DEADLINE`] into
//! hyper's smallest buffer (8 KiB, `max_buf_size`), one request per connection, and the whole
//! connection, the client's reading of the answer included, ended at [`CONNECTION_DEADLINE`].
//! tiny_http was not taken: its 0.12 reads a header line without a bound and starts a thread
//! per waiting connection.
//!
//! A client that asks for OpenMetrics (`Accept: application/openmetrics-text`, as Prometheus
//! does) gets it; any other gets the Prometheus text format 0.0.4 (promtool, curl).

use crate::MeshMetrics;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::io;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 8;
/// How long a client has to send its request's head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// How long one connection may last, answer included.
pub const CONNECTION_DEADLINE: Duration = Duration::from_secs(10);
/// The OpenMetrics text format's content type.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// How often the accept loop looks at its stop flag (an idle agent wakes this often).
const STOP_POLL: Duration = Duration::from_secs(1);
/// How long accept rests after a failure that could repeat at once (no descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// hyper's smallest read buffer.
const HEAD_BUFFER: usize = 8192;

/// Serves `GET /metrics` (OpenMetrics content type) from `metrics` on `listener` until `stop`.
pub fn serve(
    listener: TcpListener,
    metrics: Arc<MeshMetrics>,
    stop: Arc<AtomicBool>,
) -> io::Result<JoinHandle<()>> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    std::thread::Builder::new()
        .name("fathom-metrics".into())
        .spawn(move || runtime.block_on(accept(listener, metrics, stop)))
}

async fn accept(listener: TcpListener, metrics: Arc<MeshMetrics>, stop: Arc<AtomicBool>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let open = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        let stream = match tokio::time::timeout(STOP_POLL, listener.accept()).await {
            Err(_) => continue,
            Ok(Ok((stream, _))) => stream,
            Ok(Err(_)) => {
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(place) = Place::take(&open) else {
            continue;
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let _place = place;
            let service = service_fn(move |req| {
                let metrics = metrics.clone();
                async move { Ok::<_, Infallible>(respond(&req, &metrics)) }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_DEADLINE)
                .max_buf_size(HEAD_BUFFER)
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_DEADLINE, connection).await;
        });
    }
}

/// One of [`MAX_CONNECTIONS`] places, given back when dropped.
struct Place(Arc<AtomicUsize>);

impl Place {
    fn take(open: &Arc<AtomicUsize>) -> Option<Place> {
        open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < MAX_CONNECTIONS).then_some(n + 1)
        })
        .ok()
        .map(|_| Place(open.clone()))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The answer to one request: the exposition, 404 for another path, 405 for another method.
fn respond(req: &Request<Incoming>, metrics: &MeshMetrics) -> Response<Full<Bytes>> {
    if req.uri().path() != "/metrics" {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n",
        );
    }
    if req.method() != Method::GET {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return r;
    }
    let openmetrics = req.headers().get_all(ACCEPT).iter().any(|v| {
        v.to_str()
            .is_ok_and(|s| s.contains("application/openmetrics-text"))
    });
    let (body, kind) = if openmetrics {
        (metrics.encode(), OPENMETRICS)
    } else {
        (
            metrics.encode_prometheus(),
            prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        )
    };
    let mut r = Response::new(Full::new(Bytes::from(body)));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}
