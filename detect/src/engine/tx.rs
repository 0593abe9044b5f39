//! Inspecting an app-layer transaction with the app rules: buffer prefilter, buffer
//! matches and the protocols' keyword checks (through their descriptors).

use super::*;

impl Engine {
    /// Inspects transaction `tx` of a flow whose app protocol is `proto`, after new data
    /// in `dir`. `td` remembers which rules are done with this transaction.
    #[allow(clippy::too_many_arguments)]
    pub fn inspect_tx(
        &self,
        st: &mut DetectState,
        v: &PacketView<'_>,
        proto: AppProto,
        dir: Dir,
        tx: &dyn Transaction,
        td: &mut TxDetect,
        mut vars: Option<&mut FlowVars>,
        hits: &mut Vec<Hit>,
    ) {
        let Some(g) = self.app.get(proto as usize) else {
            return;
        };
        if vars.as_ref().is_some_and(|fv| fv.pass) {
            return;
        }
        st.cands.clear();
        st.reset_headers();
        let d = dir.index();
        if self.naive {
            st.cands
                .extend_from_slice(&self.app_rules[proto as usize % crate::app::APP_PROTOS][d]);
        } else {
            st.cands.extend_from_slice(&g.always[d]);
            st.cands.extend_from_slice(&td.cands[d]);
        }
        for (k, (bid, transforms, m)) in g.mpms[d].iter().enumerate().filter(|_| !self.naive) {
            let bit = if k < 64 { 1u64 << k } else { 0 };
            if td.scanned[d] & bit != 0 {
                // Final when last scanned: its candidates are in `td.cands`.
                continue;
            }
            let start = st.cands.len();
            let mut fin = true;
            for i in 0..crate::app::buffers::MAX_ITEMS {
                let (b, partial) = match tx.buffer(*bid, i) {
                    Buf::Ready(b) => (b, false),
                    Buf::Partial(b) => (b, true),
                    Buf::NotYet => {
                        fin = false;
                        break;
                    }
                    Buf::Absent => break,
                };
                fin &= !partial;
                if b.is_empty() && transforms.is_empty() {
                    // Nothing to find (a scan call costs more than the check).
                    continue;
                }
                if transforms.is_empty() {
                    // A growing buffer (a body still arriving; its bytes so far do not
                    // change) is scanned from where this transaction's last scan of it
                    // stopped, the candidates of the part before being kept in `td`:
                    // without this, each packet of a body rescans all of it.
                    let from = if i == 0 {
                        match td.resume_at(dir, k as u32, b.len(), m.max_len()) {
                            Some(at) => at,
                            None => continue,
                        }
                    } else {
                        0
                    };
                    let at = st.cands.len();
                    m.scan(&b[from..], &mut st.mpm, &mut st.cands);
                    if i == 0 && (partial || from > 0) {
                        td.grew(dir, k as u32, b.len(), &st.cands[at..]);
                    }
                } else {
                    crate::transforms::apply_all(transforms, b, &mut st.tbuf);
                    m.scan(&st.tbuf, &mut st.mpm, &mut st.cands);
                }
            }
            if fin && bit != 0 {
                td.scanned[d] |= bit;
                td.cands[d].extend_from_slice(&st.cands[start..]);
            }
        }
        st.cands.sort_unstable();
        st.cands.dedup();
        let cands = std::mem::take(&mut st.cands);
        'sigs: for &id in &cands {
            let sig = &self.sigs[id as usize];
            // A rule on a buffer of several frames alerts once per frame that matches,
            // as Suricata inspects each frame on its own; any other once per
            // transaction.
            let per_frame = sig.buffers.iter().any(|b| b.frame && b.multi);
            let mut from = if per_frame { td.frame_from(dir, id) } else { 0 };
            loop {
                if td.is_done(dir, id) {
                    continue 'sigs;
                }
                let rule = &sig.rule;
                if sig.dir.is_some_and(|d| d != dir) {
                    continue 'sigs;
                }
                let Some(reversed) = self.header_cached(sig, v.pkt, st) else {
                    continue 'sigs;
                };
                if !Self::flow_opts_match(rule, v) || !Self::header_keywords_match(rule, v) {
                    continue 'sigs;
                }
                let now_s = (v.ts_ns / 1_000_000_000) as i64;
                match self.tx_lists_match(sig, dir, now_s, tx, st, from) {
                    TxMatch::NotYet => continue 'sigs,
                    TxMatch::Never => {
                        td.mark_done(dir, id);
                        continue 'sigs;
                    }
                    TxMatch::NoMatchYet => continue 'sigs,
                    TxMatch::Match => {}
                }
                if !sig.payload.is_empty() {
                    let ok = v.stream.is_some_and(|s| self.payload_matches(sig, s, st))
                        || v.payload.is_some_and(|p| self.payload_matches(sig, p, st));
                    if !ok {
                        continue 'sigs;
                    }
                }
                if !Self::state_conditions(rule, vars.as_deref(), st, v) {
                    continue 'sigs;
                }
                // The frame after the one matched is where the rule goes on.
                let next = st
                    .frame_hit
                    .filter(|_| per_frame)
                    .map(|(_, i)| usize::from(i) + 1)
                    .filter(|&n| td.set_frame_from(dir, id, n));
                if next.is_none() {
                    td.mark_done(dir, id);
                }
                Self::apply_actions(rule, vars.as_deref_mut(), st, v);
                if rule.action == Action::Pass {
                    if let Some(fv) = vars.as_deref_mut() {
                        fv.pass = true;
                    }
                    break 'sigs;
                }
                if !rule.noalert {
                    // Rules without suppressions or thresholds pay one flag test here.
                    let verdict = if sig.filtered {
                        Self::filter(rule, st, v, reversed)
                    } else {
                        actions::Verdict::Alert
                    };
                    let action = match verdict {
                        actions::Verdict::Alert => Some(None),
                        actions::Verdict::As(a) => Some(Some(a)),
                        actions::Verdict::Quiet => None,
                        actions::Verdict::Pass => break 'sigs,
                    };
                    if let Some(action) = action {
                        hits.push(Hit {
                            sig: id,
                            tx: Some(tx.id()),
                            reversed,
                            stream: false,
                            action,
                            frame: st.frame_hit,
                        });
                    }
                }
                match next {
                    Some(n) => from = n,
                    None => continue 'sigs,
                }
            }
        }
        st.cands = cands;
    }

    pub(super) fn tx_lists_match(
        &self,
        sig: &Sig,
        dir: Dir,
        now_s: i64,
        tx: &dyn Transaction,
        st: &mut DetectState,
        frame_from: usize,
    ) -> TxMatch {
        let mut partial = false;
        st.scratch.vars = [0; 16];
        st.frame_hit = None;
        for check in &sig.rule.tx_checks {
            match check.eval(dir, now_s, tx) {
                Some(true) => {}
                Some(false) => return TxMatch::Never,
                None => return TxMatch::NotYet,
            }
        }
        for b in &sig.buffers {
            let Some(bid) = b.ids[dir.index()] else {
                return TxMatch::Never;
            };
            let mut any = false;
            // A rule on several frames goes on from the first it has not alerted on.
            let start = if b.frame && b.multi { frame_from } else { 0 };
            for i in start..crate::app::buffers::MAX_ITEMS {
                let (data, is_partial) = match tx.buffer(bid, i) {
                    Buf::Ready(d) => (d, false),
                    Buf::Partial(d) => (d, true),
                    Buf::NotYet => {
                        if i == start {
                            return TxMatch::NotYet;
                        }
                        break;
                    }
                    Buf::Absent if i == start && start > 0 => {
                        // No frame past those alerted on yet: more may come while the
                        // direction's part of the transaction goes on.
                        partial |= !tx.complete(dir);
                        break;
                    }
                    Buf::Absent => {
                        // `absent`: a buffer missing from the transaction matches.
                        any = i == 0 && b.absent.is_some();
                        break;
                    }
                };
                if b.absent == Some(Absent::Only) {
                    // The buffer exists: `absent` alone cannot match.
                    break;
                }
                partial |= is_partial;
                let data = if b.transforms.is_empty() {
                    data
                } else {
                    crate::transforms::apply_all(&b.transforms, data, &mut st.tbuf);
                    &st.tbuf[..]
                };
                let size_ok = b.bsize.is_none_or(|c| c.test(data.len() as u64));
                st.scratch.dce_le = tx.dce_little_endian(bid);
                let ok = size_ok
                    && (b.list.is_empty() || matcher::matches(&b.list, data, &mut st.scratch))
                    && b.datasets.iter().all(|d| d.eval(data));
                st.scratch.dce_le = false;
                if ok {
                    any = true;
                    if b.frame {
                        st.frame_hit = Some((bid, i as u16));
                    }
                    break;
                }
                if !b.multi {
                    break;
                }
            }
            if !any {
                return if partial {
                    TxMatch::NoMatchYet
                } else {
                    TxMatch::Never
                };
            }
        }
        if !self.base64_matches(sig, st) {
            return TxMatch::Never;
        }
        TxMatch::Match
    }
}

pub(super) enum TxMatch {
    Match,
    /// A buffer the rule needs is not there yet.
    NotYet,
    /// No match on a partial buffer: try again when more arrives.
    NoMatchYet,
    /// Cannot match this transaction.
    Never,
}
