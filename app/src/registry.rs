//! The protocols enabled for a run, configured: what the worker probes flows with and
//! makes parsers from.

use meerkat_config::{AppEnabled, ConfigError};

use crate::config::{self, Section};
use crate::descriptor::Build;
use crate::{AppProto, AppState, Descriptor, Dir, PROTOCOLS, Parser, Probe, Transport};

/// Most port ranges of one `detection-ports` entry.
pub const MAX_DETECTION_PORTS: usize = 64;

/// Result of probing a direction's first bytes against every enabled protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    Proto(AppProto),
    /// Some protocol still needs more bytes to decide.
    NeedMore,
    /// No protocol matches.
    None,
}

/// The ports that order a protocol's probing (or, for a port-bound protocol, where it
/// is recognised).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortHint {
    /// The descriptor's default ports, on either side of the flow.
    Default(&'static [u16]),
    /// `detection-ports`: `dp` ranges for the server's port, `sp` for the client's.
    Configured {
        dp: Vec<(u16, u16)>,
        sp: Vec<(u16, u16)>,
    },
}

impl PortHint {
    /// Whether a flow with (client, server) `ports` is on the protocol's usual ports.
    fn covers(&self, ports: [u16; 2]) -> bool {
        let within = |set: &[(u16, u16)], p: u16| set.iter().any(|&(a, b)| (a..=b).contains(&p));
        match self {
            PortHint::Default(list) => list.iter().any(|p| ports.contains(p)),
            PortHint::Configured { dp, sp } => within(dp, ports[1]) || within(sp, ports[0]),
        }
    }
}

/// Parses a `detection-ports` value: a port, a range `a:b`, or a list of them in
/// brackets (`[80, 8080:8090]`), as Suricata's port syntax; no variables or negation.
pub fn parse_ports(s: &str) -> Result<Vec<(u16, u16)>, String> {
    let body = s.trim();
    let body = body
        .strip_prefix('[')
        .and_then(|b| b.strip_suffix(']'))
        .unwrap_or(body);
    let mut out = Vec::new();
    for part in body.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part.starts_with('!') || part.starts_with('$') || part.eq_ignore_ascii_case("any") {
            return Err(format!(
                "`{part}`: detection ports are numbers or ranges (a:b), without variables or negation"
            ));
        }
        let num = |x: &str, dflt: u16| -> Result<u16, String> {
            if x.trim().is_empty() {
                return Ok(dflt);
            }
            x.trim()
                .parse()
                .map_err(|_| format!("`{part}` is not a port or a range of ports"))
        };
        let range = match part.split_once(':') {
            Some((a, b)) => (num(a, 0)?, num(b, u16::MAX)?),
            None => {
                let p = num(part, 0)?;
                (p, p)
            }
        };
        if range.0 > range.1 {
            return Err(format!("range `{part}` ends before it starts"));
        }
        if out.len() == MAX_DETECTION_PORTS {
            return Err(format!("more than {MAX_DETECTION_PORTS} port ranges"));
        }
        out.push(range);
    }
    if out.is_empty() {
        return Err(format!("`{s}` names no port"));
    }
    Ok(out)
}

/// A parser made by a plain function (protocols without settings of their own).
#[derive(Debug)]
struct PlainParser(fn(Transport) -> Box<dyn AppState>);

impl Parser for PlainParser {
    fn new_state(&self, transport: Transport) -> Box<dyn AppState> {
        (self.0)(transport)
    }
}

/// Makes a protocol's parser from its config section.
pub(crate) fn build(desc: &Descriptor, section: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    match desc.build {
        Build::Plain(f) => Ok(Box::new(PlainParser(f))),
        Build::Configured { build, .. } => build(section),
    }
}

#[derive(Debug)]
struct Entry {
    desc: &'static Descriptor,
    /// `None` when the protocol is `detection-only`: recognised, not parsed.
    parser: Option<Box<dyn Parser>>,
    ports: PortHint,
}

