//! WebSocket (RFC 6455) after an HTTP/1 upgrade, as Suricata 8 has it: a flow becomes
//! WebSocket when its HTTP/1 parser sees `101 Switching Protocols` with `Upgrade:
//! websocket` (a [`crate::ProtoChange`]; WebSocket is never detected from its bytes
//! alone, as Suricata registers it on no port). Each frame is a transaction of its own
//! direction; fragments are reassembled (the final frame carries the message),
//! control frames stand alone between them, compressed messages (RSV1,
//! permessage-deflate) are inflated, and every payload is bounded by
//! `max-payload-size` (the rest of a frame is skipped, `skip_end_of_payload`; a
//! message or inflated bytes past it are cut, `reassembly_limit_reached`).
//!
//! - [`parser`]: frame headers and unmasking (pure functions);
//! - [`state`]: the per-connection reader and its transactions;
//! - [`detect`]: `websocket.payload`, `websocket.opcode`, `websocket.flags`,
//!   `websocket.mask`;
//! - here: the descriptor, config section, the EVE `websocket` record (one per frame,
//!   written in its packet's direction: `fin`, `mask` when masked, `opcode`) and the
//!   fuzz target.

pub mod detect;
pub mod parser;
pub mod state;

pub use state::{WsConfig, WsState, WsTx};

use meerkat_config::de;
use serde::Deserialize;

use crate::config::Section;
use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, ParseOutput, Parser, Probe, Transaction};

/// WebSocket.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Websocket,
    name: "websocket",
    aliases: &[],
    family: None,
    inner: &[],
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[],
    port_bound: false,
    // Reached only through an HTTP/1 upgrade, never by probing.
    probe: |_, _, _| Probe::NoMatch,
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Configured { keys: KEYS, build },
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "websocket",
        render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "websocket",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "websocket.skip_end_of_payload",
    "websocket.reassembly_limit_reached",
];

/// The keys of `app-layer.protocols.websocket` that Meerkat models.
pub const KEYS: &[&str] = &["max-payload-size"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WsSection {
    /// Payload bytes kept per frame, per reassembled message and per inflated message.
    #[serde(default = "default_max_payload", deserialize_with = "de::flex_usize")]
    pub max_payload_size: usize,
}

fn default_max_payload() -> usize {
    state::DEFAULT_MAX_PAYLOAD
}

impl Default for WsSection {
    fn default() -> Self {
        WsSection {
            max_payload_size: default_max_payload(),
        }
    }
}

/// The WebSocket parser, configured.
#[derive(Debug, Clone, Copy, Default)]
struct WsParser(WsConfig);

impl Parser for WsParser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(WsState::new(self.0))
    }
}

/// Most `max-payload-size` accepted (Suricata's is a 32-bit number).
pub const MAX_PAYLOAD_SIZE: usize = u32::MAX as usize;

fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: WsSection = s.typed()?;
    if section.max_payload_size > MAX_PAYLOAD_SIZE {
        return Err(format!(
            "max-payload-size {} is above {MAX_PAYLOAD_SIZE}",
            section.max_payload_size
        ));
    }
    Ok(Box::new(WsParser(WsConfig {
        max_payload: section.max_payload_size,
    })))
}

impl Transaction for WsTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A frame is the whole transaction.
    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    /// A frame's transaction is its direction's only (Suricata's unidirectional
    /// transactions).
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Websocket(meerkat_proto::events::Websocket {
            fin: self.fin(),
            mask: self.mask,
            opcode: u32::from(self.opcode),
        }))
    }

    fn has_event(&self, dir: Dir, name: &str) -> bool {
        dir == self.dir && self.events.contains(&name)
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// [`crate::RecordDef::render`]: the `websocket` object (`fin`, `mask` when the frame
/// is masked, `opcode` by name or `unknown-N`).
pub fn render(r: &AppRecord, o: &mut meerkat_eve::Obj<'_>) {
    if let AppRecord::Websocket(r) = r {
        o.obj("websocket", |x| {
            x.bool("fin", r.fin);
            if let Some(m) = r.mask {
                x.u64("mask", u64::from(m));
            }
            let op = u8::try_from(r.opcode).unwrap_or(u8::MAX);
            match parser::opcode_name(op) {
                Some(n) => x.str("opcode", n),
                None => x.str("opcode", &format!("unknown-{}", r.opcode)),
            };
        });
    }
}

/// Fuzz target: the parser over the shared driver's cuts of both directions, with a
/// small payload limit so that the bounds are reached, every record rendered.
pub fn fuzz(data: &[u8]) {
    let mut s = WsState::new(WsConfig { max_payload: 300 });
    crate::fuzz::drive(&mut s, data);
    let mut s = WsState::default();
    let mut out = ParseOutput::default();
    crate::AppState::parse(&mut s, Dir::ToClient, data, &mut out);
    for t in s.transactions() {
        if let Some(r) = t.record() {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            render(&r, &mut o);
            o.end();
        }
    }
}

#[cfg(test)]
mod tests;
