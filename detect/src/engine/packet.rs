//! Inspecting a packet (its payload or the stream chunk it completes) with the packet
//! rules.

use super::*;

impl Engine {
    /// Inspects a packet (and the stream chunk it brings) with the packet/stream rules.
    /// `vars` is the flow's state, if the packet has a flow.
    pub fn inspect_packet(
        &self,
        st: &mut DetectState,
        v: &PacketView<'_>,
        mut vars: Option<&mut FlowVars>,
        hits: &mut Vec<Hit>,
    ) {
        let Some(ip) = v.pkt.ip else {
            return;
        };
        if vars.as_ref().is_some_and(|fv| fv.pass) {
            return;
        }
        let c = class(ip.proto);
        let (sp, dp) = v.pkt.ports();
        st.cands.clear();
        st.reset_headers();
        if self.naive {
            st.cands.extend_from_slice(&self.class_rules[c]);
        }
        if !self.naive {
            if let (Some(seg), TCP) = (v.segment, c) {
                let tree = if seg.len() >= BIG_SEGMENT {
                    &self.pkt_only_tcp_big
                } else {
                    &self.pkt_only_tcp
                };
                let g = tree.group(v.to_server, sp, dp);
                st.cands.extend_from_slice(&g.always);
                if let Some(m) = &g.mpm {
                    m.scan(seg, &mut st.mpm, &mut st.cands);
                }
            }
            let g = self.pkt[c].group(v.to_server, sp, dp);
            st.cands.extend_from_slice(&g.always);
            if let Some(m) = &g.mpm {
                if let Some(s) = v.stream {
                    m.scan(s, &mut st.mpm, &mut st.cands);
                }
                if let Some(p) = v.payload {
                    m.scan(p, &mut st.mpm, &mut st.cands);
                }
            }
        }
        st.cands.sort_unstable();
        st.cands.dedup();
        let cands = std::mem::take(&mut st.cands);
        for &id in &cands {
            let sig = &self.sigs[id as usize];
            let rule = &sig.rule;
            if sig.app || (sig.ip_only && !v.first_in_direction) {
                continue;
            }
            if (v.pkt.invalid && !sig.decode_event) || (sig.pd_only && !v.proto_detect_done) {
                continue;
            }
            // Pseudo packets (flow end) carry stream data only, but for the payload-less
            // rules of a protocol on those Suricata makes (not established to them).
            if v.pseudo
                && sig.payload.is_empty()
                && !(v.pseudo_app_rules
                    && rule.app_proto.is_some()
                    && rule.flow.established != Some(true))
            {
                continue;
            }
            let Some(reversed) = self.header_cached(sig, v.pkt, st) else {
                continue;
            };
            if rule.app_proto.is_some() && v.app_proto_pending {
                continue;
            }
            if let Some(ap) = rule.app_proto
                && !v.app_proto.covers(ap)
                && (rule.proto_exact || !v.app_proto.matches_rule(ap))
            {
                continue;
            }
            if !Self::flow_opts_match(rule, v) || !Self::header_keywords_match(rule, v) {
                continue;
            }
            if !sig.hdr_lists.iter().all(|(b, l)| {
                hdr_buffer(v.pkt, *b).is_some_and(|buf| matcher::matches(l, buf, &mut st.scratch))
            }) {
                continue;
            }
            if !Self::state_conditions(rule, vars.as_deref(), st, v) {
                continue;
            }
            let mut on_stream = false;
            if !sig.payload.is_empty() {
                let stream_ok = rule.payload_source != PayloadSource::Packet
                    && v.stream.is_some_and(|s| self.payload_matches(sig, s, st));
                let pkt_payload = match rule.payload_source {
                    PayloadSource::Packet => v.payload.or(v.segment),
                    PayloadSource::Any if sig.anchored => v.payload.or(v.segment),
                    _ => v.payload,
                };
                let packet_ok = !stream_ok
                    && rule.payload_source != PayloadSource::Stream
                    && pkt_payload.is_some_and(|p| self.payload_matches(sig, p, st));
                if !stream_ok && !packet_ok {
                    continue;
                }
                on_stream = stream_ok;
            } else if sig.base64.is_some() {
                continue;
            }
            Self::apply_actions(rule, vars.as_deref_mut(), st, v);
            if rule.action == Action::Pass {
                if let Some(fv) = vars.as_deref_mut() {
                    fv.pass = true;
                }
                break;
            }
            if rule.noalert {
                continue;
            }
            // Rules without suppressions or thresholds pay one flag test here.
            let verdict = if sig.filtered {
                Self::filter(rule, st, v, reversed)
            } else {
                actions::Verdict::Alert
            };
            let action = match verdict {
                actions::Verdict::Alert => None,
                actions::Verdict::As(a) => Some(a),
                actions::Verdict::Quiet => continue,
                actions::Verdict::Pass => break,
            };
            hits.push(Hit {
                sig: id,
                tx: None,
                reversed,
                stream: on_stream,
                action,
                frame: None,
            });
        }
        st.cands = cands;
    }

    pub(super) fn payload_matches(&self, sig: &Sig, buf: &[u8], st: &mut DetectState) -> bool {
        if !matcher::matches(&sig.payload, buf, &mut st.scratch) {
            return false;
        }
        self.base64_matches(sig, st)
    }

    pub(super) fn base64_matches(&self, sig: &Sig, st: &mut DetectState) -> bool {
        match &sig.base64 {
            None => true,
            Some(l) => {
                if !st.scratch.base64_ok {
                    return false;
                }
                let data = std::mem::take(&mut st.scratch.base64);
                let vars = st.scratch.vars;
                let ok = matcher::matches(l, &data, &mut st.scratch);
                st.scratch.vars = vars;
                st.scratch.base64 = data;
                ok
            }
        }
    }
}