/// The application protocols a run parses, with their settings; probing order is the
/// list's, enablement comes from the config.
#[derive(Debug)]
pub struct Registry {
    entries: Vec<Entry>,
    /// What the file layer does in every new flow (the worker sets it).
    files: crate::files::FileConfig,
    /// The frame buffers the loaded rules inspect.
    frames: UsedBuffers,
    /// Every buffer the loaded rules inspect.
    rule_buffers: UsedBuffers,
}

/// Buffers the loaded rules inspect, and per protocol whether any is its own (and
/// whether its stream frame is among them): a new flow's state is told of them only
/// when its protocol has some, found without a scan.
#[derive(Debug, Default)]
struct UsedBuffers {
    ids: Vec<crate::BufferId>,
    of_proto: Vec<bool>,
    stream_frame: Vec<bool>,
}

impl UsedBuffers {
    fn new(ids: Vec<crate::BufferId>) -> UsedBuffers {
        let mut of_proto = vec![false; crate::APP_PROTOS];
        let mut stream_frame = vec![false; crate::APP_PROTOS];
        for b in &ids {
            if let Some(p) = of_proto.get_mut(b.proto_index()) {
                *p = true;
            }
            if crate::stream_frame::dir_of(*b).is_some()
                && let Some(p) = stream_frame.get_mut(b.proto_index())
            {
                *p = true;
            }
        }
        UsedBuffers {
            ids,
            of_proto,
            stream_frame,
        }
    }

    /// The buffers, if any is `proto`'s.
    fn for_proto(&self, proto: AppProto) -> Option<&[crate::BufferId]> {
        self.of_proto
            .get(proto as usize)
            .copied()
            .unwrap_or(false)
            .then_some(&self.ids[..])
    }
}

impl Default for Registry {
    /// Every protocol, with its default settings.
    fn default() -> Self {
        Registry::with(|_| true)
    }
}

impl Registry {
    /// Every protocol for which `on` holds, with default settings.
    pub fn with(on: impl Fn(&Descriptor) -> bool) -> Registry {
        let entries = PROTOCOLS
            .iter()
            .filter(|d| on(d))
            .filter_map(|&desc| {
                let parser = build(desc, &Section::empty(desc.name)).ok()?;
                Some(Entry {
                    desc,
                    parser: Some(parser),
                    ports: PortHint::Default(desc.default_ports),
                })
            })
            .collect();
        Registry {
            entries,
            files: crate::files::FileConfig::default(),
            frames: UsedBuffers::default(),
            rule_buffers: UsedBuffers::default(),
        }
    }

    /// The protocols enabled by `app-layer.protocols.<name>.enabled`, each configured
    /// from its section.
    pub fn from_config(config: &meerkat_config::Config) -> Result<Registry, ConfigError> {
        let mut entries = Vec::new();
        for &desc in PROTOCOLS {
            let section = config.app_layer.protocols.get(desc.name);
            let enabled = config.app_layer.enabled(desc.name, desc.enabled_by_default);
            if enabled == AppEnabled::No {
                continue;
            }
            let s = Section::of(desc.name, section);
            let parser = build(desc, &s).map_err(|e| config::invalid(desc.name, &e))?;
            let ports = match section.and_then(|s| s.detection_ports.as_ref()) {
                None => PortHint::Default(desc.default_ports),
                Some(dp) => {
                    let one = |v: &Option<meerkat_config::VarValue>, key: &str| {
                        v.as_ref()
                            .map(|v| parse_ports(&v.0))
                            .transpose()
                            .map(Option::unwrap_or_default)
                            .map_err(|e| {
                                config::invalid(desc.name, &format!("detection-ports.{key}: {e}"))
                            })
                    };
                    PortHint::Configured {
                        dp: one(&dp.dp, "dp")?,
                        sp: one(&dp.sp, "sp")?,
                    }
                }
            };
            entries.push(Entry {
                desc,
                parser: (enabled == AppEnabled::Yes).then_some(parser),
                ports,
            });
        }
        Ok(Registry {
            entries,
            files: crate::files::FileConfig::default(),
            frames: UsedBuffers::default(),
            rule_buffers: UsedBuffers::default(),
        })
    }

    /// Sets what the file layer does in the flows made from now on (from the config's
    /// outputs and the loaded rules' needs).
    pub fn set_files(&mut self, cfg: crate::files::FileConfig) {
        self.files = cfg;
    }

