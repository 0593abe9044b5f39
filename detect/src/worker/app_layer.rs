//! The app layer of a flow: protocol detection, feeding parsers, inspecting and
//! logging transactions.

use super::*;
use crate::rules::StoreScope;

impl Inner {
    /// Counts a parse call's outcome and remembers its anomalies, by transaction, for
    /// `app-layer-event`: an anomaly belongs to the newest transaction after the call
    /// (the one the parser was working on), or to the next one when there is none.
    pub(super) fn parse_output(&mut self, out: &ParseOutput, app: &mut AppFlow, dir: Dir) {
        if out.failed || out.error {
            self.stats.app_parse_errors += 1;
        }
        self.pkt_expect |= out.expect;
        self.pkt_raw_trigger |= out.raw_trigger;
        self.pkt_no_payload |= out.no_payload_inspection;
        self.pkt_no_payload_flush |= out.no_payload_inspection_flush;
        if out.error {
            app.parse_error = true;
        }
        self.stats.anomalies += out.anomalies.len() as u64;
        if out.anomalies.is_empty() {
            return;
        }
        // The newest transaction (not a holder of frames of none, such as HTTP's
        // stream frames).
        let newest = app.state.as_deref().and_then(|s| {
            (0..s.tx_count())
                .rev()
                .filter_map(|i| s.tx(i))
                .find(|t| !t.frames_only())
                .map(|t| t.id())
        });
        let id = newest.unwrap_or(app.next_free);
        // EVE logs the anomaly with its transaction, as Suricata does: not when there is
        // none, nor when it was logged already (Suricata keeps a parser's events on its
        // transactions, and logs them with the transaction).
        let log = self.cfg.want_applayer_anomaly
            && newest.is_some()
            && !app.txs.iter().any(|t| t.tx_id == id && t.logged);
        for &name in &out.anomalies {
            if app.tx_events.len() < MAX_TX_EVENTS && !app.tx_events.contains(&(id, dir, name)) {
                app.tx_events.push((id, dir, name));
            }
            if log && self.pkt_anomalies.len() < MAX_PKT_ANOMALIES {
                self.pkt_anomalies.push((id, name));
            }
        }
    }

