//! A loopback mock of an OpenAI-compatible chat-completions server.
//!
//! Serves scripted [`Reply`]s in order, one per request (a request after the script ran out
//! gets a 500 naming the problem), and records every request so tests can assert what the
//! agent sent. Replies can be JSON, SSE (with delays and cuts), raw bytes, or error statuses
//! with headers. One request per connection (`Connection: close`), which keeps cuts simple.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One scripted response.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// 200 with this JSON body.
    Json(Value),
    /// 200 `text/event-stream` with these SSE events (each `data: <json>\n\n`), then
    /// `data: [DONE]`.
    Sse(Vec<Value>),
    /// 200 `text/event-stream` with these exact body pieces, each written after its delay;
    /// the connection closes after the last one (no `[DONE]` added).
    SseRaw(Vec<(Duration, Vec<u8>)>),
    /// A status with headers and body.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// These exact bytes as the whole HTTP response (status line included).
    Raw(Vec<u8>),
    /// Wait, then send the inner reply.
    Delayed(Duration, Box<Reply>),
    /// Accept the request and never answer (until the client gives up).
    Hang,
}

impl Reply {
    /// An error status with a JSON `{"error": {"message": ...}}` body.
    pub(crate) fn error(status: u16, message: &str) -> Self {
        Reply::Status {
            status,
            headers: Vec::new(),
            body: serde_json::json!({"error": {"message": message}}).to_string(),
        }
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` when it was not JSON).
    pub body: Value,
    pub raw_body: Vec<u8>,
    /// When the request arrived (for gaps between retries).
    pub at: Instant,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `messages` array of a chat request.
    pub(crate) fn messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    /// Replies for `GET` paths (e.g. `/v1/models`), served every time.
    gets: Vec<(String, Reply)>,
    requests: Vec<Recorded>,
    /// `POST` bodies larger than this many bytes get the reply without using the script.
    reject_over: Option<(usize, Reply)>,
}

/// The running server; stops when dropped (its thread ends with the test process).
pub(crate) struct MockServer {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl MockServer {
    /// Starts a server that will answer with `replies`, in order.
    pub(crate) fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local addr").port();
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                thread::spawn(move || handle(stream, &state));
            }
        });
        Self { port, state }
    }

    /// `http://127.0.0.1:<port>/v1`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Adds replies at the end of the script.
    pub(crate) fn push(&self, reply: Reply) {
        self.state.lock().expect("lock").replies.push_back(reply);
    }

    /// Serves `reply` for every `GET` whose path ends with `suffix`.
    pub(crate) fn on_get(&self, suffix: &str, reply: Reply) {
        self.state
            .lock()
            .expect("lock")
            .gets
            .push((suffix.to_string(), reply));
    }

    /// Answers every `POST` whose body is larger than `max_bytes` with `reply`, without
    /// consuming a scripted reply (a server with a small context window).
    pub(crate) fn reject_over(&self, max_bytes: usize, reply: Reply) {
        self.state.lock().expect("lock").reject_over = Some((max_bytes, reply));
    }

    /// Every request received so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.lock().expect("lock").requests.clone()
    }

    /// The chat-completions requests received so far.
    pub(crate) fn chat_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .collect()
    }

    /// Replies not yet served.
    pub(crate) fn remaining(&self) -> usize {
        self.state.lock().expect("lock").replies.len()
    }

    /// The first chat request that breaks the request invariants
    /// ([`super::sse::check_request_invariants`]): its index and the violation.
    pub(crate) fn invariant_violation(&self) -> Option<(usize, String)> {
        self.chat_requests().iter().enumerate().find_map(|(i, r)| {
            super::sse::check_request_invariants(&r.body)
                .err()
                .map(|e| (i, e))
        })
    }
}

/// Every test that used the mock checks, when it is done with the server, that every chat
/// request it received kept the invariants: each tool call answered by exactly one tool
/// result, ids present, arguments JSON objects, no empty assistant message (SPEC §3.2).
impl Drop for MockServer {
    fn drop(&mut self) {
        if thread::panicking() {
            return;
        }
        if let Some((index, violation)) = self.invariant_violation() {
            panic!("chat request {index} to the mock broke the request invariants: {violation}");
        }
    }
}

fn handle(mut stream: TcpStream, state: &Mutex<State>) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    let reply = {
        let mut state = state.lock().expect("lock");
        let reply = if request.method == "GET" {
            state
                .gets
                .iter()
                .find(|(suffix, _)| request.path.ends_with(suffix.as_str()))
                .map(|(_, r)| r.clone())
                .unwrap_or_else(|| Reply::error(404, "no such path in the mock"))
        } else if let Some((_, reply)) = state
            .reject_over
            .as_ref()
            .filter(|(max, _)| request.raw_body.len() > *max)
        {
            reply.clone()
        } else {
            state.replies.pop_front().unwrap_or_else(|| {
                Reply::error(500, "mock server: no scripted reply left for this request")
            })
        };
        state.requests.push(request);
        reply
    };
    send(&mut stream, reply);
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Both);
}

fn read_request(stream: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut raw_body = vec![0; length];
    reader.read_exact(&mut raw_body).ok()?;
    let body = serde_json::from_slice(&raw_body).unwrap_or(Value::Null);
    Some(Recorded {
        method,
        path,
        headers,
        body,
        raw_body,
        at: Instant::now(),
    })
}

fn send(stream: &mut TcpStream, reply: Reply) {
    match reply {
        Reply::Json(value) => {
            let body = value.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Reply::Sse(events) => {
            let _ = stream.write_all(sse_head().as_bytes());
            for event in events {
                let _ = write!(stream, "data: {event}\n\n");
                let _ = stream.flush();
            }
            let _ = stream.write_all(b"data: [DONE]\n\n");
        }
        Reply::SseRaw(pieces) => {
            let _ = stream.write_all(sse_head().as_bytes());
            let _ = stream.flush();
            for (delay, bytes) in pieces {
                thread::sleep(delay);
                if stream.write_all(&bytes).is_err() {
                    return;
                }
                let _ = stream.flush();
            }
        }
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Status\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            let _ = write!(stream, "{head}\r\n{body}");
        }
        Reply::Raw(bytes) => {
            let _ = stream.write_all(&bytes);
        }
        Reply::Delayed(delay, inner) => {
            thread::sleep(delay);
            send(stream, *inner);
        }
        Reply::Hang => thread::sleep(Duration::from_secs(3600)),
    }
}

fn sse_head() -> String {
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".to_string()
}
