//! The list of application protocols: one line per protocol.
//!
//! Each line names the [`AppProto`] variant, the protocol's module (which has a `pub
//! static PROTOCOL: Descriptor`) and, for a protocol with an EVE record, its arm of the
//! events contract's `Event.app` oneof. The order is the probing order (LLMNR after
//! DNS: the same messages are LLMNR on LLMNR's port only, DNS anywhere else).
//! Everything per protocol elsewhere is derived from it.

use crate::{AppRecord, Descriptor};

macro_rules! protocols {
    ($( $variant:ident => $module:ident $(, record $arm:ident)? ; )+) => {
        /// Application protocols the engine knows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[repr(u8)]
        pub enum AppProto {
            /// Not (yet) recognised.
            #[default]
            Unknown = 0,
            $( $variant, )+
            /// Detection gave up on this flow.
            Failed = 255,
        }

        /// Every protocol's descriptor, in probing order; `PROTOCOLS[p as usize - 1]`
        /// is protocol `p`'s.
        pub static PROTOCOLS: &[&Descriptor] = &[$( &crate::$module::PROTOCOL ),+];

        /// Number of parsed protocols plus one (`Unknown`): the size of per-protocol
        /// tables indexed by `AppProto as usize` (`Failed` excluded).
        pub const APP_PROTOS: usize = [$( AppProto::$variant ),+].len() + 1;

        impl AppProto {
            /// The parsed protocols, in list order.
            pub const ALL: &[AppProto] = &[$( AppProto::$variant ),+];
        }

        /// The protocol whose record `r` is.
        pub fn record_proto(r: &AppRecord) -> AppProto {
            match r {
                $($( AppRecord::$arm(_) => AppProto::$variant, )?)+
            }
        }
    };
}

protocols! {
    Http => http, record Http;
    Dns => dns, record Dns;
    Tls => tls, record Tls;
    Ssh => ssh, record Ssh;
    Llmnr => llmnr;
    Mdns => mdns, record Mdns;
    Sip => sip, record Sip;
    Mqtt => mqtt, record Mqtt;
    Modbus => modbus, record Modbus;
    Enip => enip, record Enip;
    Dnp3 => dnp3, record Dnp3;
    Ftp => ftp, record Ftp;
    FtpData => ftp_data, record FtpData;
    Rfb => rfb, record Rfb;
    Dcerpc => dcerpc, record Dcerpc;
    Smtp => smtp, record Smtp;
    Snmp => snmp, record Snmp;
    Ike => ike, record Ike;
    Ntp => ntp, record Ntp;
    Smb => smb, record Smb;
    Http2 => http2, record Http2;
    Dhcp => dhcp, record Dhcp;
    Quic => quic, record Quic;
    Ldap => ldap, record Ldap;
    Pop3 => pop3, record Pop3;
    Imap => imap;
    Tftp => tftp, record Tftp;
    Krb5 => krb5, record Krb5;
    Websocket => websocket, record Websocket;
    Doh2 => doh2, record Doh2;
    BittorrentDht => bittorrent_dht, record BittorrentDht;
    Telnet => telnet;
    Pgsql => pgsql, record Pgsql;
    Rdp => rdp, record Rdp;
    Nfs => nfs, record Nfs;
}

impl AppProto {
    /// Whether a rule of protocol `rule` applies to a flow of this protocol (its own
    /// rules, and its family's: `alert http` on HTTP/2).
    pub fn matches_rule(self, rule: AppProto) -> bool {
        self == rule
            || self
                .descriptor()
                .is_some_and(|d| d.matches_rule_proto(rule))
    }

    /// The protocol's descriptor (`None` for `Unknown` and `Failed`).
    pub fn descriptor(self) -> Option<&'static Descriptor> {
        match self {
            AppProto::Unknown | AppProto::Failed => None,
            p => PROTOCOLS.get(p as usize - 1).copied(),
        }
    }

    /// EVE `app_proto` value.
    pub fn name(self) -> &'static str {
        match self {
            AppProto::Unknown => "",
            AppProto::Failed => "failed",
            p => p.descriptor().map_or("", |d| d.name),
        }
    }

    /// The protocol a rule header or `app-layer-protocol` names (`http`, `http1`), if it
    /// is one Meerkat parses.
    pub fn from_rule_proto(s: &str) -> Option<AppProto> {
        PROTOCOLS.iter().find(|d| d.is_named(s)).map(|d| d.proto)
    }

    /// Whether a rule of protocol `rule` applies to a flow of this protocol (see
    /// [`Descriptor::covers`]).
    pub fn covers(self, rule: AppProto) -> bool {
        self == rule || self.descriptor().is_some_and(|d| d.covers(rule))
    }

    /// The protocols whose flows a rule of this protocol applies to: itself and those
    /// that carry it.
    pub fn carriers(self) -> impl Iterator<Item = AppProto> {
        std::iter::once(self).chain(
            PROTOCOLS
                .iter()
                .filter(move |d| d.proto != self && d.inner.contains(&self))
                .map(|d| d.proto),
        )
    }

    /// Index in per-protocol tables of [`crate::APP_PROTOS`] entries.
    pub fn index(self) -> usize {
        self as usize % APP_PROTOS
    }
}

/// The descriptor of the protocol whose record `r` is.
pub fn record_descriptor(r: &AppRecord) -> Option<&'static Descriptor> {
    record_proto(r).descriptor()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each descriptor sits at its protocol's place in the list, and names are unique.
    #[test]
    fn the_list_and_the_descriptors_agree() {
        assert_eq!(PROTOCOLS.len(), AppProto::ALL.len());
        for (i, (d, p)) in PROTOCOLS.iter().zip(AppProto::ALL).enumerate() {
            assert_eq!(d.proto, *p, "{}", d.name);
            assert_eq!(*p as usize, i + 1);
            assert_eq!(p.descriptor().map(|d| d.name), Some(d.name));
            assert_eq!(AppProto::from_rule_proto(d.name), Some(*p));
        }
        let mut names: Vec<&str> = PROTOCOLS
            .iter()
            .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a protocol name or alias is used twice");
        assert!(APP_PROTOS < usize::from(AppProto::Failed as u8));
    }
}