    /// Logs the app-layer anomalies the current packet raised (EVE `anomaly` of type
    /// `applayer`): its protocol-detection events, then its parsers' anomalies, as
    /// Suricata does when `anomaly.types.applayer` is on (the default).
    pub(super) fn log_app_anomalies(&mut self, c: Ctx<'_>, flow: &Flow) {
        if !self.cfg.want_applayer_anomaly {
            return;
        }
        for &(bit, name) in app::events::PACKET_EVENTS {
            if self.pkt_app_events & bit != 0 {
                let event = name.to_ascii_uppercase();
                let ev =
                    events::app_anomaly(event, "proto_detect", None, c.pkt, c.meta, flow, c.src);
                self.emit(ev);
            }
        }
        if self.pkt_anomalies.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pkt_anomalies);
        let descriptor = flow.app.proto.descriptor();
        for &(tx_id, name) in &pending {
            // Named by the protocol that raised it (the old one's, raised just before a
            // protocol change).
            let own = name
                .split_once('.')
                .and_then(|(p, _)| AppProto::from_rule_proto(p))
                .and_then(AppProto::descriptor);
            let event = own
                .or(descriptor)
                .map_or_else(|| name.to_string(), |d| d.eve_event_name(name));
            let ev = events::app_anomaly(
                event,
                "proto_parser",
                Some(tx_id),
                c.pkt,
                c.meta,
                flow,
                c.src,
            );
            self.emit(ev);
        }
        self.pkt_anomalies = pending;
        self.pkt_anomalies.clear();
    }

    /// Whether a flow must be reversed before its first data is parsed: that data, in
    /// direction `d`, is recognised only as the other direction's (an HTTP response),
    /// or as a reply of its protocol (a DNS response). Only the first data of a UDP
    /// flow or of a TCP flow picked up midstream can say so (a handshake orients a
    /// flow for good), and, for some protocols, the first datagram toward the client of
    /// a UDP flow (see [`app::AppState::first_reply_is_request`]).
    pub(super) fn first_data_reversed(&self, flow: &Flow, d: usize, payload: &[u8]) -> bool {
        if flow.app.detection_done {
            return flow.proto == 17
                && d == 1
                && !flow.app.dir_probed[1]
                && !payload.is_empty()
                && flow
                    .app
                    .state
                    .as_deref()
                    .is_some_and(|s| s.first_reply_is_request(payload));
        }
        if flow.app.probed != [0, 0] {
            return false;
        }
        let (transport, data) = match flow.tcp.as_deref() {
            Some(s) if s.midstream => {
                let side = &s.sides[d];
                (Transport::Tcp, side.bytes(side.app_done, side.next()))
            }
            None if flow.proto == 17 => (Transport::Udp, payload),
            _ => return false,
        };
        if data.is_empty() {
            return false;
        }
        let data = &data[..data.len().min(MAX_PROBE)];
        let (dir, ports) = (
            if d == 0 { Dir::ToServer } else { Dir::ToClient },
            [flow.client.1, flow.server.1],
        );
        match self.registry.probe(transport, dir, ports, data) {
            app::Detected::Proto(p) => {
                dir == Dir::ToServer && self.registry.is_reply(p, transport, data)
            }
            _ => matches!(
                self.registry
                    .probe(transport, dir.other(), [ports[1], ports[0]], data),
                app::Detected::Proto(_)
            ),
        }
    }

    /// Feeds bytes to the flow's parser, detecting the protocol first if needed.
    /// `ports` are the flow's (client, server) ports.
    pub(super) fn feed_app(
        &mut self,
        app: &mut AppFlow,
        ports: [u16; 2],
        dir: Dir,
        transport: Transport,
        data: &[u8],
    ) -> bool {
        if !app.detection_done {
            self.detect_protocol(app, ports, dir, transport, data);
            // The probe fed the first bytes already.
            return app.state.is_some();
        }
        let d = dir.index();
        // A flow whose parser failed has no app layer any more (Suricata's): its other
        // direction is not probed either.
        if !app.dir_probed[d] && !data.is_empty() && !app.parse_error {
            // The other direction's first data: which protocol does it speak?
            app.dir_probed[d] = true;
            let window = &data[..data.len().min(MAX_PROBE)];
            match self.registry.probe(transport, dir, ports, window) {
                app::Detected::Proto(p) => {
                    app.dir_proto[d] = p;
                    self.pkt_proto_done = true;
                    if p != app.proto {
                        self.pkt_app_events |= app::events::MISMATCH_PROTOCOL_BOTH_DIRECTIONS;
                    }
                }
                // Too few bytes to tell (Telnet's first byte alone): Suricata probes
                // the direction again when more come, and so does this.
                app::Detected::NeedMore if transport == Transport::Tcp => {
                    app.dir_probed[d] = false;
                }
                // The direction is `failed` (EVE `app_proto_tc`): Suricata says so with
                // an event, over TCP.
                _ if transport == Transport::Tcp && app.proto.descriptor().is_some() => {
                    self.pkt_app_events |= app::events::DETECT_PROTOCOL_ONLY_ONE_DIRECTION;
                }
                _ => {}
            }
        }
        if app.state.is_none() {
            return false;
        }
        let mut out = ParseOutput::default();
        if let Some(state) = app.state.as_deref_mut() {
            state.parse(dir, data, &mut out);
        }
        self.parse_output(&out, app, dir);
        if out.failed {
            app.state = None;
            app.parse_error = true;
        }
        if let Some(change) = out.change.take() {
            // Suricata flushes both raw streams when a flow changes protocol.
            self.pkt_raw_trigger = 0b11;
            self.change_protocol(app, ports, dir, transport, data, *change);
        }
        true
    }

    /// Hands the flow to another protocol as its parser asked (see
    /// [`app::ProtoChange`]): the old state is put aside for [`Inner::flush_retired`],
    /// the new one made (or detection started again) and fed the held bytes of each
    /// direction, then `data[change.at..]` of `dir`. Refused (the old parser keeps the
    /// flow) when the new protocol is not parsed, the flow changed too often, or a
    /// change is already under way (a request made while the new state is fed).
    pub(super) fn change_protocol(
        &mut self,
        app: &mut AppFlow,
        ports: [u16; 2],
        dir: Dir,
        transport: Transport,
        data: &[u8],
        change: app::ProtoChange,
    ) {
        if app.retired.is_some() || app.changes >= app::MAX_PROTO_CHANGES || app.state.is_none() {
            return;
        }
        if change.keep_state {
            // The same state, named otherwise from now on (if that protocol is on).
            if let Some(p) = change.to
                && self.registry.protocols().any(|d| d.proto == p)
            {
                app.changes += 1;
                app.orig = app.proto;
                app.proto = p;
                app.dir_proto = [p, p];
                app.dir_probed = [true, true];
                self.stats.app_flows[p.index()] += 1;
            }
            return;
        }
        let new_state = match change.to {
            Some(p) => match self.registry.new_state(p, transport) {
                Some(s) => Some(s),
                None => return,
            },
            None => None,
        };
        app.changes += 1;
        let old = app.proto;
        let mut retired = Box::<Retired>::default();
        app.swap_protocol(&mut retired);
        let handover = retired.state.as_deref_mut().and_then(|s| s.handover());
        app.retired = Some(retired);
        app.orig = old;
        match (change.to, new_state) {
            (Some(p), Some(mut state)) => {
                if let Some(h) = handover {
                    state.take_over(old, h);
                }
                app.stream_depth = self.registry.stream_depth(p);
                app.proto = p;
                app.expected = p;
                app.dir_proto = [p, p];
                app.dir_probed = [true, true];
                app.state = Some(state);
                self.stats.app_flows[p.index()] += 1;
            }
            _ => {
                // Detected again from the bytes that follow (a CONNECT tunnel).
                app.expected = AppProto::Unknown;
                app.detection_done = false;
                app.probed = [0, 0];
                app.dir_probed = [false, false];
                app.dir_proto = [AppProto::Unknown; 2];
            }
        }
        for (d, held) in [Dir::ToServer, Dir::ToClient].into_iter().zip(&change.held) {
            if !held.is_empty() {
                self.feed_app(app, ports, d, transport, held);
            }
        }
        let rest = data.get(change.at..).unwrap_or_default();
        if !rest.is_empty() {
            self.feed_app(app, ports, dir, transport, rest);
        }
    }

    /// The old protocol's transactions after a change (see [`Inner::change_protocol`]):
    /// inspected a last time and logged, on pseudo packets of each direction
    /// (`stream (detect/log)`) with the time of packet `c`, as Suricata flushes them
    /// when a flow changes protocol; then the old state is dropped.
    pub(super) fn flush_retired(&mut self, c: Ctx<'_>, flow: &mut Flow) {
        let Some(mut retired) = flow.app.retired.take() else {
            return;
        };
        flow.app.expected = flow.app.proto;
        flow.app.swap_protocol(&mut retired);
        for dir in [Dir::ToServer, Dir::ToClient] {
            let to_server = dir == Dir::ToServer;
            let (src, dst) = if to_server {
                (flow.client, flow.server)
            } else {
                (flow.server, flow.client)
            };
            let pkt = super::stream::pseudo_packet(flow.proto, src, dst, flow);
            let meta = PacketMeta {
                ts_ns: c.meta.ts_ns,
                link_type: self.link_type,
                ..Default::default()
            };
            let c = Ctx {
                pkt: &pkt,
                meta: &meta,
                src: events::PacketSrc::DetectLog,
            };
            // The client side first, as not final: a transaction is freed once both
            // sides were inspected, and the server side may not have been yet.
            self.inspect_txs(c, flow, to_server, dir, !to_server);
        }
        flow.app.swap_protocol(&mut retired);
        flow.app.expected = AppProto::Unknown;
    }

    pub(super) fn detect_protocol(
        &mut self,
        app: &mut AppFlow,
        ports: [u16; 2],
        dir: Dir,
        transport: Transport,
        data: &[u8],
    ) {
        let d = dir.index();
        app.probed[d] += data.len();
        let window = &data[..data.len().min(MAX_PROBE)];
        let mut need_more = false;
        match self.registry.probe(transport, dir, ports, window) {
            app::Detected::Proto(proto) => {
                let other_held = std::mem::take(&mut app.held) != [false; 2];
                if other_held {
                    // The other direction's data was no protocol's: the flow is this
                    // one's, by this direction only.
                    self.pkt_app_events |= app::events::DETECT_PROTOCOL_ONLY_ONE_DIRECTION;
                }
                app.proto = proto;
                app.detection_done = true;
                app.dir_proto[d] = proto;
                app.dir_probed[d] = true;
                self.pkt_proto_done = true;
                self.stats.app_flows[proto as usize % app::APP_PROTOS] += 1;
                app.stream_depth = self.registry.stream_depth(proto);
                app.depth_pending = Some(d as u8);
                if let Some(mut state) = self.registry.new_state(proto, transport) {
                    let mut out = ParseOutput::default();
                    let other = dir.other();
                    if other_held {
                        // The held bytes came first: as Suricata has the opposing side
                        // parsed first, the caller feeds them, then `data`.
                        if std::mem::take(&mut app.early_gap[other.index()]) {
                            state.gap(other, 0, &mut out);
                        }
                        app.state = Some(state);
                        self.parse_output(&out, app, dir);
                        self.other_first = true;
                        return;
                    }
                    state.parse(dir, data, &mut out);
                    // The other direction lost bytes before the protocol was known:
                    // the parser is told now, after this direction's first data.
                    if std::mem::take(&mut app.early_gap[other.index()]) {
                        state.gap(other, 0, &mut out);
                    }
                    if out.failed {
                        app.parse_error = true;
                    } else {
                        app.state = Some(state);
                    }
                    self.parse_output(&out, app, dir);
                    if let Some(change) = out.change.take() {
                        self.change_protocol(app, ports, dir, transport, data, *change);
                    }
                }
                return;
            }
            app::Detected::NeedMore => need_more = true,
            // This direction's first data is no known protocol. Over TCP, while the
            // other direction has not failed too, its bytes wait for what that one says.
            app::Detected::None => {
                app.dir_probed[d] = true;
                // A flow picked up midstream must be recognised toward the server
                // (its client's data may start inside a message): Suricata gives up on
                // it otherwise.
                let must = self.feeding_midstream && dir == Dir::ToServer;
                if transport == Transport::Tcp && !app.held[1 - d] && !must {
                    app.held[d] = true;
                    return;
                }
                app.held = [false; 2];
            }
        }
        // TCP data arrives in pieces: give up once enough was seen both ways.
        let enough = app.probed.iter().all(|&n| n >= MAX_PROBE) || transport == Transport::Udp;
        if !need_more || enough {
            app.proto = AppProto::Failed;
            app.detection_done = true;
            self.pkt_proto_done = true;
        }
    }

    /// The transaction a packet rule's alert on a UDP flow names (EVE `tx_id` and the
    /// protocol's object), as Suricata 8 has it for a rule of an app-layer protocol:
    /// the oldest transaction of the packet's direction rules have not inspected yet
    /// (packet rules run before transaction rules, so it is the one this datagram
    /// made, if any).
    pub(super) fn packet_alert_tx(
        &self,
        flow: &Flow,
        dir: Dir,
        h: &Hit,
    ) -> Option<(u64, Option<AppRecord>)> {
        if h.tx.is_some() || self.engine.sig(h.sig).rule.app_proto.is_none() {
            return None;
        }
        let state = flow.app.state.as_deref()?;
        (0..state.tx_count())
            .filter_map(|i| state.tx(i))
            .filter(|t| !t.frames_only() && t.inspects(dir))
            .find(|t| {
                let id = t.id();
                !flow
                    .app
                    .txs
                    .iter()
                    .any(|d| d.tx_id == id && d.inspected[dir.index()] == Some(t.progress(dir)))
            })
            .map(|t| (t.id(), t.record()))
    }

    /// Inspects and logs the flow's transactions after progress in `dir`.
    pub(super) fn inspect_txs(
        &mut self,
        c: Ctx<'_>,
        flow: &mut Flow,
        to_server: bool,
        dir: Dir,
        ending: bool,
    ) {
        let proto = flow.app.proto;
        let Some(state) = flow.app.state.as_deref() else {
            return;
        };
        let view = app_view(c, flow, to_server);
        let mut hits = std::mem::take(&mut self.hits);
        // Reused between calls: records are large, and most calls log nothing.
        let mut to_log = std::mem::take(&mut self.to_log);
        let mut done_below = flow.app.next_free;
        let tx_trigger = proto
            .descriptor()
            .is_some_and(|d| d.raw_trigger == app::descriptor::RawTrigger::TxComplete);
        for i in 0..state.tx_count() {
            let Some(tx) = state.tx(i) else { break };
            let id = tx.id();
            if !tx.frames_only() {
                flow.app.tx_cnt = flow.app.tx_cnt.max(id + 1);
            }
            let td = match flow.app.txs.iter().position(|t| t.tx_id == id) {
                Some(p) => p,
                None => {
                    flow.app.txs.push(TxDetect::new(id));
                    flow.app.txs.len() - 1
                }
            };
            let progress = tx.progress(dir);
            let complete_both = tx.complete(Dir::ToServer) && tx.complete(Dir::ToClient);
            // A transaction part that just completed lets stream rules see its bytes
            // without waiting for a chunk, for a protocol whose Suricata parser
            // triggers raw reassembly there (see `RawTrigger`). A holder of frames is
            // no transaction: its frames trigger nothing.
            if tx_trigger
                && flow.app.txs[td].inspected[dir.index()] != Some(progress)
                && tx.complete(dir)
                && !tx.frames_only()
                && let Some(s) = flow.tcp.as_deref_mut()
            {
                let side = &mut s.sides[dir.index()];
                let at = side.app_done;
                side.trigger_raw(at);
            }
            if tx.inspects(dir)
                && (flow.app.txs[td].inspected[dir.index()] != Some(progress) || ending)
            {
                flow.app.txs[td].inspected[dir.index()] = Some(progress);
                hits.clear();
                let with_events;
                let tx: &dyn app::Transaction = if flow.app.tx_events.iter().any(|e| e.0 == id) {
                    with_events = WithEvents {
                        tx,
                        events: &flow.app.tx_events,
                    };
                    &with_events
                } else {
                    tx
                };
                self.engine.inspect_tx(
                    &mut self.st,
                    &view,
                    proto,
                    dir,
                    tx,
                    &mut flow.app.txs[td],
                    Some(&mut flow.vars),
                    &mut hits,
                );
                let record = if hits.is_empty() { None } else { tx.record() };
                let mut files: Vec<FileInfo> = if hits.is_empty() {
                    Vec::new()
                } else {
                    tx.files(dir)
                        .iter()
                        .map(|f| app::files::record(f, id))
                        .collect()
                };
                if self.store.is_some() {
                    self.filestore_hits(
                        &hits,
                        i,
                        dir,
                        (&mut flow.app.txs[td].store, &mut flow.app.store),
                        &mut files,
                    );
                }
                let progress = tx
                    .progress_name(Dir::ToServer)
                    .zip(tx.progress_name(Dir::ToClient));
                for h in &hits {
                    // A match on a frame logs the frame; on a frame of no
                    // transaction, as Suricata's MQTT frames, not the transaction.
                    if let Some(frame) = h.frame.and_then(|(b, i)| frame_event(tx, b, i, dir)) {
                        let of_tx = frame.tx_id.is_some();
                        self.pending_frame = Some(frame);
                        if !of_tx {
                            self.alert_on_frame(c, Some((&*flow, to_server)), *h);
                            continue;
                        }
                    }
                    self.alert_with_files(
                        c,
                        Some((&*flow, to_server)),
                        *h,
                        record.clone(),
                        files.clone(),
                        progress,
                    );
                }
                if !hits.is_empty() {
                    flow.alerted = true;
                    if hits.iter().any(|h| self.drops_flow(h)) {
                        flow.vars.pass = true;
                    }
                }
            }
            let log_app = self.cfg.log_app[proto as usize % app::APP_PROTOS];
            // A request logged on its own (DNS) goes out as soon as it is in, with its
            // packet's time, as Suricata logs each DNS message.
            if tx.complete(Dir::ToServer) && !flow.app.txs[td].logged_request {
                flow.app.txs[td].logged_request = true;
                if log_app && let Some(r) = tx.event_record(Dir::ToServer) {
                    to_log.push((id, r));
                }
            }
            if tx.log_ready(ending) && !flow.app.txs[td].logged {
                flow.app.txs[td].logged = true;
                if log_app && let Some(r) = tx.event_record(Dir::ToClient) {
                    to_log.push((id, r));
                }
            }
            // Free only once both directions were inspected at their final progress:
            // the other direction's last bytes (e.g. a response completed by its FIN)
            // may not have been inspected yet.
            let seen_final = [Dir::ToServer, Dir::ToClient].iter().all(|&d| {
                !tx.inspects(d) || flow.app.txs[td].inspected[d.index()] == Some(tx.progress(d))
            });
            if flow.app.txs[td].logged
                && complete_both
                && (seen_final || ending)
                && id == done_below
            {
                done_below = id + 1;
            }
        }
        self.hits = hits;
        // The detection state of a holder of frames of no transaction (NFS makes one per
        // record) goes with it: the state keeps it only until it was inspected.
        let tx_cnt = flow.app.tx_cnt;
        if flow.app.txs.iter().any(|t| t.tx_id >= tx_cnt) {
            flow.app.txs.retain(|t| {
                t.tx_id < tx_cnt
                    || (0..state.tx_count())
                        .filter_map(|i| state.tx(i))
                        .any(|x| x.id() == t.tx_id)
            });
        }
        if self.store.is_some() {
            self.store_files(flow, ending);
        }
        if self.cfg.log_files {
            self.files_to_log(flow, ending);
        }
        let mut file_log = std::mem::take(&mut self.file_log);
        for (file_to_server, r, fi) in file_log.drain(..) {
            self.stats.files += 1;
            self.stats.files_truncated += u64::from(fi.state == "TRUNCATED");
            self.stats.files_hashed +=
                u64::from(!(fi.md5.is_empty() && fi.sha1.is_empty() && fi.sha256.is_empty()));
            self.stats.files_magic += u64::from(!fi.magic.is_empty());
            let ev = events::fileinfo(c.pkt, c.meta, flow, file_to_server, c.src, r, fi);
            self.emit(ev);
        }
        self.file_log = file_log;
        for (id, mut r) in to_log.drain(..) {
            self.shape_tx_record(&mut r);
            // Without `extended`, Suricata logs DHCP ACKs only.
            if let AppRecord::Dhcp(d) = &r
                && !app::dhcp::wanted(d)
            {
                continue;
            }
            let ev = events::app_record(c.pkt, c.meta, flow, to_server, c.src, id, r);
            self.emit(ev);
        }
        self.to_log = to_log;
        if done_below > flow.app.next_free {
            flow.app.next_free = done_below;
            if let Some(state) = flow.app.state.as_deref_mut() {
                state.free_below(done_below);
            }
            flow.app.txs.retain(|t| t.tx_id >= done_below);
            flow.app.tx_events.retain(|e| e.0 >= done_below);
            flow.app.txs.release_if_empty();
            flow.app.tx_events.release_if_empty();
        }
    }

    /// The ended files of the flow's transactions not logged yet (all of them when the
    /// flow ends: an unfinished one as `TRUNCATED`), queued in `file_log`.
    fn files_to_log(&mut self, flow: &mut Flow, ending: bool) {
        let Some(state) = flow.app.state.as_deref() else {
            return;
        };
        for i in 0..state.tx_count() {
            let Some(tx) = state.tx(i) else { break };
            let id = tx.id();
            let Some(td) = flow.app.txs.iter_mut().find(|t| t.tx_id == id) else {
                continue;
            };
            for d in [Dir::ToServer, Dir::ToClient] {
                let files = tx.files(d);
                let logged = &mut td.files_logged[d.index()];
                let mut n = usize::from(*logged);
                while let Some(f) = files.get(n) {
                    if f.is_open() && !ending {
                        break;
                    }
                    let mut fi = app::files::record(f, id);
                    if f.is_open() {
                        // The flow ends with the file unfinished.
                        fi.state = app::files::FileState::Truncated.name().to_string();
                    }
                    let mut r = tx.record();
                    if let Some(r) = r.as_mut() {
                        self.shape_record(r);
                    }
                    self.file_log.push((d == Dir::ToServer, r, fi));
                    n += 1;
                }
                // Bounded by MAX_FILES_PER_TX.
                *logged = n as u16;
            }
        }
    }

    /// The `filestore` rules among `hits` (on live transaction `index`, inspected in
    /// `dir`): their files are marked for the store (now for scope `file`, from now on
    /// for `tx` and `flow`), and the alerts' `files` show them as being stored.
    fn filestore_hits(
        &mut self,
        hits: &[Hit],
        index: usize,
        dir: Dir,
        scoped: (&mut [u32; 2], &mut [u32; 2]),
        files: &mut [FileInfo],
    ) {
        for h in hits {
            let rule = &self.engine.sig(h.sig).rule;
            let Some(opt) = rule.filestore else { continue };
            let mark = h.sig.saturating_add(1);
            for (k, on) in opt.dirs(dir == Dir::ToServer).into_iter().enumerate() {
                if !on {
                    continue;
                }
                let d = if k == 0 { Dir::ToServer } else { Dir::ToClient };
                match opt.scope {
                    StoreScope::File => {}
                    StoreScope::Tx => scoped.0[k] = mark,
                    StoreScope::Flow => scoped.1[k] = mark,
                }
                self.store_marks.push((index, d, h.sig));
                if d == dir {
                    for fi in files.iter_mut().filter(|f| !f.stored) {
                        fi.storing = true;
                        if !fi.sid.contains(&rule.sid) {
                            fi.sid.push(rule.sid);
                        }
                    }
                }
            }
        }
    }

    /// Applies the `filestore` marks to the flow's files and writes the files to be
    /// stored (see [`app::files::store`]); a file no rule asked for by the time its
    /// direction of the transaction was inspected for the last time is not kept.
    fn store_files(&mut self, flow: &mut Flow, ending: bool) {
        let Some(store) = self.store.as_mut() else {
            return;
        };
        let Some(state) = flow.app.state.as_deref_mut() else {
            self.store_marks.clear();
            return;
        };
        let sid_of = |mark: u32| mark.checked_sub(1).map(|s| self.engine.sig(s).rule.sid);
        for i in 0..state.tx_count() {
            let Some(tx) = state.tx(i) else { break };
            let id = tx.id();
            let td = flow.app.txs.iter().find(|t| t.tx_id == id);
            let mut last = [false; 2];
            let mut marks = [0u32; 2];
            for d in [Dir::ToServer, Dir::ToClient] {
                let k = d.index();
                last[k] = ending
                    || (tx.complete(d)
                        && td.is_some_and(|t| t.inspected[k] == Some(tx.progress(d))));
                marks[k] = td.map_or(0, |t| t.store[k]).max(flow.app.store[k]);
            }
            for d in [Dir::ToServer, Dir::ToClient] {
                let k = d.index();
                let Some(files) = state.tx_files_mut(i, d) else {
                    continue;
                };
                let now: Option<u64> = self
                    .store_marks
                    .iter()
                    .find(|m| m.0 == i && m.1 == d)
                    .and_then(|m| sid_of(m.2 + 1));
                let from_scope = sid_of(marks[k]);
                for f in files.iter_mut() {
                    if !f.keeps_bytes() {
                        continue;
                    }
                    if let Some(sid) = now.or(from_scope) {
                        f.request_store(sid);
                    }
                    if f.store {
                        store.write(f);
                    } else if !f.is_open() && last[k] {
                        f.no_store();
                    }
                }
            }
        }
        self.store_marks.clear();
    }
}

