//! The user-space BPF filter's cost per packet, side by side with libpcap's own
//! (`pcap_offline_filter`), on the packets of a capture file:
//!
//! ```text
//! cargo run --release -p meerkat-wire --example bpf_cost -- FILE.pcap [EXPR...]
//! ```
//!
//! Each round runs Meerkat's interpreter then libpcap's over every packet, for each
//! expression, interleaved; prints the median ns per packet of each over the rounds, and
//! checks that both keep the same packets.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::expect_used)]

use std::time::Instant;

use meerkat_wire::bpf::{Program, compile};
use meerkat_wire::libpcap;

const ROUNDS: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: bpf_cost FILE.pcap [EXPR...]");
    let mut exprs: Vec<String> = args.collect();
    if exprs.is_empty() {
        exprs = [
            "not host 10.0.0.5",
            "tcp port 80 or udp port 53",
            "vlan and tcp",
            "tcp[tcpflags] & tcp-syn != 0",
            "ip or ip6 or arp or vlan",
        ]
        .map(String::from)
        .to_vec();
    }
    let lib = libpcap::get().expect("libpcap");
    let mut r = meerkat_wire::pcap::Reader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let mut packets = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        assert_eq!(p.link_type, 1, "Ethernet captures only");
        packets.push((p.data.to_vec(), p.origlen));
    }
    println!(
        "{} packets of {path}; {ROUNDS} rounds, medians",
        packets.len()
    );
    println!(
        "{:<36} {:>6} {:>12} {:>12} {:>8}",
        "expression", "insns", "meerkat ns", "libpcap ns", "kept"
    );
    for expr in &exprs {
        let insns = libpcap::compile_on_dead(lib, expr, 1, 262_144).unwrap();
        let ours = Program::new(&compile(expr, 1).unwrap()).unwrap();
        let prog = libpcap::BpfProgram {
            bf_len: insns.len() as u32,
            bf_insns: insns.as_ptr() as *mut libpcap::BpfInsn,
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut kept = (0u64, 0u64);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            let mut n = 0u64;
            for (d, o) in &packets {
                n += u64::from(ours.matches(std::hint::black_box(d), *o));
            }
            a.push(t.elapsed().as_nanos() as f64 / packets.len() as f64);
            kept.0 = n;
            let t = Instant::now();
            let mut n = 0u64;
            for (d, o) in &packets {
                let hdr = libpcap::PktHdr {
                    ts: libc::timeval {
                        tv_sec: 0,
                        tv_usec: 0,
                    },
                    caplen: d.len() as u32,
                    len: *o,
                };
                // SAFETY: program and packet outlive the call; libpcap only reads them.
                n += u64::from(unsafe { (lib.offline_filter)(&prog, &hdr, d.as_ptr()) } != 0);
            }
            b.push(t.elapsed().as_nanos() as f64 / packets.len() as f64);
            kept.1 = n;
        }
        assert_eq!(kept.0, kept.1, "{expr}: the two disagree");
        println!(
            "{:<36} {:>6} {:>12.1} {:>12.1} {:>8}",
            expr,
            insns.len(),
            median(a),
            median(b),
            kept.0
        );
    }
}
