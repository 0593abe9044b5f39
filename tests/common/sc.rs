//! A client of Suricata's unix-socket protocol (what `suricatasc` speaks), for the tests
//! of Meerkat's socket: the version handshake, then one JSON command per line, one JSON
//! reply per line.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

pub struct Sc {
    pub w: UnixStream,
    pub r: BufReader<UnixStream>,
}

impl Sc {
    /// Connects to the socket at `path` and shakes hands.
    pub fn connect(path: &Path) -> Sc {
        let w = UnixStream::connect(path).unwrap();
        w.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        let mut sc = Sc { w, r };
        assert_eq!(sc.send(&json!({"version": "0.2"})), json!({"return": "OK"}));
        sc
    }

    /// Sends one JSON line and reads the reply.
    pub fn send(&mut self, v: &Value) -> Value {
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.w.write_all(&line).unwrap();
        let mut reply = String::new();
        self.r.read_line(&mut reply).unwrap();
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("reply {reply:?}: {e}"))
    }

    /// The reply to command `name` with `args` (none when null).
    pub fn cmd(&mut self, name: &str, args: Value) -> Value {
        let v = if args.is_null() {
            json!({"command": name})
        } else {
            json!({"command": name, "arguments": args})
        };
        self.send(&v)
    }
}