impl Inner {
    /// Inspects the stream frame of the direction of packet `c` of a TCP flow whose
    /// protocol's stream frame the rules use, if it is due (see
    /// [`app::stream_frame`]): the bytes the parser was fed, acknowledged, past its
    /// last inspection; all of them when the flow (`ending`) or its session ended. As
    /// Suricata's, a direction's frames are inspected on that direction's packets.
    /// The bytes are read in place.
    pub(super) fn inspect_stream_frames(
        &mut self,
        c: Ctx<'_>,
        flow: &mut Flow,
        to_server: bool,
        ending: bool,
    ) {
        let Some(mut progress) = flow.app.stream_frame.take() else {
            return;
        };
        if flow.app.state.is_none() || flow.app.parse_error {
            // The parser failed on the flow: Suricata's app layer stops there, and
            // its frames are inspected no more.
            if let Some(s) = flow.tcp.as_deref_mut() {
                hold_for_frame(s, None, false);
            }
            return;
        }
        if progress.proto == flow.app.proto {
            let dir = if to_server {
                Dir::ToServer
            } else {
                Dir::ToClient
            };
            self.inspect_stream_frame(c, flow, &mut progress, to_server, dir, ending);
        }
        if let Some(s) = flow.tcp.as_deref_mut() {
            hold_for_frame(s, Some(&progress), self.cfg.inline);
        }
        flow.app.stream_frame = Some(progress);
    }

