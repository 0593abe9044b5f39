//! Packet inspection with the rules and alerts.

use super::*;

impl Inner {
    /// Whether an alert of rule `sig` ends detection on its flow: a `drop` (or
    /// `reject`) rule about an app-layer protocol drops the whole flow, as Suricata
    /// marks the flow dropped (no packet of it is inspected after), in IDS mode too.
    /// A `rate_filter` in effect with `new_action drop`/`reject` counts as the rule's
    /// action.
    pub(super) fn drops_flow(&self, h: &Hit) -> bool {
        let rule = &self.engine.sig(h.sig).rule;
        matches!(
            h.action.unwrap_or(rule.action),
            rules::Action::Drop | rules::Action::Reject
        ) && rule.app_proto.is_some()
    }

    pub(super) fn alert(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&Flow, bool)>,
        h: Hit,
        record: Option<AppRecord>,
    ) {
        self.alert_with_files(c, flow, h, record, Vec::new(), None);
    }

    /// An alert on a frame attached to no transaction (`pending_frame`): the frame and
    /// not the transaction, as Suricata logs them.
    pub(super) fn alert_on_frame(&mut self, c: Ctx<'_>, flow: Option<(&Flow, bool)>, h: Hit) {
        self.alert_with_files(c, flow, Hit { tx: None, ..h }, None, Vec::new(), None);
    }

    /// An alert on a transaction, with the files it carries in the inspected direction
    /// (EVE `files`) and how far each of its directions had got (EVE `ts_progress`,
    /// `tc_progress`).
    pub(super) fn alert_with_files(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&Flow, bool)>,
        h: Hit,
        record: Option<AppRecord>,
        files: Vec<meerkat_proto::events::FileInfo>,
        progress: Option<(&'static str, &'static str)>,
    ) {
        let sig = self.engine.sig(h.sig);
        self.stats.alerts += 1;
        let mut ev = events::alert(&sig.rule, c.pkt, c.meta, flow, c.src);
        if let Some(tx) = h.tx {
            ev.tx_id = Some(tx);
            if let Some((ts, tc)) = progress {
                ev.ts_progress = ts.to_string();
                ev.tc_progress = tc.to_string();
            }
        }
        // An alert on a frame is about the frame's transaction, under the id the frame
        // names it by (Suricata's own transaction id for SIP and DNS).
        if let Some(t) = self.pending_frame.as_ref().and_then(|f| f.tx_id) {
            ev.tx_id = Some(t);
        }
        if let (Some(a), Some(alert)) = (h.action, ev.alert.as_mut()) {
            alert.action = events::rate_filtered_action(sig.rule.action, a) as i32;
        }
        if let Some((f, _)) = flow {
            ev.app_proto = f.app.proto.name().to_string();
            (ev.app_proto_ts, ev.app_proto_tc) = events::dir_protos(f);
            (ev.app_proto_orig, ev.app_proto_expected) = events::changed_protos(f);
            ev.flowbits = f
                .vars
                .set_bits()
                .filter_map(|i| self.engine.names.flowbits.get(usize::from(i)).cloned())
                .collect();
        }
        if let Some(mut r) = record {
            self.shape_record(&mut r);
            events::attach_record(&mut ev, r);
        }
        if self.cfg.alert_payload || self.cfg.alert_packet {
            self.alert_extras(&mut ev, c, flow, h);
        }
        ev.files = files;
        ev.frame = self.pending_frame.take();
        self.emit(ev);
    }

    /// Leaves out of a record what its parser computed and the config keeps out of EVE:
    /// JA3 and JA3S unless `ja3-fingerprints` is on (or, by default, a rule uses them);
    /// MQTT passwords unless `passwords`, and MQTT strings past `string-log-limit`;
    /// PostgreSQL passwords unless `passwords`; the email headers and MD5s of the
    /// `smtp` entry's `custom` and `md5` (the `smtp` record only: see
    /// [`Self::shape_tx_record`]).
    pub(super) fn shape_record(&self, r: &mut AppRecord) {
        self.shape(r, false);
    }

    /// [`Self::shape_record`] of a transaction's own record (EVE `smtp`, `http`, ...),
    /// which alone carries the email logger's extra fields, as in Suricata.
    pub(super) fn shape_tx_record(&self, r: &mut AppRecord) {
        self.shape(r, true);
    }

    fn shape(&self, r: &mut AppRecord, tx_log: bool) {
        if let AppRecord::Smtp(s) = r {
            let log = if tx_log {
                self.cfg.email_log
            } else {
                app::smtp::eve::EmailLog::default()
            };
            app::smtp::eve::shape(s, log);
        }
        if !self.cfg.ja3
            && let AppRecord::Tls(t) = r
        {
            t.ja3 = None;
            t.ja3s = None;
        }
        if let AppRecord::Mqtt(m) = r {
            app::mqtt::logger::shape(m, self.cfg.mqtt_passwords, self.cfg.mqtt_string_log_limit);
        }
        if let AppRecord::Dhcp(d) = r {
            d.extended = self.cfg.dhcp_extended;
        }
        if let AppRecord::Pgsql(p) = r {
            app::pgsql::logger::shape(p, self.cfg.pgsql_passwords);
        }
    }

    /// What an alert carries for the outputs that log more of it (only when one does:
    /// these are copies): its payload and whether that is stream data, and its packet.
    fn alert_extras(&self, ev: &mut Event, c: Ctx<'_>, flow: Option<(&Flow, bool)>, h: Hit) {
        let tcp = matches!(c.pkt.l4, L4::Tcp { .. });
        let side = match flow {
            Some((f, to_server)) => f.tcp.as_deref().map(|s| &s.sides[usize::from(!to_server)]),
            None => None,
        };
        if self.cfg.alert_payload {
            // As Suricata: a match on the stream, or on a transaction, of a TCP flow
            // logs the stream of the alert's direction; falls back on the packet's
            // payload when that holds nothing.
            ev.stream = tcp && (h.stream || h.tx.is_some());
            if ev.stream
                && let Some(side) = side
            {
                side.write_payload(&mut ev.payload, self.cfg.max_stream_payload);
                ev.payload_is_stream = !ev.payload.is_empty();
            }
            if ev.payload.is_empty() {
                let p = c.pkt.payload;
                ev.payload
                    .extend_from_slice(&p[..p.len().min(events::MAX_EVENT_PACKET)]);
            }
        }
        if self.cfg.alert_packet {
            if c.src.is_pseudo() {
                let seq = side.map_or(0, |s| s.next_seq());
                ev.packet = events::pseudo_frame(c.pkt, seq);
                // Raw IP bytes, logged with the capture's link type as Suricata does.
                ev.packet_linktype = u32::from(c.meta.link_type);
            } else {
                let f = c.pkt.frame;
                ev.packet
                    .extend_from_slice(&f[..f.len().min(events::MAX_EVENT_PACKET)]);
                ev.packet_linktype = u32::from(c.pkt.link_type);
            }
        }
    }

    /// Inspects, on their own, the pieces of the stream of the packet's direction that a
    /// gap cut off before raw inspection saw them (see `tcp::Piece`): stream-only
    /// inspections of the packet, before its own.
    pub(super) fn inspect_pieces(&mut self, c: Ctx<'_>, flow: &mut Flow, to_server: bool) {
        let d = usize::from(!to_server);
        let Some(s) = flow.tcp.as_deref_mut() else {
            return;
        };
        if s.sides[d].pieces().is_empty() {
            return;
        }
        // Rare (a gap with bytes not inspected yet before it): copied so that the flow
        // can be borrowed for inspection; they stay in the flow for alert payloads.
        let pieces: Vec<Vec<u8>> = s.sides[d]
            .pieces()
            .iter()
            .map(|p| p.bytes.clone())
            .collect();
        s.sides[d].pieces_inspected();
        for bytes in &pieces {
            self.inspect_packet(c, Some((&mut *flow, to_server)), Some(bytes), None, true);
        }
    }

    /// Inspects a packet outside the normal path (fragments without a flow, pseudo
    /// packets at flow end, stream data of its flow alone when `stream_only`).
    pub(super) fn inspect_packet(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&mut Flow, bool)>,
        stream: Option<&[u8]>,
        payload: Option<&[u8]>,
        stream_only: bool,
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
                    app_proto_pending: false,
                    payload,
                    stream,
                    segment: None,
                    stream_bytes: f.stream_bytes(),
                    flow_id: f.id,
                    first_in_direction: false,
                    pseudo: c.src.is_pseudo() || stream_only,
                    pseudo_app_rules: c.src.is_pseudo() && !stream_only && self.pseudo_app_rules,
                    app_proto_dir: f.app.dir_proto,
                    proto_detect_done: false,
                    app_events: 0,
                    stream_events: 0,
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
                    app_proto_pending: false,
                    payload,
                    stream,
                    segment: None,
                    stream_bytes: (0, 0),
                    flow_id: 0,
                    first_in_direction: true,
                    pseudo: false,
                    pseudo_app_rules: false,
                    app_proto_dir: [AppProto::Unknown; 2],
                    proto_detect_done: false,
                    app_events: 0,
                    stream_events: 0,
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
