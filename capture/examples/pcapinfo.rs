#![allow(clippy::print_stdout)]
//! Prints, for each capture file given, its packet count, link types and how it ends
//! (cleanly, or the error and offset): `cargo run -p meerkat-capture --example pcapinfo -- FILE...`

use std::collections::BTreeMap;

fn main() {
    for path in std::env::args().skip(1) {
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) => {
                println!("{path}: {e}");
                continue;
            }
        };
        let mut reader = match meerkat_capture::Reader::new(file) {
            Ok(r) => r,
            Err(e) => {
                println!("{path}: {e}");
                continue;
            }
        };
        let mut links = BTreeMap::new();
        let mut n = 0u64;
        let end = loop {
            match reader.next_packet() {
                Ok(Some(p)) => {
                    n += 1;
                    *links.entry(p.link_type).or_insert(0u64) += 1;
                }
                Ok(None) => break "ok".to_string(),
                Err(e) => break e.to_string(),
            }
        };
        println!("{path}: {n} packets, link types {links:?}, end: {end}");
    }
}
