//! The inspection buffers that app-layer protocols provide, and the rule keywords that
//! select them.
//!
//! A rule selects a buffer with a sticky-buffer keyword (`http.uri; content:"/x";`) or,
//! for the older HTTP keywords, with a content modifier (`content:"/x"; http_uri;`). Some
//! keywords mean a different buffer per direction: `http.header` is the request's headers
//! for a `to_server` rule and the response's for a `to_client` one; a [`BufferDef`] names
//! one buffer per direction. Each protocol lists its own in [`crate::Descriptor::buffers`];
//! the lookups here search every protocol's.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::{AppProto, Descriptor, KeywordDef, PROTOCOLS};

/// Items of a multi-buffer inspected at most (e.g. DNS questions, certificates).
pub const MAX_ITEMS: usize = 256;

/// An inspection buffer: its protocol and a number the protocol chooses. The numbering
/// is internal (not a wire contract); ids of different protocols never collide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u16);

impl BufferId {
    /// Buffer `n` of protocol `proto`.
    pub const fn of(proto: AppProto, n: u8) -> BufferId {
        BufferId(((proto as u16) << 8) | n as u16)
    }

    /// The protocol the buffer belongs to.
    pub fn proto_index(self) -> usize {
        usize::from(self.0 >> 8)
    }
}

/// A rule keyword that selects an inspection buffer.
#[derive(Debug, Clone, Copy)]
pub struct BufferDef {
    /// The sticky-buffer keyword.
    pub name: &'static str,
    /// Other sticky-buffer spellings.
    pub aliases: &'static [&'static str],
    /// The content-modifier spelling (`http_uri`), if the keyword has one.
    pub modifier: Option<&'static str>,
    pub proto: AppProto,
    /// The buffer a `to_server` rule inspects, if any.
    pub to_server: Option<BufferId>,
    /// The buffer a `to_client` rule inspects, if any.
    pub to_client: Option<BufferId>,
    /// Whether the buffer has several items (a rule matches if one item matches).
    pub multi: bool,
}

/// A [`BufferDef`], for the protocols' tables.
pub const fn def(
    name: &'static str,
    aliases: &'static [&'static str],
    modifier: Option<&'static str>,
    proto: AppProto,
    to_server: Option<BufferId>,
    to_client: Option<BufferId>,
    multi: bool,
) -> BufferDef {
    BufferDef {
        name,
        aliases,
        modifier,
        proto,
        to_server,
        to_client,
        multi,
    }
}

/// What a keyword spelling names.
#[derive(Debug, Clone, Copy)]
enum Entry {
    Sticky(&'static BufferDef),
    Keyword(&'static Descriptor, &'static KeywordDef),
}

/// Every keyword spelling of every protocol, built once (the rule parser looks up each
/// keyword of tens of thousands of rules).
struct Tables {
    by_name: HashMap<&'static str, Entry>,
    modifiers: HashMap<&'static str, &'static BufferDef>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let mut by_name = HashMap::new();
    let mut modifiers = HashMap::new();
    for &d in PROTOCOLS {
        for b in d.buffers {
            for n in std::iter::once(&b.name).chain(b.aliases) {
                by_name.entry(*n).or_insert(Entry::Sticky(b));
            }
            if let Some(m) = b.modifier {
                modifiers.entry(m).or_insert(b);
            }
        }
        for k in d.keywords {
            for n in std::iter::once(&k.name).chain(k.aliases) {
                by_name.entry(*n).or_insert(Entry::Keyword(d, k));
            }
        }
    }
    Tables { by_name, modifiers }
});

/// The buffer keyword spelled `kw` as a sticky buffer.
pub fn sticky(kw: &str) -> Option<&'static BufferDef> {
    match TABLES.by_name.get(kw) {
        Some(Entry::Sticky(b)) => Some(b),
        _ => None,
    }
}

/// Buffer names that several protocols define, each with buffers of its own (the
/// first protocol's is [`sticky`]'s; a rule of another protocol gets that one's,
/// [`sticky_in`]).
pub const SHARED_NAMES: &[&str] = &[
    "file.data",
    "file_data",
    "file.name",
    "file.magic",
    // TLS's fingerprints, QUIC's too on `alert quic` rules.
    "ja3.hash",
    "ja3_hash",
    "ja3.string",
    "ja3_string",
    "ja3s.hash",
    "ja3s_hash",
    "ja3s.string",
    "ja3s_string",
    "ja4.hash",
    "ja4_hash",
];

/// The buffer keyword spelled `kw` as a sticky buffer in a rule of protocol `proto`:
/// the protocol's own buffer of a shared name (`file.data` of `alert smtp`), else
/// [`sticky`]'s.
pub fn sticky_in(kw: &str, proto: Option<AppProto>) -> Option<&'static BufferDef> {
    if SHARED_NAMES.contains(&kw)
        && let Some(d) = proto.and_then(AppProto::descriptor)
        && let Some(b) = d
            .buffers
            .iter()
            .find(|b| b.name == kw || b.aliases.contains(&kw))
    {
        return Some(b);
    }
    sticky(kw)
}

