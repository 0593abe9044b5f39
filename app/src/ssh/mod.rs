//! SSH (RFC 4253): detection by the `SSH-` identification line, the version banner of
//! each side, and the key-exchange algorithms of each side's KEXINIT (HASSH). Parsing
//! stops at NEWKEYS: what follows is encrypted.
//!
//! One transaction per flow, as Suricata's SSH parser has. Buffers: `ssh.proto`,
//! `ssh.software` (the side's banner fields), `ssh.hassh`/`ssh.hassh.string` (the
//! client's KEXINIT) and `ssh.hassh.server`/`ssh.hassh.server.string` (the server's).

pub mod config;
pub mod detect;
pub mod eve;
pub mod state;

pub use state::{SshState, SshTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction};

/// SSH.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Ssh,
    name: "ssh",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[22],
    port_bound: false,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "ssh",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "ssh",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "ssh.invalid_banner",
    "ssh.invalid_record",
    "ssh.long_banner",
    "ssh.long_kex_record",
];

/// Fuzz target: the parser over arbitrary bytes in both directions, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut SshState::new(), data);
    crate::fuzz::probes(data);
}

/// Recognises the identification string every SSH side sends first (`SSH-2.0-...`).
pub fn probe(data: &[u8]) -> Probe {
    const MAGIC: &[u8] = b"SSH-";
    if data.len() >= MAGIC.len() {
        if data.starts_with(MAGIC) {
            Probe::Match
        } else {
            Probe::NoMatch
        }
    } else if MAGIC.starts_with(data) {
        Probe::NeedMore
    } else {
        Probe::NoMatch
    }
}

impl Transaction for SshTx {
    fn id(&self) -> u64 {
        0
    }

    fn complete(&self, dir: Dir) -> bool {
        self.side(dir).done
    }

    /// The stage ([`SshTx::stage`]), and the packets read (so that each new one is
    /// inspected for its frames).
    fn progress(&self, dir: Dir) -> u8 {
        self.stage(dir) | ((self.records[dir.index()].len() % 64) as u8) << 2
    }

