//! A relay between the exporter and the Spark UI that records what the exporter read.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;

/// Passes every GET through to the Spark UI unchanged and keeps the newest response body per
/// endpoint. Frozen, it holds new requests until thawed, so nothing the exporter has read can
/// change while the test scrapes and looks at what it read.
pub struct Relay {
    /// Where the exporter should point `--spark.url`.
    pub url: String,
    state: Arc<RelayState>,
    task: tokio::task::JoinHandle<()>,
}

/// What the relay's connections share.
pub struct RelayState {
    pub upstream: String,
    pub http: reqwest::Client,
    pub frozen: tokio::sync::watch::Sender<bool>,
    /// Requests past the gate and not yet answered.
    pub inflight: AtomicUsize,
    /// Every request (`path?query`) and its status, in order.
    pub seen: Mutex<Vec<(String, u16)>>,
    /// Newest 200 body per path (no query).
    pub last: Mutex<BTreeMap<String, String>>,
}

impl Relay {
    /// Listen on a free local port and relay to `upstream`.
    pub async fn start(upstream: &str, http: reqwest::Client) -> Result<Relay, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("relay: {e}"))?;
        let url = format!(
            "http://{}",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let state = Arc::new(RelayState {
            upstream: upstream.to_string(),
            http,
            frozen: tokio::sync::watch::Sender::new(false),
            inflight: AtomicUsize::new(0),
            seen: Mutex::default(),
            last: Mutex::default(),
        });
        let st = state.clone();
        let task = tokio::spawn(async move {
            // Connections live in this set, so aborting the task closes them all.
            let mut conns = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let st = st.clone();
                conns.spawn(async move {
                    let svc = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let st = st.clone();
                            async move { Ok::<_, std::convert::Infallible>(st.relay(req).await) }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                        .await;
                });
                while conns.try_join_next().is_some() {}
            }
        });
        Ok(Relay { url, state, task })
    }

    /// Hold new requests, wait for those in flight, then give the exporter a moment to apply
    /// the last response.
    pub async fn freeze(&self) {
        self.state.frozen.send_replace(true);
        while self.state.inflight.load(SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    pub fn thaw(&self) {
        self.state.frozen.send_replace(false);
    }

    /// Stop listening and drop every connection: the exporter now meets a closed port.
    pub fn close(&self) {
        self.task.abort();
    }

    /// Successful responses so far to paths ending with `suffix`.
    pub fn count(&self, suffix: &str) -> usize {
        let seen = self.state.seen.lock().unwrap();
        seen.iter()
            .filter(|(pq, code)| {
                *code == 200 && pq.split('?').next().unwrap_or("").ends_with(suffix)
            })
            .count()
    }

    /// Every request relayed so far, with its status.
    pub fn requests(&self) -> Vec<(String, u16)> {
        self.state.seen.lock().unwrap().clone()
    }

    /// The newest successful body of a path ending with `suffix`.
    pub fn last(&self, suffix: &str) -> Option<String> {
        let last = self.state.last.lock().unwrap();
        last.iter()
            .find(|(p, _)| p.ends_with(suffix))
            .map(|(_, b)| b.clone())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RelayState {
    /// Answer one request from upstream, waiting while frozen.
    pub async fn relay(
        &self,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> hyper::Response<Full<Bytes>> {
        let pq = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        let path = req.uri().path().to_string();
        // Counted in flight before looking at the gate, so `freeze` cannot miss a request.
        loop {
            self.inflight.fetch_add(1, SeqCst);
            if !*self.frozen.borrow() {
                break;
            }
            self.inflight.fetch_sub(1, SeqCst);
            let _ = self.frozen.subscribe().wait_for(|f| !*f).await;
        }
        let answer = match self.http.get(format!("{}{pq}", self.upstream)).send().await {
            Ok(r) => {
                let code = r.status().as_u16();
                match r.bytes().await {
                    Ok(b) => (code, b),
                    Err(e) => (502, Bytes::from(format!("relay: upstream body: {e}"))),
                }
            }
            Err(e) => (502, Bytes::from(format!("relay: upstream: {e}"))),
        };
        self.seen.lock().unwrap().push((pq, answer.0));
        if answer.0 == 200 {
            self.last
                .lock()
                .unwrap()
                .insert(path, String::from_utf8_lossy(&answer.1).into_owned());
        }
        self.inflight.fetch_sub(1, SeqCst);
        let mut resp = hyper::Response::new(Full::new(answer.1));
        *resp.status_mut() =
            hyper::StatusCode::from_u16(answer.0).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
        resp.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        resp
    }
}
