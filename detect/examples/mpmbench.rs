//! Prefilter throughput on real payloads: builds one prefilter from the payload fast
//! patterns of a ruleset's TCP rules and scans every TCP payload of a pcap with it.
//! `cargo run --release -p meerkat-detect --example mpmbench -- RULES PCAP`
#![allow(clippy::print_stdout, clippy::unwrap_used)]
use std::time::Instant;

use meerkat_detect::engine::mpm::{MpmBuilder, MpmScratch};
use meerkat_detect::rules::{ListRef, Proto};
use meerkat_wire::decode::{L4, decode};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ctx = meerkat_detect::rules::RuleContext::from_config(&meerkat_config::Config::default())
        .unwrap();
    let l = meerkat_detect::rules::load_files(&[args[1].clone().into()], &ctx).unwrap();
    let mut b = MpmBuilder::default();
    let mut n = 0;
    for (i, r) in l.rules.iter().enumerate() {
        if r.is_app() || !matches!(r.proto, Proto::Tcp | Proto::Ip) {
            continue;
        }
        if let Some(f) = &r.fast
            && f.list == ListRef::Payload
            && f.bytes.len()
                >= std::env::var("MINLEN")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
        {
            b.add(&f.bytes, f.nocase, i as u32);
            n += 1;
        }
    }
    let m = b.build().unwrap();
    let file = std::fs::File::open(&args[2]).unwrap();
    let mut reader = meerkat_wire::pcap::Reader::new(file).unwrap();
    let mut payloads: Vec<Vec<u8>> = Vec::new();
    while let Some(p) = reader.next_packet().unwrap() {
        let (pkt, _) = decode(p.link_type, p.data);
        if matches!(pkt.l4, L4::Tcp { .. }) && !pkt.payload.is_empty() {
            payloads.push(pkt.payload.to_vec());
        }
    }
    let bytes: usize = payloads.iter().map(Vec::len).sum();
    let mut s = MpmScratch::default();
    let mut out = Vec::new();
    let mut cands = 0usize;
    let cpu = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the timespec we own.
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
    };
    let c0 = cpu();
    let t = Instant::now();
    for p in &payloads {
        out.clear();
        m.scan(p, &mut s, &mut out);
        cands += out.len();
    }
    let wall = t.elapsed().as_secs_f64();
    let secs = cpu() - c0;
    println!("wall {wall:.3} s, cpu {secs:.3} s");
    println!(
        "{n} patterns, {} payloads, {:.1} MB, {:.3} s, {:.0} MB/s, {:.2} candidates/payload",
        payloads.len(),
        bytes as f64 / 1e6,
        secs,
        bytes as f64 / 1e6 / secs,
        cands as f64 / payloads.len() as f64
    );
}