    fn inspect_stream_frame(
        &mut self,
        c: Ctx<'_>,
        flow: &mut Flow,
        progress: &mut app::stream_frame::Progress,
        to_server: bool,
        dir: Dir,
        ending: bool,
    ) {
        use app::stream_frame::{Chunk, MAX_CHUNK_BYTES};
        let Some(s) = flow.tcp.as_deref() else {
            return;
        };
        let side = &s.sides[dir.index()];
        if side.depth_reached {
            // Past the reassembly depth Suricata inspects the direction's stream frame
            // no more, not even at its end.
            progress.done[dir.index()] = true;
            return;
        }
        let eof = ending || s.fully_closed();
        // Inline, bytes are inspected as they come; else once acknowledged.
        let inline = self.cfg.inline;
        // A gap the parser does not take ended the frame where it starts: what came
        // before it is inspected when the session ends, the frame whole (as
        // Suricata's); so are the bytes of a frame its parser cut (not whole). The
        // bytes before a gap the parser takes are inspected with those after it.
        let d = dir.index();
        let cut = progress.cut[d];
        let ended = cut || progress.gap_end[d];
        let piece = side.frame_piece.as_deref().filter(|_| ended);
        if piece.is_some() && !eof {
            return;
        }
        let usable = match piece {
            Some((start, bytes)) => start + bytes.len() as u64,
            None if eof || inline => side.next(),
            None => side.acked.min(side.next()),
        };
        if piece.is_some() {
            progress.fed[d] = usable;
        }
        let Some((from, to)) = progress.next_chunk(dir, usable, eof, inline) else {
            return;
        };
        let view = app_view(c, flow, to_server);
        let Flow { tcp, vars, app, .. } = &mut *flow;
        let Some(s) = tcp.as_deref() else {
            return;
        };
        let side = &s.sides[dir.index()];
        // Rare (a gap the parser took, with bytes before it not inspected yet): the
        // bytes on both sides of it, copied together.
        let joined: Vec<u8>;
        let (bytes, len) = match side.frame_piece.as_deref() {
            Some((start, b)) => {
                let skip = usize::try_from(from.saturating_sub(*start)).unwrap_or(usize::MAX);
                let before = b.get(skip..).unwrap_or_default();
                if ended {
                    (before, to)
                } else {
                    let after = side.bytes(start + b.len() as u64, to);
                    joined = [before, after].concat();
                    (&joined[..], side.next())
                }
            }
            // The frame's length so far is all the direction's bytes that came
            // (Suricata logs the data it holds, acknowledged or not).
            None => (side.bytes(from, to), side.next()),
        };
        let chunk = Chunk {
            proto: app.proto,
            dir,
            bytes: &bytes[..bytes.len().min(MAX_CHUNK_BYTES)],
            len,
            complete: eof && !cut,
        };
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        let mut td = TxDetect::new(Chunk::holder_id(dir));
        self.engine.inspect_tx(
            &mut self.st,
            &view,
            app.proto,
            dir,
            &chunk,
            &mut td,
            Some(vars),
            &mut hits,
        );
        if hits.is_empty() {
            self.hits = hits;
            return;
        }
        let frames: Vec<_> = hits
            .iter()
            .map(|h| h.frame.and_then(|(b, i)| frame_event(&chunk, b, i, dir)))
            .collect();
        for (h, frame) in hits.iter().zip(frames) {
            self.pending_frame = frame;
            self.alert_on_frame(c, Some((&*flow, to_server)), *h);
        }
        flow.alerted = true;
        if hits.iter().any(|h| self.drops_flow(h)) {
            flow.vars.pass = true;
        }
        self.hits = hits;
    }
}

