//! Packet header and flow conditions of a rule: addresses and ports, `flow`, and the
//! header keywords (`ttl`, `flags`, `dsize`, `vlan.id`, `app-layer-protocol`, ...).

use super::*;

impl Engine {
    /// Gives each rule the index of its header among the distinct headers.
    pub(super) fn number_headers(&mut self) {
        type Ports = (Vec<(u16, u16)>, Vec<(u16, u16)>);
        let mut by_ports: std::collections::HashMap<Ports, Vec<(u32, usize)>> =
            std::collections::HashMap::new();
        let mut n = 0u32;
        for i in 0..self.sigs.len() {
            let r = &self.sigs[i].rule;
            let key = (r.sport.ranges().to_vec(), r.dport.ranges().to_vec());
            let same = by_ports.entry(key).or_default();
            let found = same.iter().find(|&&(_, j)| {
                let o = &self.sigs[j].rule;
                o.proto == r.proto && o.direction == r.direction && o.src == r.src && o.dst == r.dst
            });
            let id = match found {
                Some(&(id, _)) => id,
                None => {
                    same.push((n, i));
                    n += 1;
                    n - 1
                }
            };
            self.sigs[i].hdr = id;
        }
        self.headers = n as usize;
    }

    /// [`Self::header_matches`], remembered per header for the rest of the inspection
    /// call (see [`DetectState::reset_headers`]).
    pub(super) fn header_cached(
        &self,
        sig: &Sig,
        p: &Packet<'_>,
        st: &mut DetectState,
    ) -> Option<bool> {
        if st.hdr_memo.len() < self.headers {
            st.hdr_memo.resize(self.headers, 0);
        }
        let h = sig.hdr as usize;
        match st.hdr_memo.get(h).copied() {
            Some(1) => None,
            Some(2) => Some(false),
            Some(3) => Some(true),
            _ => {
                let r = Self::header_matches(&sig.rule, p);
                if let Some(slot) = st.hdr_memo.get_mut(h) {
                    *slot = match r {
                        None => 1,
                        Some(false) => 2,
                        Some(true) => 3,
                    };
                    st.hdr_touched.push(sig.hdr);
                }
                r
            }
        }
    }

    /// Header match of `rule` on `p`: Some(reversed) when it matches.
    pub(super) fn header_matches(rule: &Rule, p: &Packet<'_>) -> Option<bool> {
        let ip = p.ip?;
        if !rule.proto.matches(ip.proto) {
            return None;
        }
        let (sp, dp) = p.ports();
        // Ports first: a candidate from a port group shared by several port sets (or
        // from the other flow direction's rules) most often fails on them.
        let fwd = rule.sport.matches(sp)
            && rule.dport.matches(dp)
            && rule.src.matches(&ip.src)
            && rule.dst.matches(&ip.dst);
        if fwd {
            return Some(false);
        }
        if rule.direction == Direction::Both
            && rule.sport.matches(dp)
            && rule.dport.matches(sp)
            && rule.src.matches(&ip.dst)
            && rule.dst.matches(&ip.src)
        {
            return Some(true);
        }
        None
    }

    pub(super) fn flow_opts_match(rule: &Rule, v: &PacketView<'_>) -> bool {
        let f = &rule.flow;
        if f.stateless {
            return true;
        }
        if let Some(want) = f.to_server
            && v.to_server != Some(want)
        {
            return false;
        }
        if let Some(est) = f.established
            && v.established != est
        {
            return false;
        }
        if let Some(frag) = f.frag {
            let is_frag = v.pkt.ip.is_some_and(|i| i.fragment.is_some());
            if is_frag != frag {
                return false;
            }
        }
        true
    }

