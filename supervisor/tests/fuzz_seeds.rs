//! Runs the control-request fuzz entry point
//! (`meerkat_supervisor::control::fuzz::control_requests`) over its seeds
//! (`supervisor/seeds/control/`: every unix-socket command and every `Control` call, as
//! a pcap run and as a live one), cuts of each and flipped bytes, as ordinary tests.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use meerkat_supervisor::control::fuzz::control_requests;

/// One test, so that the sandbox directory the entry point makes in this process can be
/// removed at its end.
#[test]
fn control_requests_answered() {
    control_seeds();
    hostile_requests();
    let sandbox = std::env::temp_dir().join(format!("meerkat-fuzz-control-{}", std::process::id()));
    std::fs::remove_dir_all(&sandbox).unwrap();
}

fn control_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/control");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let answered = control_requests(&data);
        // Every seed's requests are answered, but for the ones made to be refused.
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let want = match name.as_str() {
            "unix-pcap.bin" => 28,
            "unix-live.bin" => 4,
            "unix-bad.bin" | "unix-nohandshake.bin" => 0,
            "grpc.bin" => 14,
            "grpc-live.bin" => 2,
            other => panic!("a seed without an expected count: {other}"),
        };
        assert_eq!(answered, want, "{name}");
        for k in 1..16 {
            control_requests(&data[..data.len() * k / 16]);
        }
        for i in (1..data.len()).step_by(13) {
            let mut d = data.clone();
            d[i] ^= 0xa5;
            control_requests(&d);
        }
        n += 1;
    }
    assert!(n >= 6, "seeds missing: {n}");
}

fn hostile_requests() {
    // A message longer than the unix socket takes, never closed.
    let mut long = vec![2u8 | (7 << 2)];
    long.extend_from_slice(b"{\"version\":\"0.2\"}[");
    long.resize((1 << 20) + 4096, b'[');
    control_requests(&long);
    // Deep nesting: serde_json's recursion limit answers it.
    let mut deep = vec![2u8];
    deep.extend_from_slice(b"{\"version\":\"0.2\"}{\"command\":\"uptime\",\"arguments\":");
    deep.extend(std::iter::repeat_n(b'[', 4096));
    control_requests(&deep);
    // gRPC: a length past the end, an unknown method, a message of wrong wire types.
    control_requests(&[0, 7, 0xff, 0xff, 0x0a]);
    control_requests(&[0, 200, 2, 0, 0x08, 0x80]);
    control_requests(&[0, 2, 3, 0, 0x0a, 0x05, 0x2f]);
    control_requests(&[]);
}
