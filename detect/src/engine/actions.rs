//! What a matching rule does besides alerting: flowbits/flowints/xbits conditions and
//! actions, thresholds and detection filters.

use super::*;

impl Engine {
    /// Flowbit/flowint/xbit conditions.
    pub(super) fn state_conditions(
        rule: &Rule,
        vars: Option<&FlowVars>,
        st: &DetectState,
        v: &PacketView<'_>,
    ) -> bool {
        for c in &rule.flowbits {
            let ok = match (c, vars) {
                (FlowbitCmd::IsSet(ids), Some(fv)) => ids.iter().any(|&i| fv.bit(i)),
                (FlowbitCmd::IsSet(_), None) => false,
                (FlowbitCmd::IsNotSet(ids), Some(fv)) => ids.iter().any(|&i| !fv.bit(i)),
                (FlowbitCmd::IsNotSet(_), None) => true,
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        for c in &rule.flowints {
            let get = |i: u16| vars.and_then(|fv| fv.int(i));
            let operand = |o: &IntOperand| match o {
                IntOperand::Const(n) => Some(*n),
                IntOperand::Var(i) => get(*i),
            };
            let ok = match c {
                FlowintCmd::Compare(i, op, o) => match (get(*i), operand(o)) {
                    (Some(a), Some(b)) => match op {
                        NumCmpOp::Eq => a == b,
                        NumCmpOp::Ne => a != b,
                        NumCmpOp::Lt => a < b,
                        NumCmpOp::Le => a <= b,
                        NumCmpOp::Gt => a > b,
                        NumCmpOp::Ge => a >= b,
                    },
                    _ => false,
                },
                FlowintCmd::IsSet(i) => get(*i).is_some(),
                FlowintCmd::NotSet(i) => get(*i).is_none(),
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        for x in &rule.xbits {
            let ok = match x.op {
                XbitOp::IsSet => st.xbit_isset(x, v),
                XbitOp::IsNotSet => !st.xbit_isset(x, v),
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Applies the rule's flowbit/flowint/xbit actions after a match.
    pub(super) fn apply_actions(
        rule: &Rule,
        vars: Option<&mut FlowVars>,
        st: &mut DetectState,
        v: &PacketView<'_>,
    ) {
        if let Some(fv) = vars {
            for c in &rule.flowbits {
                match c {
                    FlowbitCmd::Set(ids) => ids.iter().for_each(|&i| fv.set_bit(i, true)),
                    FlowbitCmd::Unset(ids) => ids.iter().for_each(|&i| fv.set_bit(i, false)),
                    FlowbitCmd::Toggle(ids) => ids.iter().for_each(|&i| {
                        let b = fv.bit(i);
                        fv.set_bit(i, !b)
                    }),
                    _ => {}
                }
            }
            for c in &rule.flowints {
                let (i, new) = match c {
                    FlowintCmd::Assign(i, o) => (*i, fv.operand(o)),
                    FlowintCmd::Add(i, o) => (
                        *i,
                        fv.operand(o)
                            .map(|x| fv.int(*i).unwrap_or(0).wrapping_add(x)),
                    ),
                    FlowintCmd::Sub(i, o) => (
                        *i,
                        fv.operand(o)
                            .map(|x| fv.int(*i).unwrap_or(0).wrapping_sub(x)),
                    ),
                    _ => continue,
                };
                if let Some(n) = new {
                    fv.set_int(i, n);
                }
            }
        }
        for x in &rule.xbits {
            match x.op {
                XbitOp::Set => st.xbit_set(x, v, true),
                XbitOp::Unset => st.xbit_set(x, v, false),
                XbitOp::Toggle => {
                    let b = st.xbit_isset(x, v);
                    st.xbit_set(x, v, !b)
                }
                _ => {}
            }
        }
    }

    /// What the rule's suppressions, threshold, detection_filter or rate_filter make of
    /// this match. Only called for rules that have one (`Sig::filtered`).
    pub(super) fn filter(
        rule: &Rule,
        st: &mut DetectState,
        v: &PacketView<'_>,
        reversed: bool,
    ) -> Verdict {
        let Some(ip) = v.pkt.ip else {
            return if rule.threshold.is_none()
                && rule.detection_filter.is_none()
                && rule.rate_filter.is_none()
            {
                Verdict::Alert
            } else {
                Verdict::Quiet
            };
        };
        // Suppressions first, on the packet's own addresses (as Suricata).
        for s in &rule.suppress {
            let hit = match s.track {
                SuppressTrack::BySrc => s.ips.matches(&ip.src),
                SuppressTrack::ByDst => s.ips.matches(&ip.dst),
                SuppressTrack::ByEither => s.ips.matches(&ip.src) || s.ips.matches(&ip.dst),
            };
            if hit {
                return Verdict::Quiet;
            }
        }
        let (src, dst) = if reversed {
            (ip.dst, ip.src)
        } else {
            (ip.src, ip.dst)
        };
        let (sp, dp) = v.pkt.ports();
        let key = |track| match track {
            crate::rules::Track::BySrc => ip_key(src),
            crate::rules::Track::ByDst => ip_key(dst),
            crate::rules::Track::ByRule => 0,
            // The address pair, the same in both directions (Suricata's ippair).
            crate::rules::Track::ByBoth => {
                let (a, b) = (ip_key(src), ip_key(dst));
                a.min(b) ^ a.max(b).rotate_left(64)
            }
            crate::rules::Track::ByFlow => u128::from(v.flow_id),
        };
        let allow = |ok: bool| if ok { Verdict::Alert } else { Verdict::Quiet };
        if let Some(t) = &rule.threshold {
            return allow(st.threshold(rule.gid, rule.sid, key(t.track), t, v.ts_ns));
        }
        if let Some(d) = &rule.detection_filter {
            let unique = d
                .unique_on_src_port
                .map(|src_port| if src_port { sp } else { dp });
            return allow(st.detection_filter(
                rule.gid,
                rule.sid,
                key(d.track),
                d,
                v.ts_ns,
                unique,
            ));
        }
        if let Some(f) = &rule.rate_filter
            && st.rate_filter(rule.gid, rule.sid, key(f.track), f, v.ts_ns)
        {
            return match f.new_action {
                Some(Action::Pass) => Verdict::Pass,
                Some(a) => Verdict::As(a),
                None => Verdict::Alert,
            };
        }
        Verdict::Alert
    }
}

/// What a match of a rule with a threshold-like entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Alert,
    /// A `rate_filter` in effect: the alert takes this action.
    As(Action),
    /// No alert (suppressed, or below/over the threshold).
    Quiet,
    /// A `rate_filter` with `new_action pass` in effect: no alert, and the rules after
    /// this one are not evaluated on this packet (Suricata passes the packet).
    Pass,
}