    /// Suricata's SSH parser's state names.
    fn progress_name(&self, dir: Dir) -> Option<&'static str> {
        Some(match (dir, self.stage(dir)) {
            (Dir::ToServer, 0) => "request_in_progress",
            (Dir::ToServer, 1 | 2) => "request_banner_done",
            (Dir::ToServer, _) => "request_finished",
            (Dir::ToClient, 0) => "response_in_progress",
            (Dir::ToClient, 1 | 2) => "response_banner_done",
            (Dir::ToClient, _) => "response_finished",
        })
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        let (dir, kind) = detect::frame_kind(id)?;
        let r = self.records[dir.index()].get(index)?;
        Some(crate::FrameMeta {
            id: r.id + kind,
            stream_offset: Some(r.offset + detect::frame_range(r.bytes.len(), kind).start as u64),
            complete: true,
            tx_id: Some(0),
            length: None,
        })
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        if let Some((dir, kind)) = detect::frame_kind(id) {
            let side = self.side(dir);
            return match self.records[dir.index()].get(index) {
                // Partial while more packets may come: a rule that does not match
                // the packets so far is tried again on the next.
                Some(r) if side.done => {
                    Buf::Ready(&r.bytes[detect::frame_range(r.bytes.len(), kind)])
                }
                Some(r) => Buf::Partial(&r.bytes[detect::frame_range(r.bytes.len(), kind)]),
                None if index == 0 => not_yet(side.done),
                None => Buf::Absent,
            };
        }
        if index > 0 {
            return Buf::Absent;
        }
        let (dir, what) = match id {
            detect::PROTO_CLIENT => (Dir::ToServer, 0),
            detect::PROTO_SERVER => (Dir::ToClient, 0),
            detect::SOFTWARE_CLIENT => (Dir::ToServer, 1),
            detect::SOFTWARE_SERVER => (Dir::ToClient, 1),
            detect::HASSH => (Dir::ToServer, 2),
            detect::HASSH_SERVER => (Dir::ToClient, 2),
            detect::HASSH_STRING => (Dir::ToServer, 3),
            detect::HASSH_SERVER_STRING => (Dir::ToClient, 3),
            _ => return Buf::Absent,
        };
        let s = self.side(dir);
        let found = match what {
            0 | 1 if !s.banner_done => return not_yet(s.done),
            0 => Some(&s.proto[..]),
            1 => Some(&s.software[..]),
            _ => match &s.hassh {
                None => return not_yet(s.done),
                Some(h) if what == 2 => Some(&h.hash[..]),
                Some(h) => Some(&h.string[..]),
            },
        };
        match found {
            Some(b) => Buf::Ready(b),
            None => Buf::Absent,
        }
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Ssh(eve::record(self)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    /// Suricata's SSH log condition: both identification lines, or with HASSH
    /// logged both key exchanges done (NEWKEYS, or the direction's end).
    fn log_ready(&self, _ending: bool) -> bool {
        let [c, s] = &self.sides;
        if self.log_hassh {
            c.done && s.done
        } else {
            c.banner_done && s.banner_done
        }
    }
}

impl SshTx {
    /// 0 nothing, 1 banner parsed, 2 KEXINIT parsed, 3 done (NEWKEYS or end).
    pub fn stage(&self, dir: Dir) -> u8 {
        let s = self.side(dir);
        if s.done {
            3
        } else if s.hassh.is_some() {
            2
        } else if s.banner_done {
            1
        } else {
            0
        }
    }
}

fn not_yet(done: bool) -> Buf<'static> {
    if done { Buf::Absent } else { Buf::NotYet }
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_raised_event_is_listed() {
        let n =
            crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "ssh");
        assert!(n > 0);
    }
    use super::*;

    fn render(tx: &SshTx) -> String {
        let mut b = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut b);
        eve::render(&tx.record().unwrap(), &mut o);
        o.end();
        String::from_utf8(b).unwrap()
    }

    /// The record is written once both identification lines are in, without HASSH;
    /// with HASSH logged it waits for both key exchanges and carries them.
    #[test]
    fn the_record_and_when_it_is_written() {
        use crate::{AppState, ParseOutput};
        let mut out = ParseOutput::default();
        for hassh in [false, true] {
            let mut s = SshState::new();
            s.log_hassh(hassh);
            s.parse(Dir::ToServer, b"SSH-2.0-libssh-0.7.2\r\n", &mut out);
            let tx = |s: &SshState| {
                s.tx(0)
                    .unwrap()
                    .as_any()
                    .unwrap()
                    .downcast_ref::<SshTx>()
                    .unwrap()
                    .clone()
            };
            assert!(!tx(&s).log_ready(false));
            s.parse(Dir::ToClient, b"SSH-2.0-OpenSSH_7.4 Debian\r\n", &mut out);
            assert_eq!(tx(&s).log_ready(false), !hassh);
            assert_eq!(
                render(&tx(&s)),
                r#"{"ssh":{"client":{"proto_version":"2.0","software_version":"libssh-0.7.2"},"server":{"proto_version":"2.0","software_version":"OpenSSH_7.4"}}}"#
            );
            s.eof(Dir::ToServer, &mut out);
            s.eof(Dir::ToClient, &mut out);
            assert!(tx(&s).log_ready(true));
        }
    }

    #[test]
    fn probe_by_banner() {
        assert_eq!(probe(b"SSH-2.0-OpenSSH_8.9\r\n"), Probe::Match);
        assert_eq!(probe(b"SS"), Probe::NeedMore);
        assert_eq!(probe(b""), Probe::NeedMore);
        assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
        assert_eq!(probe(b"SSX"), Probe::NoMatch);
    }
}
