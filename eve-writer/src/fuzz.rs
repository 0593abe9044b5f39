//! Entry point of the event-stream fuzz target (`fuzz/fuzz_targets/events.rs`), also run
//! over the seeds in `eve-writer/seeds/events/` by `eve-writer/tests/fuzz_seeds.rs`.

use meerkat_proto::events::Event;
use prost::bytes::Bytes;

use crate::batch::{self, RawBatch};
use crate::render::{self, RenderOptions};

/// `data` as an `EventBatch` message a producer sent: framed as the writer frames it,
/// each event decoded and rendered with the default options and with every option on,
/// as the writer does. Malformed messages, hostile sizes and unknown enum values get an
/// error or are counted as unknown; none may panic.
pub fn event_batch(data: &[u8]) {
    let Ok(b) = RawBatch::parse(Bytes::copy_from_slice(data), 0) else {
        return;
    };
    let all = RenderOptions {
        alert_metadata: true,
        alert_payload: true,
        alert_payload_printable: true,
        alert_packet: true,
        max_stream_payload: 4096,
        pcap_filename: true,
        community_id: Some(0),
        stats_totals: true,
        stats_threads: true,
    };
    let mut ev = Event::default();
    let mut line = Vec::new();
    for encoded in b.events() {
        if batch::decode_event(&mut ev, encoded).is_err() {
            continue;
        }
        if render::kind(&ev).is_none() {
            continue;
        }
        for opts in [&RenderOptions::default(), &all] {
            line.clear();
            render::render(&mut line, &ev, opts);
        }
    }
}