/// Sets what each side of a TCP session holds for its stream frame `p` (none when
/// `None`): the bytes a later inspection may need. A frame its parser cut (see
/// [`app::AppState::stream_done`]) takes the bytes it still needs into a piece of its
/// own, so that the stream need not hold all that follows; a frame done holds nothing.
pub(super) fn hold_for_frame(
    s: &mut crate::flow::tcp::Session,
    p: Option<&app::stream_frame::Progress>,
    inline: bool,
) {
    for (side, dir) in s.sides.iter_mut().zip([Dir::ToServer, Dir::ToClient]) {
        let d = dir.index();
        let Some(p) = p.filter(|p| !p.done[d]) else {
            side.frame_done = None;
            side.frame_piece = None;
            continue;
        };
        let from = p.keep_from(dir, inline);
        let ended = p.cut[d] || p.gap_end[d];
        if !ended
            && let Some((start, b)) = side.frame_piece.as_deref()
            && from >= start + b.len() as u64
        {
            // The bytes before a gap the parser took were inspected.
            side.frame_piece = None;
        }
        if p.cut[d] && side.frame_piece.is_none() {
            let end = p.fed[d].min(side.next());
            let all = side.bytes(from, end);
            let start = end - all.len() as u64;
            let b = &all[..all.len().min(crate::flow::tcp::MAX_FRAME_PIECE)];
            side.frame_piece = Some(Box::new((start, b.to_vec())));
        }
        // A frame that ended needs only its piece; one with a gap it took holds the
        // bytes after the gap as any.
        side.frame_done = (!ended || side.frame_piece.is_none()).then_some(from);
    }
}