/// The buffer keyword spelled `kw` as a content modifier (`http_uri`).
pub fn modifier(kw: &str) -> Option<&'static BufferDef> {
    TABLES.modifiers.get(kw).copied()
}

/// The protocol keyword (not a sticky buffer) spelled `kw`, with its protocol.
pub fn keyword(kw: &str) -> Option<(&'static Descriptor, &'static KeywordDef)> {
    match TABLES.by_name.get(kw) {
        Some(Entry::Keyword(d, k)) => Some((d, k)),
        _ => None,
    }
}

/// The frame a `frame:` value names: `<proto>.<frame>` (`sip.pdu`), or `<frame>` of
/// the rule's protocol `proto`; `stream` is every TCP protocol's (see
/// [`crate::stream_frame`]).
pub fn frame(proto: Option<AppProto>, name: &str) -> Option<&'static BufferDef> {
    let own = |d: &'static Descriptor, f: &str| {
        if f == "stream" {
            return crate::stream_frame::def_of(d.proto);
        }
        d.frames.iter().find(|b| b.name == f)
    };
    let qualified = name.split_once('.').and_then(|(p, f)| {
        let d = PROTOCOLS.iter().find(|d| d.is_named(p))?;
        own(d, f)
    });
    qualified.or_else(|| own(proto.and_then(AppProto::descriptor)?, name))
}

/// The frame whose buffer (in either direction) is `id`.
pub fn frame_by_id(id: BufferId) -> Option<&'static BufferDef> {
    if crate::stream_frame::dir_of(id).is_some() {
        let proto = AppProto::ALL.get(id.proto_index().checked_sub(1)?)?;
        return crate::stream_frame::def_of(*proto);
    }
    PROTOCOLS
        .iter()
        .flat_map(|d| d.frames.iter())
        .find(|f| f.to_server == Some(id) || f.to_client == Some(id))
}

/// Whether `def` is one of a protocol's frames (not a sticky buffer).
pub fn is_frame(def: &BufferDef) -> bool {
    crate::stream_frame::is_def(def)
        || def
            .proto
            .descriptor()
            .is_some_and(|d| d.frames.iter().any(|f| std::ptr::eq(f, def)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(sticky("http_uri").unwrap().name, "http.uri");
        assert_eq!(
            sticky("file_data").unwrap().to_client,
            Some(crate::http::detect::RESPONSE_BODY)
        );
        assert_eq!(
            modifier("http_client_body").unwrap().name,
            "http.request_body"
        );
        assert!(modifier("dns_query").is_none());
        assert!(sticky("http.nope").is_none());
        assert_eq!(keyword("ssl_state").map(|(d, _)| d.name), Some("tls"));
        assert!(keyword("http.uri").is_none());
        assert_eq!(sticky("file.data").unwrap().proto, AppProto::Http);
        assert_eq!(
            sticky_in("file_data", Some(AppProto::Smtp)).unwrap().proto,
            AppProto::Smtp
        );
        assert_eq!(
            sticky_in("file.data", Some(AppProto::Http)).unwrap().proto,
            AppProto::Http
        );
        let pdu = frame(None, "sip.pdu").unwrap();
        assert_eq!(pdu.proto, AppProto::Sip);
        assert!(std::ptr::eq(
            frame(Some(AppProto::Sip), "pdu").unwrap(),
            pdu
        ));
        assert_eq!(
            frame(Some(AppProto::Sip), "request.line").map(|b| b.name),
            Some("request.line")
        );
        assert!(frame(None, "pdu").is_none());
        assert!(frame(Some(AppProto::Http), "pdu").is_none());
    }

    /// Keyword spellings are unique across protocols, buffers and keywords; every
    /// buffer belongs to its protocol's id space, and ids are unique.
    #[test]
    fn names_and_ids_are_unique() {
        let mut names: Vec<&str> = Vec::new();
        let mut ids = Vec::new();
        for d in PROTOCOLS {
            for b in d.buffers {
                // Shared names are each protocol's own (`sticky_in`); HTTP's is the
                // default.
                if d.proto == AppProto::Http || !SHARED_NAMES.contains(&b.name) {
                    names.push(b.name);
                    names.extend(b.aliases);
                }
                assert_eq!(b.proto, d.proto, "{}", b.name);
                ids.extend(b.to_server.iter().chain(&b.to_client).copied());
            }
            for k in d.keywords {
                names.push(k.name);
                names.extend(k.aliases);
            }
            for f in d.frames {
                assert_eq!(f.proto, d.proto, "{}", f.name);
                ids.extend(f.to_server.iter().chain(&f.to_client).copied());
            }
        }
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            n,
            "a keyword is spelled the same by two protocols"
        );
        for id in ids {
            assert!(id.proto_index() >= 1 && id.proto_index() < crate::APP_PROTOS);
            // The stream frame's numbers are no protocol's own.
            assert!(crate::stream_frame::dir_of(id).is_none(), "{id:?}");
        }
    }
}
