//! Packet inspection with the rules and alerts.

use super::*;

impl Inner {
    /// Whether an alert of rule `sig` ends detection on its flow: a `drop` (or
    /// `reject`) rule about an app-layer protocol drops the whole flow, as Suricata
    /// marks the flow dropped (no packet of it is inspected after), in IDS mode too.
    pub(super) fn drops_flow(&self, sig: u32) -> bool {
        let rule = &self.engine.sig(sig).rule;
        matches!(rule.action, rules::Action::Drop | rules::Action::Reject)
            && rule.app_proto.is_some()
    }

    pub(super) fn alert(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&Flow, bool)>,
        h: Hit,
        record: Option<AppRecord>,
    ) {
        self.alert_with_files(c, flow, h, record, Vec::new());
    }

    /// An alert on a transaction, with the files it carries in the inspected direction
    /// (EVE `files`).
    pub(super) fn alert_with_files(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&Flow, bool)>,
        h: Hit,
        record: Option<AppRecord>,
        files: Vec<meerkat_proto::events::FileInfo>,
    ) {
        let sig = self.engine.sig(h.sig);
        self.stats.alerts += 1;
        let mut ev = events::alert(&sig.rule, c.pkt, c.meta, flow, c.src);
        if let Some(tx) = h.tx {
            ev.tx_id = Some(tx);
        }
        if let Some((f, _)) = flow {
            ev.app_proto = f.app.proto.name().to_string();
            ev.flowbits = f
                .vars
                .set_bits()
                .filter_map(|i| self.engine.names.flowbits.get(usize::from(i)).cloned())
                .collect();
        }
        if let Some(r) = record {
            events::attach_record(&mut ev, r);
        }
        ev.files = files;
        self.emit(ev);
    }

    /// Inspects a packet outside the normal path (fragments without a flow, pseudo
    /// packets at flow end).
    pub(super) fn inspect_packet(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&mut Flow, bool)>,
        stream: Option<&[u8]>,
        payload: Option<&[u8]>,
    ) {
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        match flow {
            Some((f, to_server)) => {
                let view = PacketView {
                    pkt: c.pkt,
                    ts_ns: c.meta.ts_ns,
                    to_server: Some(to_server),
                    established: f.established(),
                    app_proto: f.app.proto,
                    payload,
                    stream,
                    segment: None,
                    stream_bytes: f.stream_bytes(),
                    flow_id: f.id,
                    first_in_direction: false,
                    pseudo: c.src == events::PacketSrc::FlowTimeout,
                    app_proto_dir: f.app.dir_proto,
                    proto_detect_done: false,
                    app_events: 0,
                };
                self.engine
                    .inspect_packet(&mut self.st, &view, Some(&mut f.vars), &mut hits);
                for h in &hits {
                    self.alert(c, Some((&*f, to_server)), *h, None);
                }
                if !hits.is_empty() {
                    f.alerted = true;
                }
            }
            None => {
                let view = PacketView {
                    pkt: c.pkt,
                    ts_ns: c.meta.ts_ns,
                    to_server: None,
                    established: false,
                    app_proto: AppProto::Unknown,
                    payload,
                    stream,
                    segment: None,
                    stream_bytes: (0, 0),
                    flow_id: 0,
                    first_in_direction: true,
                    pseudo: false,
                    app_proto_dir: [AppProto::Unknown; 2],
                    proto_detect_done: false,
                    app_events: 0,
                };
                self.engine
                    .inspect_packet(&mut self.st, &view, None, &mut hits);
                for h in &hits {
                    self.alert(c, None, *h, None);
                }
            }
        }
        self.hits = hits;
    }
}