    /// Sets the frame buffers the rules inspect, for the flows made from now on (a
    /// parser may keep bytes only for the frames rules use).
    pub fn set_frames(&mut self, used: Vec<crate::BufferId>) {
        self.frames = UsedBuffers::new(used);
    }

    /// Whether the rules use `proto`'s stream frame (which the engine makes, see
    /// [`crate::stream_frame`]).
    pub fn uses_stream_frame(&self, proto: AppProto) -> bool {
        self.frames
            .stream_frame
            .get(proto as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Sets the buffers the rules inspect, for the flows made from now on (see
    /// [`crate::AppState::set_rule_buffers`]).
    pub fn set_rule_buffers(&mut self, used: Vec<crate::BufferId>) {
        self.rule_buffers = UsedBuffers::new(used);
    }

    /// Packet time moved on to `now_s` (seconds): what protocols keep across flows may
    /// expire (see [`crate::Parser::tick`]).
    pub fn tick(&self, now_s: u64) {
        for p in self.entries.iter().filter_map(|e| e.parser.as_deref()) {
            p.tick(now_s);
        }
    }

    /// What the file layer does in new flows.
    pub fn files(&self) -> crate::files::FileConfig {
        self.files
    }

    /// The enabled protocols, in probing order.
    pub fn protocols(&self) -> impl Iterator<Item = &'static Descriptor> + '_ {
        self.entries.iter().map(|e| e.desc)
    }

    fn entry(&self, proto: AppProto) -> Option<&Entry> {
        self.entries.iter().find(|e| e.desc.proto == proto)
    }

    /// The reassembly depth of `proto`'s flows, when its section sets one (see
    /// [`Parser::stream_depth`]).
    pub fn stream_depth(&self, proto: AppProto) -> Option<u64> {
        self.entry(proto)?.parser.as_deref()?.stream_depth()
    }

    /// Fresh state for a flow of `proto`; `None` when the protocol is not parsed
    /// (disabled, or `detection-only`).
    pub fn new_state(&self, proto: AppProto, transport: Transport) -> Option<Box<dyn AppState>> {
        let p = self.entry(proto)?.parser.as_deref()?;
        let mut s = p.new_state(transport);
        if self.files.track {
            s.set_files(self.files);
        }
        if let Some(used) = self.frames.for_proto(proto) {
            s.set_frames(used);
        }
        if let Some(used) = self.rule_buffers.for_proto(proto) {
            s.set_rule_buffers(used);
        }
        Some(s)
    }

    /// Whether `data`, recognised as `proto`, is the server's side (see
    /// [`Descriptor::is_reply`]).
    pub fn is_reply(&self, proto: AppProto, transport: Transport, data: &[u8]) -> bool {
        self.entry(proto)
            .is_some_and(|e| (e.desc.is_reply)(transport, data))
    }

    /// Probes `data` (everything seen so far in `dir`, from its first byte). Protocols
    /// on their usual ports for the flow's (client, server) `ports` are tried first,
    /// then the rest: detection is by content, the ports only order the attempts (but
    /// for a port-bound protocol, which is recognised on its ports only).
    pub fn probe(&self, transport: Transport, dir: Dir, ports: [u16; 2], data: &[u8]) -> Detected {
        let mut need_more = false;
        // Two passes instead of a sorted copy: no allocation per probe.
        for preferred in [true, false] {
            for e in &self.entries {
                if !e.desc.transports.has(transport)
                    || e.ports.covers(ports) != preferred
                    || (!preferred && e.desc.port_bound)
                {
                    continue;
                }
                let probe = match e.desc.probe_on_port {
                    Some(lax) if preferred => lax,
                    _ => e.desc.probe,
                };
                match probe(transport, dir, data) {
                    Probe::Match => return Detected::Proto(e.desc.proto),
                    Probe::NeedMore => need_more = true,
                    Probe::NoMatch => {}
                }
            }
        }
        if need_more {
            Detected::NeedMore
        } else {
            Detected::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_detection_on_any_port() {
        let r = Registry::default();
        let probe = |t, d, ports, data: &[u8]| r.probe(t, d, ports, data);
        assert_eq!(
            probe(
                Transport::Tcp,
                Dir::ToServer,
                [40000, 8080],
                b"GET / HTTP/1.1\r\n"
            ),
            Detected::Proto(AppProto::Http)
        );
        assert_eq!(
            probe(
                Transport::Tcp,
                Dir::ToClient,
                [40000, 8080],
                b"HTTP/1.1 200 OK\r\n"
            ),
            Detected::Proto(AppProto::Http)
        );
        assert_eq!(
            probe(
                Transport::Tcp,
                Dir::ToServer,
                [40000, 8443],
                b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc"
            ),
            Detected::Proto(AppProto::Tls)
        );
        let q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01";
        assert_eq!(
            probe(Transport::Udp, Dir::ToServer, [40000, 5353], q),
            Detected::Proto(AppProto::Mdns)
        );
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, [40000, 80], b"G"),
            Detected::NeedMore
        );
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, [40000, 80], b"SSH-2.0-x\r\n"),
            Detected::Proto(AppProto::Ssh)
        );
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, [40000, 80], b"HELO x\r\n"),
            Detected::Proto(AppProto::Smtp)
        );
        assert_eq!(
            probe(Transport::Udp, Dir::ToServer, [40000, 5355], q),
            Detected::Proto(AppProto::Llmnr)
        );
        assert_eq!(
            probe(Transport::Udp, Dir::ToServer, [40000, 5354], q),
            Detected::Proto(AppProto::Dns)
        );
        let no_http = Registry::with(|d| d.proto != AppProto::Http);
        assert_eq!(
            no_http.probe(
                Transport::Tcp,
                Dir::ToServer,
                [40000, 80],
                b"GET / HTTP/1.1\r\n"
            ),
            Detected::None
        );
    }

    fn config(yaml: &str) -> Result<Registry, ConfigError> {
        let tree = meerkat_config::parse_text(yaml).map_err(ConfigError::Invalid)?;
        let mut r = meerkat_config::resolve_tree(tree)?;
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys)?;
        Registry::from_config(&r.config)
    }

    #[test]
    fn detection_ports_move_a_port_bound_protocol() {
        let q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01";
        let r = config(
            "app-layer:\n  protocols:\n    llmnr:\n      detection-ports:\n        dp: \"[5400, 6000:6010]\"\n",
        )
        .unwrap();
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 6005], q),
            Detected::Proto(AppProto::Llmnr)
        );
        // No longer on its default port; the server's port is what `dp` means.
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 5355], q),
            Detected::Proto(AppProto::Dns)
        );
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [6005, 40000], q),
            Detected::Proto(AppProto::Dns)
        );
    }

    #[test]
    fn detection_only_recognises_without_parsing() {
        let r =
            config("app-layer:\n  protocols:\n    ssh:\n      enabled: detection-only\n").unwrap();
        assert_eq!(
            r.probe(Transport::Tcp, Dir::ToServer, [40000, 22], b"SSH-2.0-x\r\n"),
            Detected::Proto(AppProto::Ssh)
        );
        assert!(r.new_state(AppProto::Ssh, Transport::Tcp).is_none());
        assert!(r.new_state(AppProto::Http, Transport::Tcp).is_some());
        let off = config("app-layer:\n  protocols:\n    ssh:\n      enabled: no\n").unwrap();
        assert_eq!(
            off.probe(Transport::Tcp, Dir::ToServer, [40000, 22], b"SSH-2.0-x\r\n"),
            Detected::None
        );
    }

    #[test]
    fn bad_detection_ports_are_errors_naming_the_key() {
        for bad in ["\"$HTTP_PORTS\"", "\"!80\"", "\"80:70\"", "\"x\""] {
            let e = config(&format!(
                "app-layer:\n  protocols:\n    dns:\n      detection-ports:\n        dp: {bad}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("app-layer.protocols.dns") && e.contains("detection-ports.dp"),
                "{e}"
            );
        }
        assert_eq!(parse_ports("53").unwrap(), vec![(53, 53)]);
        assert_eq!(parse_ports("[1024:]").unwrap(), vec![(1024, u16::MAX)]);
    }
}
