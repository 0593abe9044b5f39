//! Suricata's unix-socket protocol (`unix-command`), so that `suricatasc`, EveBox,
//! Scirius and the Prometheus exporters that speak it drive Meerkat unchanged. It is a
//! second front on the control service: each command calls the same code as the gRPC
//! `Control` call it corresponds to (`unix_commands`).
//!
//! The protocol, as Suricata 8 speaks it:
//!
//! ```text
//! client: {"version": "0.2"}\n          (or "0.1": replies then carry no newline)
//! server: {"return": "OK"}\n
//! client: {"command": "uptime"}\n      ({"command": NAME, "arguments": {...}} when it takes some)
//! server: {"message": 42, "return": "OK"}\n
//! server: {"message": "Unknown command", "return": "NOK"}\n
//! ```
//!
//! Suricata reads each message with one `recv`; Meerkat accumulates bytes until a whole
//! JSON value has come (newline-terminated or not, split over several reads or several
//! in one), up to [`MAX_MESSAGE`] bytes. A message that is not JSON, a handshake with
//! another version, or a command that is not an object with a string `command` is
//! answered with a NOK reply naming the problem, and the connection is closed (Suricata
//! closes it without a reply). At most [`MAX_CLIENTS`] connections are served at once.
//!
//! The socket is created owner-only (mode 0600), as the control socket.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

use super::unix_commands::Commands;

/// Largest message a client may send, bytes.
pub const MAX_MESSAGE: usize = 1 << 20;
/// Connections served at once; more wait for one to close.
pub const MAX_CLIENTS: usize = 32;

/// A reply: `{"return": "OK"|"NOK", "message": ...}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub ok: bool,
    pub message: Value,
}

impl Reply {
    pub fn ok(message: impl Into<Value>) -> Reply {
        Reply {
            ok: true,
            message: message.into(),
        }
    }

    pub fn nok(message: impl Into<String>) -> Reply {
        Reply {
            ok: false,
            message: Value::String(message.into()),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "message": self.message,
            "return": if self.ok { "OK" } else { "NOK" },
        })
    }
}

/// Binds the socket (owner-only) with the directory made if missing. A socket file of a
/// dead process is replaced; a live one is an error.
pub fn bind(path: &Path) -> Result<UnixListener, String> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err("another process serves it".to_string());
    }
    let _ = std::fs::remove_file(path);
    // SAFETY: umask only changes this process's file creation mask; restored below.
    let old = unsafe { libc::umask(0o177) };
    let l = UnixListener::bind(path);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    l.map_err(|e| e.to_string())
}

