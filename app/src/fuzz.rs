//! The driver shared by the protocols' fuzz targets ([`crate::Descriptor::fuzz`], run by
//! `fuzz/` and, over each protocol's seeds, by `tests/fuzz_seeds.rs`): it drives one
//! parser with arbitrary bytes and touches every buffer and record, so a panic anywhere
//! in a parser surfaces.
//!
//! Input layout: byte 0 picks the piece size (low 6 bits), interleaving (bit 6) and a
//! gap (bit 7); bytes 1-2 (big endian) say how many of the remaining bytes go to the
//! server (an even count also has the parser keep the bytes of all its frames,
//! [`AppState::set_frames`]); the rest goes to the client. Both directions then end.

use super::{AppState, BufferId, Dir, ParseOutput, Transaction};

/// Drives `state` with `data` laid out as the module docs say.
pub fn drive(state: &mut dyn AppState, data: &[u8]) {
    let [ctl, hi, lo, rest @ ..] = data else {
        return;
    };
    let split = usize::from(u16::from_be_bytes([*hi, *lo])).min(rest.len());
    let (to_server, to_client) = rest.split_at(split);
    let step = usize::from(ctl % 64) + 1;
    if lo & 1 == 0 {
        let all: Vec<BufferId> = crate::PROTOCOLS
            .iter()
            .flat_map(|d| d.frames.iter())
            .flat_map(|f| [f.to_server, f.to_client])
            .flatten()
            .collect();
        state.set_frames(&all);
    }
    let mut out = ParseOutput::default();
    let mut a = to_server.chunks(step);
    let mut b = to_client.chunks(step);
    let interleave = ctl & 0x40 != 0;
    let calls = to_server.len().div_ceil(step) + to_client.len().div_ceil(step);
    let touch_every = calls.div_ceil(MAX_TOUCHES).max(1);
    let mut i = 0usize;
    loop {
        let (dir, chunk) = match (interleave, i % 2) {
            (true, 0) | (false, _) => match a.next() {
                Some(c) => (Dir::ToServer, c),
                None => match b.next() {
                    Some(c) => (Dir::ToClient, c),
                    None => break,
                },
            },
            _ => match b.next() {
                Some(c) => (Dir::ToClient, c),
                None => match a.next() {
                    Some(c) => (Dir::ToServer, c),
                    None => break,
                },
            },
        };
        if ctl & 0x80 != 0 && i == 3 {
            state.gap(dir, chunk.len() as u64, &mut out);
        } else {
            state.parse(dir, chunk, &mut out);
        }
        // The newest transactions (those the calls most likely changed) after at most
        // `MAX_TOUCHES` calls spread over the input, so that a long input cut into
        // small pieces stays cheap to replay; every transaction at the end.
        if i.is_multiple_of(touch_every) {
            touch(state, false);
        }
        i += 1;
    }
    state.eof(Dir::ToServer, &mut out);
    state.eof(Dir::ToClient, &mut out);
    touch(state, true);
    state.free_below(u64::MAX);
}

/// Transactions looked at by an intermediate [`touch`]: the newest ones (older ones
/// were looked at when they were new, and all are at the end).
const TOUCH_NEWEST: usize = 4;
/// Intermediate [`touch`]es of one input at most.
const MAX_TOUCHES: usize = 64;

fn touch(state: &dyn AppState, all: bool) {
    let n = state.tx_count();
    let first = if all {
        0
    } else {
        n.saturating_sub(TOUCH_NEWEST)
    };
    for i in first..n {
        let Some(tx) = state.tx(i) else { continue };
        inspect(tx);
    }
}

/// Every buffer and frame id some protocol defines, and one id past each protocol's
/// (a buffer of another protocol, or an unknown one, must be absent, not a panic).
fn all_buffer_ids() -> &'static [BufferId] {
    static IDS: std::sync::LazyLock<Vec<BufferId>> = std::sync::LazyLock::new(|| {
        let mut ids: Vec<BufferId> = crate::PROTOCOLS
            .iter()
            .flat_map(|d| d.buffers.iter().chain(d.frames.iter()))
            .flat_map(|b| [b.to_server, b.to_client])
            .flatten()
            .chain(crate::AppProto::ALL.iter().map(|&p| BufferId::of(p, 255)))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    });
    &IDS
}

fn inspect(tx: &dyn Transaction) {
    for &id in all_buffer_ids() {
        for idx in 0..3 {
            let _ = tx.buffer(id, idx);
        }
    }
    let _ = (
        tx.complete(Dir::ToServer),
        tx.complete(Dir::ToClient),
        tx.id(),
    );
    let _ = tx.record();
    let _ = tx.event_record(Dir::ToServer);
    for d in [Dir::ToServer, Dir::ToClient] {
        for f in tx.files(d) {
            let _ = crate::files::record(f, tx.id());
        }
    }
}

/// Every protocol's probe over `data`, on both transports and in both directions.
pub fn probes(data: &[u8]) {
    let r = super::Registry::default();
    for t in [super::Transport::Tcp, super::Transport::Udp] {
        for d in [Dir::ToServer, Dir::ToClient] {
            let _ = r.probe(t, d, [40000, 80], data);
        }
    }
}

/// Runs the fuzz target called `name` (a protocol's [`crate::FuzzTarget`]) over
/// `data`; what `fuzz/fuzz_targets/<name>.rs` calls.
pub fn run(name: &str, data: &[u8]) {
    if let Some(t) = crate::PROTOCOLS
        .iter()
        .flat_map(|d| d.fuzz)
        .find(|t| t.name == name)
    {
        (t.run)(data);
    }
}