/// Frame item `index` of buffer `id` of `tx` as an alert logs it, if the protocol
/// places its frames.
fn frame_event(
    tx: &dyn app::Transaction,
    id: app::BufferId,
    index: u16,
    dir: Dir,
) -> Option<meerkat_proto::events::Frame> {
    let index = usize::from(index);
    let meta = tx.frame(id, index)?;
    let bytes = match tx.buffer(id, index) {
        app::Buf::Ready(b) | app::Buf::Partial(b) => b,
        _ => return None,
    };
    let def = app::buffers::frame_by_id(id)?;
    // Suricata logs at most 256 bytes of a datagram's frame.
    let cap = if meta.stream_offset.is_none() {
        MAX_DATAGRAM_FRAME_PAYLOAD
    } else {
        MAX_FRAME_PAYLOAD
    };
    Some(meerkat_proto::events::Frame {
        r#type: def.name.to_string(),
        id: meta.id,
        to_server: dir == Dir::ToServer,
        stream_offset: meta.stream_offset,
        length: meta.length.unwrap_or(bytes.len() as u64),
        payload: bytes[..bytes.len().min(cap)].to_vec(),
        complete: meta.complete,
        tx_id: meta.tx_id,
    })
}

/// The most bytes of a frame an alert carries (outputs cut it to their
/// `payload-buffer-size`).
const MAX_FRAME_PAYLOAD: usize = 64 * 1024;
/// The most bytes of a datagram's frame an alert carries (Suricata's).
const MAX_DATAGRAM_FRAME_PAYLOAD: usize = 256;