/// Serves connections until the process ends.
pub async fn serve(listener: UnixListener, commands: Arc<Commands>, path: PathBuf) {
    // Connections wait in the backlog until the roles are up and the rules loaded.
    while !commands.ready() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CLIENTS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        match listener.accept().await {
            Ok((stream, _)) => {
                let commands = commands.clone();
                tokio::spawn(async move {
                    let _permit = permit;
                    if let Err(e) = connection(stream, &commands).await {
                        tracing::debug!("unix-command client: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::warn!("unix-command socket {}: {e}", path.display());
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

/// Bytes of the stream, one JSON value at a time.
struct Framed {
    stream: UnixStream,
    buf: Vec<u8>,
}

/// What reading a message gave.
pub(crate) enum Read {
    Message(Value),
    /// Not JSON (the reason).
    Bad(String),
    Closed,
}

/// The next whole JSON value at the front of `buf` (leading whitespace skipped), taken
/// out of it; `None` while more bytes are needed. A buffer past [`MAX_MESSAGE`] bytes
/// without a whole value is a bad message.
pub(crate) fn take_message(buf: &mut Vec<u8>) -> Option<Read> {
    let start = buf.iter().position(|b| !b.is_ascii_whitespace());
    if let Some(start) = start {
        let mut it = serde_json::Deserializer::from_slice(&buf[start..]).into_iter::<Value>();
        match it.next() {
            Some(Ok(v)) => {
                let used = start + it.byte_offset();
                buf.drain(..used);
                return Some(Read::Message(v));
            }
            Some(Err(e)) if !e.is_eof() => {
                return Some(Read::Bad(format!("not JSON: {e}")));
            }
            _ => {}
        }
    } else {
        buf.clear();
    }
    if buf.len() > MAX_MESSAGE {
        return Some(Read::Bad(format!(
            "message longer than {MAX_MESSAGE} bytes"
        )));
    }
    None
}

impl Framed {
    async fn next(&mut self) -> std::io::Result<Read> {
        loop {
            if let Some(r) = take_message(&mut self.buf) {
                return Ok(r);
            }
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(Read::Closed);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    async fn send(&mut self, v: &Value, newline: bool) -> std::io::Result<()> {
        let mut out = serde_json::to_vec(v).unwrap_or_default();
        if newline {
            out.push(b'\n');
        }
        self.stream.write_all(&out).await
    }
}

/// The protocol version a handshake asks for, if it is one this server speaks.
pub fn handshake(v: &Value) -> Result<&'static str, String> {
    match v.get("version").and_then(Value::as_str) {
        Some("0.1") => Ok("0.1"),
        Some("0.2") => Ok("0.2"),
        Some(other) => Err(format!(
            "unsupported protocol version `{other}` (0.1 and 0.2 are)"
        )),
        None => Err("the first message must be {\"version\": \"0.2\"}".to_string()),
    }
}

/// The reply to one command message; `None` when it is not a command
/// (`{"command": NAME, "arguments": {...}}`).
pub(crate) async fn answer(commands: &Commands, v: &Value) -> Option<Reply> {
    let name = v.get("command").and_then(Value::as_str)?;
    let empty = serde_json::Map::new();
    let args = v
        .get("arguments")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    Some(commands.run(name, args).await)
}

async fn connection(stream: UnixStream, commands: &Commands) -> std::io::Result<()> {
    let mut f = Framed {
        stream,
        buf: Vec::new(),
    };
    let version = match f.next().await? {
        Read::Message(v) => match handshake(&v) {
            Ok(version) => version,
            Err(e) => {
                f.send(&Reply::nok(e).to_json(), true).await?;
                return Ok(());
            }
        },
        Read::Bad(e) => {
            f.send(&Reply::nok(e).to_json(), true).await?;
            return Ok(());
        }
        Read::Closed => return Ok(()),
    };
    // Version 0.1 clients read replies without a newline.
    let newline = version == "0.2";
    f.send(&json!({"return": "OK"}), newline).await?;
    loop {
        let v = match f.next().await? {
            Read::Message(v) => v,
            Read::Bad(e) => {
                f.send(&Reply::nok(e).to_json(), newline).await?;
                return Ok(());
            }
            Read::Closed => return Ok(()),
        };
        let Some(reply) = answer(commands, &v).await else {
            f.send(
                &Reply::nok("a command is {\"command\": NAME, \"arguments\": {...}}").to_json(),
                newline,
            )
            .await?;
            return Ok(());
        };
        f.send(&reply.to_json(), newline).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshakes_and_replies() {
        assert_eq!(handshake(&json!({"version": "0.2"})), Ok("0.2"));
        assert_eq!(handshake(&json!({"version": "0.1", "x": 1})), Ok("0.1"));
        assert!(
            handshake(&json!({"version": "0.3"}))
                .unwrap_err()
                .contains("0.3")
        );
        assert!(handshake(&json!({"version": 2})).is_err());
        assert!(handshake(&json!({"foo": 1})).is_err());
        assert_eq!(
            Reply::ok(7).to_json().to_string(),
            r#"{"message":7,"return":"OK"}"#
        );
        assert_eq!(
            Reply::nok("Unknown command").to_json().to_string(),
            r#"{"message":"Unknown command","return":"NOK"}"#
        );
    }
}
