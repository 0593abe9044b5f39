//! Packet-header keywords: `ttl`, `itype`, `icode`, `vlan.id`, `dsize`, `ip_proto`,
//! `tos`, `id`, `ipopts`, `sameip`, `flags`, `fragbits`, `fragoffset`, `seq`, `ack`,
//! `window`, `icmp_id`, `icmp_seq`, `stream_size`, `decode-event`.

use super::*;

impl Builder<'_> {
    /// Applies `kw` if it is one of these keywords: `Ok(false)` when it is not.
    pub(super) fn header_option(&mut self, kw: &str, v: Option<&str>) -> Result<bool, Fail> {
        match kw {
            "ttl" => self.header_num(kw, v, HeaderMatch::Ttl)?,
            "itype" => self.header_num(kw, v, HeaderMatch::IType)?,
            "icode" => self.header_num(kw, v, HeaderMatch::ICode)?,
            "vlan.id" => self.vlan_id(kw, v)?,
            "dsize" => {
                self.header_num(kw, v, HeaderMatch::Dsize)?;
                // dsize is about packets: such rules inspect packets, not the stream.
                self.rule.payload_source = PayloadSource::Packet;
            }
            "ip_proto" => {
                let val = value_of(kw, v)?;
                let cmp = match parse_num_cmp(val) {
                    Some(c) => c,
                    None => {
                        let (neg, name) = negation(val);
                        let n = proto_number(name)
                            .ok_or_else(|| fail(kw, format!("unknown protocol `{name}`")))?;
                        if neg { NumCmp::Ne(n) } else { NumCmp::Eq(n) }
                    }
                };
                self.rule.header.push(HeaderMatch::IpProto { cmp });
            }
            "tos" => {
                let (negated, value) = negatable_int(kw, v, "expected 0-255")?;
                self.rule.header.push(HeaderMatch::Tos { value, negated });
            }
            "id" => {
                let n = int_value(kw, v, "expected a number")?;
                self.rule.header.push(HeaderMatch::IpId(n));
            }
            "ipopts" => {
                let o = match value_of(kw, v)? {
                    "rr" => IpOpt::Rr,
                    "eol" => IpOpt::Eol,
                    "nop" => IpOpt::Nop,
                    "ts" => IpOpt::Ts,
                    "sec" => IpOpt::Sec,
                    "esec" => IpOpt::Esec,
                    "lsrr" | "lsrre" => IpOpt::Lsrr,
                    "ssrr" => IpOpt::Ssrr,
                    "satid" => IpOpt::Satid,
                    "any" => IpOpt::Any,
                    other => return Err(fail(kw, format!("unknown option `{other}`"))),
                };
                self.rule.header.push(HeaderMatch::IpOpt(o));
            }
            "sameip" => self.rule.header.push(HeaderMatch::SameIp),
            "flags" | "tcp.flags" => {
                let f = parse_flags(value_of(kw, v)?).map_err(|e| fail(kw, e))?;
                self.rule.header.push(HeaderMatch::Flags(f));
                // Like `dsize`, TCP flags are about packets: Suricata makes such rules
                // require the packet, so their content is matched on the packet's
                // payload (e.g. the data of a TCP Fast Open SYN), not the stream.
                if self.rule.payload_source == PayloadSource::Any {
                    self.rule.payload_source = PayloadSource::Packet;
                }
            }
            "fragbits" => {
                let f = parse_fragbits(value_of(kw, v)?).map_err(|e| fail(kw, e))?;
                self.rule.header.push(HeaderMatch::FragBits(f));
            }
            "fragoffset" => {
                let cmp = parse_num_cmp(value_of(kw, v)?).ok_or_else(|| fail(kw, "bad offset"))?;
                self.rule.header.push(HeaderMatch::FragOffset { cmp });
            }
            "seq" | "ack" => {
                let n = int_value(kw, v, "expected a 32-bit number")?;
                self.rule.header.push(if kw == "seq" {
                    HeaderMatch::Seq(n)
                } else {
                    HeaderMatch::Ack(n)
                });
            }
            "window" => {
                let (negated, value) = negatable_int(kw, v, "expected 0-65535")?;
                self.rule
                    .header
                    .push(HeaderMatch::Window { value, negated });
            }
            "icmp_id" | "icmp_seq" => {
                let n = int_value(kw, v, "expected 0-65535")?;
                self.rule.header.push(if kw == "icmp_id" {
                    HeaderMatch::IcmpId(n)
                } else {
                    HeaderMatch::IcmpSeq(n)
                });
            }
            "stream_size" => {
                let args = split_args(value_of(kw, v)?);
                let [side, op, n] = args[..] else {
                    return Err(fail(kw, "expected side,operator,number"));
                };
                let side = match side {
                    "server" => 0,
                    "client" => 1,
                    "both" => 2,
                    "either" => 3,
                    other => return Err(fail(kw, format!("unknown side `{other}`"))),
                };
                let cmp =
                    parse_num_cmp(&format!("{op}{n}")).ok_or_else(|| fail(kw, "bad comparison"))?;
                self.rule.header.push(HeaderMatch::StreamSize { side, cmp });
            }
            "decode-event" => {
                let name = value_of(kw, v)?.trim();
                let bit = match meerkat_wire::decode::DecodeEvent::by_rule_name(name) {
                    Some(ev) => ev.bit(),
                    // One of Suricata's events that Meerkat does not raise: the rule
                    // loads (as in Suricata) and matches nothing.
                    None if meerkat_wire::is_unraised_suricata_event(name) => 0,
                    None => {
                        return Err(fail(kw, format!("unknown decoder event `{name}`")));
                    }
                };
                self.rule.header.push(HeaderMatch::DecodeEvent(bit));
            }
            "stream-event" => {
                let name = value_of(kw, v)?.trim();
                let short = name.strip_prefix("stream.").unwrap_or(name);
                if !SURICATA_STREAM_EVENTS.contains(&short) {
                    return Err(fail(kw, format!("unknown stream event `{name}`")));
                }
                // An event Meerkat's tracker does not raise: the rule loads (as
                // Suricata's stream-events.rules must) and matches nothing.
                let bit = crate::flow::tcp::stream_event_bit(short).unwrap_or(0);
                self.rule.header.push(HeaderMatch::StreamEvent(bit));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `vlan.id:[op]id[,layer]`: layer is 0 to 2, -3 to -1, `any` or `all`
    /// (Suricata's three VLAN layers); ids are 0 to 4095.
    pub(super) fn vlan_id(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let val = value_of(kw, v)?;
        let (id, layer) = match val.split_once(',') {
            Some((a, b)) => (a, Some(b.trim())),
            None => (val, None),
        };
        let cmp = parse_num_cmp(id).ok_or_else(|| fail(kw, format!("bad id `{}`", id.trim())))?;
        let max = match cmp {
            NumCmp::Eq(n)
            | NumCmp::Ne(n)
            | NumCmp::Lt(n)
            | NumCmp::Le(n)
            | NumCmp::Gt(n)
            | NumCmp::Ge(n) => n,
            NumCmp::Between(_, b) | NumCmp::NotBetween(_, b) => b,
            NumCmp::MaskEq(..) | NumCmp::MaskNe(..) => {
                return Err(fail(kw, "bitmask comparisons are not supported"));
            }
        };
        if max > 4095 {
            return Err(fail(kw, format!("id {max} is outside 0 to 4095")));
        }
        let layer = match layer {
            None | Some("any") => VlanLayer::Any,
            Some("all") => VlanLayer::All,
            Some(l) => match l.parse::<i8>() {
                Ok(i) if (-3..=2).contains(&i) => VlanLayer::Index(i),
                _ => {
                    return Err(fail(
                        kw,
                        format!("bad layer `{l}` (0 to 2, -3 to -1, any, all)"),
                    ));
                }
            },
        };
        self.rule.header.push(HeaderMatch::VlanId { cmp, layer });
        Ok(())
    }

    pub(super) fn header_num(
        &mut self,
        kw: &str,
        v: Option<&str>,
        f: fn(NumCmp) -> HeaderMatch,
    ) -> Result<(), Fail> {
        let cmp = parse_num_cmp(value_of(kw, v)?).ok_or_else(|| fail(kw, "bad number"))?;
        self.rule.header.push(f(cmp));
        Ok(())
    }
}

pub(super) fn proto_number(name: &str) -> Option<u64> {
    Some(match name.to_ascii_lowercase().as_str() {
        "ip" | "hopopt" => 0,
        "icmp" => 1,
        "igmp" => 2,
        "tcp" => 6,
        "udp" => 17,
        "ipv6" => 41,
        "gre" => 47,
        "esp" => 50,
        "ah" => 51,
        "ipv6-icmp" | "icmpv6" => 58,
        "sctp" => 132,
        _ => return None,
    })
}

pub(super) fn parse_fragbits(v: &str) -> Result<FragBits, String> {
    let mut modifier = FlagMod::Exact;
    let mut bits = 0;
    for c in v.trim().chars() {
        match c {
            '+' => modifier = FlagMod::Plus,
            '*' => modifier = FlagMod::Any,
            '!' => modifier = FlagMod::Not,
            'M' | 'm' => bits |= 1,
            'D' | 'd' => bits |= 2,
            'R' | 'r' => bits |= 4,
            other => return Err(format!("unknown bit `{other}`")),
        }
    }
    Ok(FragBits { bits, modifier })
}

/// `flags:[modifier]<flags>[,<ignore>]` with flags from `FSRPAUCE0` (also `12` for
/// the two reserved bits, as CWR/ECE).
pub fn parse_flags(v: &str) -> Result<TcpFlags, String> {
    let (main, ignore) = match v.split_once(',') {
        Some((m, i)) => (m.trim(), Some(i.trim())),
        None => (v.trim(), None),
    };
    let bit = |c: char| -> Result<u8, String> {
        Ok(match c.to_ascii_uppercase() {
            'F' => 0x01,
            'S' => 0x02,
            'R' => 0x04,
            'P' => 0x08,
            'A' => 0x10,
            'U' => 0x20,
            'E' | '2' => 0x40,
            'C' | '1' => 0x80,
            '0' => 0,
            other => return Err(format!("unknown flag `{other}`")),
        })
    };
    let mut modifier = FlagMod::Exact;
    let mut bits = 0u8;
    for c in main.chars() {
        match c {
            '+' => modifier = FlagMod::Plus,
            '*' => modifier = FlagMod::Any,
            '!' => modifier = FlagMod::Not,
            c => bits |= bit(c)?,
        }
    }
    let mut ign = 0u8;
    if let Some(i) = ignore {
        for c in i.chars() {
            ign |= bit(c)?;
        }
    }
    Ok(TcpFlags {
        bits,
        modifier,
        ignore: ign,
    })
}

/// Suricata 8's stream events (`stream-event:<name>`, as its stream-events.rules name
/// them).
pub(crate) const SURICATA_STREAM_EVENTS: &[&str] = &[
    "3whs_ack_in_wrong_dir",
    "3whs_async_wrong_seq",
    "3whs_right_seq_wrong_ack_evasion",
    "3whs_synack_in_wrong_direction",
    "3whs_synack_resend_with_different_ack",
    "3whs_synack_resend_with_diff_seq",
    "3whs_synack_toserver_on_syn_recv",
    "3whs_synack_with_wrong_ack",
    "3whs_synack_flood",
    "3whs_synack_tfo_data_ignored",
    "3whs_syn_flood",
    "3whs_syn_resend_diff_seq_on_syn_recv",
    "3whs_syn_toclient_on_syn_recv",
    "3whs_wrong_seq_wrong_ack",
    "3whs_ack_data_inject",
    "4whs_synack_with_wrong_ack",
    "4whs_synack_with_wrong_syn",
    "4whs_wrong_seq",
    "4whs_invalid_ack",
    "closewait_ack_out_of_window",
    "closewait_fin_out_of_window",
    "closewait_invalid_ack",
    "closing_ack_wrong_seq",
    "closing_invalid_ack",
    "est_packet_out_of_window",
    "est_synack_resend",
    "est_synack_resend_with_different_ack",
    "est_synack_resend_with_diff_seq",
    "est_synack_toserver",
    "est_syn_resend",
    "est_syn_resend_diff_seq",
    "est_syn_toclient",
    "est_invalid_ack",
    "fin_invalid_ack",
    "fin1_ack_wrong_seq",
    "fin1_fin_wrong_seq",
    "fin1_invalid_ack",
    "fin2_ack_wrong_seq",
    "fin2_fin_wrong_seq",
    "fin2_invalid_ack",
    "fin_but_no_session",
    "fin_out_of_window",
    "fin_syn",
    "lastack_ack_wrong_seq",
    "lastack_invalid_ack",
    "rst_but_no_session",
    "timewait_ack_wrong_seq",
    "timewait_invalid_ack",
    "pkt_invalid_timestamp",
    "pkt_invalid_ack",
    "pkt_broken_ack",
    "rst_invalid_ack",
    "shutdown_syn_resend",
    "reassembly_seq_gap",
    "reassembly_overlap_different_data",
    "pkt_bad_window_update",
    "suspected_rst_inject",
    "est_pkt_before_last_ack",
    "closewait_pkt_before_last_ack",
    "reassembly_segment_before_base_seq",
    "pkt_retransmission",
    "wrong_thread",
    "pkt_spurious_retransmission",
    "reassembly_depth_reached",
    "reassembly_urgent_oob_limit_reached",
];