/// A transaction seen with the anomalies the worker recorded for it (the engine asks
/// [`app::Transaction::has_event`] for `app-layer-event`).
#[derive(Debug)]
struct WithEvents<'a> {
    tx: &'a dyn app::Transaction,
    events: &'a [(u64, Dir, &'static str)],
}

impl app::Transaction for WithEvents<'_> {
    fn id(&self) -> u64 {
        self.tx.id()
    }
    fn complete(&self, dir: Dir) -> bool {
        self.tx.complete(dir)
    }
    fn progress(&self, dir: Dir) -> u8 {
        self.tx.progress(dir)
    }
    fn progress_name(&self, dir: Dir) -> Option<&'static str> {
        self.tx.progress_name(dir)
    }
    fn buffer(&self, id: app::BufferId, index: usize) -> app::Buf<'_> {
        self.tx.buffer(id, index)
    }
    fn dce_little_endian(&self, id: app::BufferId) -> bool {
        self.tx.dce_little_endian(id)
    }
    fn record(&self) -> Option<AppRecord> {
        self.tx.record()
    }
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        self.tx.event_record(dir)
    }
    fn events_both_ways(&self) -> bool {
        self.tx.events_both_ways()
    }
    fn has_event(&self, dir: Dir, name: &str) -> bool {
        let id = self.tx.id();
        let both = self.tx.events_both_ways();
        self.events
            .iter()
            .any(|&(i, d, n)| i == id && (both || d == dir) && n == name)
    }
    fn files(&self, dir: Dir) -> &[app::files::File] {
        self.tx.files(dir)
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        self.tx.as_any()
    }
    fn frame(&self, id: app::BufferId, index: usize) -> Option<app::FrameMeta> {
        self.tx.frame(id, index)
    }
}

/// What a packet brings to the inspection of a flow's transactions and frames: its
/// headers and the flow's state, no payload of its own.
fn app_view<'a>(c: Ctx<'a>, flow: &Flow, to_server: bool) -> PacketView<'a> {
    PacketView {
        pkt: c.pkt,
        ts_ns: c.meta.ts_ns,
        to_server: Some(to_server),
        established: flow.established(),
        app_proto: flow.app.proto,
        app_proto_pending: false,
        payload: None,
        stream: None,
        segment: None,
        stream_bytes: flow.stream_bytes(),
        flow_id: flow.id,
        first_in_direction: false,
        pseudo: c.src.is_pseudo(),
        pseudo_app_rules: false,
        app_proto_dir: flow.app.dir_proto,
        proto_detect_done: false,
        app_events: 0,
        stream_events: 0,
    }
}
