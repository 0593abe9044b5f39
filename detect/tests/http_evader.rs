//! The HTTP body evasion suite (suricata-verify `http-evader/*`), at parser level: each
//! pcap's TCP streams are reassembled, fed to the HTTP parser segment by segment in
//! capture order, and the decoded response bodies must contain the EICAR strings the
//! suite's two `file_data` rules look for (every test there expects both to alert).
//!
//! Skips with a message when `../shared` is absent.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use meerkat_detect::app::http::{HttpConfig, HttpState};
use meerkat_detect::app::{AppState, Buf, Dir, ParseOutput};
use meerkat_wire::decode::{self, L4};

fn corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/suricata-verify/http-evader");
    p.is_dir().then_some(p)
}

/// One direction of a TCP stream being reassembled.
#[derive(Default)]
struct Stream {
    next: Option<u32>,
    /// Out-of-order segments by sequence number.
    ooo: BTreeMap<u32, Vec<u8>>,
    fin: bool,
}

impl Stream {
    /// Adds a segment; returns the bytes that became in order.
    fn add(&mut self, seq: u32, syn: bool, data: &[u8]) -> Vec<u8> {
        if syn {
            self.next = Some(seq.wrapping_add(1));
        }
        let Some(mut next) = self.next else {
            // Midstream: start at the first segment seen.
            self.next = Some(seq);
            return self.add(seq, false, data);
        };
        if !data.is_empty() {
            self.ooo.entry(seq).or_insert_with(|| data.to_vec());
        }
        let mut out = Vec::new();
        loop {
            let mut progressed = false;
            let keys: Vec<u32> = self.ooo.keys().copied().collect();
            for k in keys {
                let rel = k.wrapping_sub(next) as i32;
                if rel > 0 {
                    continue;
                }
                let skip = (-rel) as usize;
                let seg = self.ooo.remove(&k).unwrap_or_default();
                if skip < seg.len() {
                    out.extend_from_slice(&seg[skip..]);
                    next = next.wrapping_add((seg.len() - skip) as u32);
                    progressed = true;
                }
            }
            if !progressed {
                break;
            }
        }
        self.next = Some(next);
        out
    }
}

/// Runs one pcap through the HTTP parser; returns the decoded response bodies.
fn run(pcap: &Path, cfg: HttpConfig) -> Vec<Vec<u8>> {
    let f = std::fs::File::open(pcap).unwrap();
    let mut r = meerkat_wire::pcap::Reader::new(std::io::BufReader::new(f)).unwrap();
    let mut client: Option<(IpAddr, u16)> = None;
    let mut streams = [Stream::default(), Stream::default()];
    let mut state = HttpState::new(cfg);
    let mut out = ParseOutput::default();
    while let Some(p) = r.next_packet().unwrap() {
        let (pkt, _) = decode::decode(p.link_type, p.data);
        let (
            Some(ip),
            L4::Tcp {
                src_port,
                seq,
                flags,
                ..
            },
        ) = (pkt.ip, pkt.l4)
        else {
            continue;
        };
        let syn = flags & 0x02 != 0;
        let ack = flags & 0x10 != 0;
        if client.is_none() && syn && !ack {
            client = Some((ip.src, src_port));
        }
        let c = *client.get_or_insert((ip.src, src_port));
        let dir = if (ip.src, src_port) == c {
            Dir::ToServer
        } else {
            Dir::ToClient
        };
        let s = &mut streams[dir.index()];
        let data = s.add(seq, syn, pkt.payload);
        if !data.is_empty() {
            state.parse(dir, &data, &mut out);
        }
        if flags & 0x05 != 0 && !s.fin {
            s.fin = true;
        }
    }
    state.eof(Dir::ToServer, &mut out);
    state.eof(Dir::ToClient, &mut out);
    (0..state.tx_count())
        .filter_map(|i| {
            match state
                .tx(i)?
                .buffer(meerkat_app::http::detect::RESPONSE_BODY, 0)
            {
                Buf::Ready(b) | Buf::Partial(b) => Some(b.to_vec()),
                _ => None,
            }
        })
        .collect()
}

fn contains(h: &[u8], n: &[u8]) -> bool {
    h.windows(n.len()).any(|w| w == n)
}

#[test]
fn http_evader_file_data() {
    let Some(dir) = corpus() else {
        eprintln!("skipping: ../shared/corpus/suricata-verify/http-evader is absent");
        return;
    };
    // The suite runs with response-body-decompress-layer-limit=3.
    let mut cfg = HttpConfig::default();
    cfg.decode.layer_limit = 3;
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.join("input.pcap").is_file())
        .collect();
    names.sort();
    let mut failed = Vec::new();
    for t in &names {
        let bodies = run(&t.join("input.pcap"), cfg);
        let hit = |n: &[u8]| bodies.iter().any(|b| contains(b, n));
        if !(hit(b"EICAR-STANDARD-ANTIVIRUS-TEST-FILE") && hit(b"X5O!P%@AP[4")) {
            failed.push(t.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    let passed = names.len() - failed.len();
    eprintln!(
        "http-evader: {passed}/{} decoded; failures: {failed:?}",
        names.len()
    );
    // The issue asks for 80% end to end; the parser decodes every one of them.
    assert!(
        failed.is_empty(),
        "only {passed}/{} evader bodies decoded",
        names.len()
    );
}
