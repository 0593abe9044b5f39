//! Runs the event-stream fuzz entry point (`meerkat_eve_writer::fuzz::event_batch`) over
//! its seeds (`eve-writer/seeds/events/`: batches a worker sent for the bundled sample
//! capture, written by `detect/tests/fuzz_seeds.rs`'s `write_event_seeds`) and cuts of
//! each, and over hostile framings, as ordinary tests.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use meerkat_eve_writer::fuzz::event_batch;

#[test]
fn event_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/events");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        event_batch(&data);
        for k in 1..128 {
            event_batch(&data[..data.len() * k / 128]);
        }
        // Flipped bytes: wrong wire types, lengths and enum values.
        for i in (0..data.len()).step_by(7) {
            let mut d = data.clone();
            d[i] ^= 0xa5;
            event_batch(&d);
        }
        n += 1;
    }
    assert!(n >= 1, "no seed");
}

#[test]
fn hostile_framings() {
    // A length-delimited field claiming 2^63 bytes, a varint of 11 bytes, nested
    // lengths past the end, an empty message.
    event_batch(&[0x2a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    event_batch(&[
        0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    ]);
    event_batch(&[0x2a, 0x05, 0x2a, 0x10, 0x00]);
    event_batch(&[]);
}
