//! Modbus/TCP (port 502): detection on the protocol's port by a whole, flawless first
//! message (as Suricata's probe), request/response transactions paired by
//! transaction id, the `modbus` keyword, app-layer events and the EVE `modbus` record.
//! Off unless `app-layer.protocols.modbus.enabled` says yes, as in Suricata.

pub mod config;
pub mod detect;
pub mod eve;
pub mod parser;
pub mod state;

pub use state::{ModbusConfig, ModbusState, ModbusTx};

use meerkat_proto::events::{Modbus, ModbusMessage};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction};

/// Modbus/TCP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Modbus,
    name: "modbus",
    aliases: &[],
    family: None,
    enabled_by_default: false,
    transports: Transports::TCP,
    default_ports: &[502],
    // Suricata probes Modbus on its port only.
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: &[],
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::TxComplete,
    record: Some(RecordDef {
        event_type: "modbus",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "modbus",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "modbus.flooded",
    "modbus.invalid_exception_code",
    "modbus.invalid_function_code",
    "modbus.invalid_length",
    "modbus.invalid_protocol_id",
    "modbus.invalid_value",
    "modbus.unsolicited_response",
    "modbus.value_mismatch",
];

/// Suricata gives up probing once this many bytes came without a whole message.
pub const PROBE_DEPTH: usize = 16;

/// Suricata's probe: the first message, of either side, is whole (before more than
/// [`PROBE_DEPTH`] bytes are needed to tell), of a named function and flawless.
pub fn probe(data: &[u8]) -> Probe {
    match parser::parse(data, parser::Side::Unknown) {
        Ok((m, _)) if m.flags == 0 && m.code != 0 => Probe::Match,
        Ok(_) => Probe::NoMatch,
        Err(parser::Error::Incomplete) if data.len() > PROBE_DEPTH => Probe::NoMatch,
        Err(parser::Error::Incomplete) => Probe::NeedMore,
    }
}

/// Fuzz target: the flow's parser over arbitrary bytes in both directions (with a
/// small flood limit), every record rendered, the message parser alone and the probes.
pub fn fuzz(data: &[u8]) {
    let mut s = ModbusState::new(ModbusConfig { request_flood: 8 });
    crate::fuzz::drive(&mut s, data);
    for side in [
        parser::Side::Request,
        parser::Side::Response,
        parser::Side::Unknown,
    ] {
        if let Ok((m, _)) = parser::parse(data, side) {
            let _ = (m.address_range(), m.write_value_at(3));
        }
    }
    let _ = probe(data);
    crate::fuzz::probes(data);
}

fn message(m: &state::Msg) -> ModbusMessage {
    ModbusMessage {
        bytes: m.bytes().to_vec(),
        error_flags: u32::from(m.flags),
    }
}

impl Transaction for ModbusTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// Done once the response is in (Suricata's one progress step), both sides.
    fn complete(&self, _dir: Dir) -> bool {
        self.response.is_some()
    }

    fn progress(&self, _dir: Dir) -> u8 {
        u8::from(self.request.is_some()) | u8::from(self.response.is_some()) << 1
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Modbus(Modbus {
            id: self.id + 1,
            request: self.request.as_ref().map(message),
            response: self.response.as_ref().map(message),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AppState, ParseOutput};
    use parser::tests::{RD_COILS_REQ, RD_COILS_RESP};

    #[test]
    fn every_raised_event_is_listed() {
        let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "modbus");
        assert!(n > 0);
    }

    #[test]
    fn probes() {
        assert_eq!(probe(RD_COILS_REQ), Probe::Match);
        assert_eq!(probe(RD_COILS_RESP), Probe::Match);
        assert_eq!(probe(&RD_COILS_REQ[..5]), Probe::NeedMore);
        assert_eq!(probe(b"GET / HTTP/1.1\r\n\r\n"), Probe::NoMatch);
        // An unnamed function, a non-zero protocol id.
        assert_eq!(probe(b"\x00\x01\x00\x00\x00\x02\x0a\x64"), Probe::NoMatch);
        assert_eq!(probe(b"\x00\x01\x00\x01\x00\x02\x0a\x01"), Probe::NoMatch);
        // A long message is recognised whole, not when more than the probe's depth
        // came without it.
        let mut long = b"\x00\x01\x00\x00\x00\x14\x0a\x11".to_vec();
        long.resize(26, 0);
        assert_eq!(probe(&long), Probe::Match);
        assert_eq!(probe(&long[..17]), Probe::NoMatch);
        assert_eq!(probe(&long[..16]), Probe::NeedMore);
    }

    #[test]
    fn records_render_as_suricata_writes_them() {
        let mut s = ModbusState::new(ModbusConfig::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, RD_COILS_REQ, &mut out);
        s.parse(Dir::ToClient, RD_COILS_RESP, &mut out);
        let tx = s.tx(0).unwrap();
        assert!(tx.complete(Dir::ToServer));
        let r = tx.event_record(Dir::ToClient).unwrap();
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        (PROTOCOL.record.unwrap().render)(&r, &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            r#"{"modbus":{"id":1,"request":{"transaction_id":1,"protocol_id":0,"unit_id":10,"function_raw":1,"function_code":"RdCoils","access_type":"READ | COILS","category":"PUBLIC_ASSIGNED","error_flags":"NONE","read":{"address":0,"quantity":1}},"response":{"transaction_id":1,"protocol_id":0,"unit_id":10,"function_raw":1,"function_code":"RdCoils","access_type":"READ | COILS","category":"PUBLIC_ASSIGNED","error_flags":"NONE","read":{"data":"\u0000"}}}}"#
        );
    }
}