    pub(super) fn header_keywords_match(rule: &Rule, v: &PacketView<'_>) -> bool {
        let p = v.pkt;
        let Some(ip) = p.ip else {
            return rule.header.is_empty();
        };
        rule.header.iter().all(|h| match *h {
            HeaderMatch::Ttl(c) => c.test(u64::from(ip.ttl)),
            HeaderMatch::Tos { value, negated } => (ip.tos == value) != negated,
            HeaderMatch::IpId(id) => ip.version == 4 && ip.ident == id,
            HeaderMatch::IpOpt(o) => {
                if ip.version != 4 || ip.header_len <= 20 {
                    return false;
                }
                p.frame
                    .get(ip.offset + 20..ip.offset + ip.header_len)
                    .is_some_and(|opts| ipv4_has_option(opts, o))
            }
            HeaderMatch::SameIp => ip.src == ip.dst,
            HeaderMatch::IpProto { cmp } => cmp.test(u64::from(ip.proto)),
            HeaderMatch::Flags(f) => match p.l4 {
                L4::Tcp { flags, .. } => {
                    let have = flags & !f.ignore;
                    match f.modifier {
                        FlagMod::Exact => have == f.bits,
                        FlagMod::Plus => have & f.bits == f.bits,
                        FlagMod::Any => have & f.bits != 0,
                        FlagMod::Not => have & f.bits == 0,
                    }
                }
                _ => false,
            },
            HeaderMatch::Seq(s) => matches!(p.l4, L4::Tcp { seq, .. } if seq == s),
            HeaderMatch::Ack(a) => matches!(p.l4, L4::Tcp { ack, .. } if ack == a),
            HeaderMatch::Window { value, negated } => {
                matches!(p.l4, L4::Tcp { window, .. } if (window == value) != negated)
            }
            HeaderMatch::IType(c) => matches!(p.l4, L4::Icmp { icmp_type, .. } if c.test(u64::from(icmp_type))),
            HeaderMatch::ICode(c) => matches!(p.l4, L4::Icmp { code, .. } if c.test(u64::from(code))),
            HeaderMatch::IcmpId(id) => matches!(p.l4, L4::Icmp { ident, icmp_type, .. } if ident == id && icmp_has_id(icmp_type)),
            HeaderMatch::IcmpSeq(s) => matches!(p.l4, L4::Icmp { seq, icmp_type, .. } if seq == s && icmp_has_id(icmp_type)),
            HeaderMatch::Dsize(c) => {
                // Suricata: only "less than" forms (and `=0`) can match an empty payload;
                // pseudo packets never match.
                let n = p.payload.len() as u64;
                !v.pseudo
                    && (n > 0 || matches!(c, NumCmp::Lt(_) | NumCmp::Le(_) | NumCmp::Eq(0)))
                    && c.test(n)
            }
            HeaderMatch::FragBits(fb) => {
                let raw = p.frame.get(ip.offset..).unwrap_or(&[]);
                let bits = match raw.get(6) {
                    Some(b) if ip.version == 4 => (b >> 5) & 0x7,
                    _ => 0,
                };
                // The flag bits in header order: 4 reserved, 2 DF, 1 MF (as parsed).
                let have = bits;
                match fb.modifier {
                    FlagMod::Exact => have == fb.bits,
                    FlagMod::Plus => have & fb.bits == fb.bits,
                    FlagMod::Any => have & fb.bits != 0,
                    FlagMod::Not => have & fb.bits == 0,
                }
            }
            HeaderMatch::FragOffset { cmp } => cmp.test(ip.fragment.map(|f| f.offset as u64).unwrap_or(0)),
            HeaderMatch::StreamSize { side, cmp } => {
                let (ts, tc) = v.stream_bytes;
                match side {
                    0 => cmp.test(ts),
                    1 => cmp.test(tc),
                    2 => cmp.test(ts) && cmp.test(tc),
                    _ => cmp.test(ts) || cmp.test(tc),
                }
            }
            HeaderMatch::AppLayerProtocol {
                proto,
                negated,
                mode,
            } => {
                let d = v.app_proto_dir;
                let is = match mode {
                    ProtoMode::Flow => v.app_proto.matches_rule(proto),
                    ProtoMode::ToServer => d[0] == proto,
                    ProtoMode::ToClient => d[1] == proto,
                    ProtoMode::Either => d[0] == proto || d[1] == proto,
                    ProtoMode::Direction => d[usize::from(v.to_server == Some(false))] == proto,
                };
                is != negated
            }
            HeaderMatch::DecodeEvent(bit) => p.events & bit != 0,
            HeaderMatch::AppLayerEvent(bit) => v.app_events & bit != 0,
            HeaderMatch::StreamEvent(bit) => v.stream_events & bit != 0,
            HeaderMatch::VlanId { cmp, layer } => vlan_id_matches(p.vlans(), cmp, layer),
        })
    }
}

/// The bytes of a packet-header buffer; None when the packet has no such header (or
/// it is cut short).
pub(super) fn hdr_buffer<'a>(p: &Packet<'a>, b: HdrBuffer) -> Option<&'a [u8]> {
    let (start, len) = match (b, p.ip, p.l4) {
        (HdrBuffer::Ipv4, Some(ip), _) if ip.version == 4 => (ip.offset, ip.header_len),
        (HdrBuffer::Ipv6, Some(ip), _) if ip.version == 6 => (ip.offset, ip.header_len),
        (
            HdrBuffer::Tcp,
            _,
            L4::Tcp {
                offset, header_len, ..
            },
        ) => (offset, header_len),
        (HdrBuffer::Udp, _, L4::Udp { offset, .. }) => (offset, 8),
        _ => return None,
    };
    p.frame.get(start..start.checked_add(len)?)
}

/// `vlan.id` on the packet's VLAN tags (outermost first); no tags, no match.
pub(super) fn vlan_id_matches(vlans: &[u16], cmp: NumCmp, layer: VlanLayer) -> bool {
    if vlans.is_empty() {
        return false;
    }
    let test = |id: &u16| cmp.test(u64::from(*id));
    match layer {
        VlanLayer::Any => vlans.iter().any(test),
        VlanLayer::All => vlans.iter().all(test),
        VlanLayer::Index(i) => {
            let idx = if i >= 0 {
                Some(i as usize)
            } else {
                vlans.len().checked_sub(usize::from(i.unsigned_abs()))
            };
            idx.and_then(|i| vlans.get(i)).is_some_and(test)
        }
    }
}

pub(super) fn icmp_has_id(icmp_type: u8) -> bool {
    // Echo, timestamp, information and address mask messages (v4), echo (v6).
    matches!(icmp_type, 0 | 8 | 13 | 14 | 15 | 16 | 17 | 18 | 128 | 129)
}

/// Walks IPv4 options (RFC 791) for `want`, bounded by the option area.
pub(super) fn ipv4_has_option(opts: &[u8], want: crate::rules::IpOpt) -> bool {
    let mut i = 0;
    while i < opts.len() {
        let t = opts[i];
        if want == crate::rules::IpOpt::Any || t == want.code() {
            return true;
        }
        match t {
            0 => return false,
            1 => i += 1,
            _ => {
                let len = usize::from(*opts.get(i + 1).unwrap_or(&0));
                if len < 2 {
                    return false;
                }
                i += len;
            }
        }
    }
    false
}
