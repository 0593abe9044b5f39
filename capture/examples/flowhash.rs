#![allow(clippy::print_stdout, clippy::unwrap_used)]
//! Hashes every packet of a capture file ROUNDS times with the flow hash that picks each
//! packet's worker, for instruction counts of the hash alone:
//! `cargo build --release -p meerkat-capture --example flowhash`, then
//! `valgrind --tool=callgrind target/release/examples/flowhash FILE ROUNDS` with ROUNDS 0
//! and N: the difference over N x packets is the cost of one hash. Prints the packets
//! and a digest of the workers they go to (4 workers), which must not change when only
//! the hash's code does.

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: flowhash FILE [ROUNDS]");
    let rounds: usize = args.next().map_or(1, |r| r.parse().unwrap());
    let mut reader = meerkat_capture::Reader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let mut packets: Vec<(u16, Vec<u8>)> = Vec::new();
    while let Ok(Some(p)) = reader.next_packet() {
        packets.push((p.link_type, p.data.to_vec()));
    }
    let mut digest = 0u64;
    for _ in 0..rounds {
        for (link_type, data) in &packets {
            let h = meerkat_capture::hash::flow_hash(*link_type, std::hint::black_box(data));
            let w = meerkat_capture::hash::worker_for(h, 4) as u64;
            digest = digest.wrapping_mul(31).wrapping_add(w);
        }
    }
    println!(
        "{} packets, {rounds} rounds, digest {digest:016x}",
        packets.len()
    );
}
