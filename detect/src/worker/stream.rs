//! Per-flow packet handling: the TCP session and its stream, UDP datagrams, and the
//! end of a flow (its last inspection, logging and `flow` record).

use super::*;

impl Inner {
    /// A packet with its flow: stream, app layer, detection.
    pub(super) fn flow_packet(
        &mut self,
        c: Ctx<'_>,
        flow: &mut Flow,
        mut to_server: bool,
        checksum_ok: bool,
    ) {
        if flow.replay_slot == crate::flow::NOT_REGISTERED {
            flow.replay_slot = self.replay.start(self.rec.0);
        }
        let pkt = c.pkt;
        let ts = c.meta.ts_ns;
        let mut dir = if to_server {
            Dir::ToServer
        } else {
            Dir::ToClient
        };
        let mut d = dir.index();
        self.pkt_app_events = 0;
        self.pkt_anomalies.clear();
        self.pkt_proto_done = false;

        // `flow:established` sees the flow as it was before this packet, as Suricata's
        // packet flags do: the ACK completing a handshake is not established yet.
        let established_before = flow.established();

        // TCP session.
        let mut stream_added = false;
        let mut closing = false;
        let mut stream_events = 0u8;
        if let L4::Tcp {
            flags, seq, ack, ..
        } = pkt.l4
            && checksum_ok
        {
            if flow.tcp.is_none() && !flow.tcp_untracked {
                match tcp::Session::start(
                    to_server,
                    flags,
                    seq,
                    ack,
                    pkt.payload.len(),
                    self.cfg.midstream,
                ) {
                    Some(s) => {
                        flow.tcp = Some(Box::new(s));
                        self.stats.tcp_sessions += 1;
                    }
                    None => {
                        if !self.cfg.midstream && flags & (tcp::SYN | tcp::RST) == 0 {
                            flow.exceptions |= crate::flow::Exception::StreamMidstream as u8;
                        }
                        flow.tcp_untracked = true;
                        self.stats.tcp_untracked += 1;
                    }
                }
            }
            if let Some(s) = flow.tcp.as_deref_mut() {
                let gaps_before = s.sides[d].gap_bytes + s.sides[1 - d].gap_bytes;
                // The protocol's own depth once it is known (Suricata's per-protocol
                // `stream-depth`), else `stream.reassembly.depth`; from the packet after
                // the other side's next one when the protocol was just recognised (see
                // `AppFlow::depth_pending`).
                let depth = match flow.app.depth_pending {
                    Some(_) => self.cfg.depth,
                    None => flow.app.stream_depth.unwrap_or(self.cfg.depth),
                };
                let up = s.packet(to_server, flags, seq, ack, pkt.payload, depth);
                if flow
                    .app
                    .depth_pending
                    .is_some_and(|side| usize::from(side) != d)
                {
                    flow.app.depth_pending = None;
                }
                stream_added = up.added;
                stream_events = up.events;
                closing = flags & (tcp::FIN | tcp::RST) != 0;
                if s.sides[d].gap_bytes + s.sides[1 - d].gap_bytes > gaps_before {
                    self.stats.tcp_gaps += 1;
                }
            }
        }

        // A flow whose first data is a reply (a UDP flow, or a TCP flow picked up
        // midstream) is the other way round: reverse it, as Suricata does.
        if self.first_data_reversed(flow, d, pkt.payload) {
            flow.reverse();
            to_server = !to_server;
            dir = dir.other();
            d = dir.index();
        }

        // App layer.
        let transport = match pkt.l4 {
            L4::Tcp { .. } => Some(Transport::Tcp),
            L4::Udp { .. } => Some(Transport::Udp),
            _ => None,
        };
        let mut progressed = [false; 2];
        match transport {
            Some(Transport::Tcp) if flow.tcp.is_some() => {
                for side in [d, 1 - d] {
                    let sdir = if side == 0 {
                        Dir::ToServer
                    } else {
                        Dir::ToClient
                    };
                    progressed[side] |= self.feed_stream(flow, sdir, false);
                }
            }
            // A datagram's checksum does not keep it from its parser (as in Suricata, where
            // only TCP's stream refuses bad checksums).
            Some(Transport::Udp) if !pkt.payload.is_empty() => {
                let ports = [flow.client.1, flow.server.1];
                progressed[d] |=
                    self.feed_app(&mut flow.app, ports, dir, Transport::Udp, pkt.payload);
            }
            _ => {}
        }

        // The old protocol of a flow that just changed: its last transactions.
        if flow.app.retired.is_some() {
            self.flush_retired(c, flow);
        }

        // Raw stream chunk of this packet's direction.
        // As in Suricata (IDS mode), acknowledged data waits until a chunk's worth
        // (`toserver-chunk-size`) has come, the parser asked for it (`Side::trigger_raw`), the
        // side closes or the depth is reached; inline mode inspects what arrived at once.
        let chunk = self.cfg.chunk[d];
        // The flow's payload inspection was ended before this packet; or ends after it,
        // its raw stream flushed first (see `PayloadInspection`).
        let (payload_off, payload_ending) = match flow.tcp.as_deref() {
            Some(s) => match s.payload {
                tcp::PayloadInspection::Off => (true, false),
                tcp::PayloadInspection::Ending(side) => (false, side != d),
                tcp::PayloadInspection::On | tcp::PayloadInspection::Flush => (false, false),
            },
            None => (false, false),
        };
        let raw_rules = self.engine.inspects_raw_stream();
        let chunk_range = flow.tcp.as_deref_mut().and_then(|s| {
            if payload_ending {
                s.payload = tcp::PayloadInspection::Off;
            }
            if !raw_rules {
                // No rule would see the chunk: its bytes need not wait for it.
                let side = &mut s.sides[d];
                side.raw_done = side.next();
                return None;
            }
            if payload_off {
                return None;
            }
            let side = &mut s.sides[d];
            let flush = self.cfg.inline || closing || side.fin;
            let limit = if flush {
                side.next()
            } else {
                side.acked.min(side.next())
            };
            // Requests the data up to `limit` answers are taken whether it is
            // inspected now (a chunk, the end) or because of them.
            let triggered = side.take_triggers(limit);
            if !flush
                && !triggered
                && !payload_ending
                && !side.depth_reached
                && limit.saturating_sub(side.raw_done) < chunk
            {
                return None;
            }
            (limit > side.raw_done).then(|| {
                let r = (side.raw_done, limit);
                side.raw_done = limit;
                r
            })
        });
        // What a gap cut off before raw inspection saw it goes first, on its own.
        self.inspect_pieces(c, flow, to_server);
        let established = if flow.proto == 6 {
            established_before
        } else {
            flow.established()
        };
        let stream_bytes = flow.stream_bytes();
        let app_proto = flow.app.proto;
        // The side awaited to make the protocol visible: this packet, if it is of it
        // (see `AppFlow::shown_on`).
        let app_proto_pending = match flow.app.shown_on {
            Some(side) if side == dir => {
                flow.app.shown_on = None;
                false
            }
            Some(_) => true,
            None => false,
        };
        let flow_id = flow.id;
        // An ICMP error report in the TCP or UDP flow it reports on is no direction's
        // first packet (Suricata sets no "seen" flag for it).
        let report = matches!(pkt.l4, L4::Icmp { .. }) && flow.proto != pkt.proto();
        let seen = flow.seen();
        let first = !report && if to_server { seen.0 == 1 } else { seen.1 == 1 };
        {
            let stream = match (chunk_range, flow.tcp.as_deref()) {
                (Some((a, b)), Some(s)) => Some(s.sides[d].bytes(a, b)),
                _ => None,
            };
            let view = PacketView {
                pkt,
                ts_ns: ts,
                to_server: Some(to_server),
                established,
                app_proto,
                app_proto_pending,
                payload: (!stream_added && !payload_off).then_some(pkt.payload),
                stream,
                segment: (stream_added && !payload_off).then_some(pkt.payload),
                stream_bytes,
                flow_id,
                first_in_direction: first,
                pseudo: false,
                pseudo_app_rules: false,
                app_proto_dir: flow.app.dir_proto,
                proto_detect_done: self.pkt_proto_done,
                app_events: self.pkt_app_events,
                stream_events,
            };
            self.hits.clear();
            let mut hits = std::mem::take(&mut self.hits);
            self.engine
                .inspect_packet(&mut self.st, &view, Some(&mut flow.vars), &mut hits);
            let pdir = if to_server {
                Dir::ToServer
            } else {
                Dir::ToClient
            };
            for h in &hits {
                let (h, record) = match transport {
                    Some(Transport::Udp) => match self.packet_alert_tx(flow, pdir, h) {
                        Some((tx, record)) => (Hit { tx: Some(tx), ..*h }, record),
                        None => (*h, None),
                    },
                    _ => (*h, None),
                };
                self.alert(c, Some((&*flow, to_server)), h, record);
            }
            if !hits.is_empty() {
                flow.alerted = true;
                if hits.iter().any(|h| self.drops_flow(h)) {
                    flow.vars.pass = true;
                }
            }
            self.hits = hits;
        }
        // Stream anomalies come after the packet's alerts, as in Suricata's EVE.
        if stream_events != 0 && self.cfg.want_stream_anomaly {
            for (i, name) in tcp::STREAM_EVENTS.iter().enumerate() {
                if stream_events & (1 << i) != 0 {
                    self.stats.anomalies += 1;
                    let ev = events::stream_anomaly(name, pkt, c.meta, flow.id, c.src);
                    self.emit(ev);
                }
            }
        }
        if self.pkt_app_events != 0 || !self.pkt_anomalies.is_empty() {
            self.log_app_anomalies(c, flow);
        }
        // Transactions.
        for (sdir, got) in [Dir::ToServer, Dir::ToClient].into_iter().zip(progressed) {
            if got {
                self.inspect_txs(c, flow, to_server, sdir, false);
            }
        }
        if flow.app.stream_frame.is_some() {
            self.inspect_stream_frames(c, flow, to_server, false);
        }
        if flow
            .tcp
            .as_deref()
            .is_some_and(|s| s.payload == tcp::PayloadInspection::Flush)
        {
            self.flush_raw_streams(c, flow, to_server);
        }
        if let Some(s) = flow.tcp.as_deref_mut() {
            for side in &mut s.sides {
                side.trim();
            }
        }
    }

    /// Suricata's detect/log flush that ends payload inspection: a pseudo packet per
    /// direction inspects what its raw stream still holds, the direction opposite to
    /// this packet's first (Suricata makes the flush on the packet that acknowledged the
    /// data, which came the other way); then no payload of the flow is inspected.
    fn flush_raw_streams(&mut self, c: Ctx<'_>, flow: &mut Flow, to_server: bool) {
        for ts in [!to_server, to_server] {
            let d = if ts { Dir::ToServer } else { Dir::ToClient }.index();
            let range = flow.tcp.as_deref_mut().and_then(|s| {
                let side = &mut s.sides[d];
                (side.next() > side.raw_done).then(|| {
                    let r = (side.raw_done, side.next());
                    side.raw_done = side.next();
                    r
                })
            });
            let Some((a, b)) = range else { continue };
            let chunk = flow
                .tcp
                .as_deref()
                .map(|s| s.sides[d].bytes(a, b).to_vec())
                .unwrap_or_default();
            let (src, dst) = if ts {
                (flow.client, flow.server)
            } else {
                (flow.server, flow.client)
            };
            let pkt = pseudo_packet(flow.proto, src, dst, flow);
            let meta = PacketMeta {
                ts_ns: c.meta.ts_ns,
                link_type: self.link_type,
                ..Default::default()
            };
            let pc = Ctx {
                pkt: &pkt,
                meta: &meta,
                src: events::PacketSrc::DetectLog,
            };
            self.inspect_packet(pc, Some((flow, ts)), Some(&chunk), None, false);
        }
        if let Some(s) = flow.tcp.as_deref_mut() {
            s.payload = tcp::PayloadInspection::Off;
        }
    }

    /// Feeds new in-order bytes of one TCP direction to the app layer. Returns whether
    /// the parser got anything.
    pub(super) fn feed_stream(&mut self, flow: &mut Flow, dir: Dir, flush: bool) -> bool {
        let d = dir.index();
        self.pkt_raw_trigger = 0;
        self.pkt_no_payload = false;
        self.pkt_no_payload_flush = false;
        let Some(s) = flow.tcp.as_deref_mut() else {
            return false;
        };
        let gap = std::mem::take(&mut s.sides[d].pending_gap);
        let (from, to) = (s.sides[d].app_done, s.sides[d].next());
        let fin = s.sides[d].fin || s.state == tcp::State::Closed || flush;
        if gap > 0 {
            if let Some(state) = flow.app.state.as_deref_mut() {
                let mut out = ParseOutput::default();
                state.gap(dir, gap, &mut out);
                self.parse_output(&out, &mut flow.app, dir);
                // A parser that takes no gaps (Suricata's RFB) fails on the flow.
                if out.failed {
                    flow.app.state = None;
                    flow.app.parse_error = true;
                }
                // One that stops the direction there ends its stream frame.
                if let Some(p) = flow.app.stream_frame.as_deref_mut()
                    && !p.cut[d]
                    && flow
                        .app
                        .state
                        .as_deref()
                        .is_some_and(|s| s.stream_done(dir))
                {
                    p.gap_end[d] = true;
                }
            } else if !flow.app.detection_done {
                flow.app.early_gap[d] = true;
            }
        }
        let mut got = false;
        if !flow.app.detection_done && flow.app.held[d] {
            // Bytes of no protocol, held for what the other direction says; past
            // MAX_HELD (a side that talks on alone), or at the reassembly depth, the
            // flow's detection fails.
            if to - from > MAX_HELD || s.sides[d].depth_reached {
                flow.app.held = [false; 2];
                flow.app.proto = AppProto::Failed;
                flow.app.detection_done = true;
                self.pkt_proto_done = true;
                s.sides[d].app_done = to;
            }
        } else if flow.app.detection_done && flow.app.state.is_none() {
            // Nobody parses this flow: let the bytes go.
            s.sides[d].app_done = to;
        } else if to > from {
            let ports = [flow.client.1, flow.server.1];
            let was_done = flow.app.detection_done;
            // The other direction's held bytes, fed first when this one's detects.
            let mut other_fed = None;
            let Flow { tcp, app, .. } = &mut *flow;
            if let Some(s) = tcp.as_deref_mut() {
                self.feeding_midstream = s.midstream;
                // The parser reads the stream in place (the app state and the stream are
                // different parts of the flow).
                got = self.feed_app(app, ports, dir, Transport::Tcp, s.sides[d].bytes(from, to));
                if std::mem::take(&mut self.other_first) {
                    // Detected here, with the other direction's held bytes first.
                    let o = 1 - d;
                    let (o_from, o_to) = (s.sides[o].app_done, s.sides[o].next());
                    self.feed_app(
                        app,
                        ports,
                        dir.other(),
                        Transport::Tcp,
                        s.sides[o].bytes(o_from, o_to),
                    );
                    s.sides[o].app_done = o_to;
                    other_fed = Some(o_to);
                    self.feed_app(app, ports, dir, Transport::Tcp, s.sides[d].bytes(from, to));
                    got = true;
                }
                if !was_done && app.detection_done && !self.cfg.inline {
                    app.shown_on = Some(dir.other());
                }
                if !was_done && app.detection_done {
                    self.detected_tcp(flow, dir, from, to);
                    got |= flow.app.state.is_some();
                }
            }
            self.stream_frame_fed(flow, dir, to, other_fed);
            let held = !flow.app.detection_done && flow.app.held[d];
            if held && self.claim_and_parse(flow, dir, from, to) {
                // A connection another flow announced (an FTP data connection) whose
                // first bytes are no protocol's.
                flow.app.held = [false; 2];
                flow.app.detection_done = true;
                self.pkt_proto_done = true;
                got = true;
            } else if held {
                return got;
            }
            if let Some(s) = flow.tcp.as_deref_mut() {
                s.sides[d].app_done = to;
            }
        }
        if fin
            && flow.app.eof_open != [true; 2]
            && let Some(state) = flow.app.state.as_deref()
        {
            let open = incomplete_directions(state);
            flow.app.eof_open[0] |= open[0];
            flow.app.eof_open[1] |= open[1];
        }
        if fin && let Some(state) = flow.app.state.as_deref_mut() {
            let mut out = ParseOutput::default();
            state.eof(dir, &mut out);
            self.parse_output(&out, &mut flow.app, dir);
            got = true;
        }
        if self.pkt_expect {
            self.pkt_expect = false;
            self.add_expectations(flow);
        }
        let trigger = std::mem::take(&mut self.pkt_raw_trigger);
        if trigger != 0
            && let Some(s) = flow.tcp.as_deref_mut()
        {
            for (i, side) in s.sides.iter_mut().enumerate() {
                if trigger & (1 << i) != 0 {
                    let at = side.app_done;
                    side.trigger_raw(at);
                }
            }
        }
        if std::mem::take(&mut self.pkt_no_payload)
            && let Some(s) = flow.tcp.as_deref_mut()
            && s.payload == tcp::PayloadInspection::On
        {
            s.payload = tcp::PayloadInspection::Ending(d);
        }
        if std::mem::take(&mut self.pkt_no_payload_flush)
            && let Some(s) = flow.tcp.as_deref_mut()
            && matches!(
                s.payload,
                tcp::PayloadInspection::On | tcp::PayloadInspection::Ending(_)
            )
        {
            s.payload = tcp::PayloadInspection::Flush;
        }
        got
    }

    /// The parser of a TCP flow was given the bytes of `dir` up to `to` (and of the
    /// other direction up to `other_to`): its stream frame, if the rules use the
    /// protocol's, grows with them. Made with the first bytes its protocol parses;
    /// not for a protocol the flow changed to (Suricata's frame of that one starts
    /// where it took over, which is not followed here).
    fn stream_frame_fed(&mut self, flow: &mut Flow, dir: Dir, to: u64, other_to: Option<u64>) {
        let proto = flow.app.proto;
        if flow.app.stream_frame.is_none() {
            if !flow.app.detection_done
                || flow.app.changes > 0
                || proto.descriptor().is_none()
                || !self.registry.uses_stream_frame(proto)
            {
                return;
            }
            flow.app.stream_frame = Some(Box::new(app::stream_frame::Progress::new(proto)));
        }
        let Some(p) = flow.app.stream_frame.as_deref_mut() else {
            return;
        };
        if p.proto != proto {
            // The flow changed protocol: the old one's frame ends, the new one's is not
            // followed.
            flow.app.stream_frame = None;
            if let Some(s) = flow.tcp.as_deref_mut() {
                super::app_layer::hold_for_frame(s, None, false);
            }
            return;
        }
        let state = flow.app.state.as_deref();
        for (d, to) in [(dir, Some(to)), (dir.other(), other_to)] {
            let i = d.index();
            if let Some(to) = to
                && !p.cut[i]
                && !p.gap_end[i]
            {
                p.fed[i] = p.fed[i].max(to);
                p.cut[i] = state.is_some_and(|s| s.stream_done(d));
            }
        }
        if let Some(s) = flow.tcp.as_deref_mut() {
            super::app_layer::hold_for_frame(s, Some(p), self.cfg.inline);
        }
    }

    /// A TCP flow's protocol was just decided on its bytes `from..to` of `dir`: its
    /// parser learns the flow's endpoints; a flow that is no protocol's may be a
    /// connection another flow announced (an FTP data connection), whose parser then
    /// gets those bytes.
    fn detected_tcp(&mut self, flow: &mut Flow, dir: Dir, from: u64, to: u64) {
        if let Some(state) = flow.app.state.as_deref_mut() {
            state.set_endpoints(flow.client.0, flow.server.0);
            return;
        }
        if flow.app.proto == AppProto::Failed {
            self.claim_and_parse(flow, dir, from, to);
        }
    }

    /// Whether the flow is a connection another flow announced (see
    /// [`Inner::claim_expected`]); if so, its new parser gets the bytes `from..to` of
    /// `dir` that named no protocol.
    fn claim_and_parse(&mut self, flow: &mut Flow, dir: Dir, from: u64, to: u64) -> bool {
        if !self.claim_expected(flow) {
            return false;
        }
        let Flow { tcp, app, .. } = &mut *flow;
        if let (Some(s), Some(state)) = (tcp.as_deref(), app.state.as_deref_mut()) {
            let mut out = ParseOutput::default();
            state.parse(dir, s.sides[dir.index()].bytes(from, to), &mut out);
            self.parse_output(&out, app, dir);
        }
        true
    }

    /// Ends a flow: inspects what its stream still holds, finishes and logs its
    /// transactions, writes its flow record.
    pub(super) fn end_flow(&mut self, mut flow: Flow, reason: EndReason) {
        if flow.replay_slot != crate::flow::NOT_REGISTERED {
            self.replay.end(flow.replay_slot, self.rec.1);
        }
        let suricata_pseudo = pseudo_directions(&flow);
        // A pseudo packet per direction carries the flow's addresses for header checks.
        for dir in [Dir::ToServer, Dir::ToClient] {
            // What the last real packet raised was logged with it (flows end after it).
            self.pkt_app_events = 0;
            self.pkt_anomalies.clear();
            let to_server = dir == Dir::ToServer;
            let (src, dst) = if to_server {
                (flow.client, flow.server)
            } else {
                (flow.server, flow.client)
            };
            let pkt = pseudo_packet(flow.proto, src, dst, &flow);
            let meta = PacketMeta {
                ts_ns: flow.last_ns,
                seq: 0,
                link_type: self.link_type,
                ..Default::default()
            };
            let c = Ctx {
                pkt: &pkt,
                meta: &meta,
                src: events::PacketSrc::FlowTimeout,
            };
            let d = dir.index();
            if flow.tcp.is_some() {
                let progressed = self.feed_stream(&mut flow, dir, true);
                if flow.app.retired.is_some() {
                    self.flush_retired(c, &mut flow);
                }
                self.inspect_pieces(c, &mut flow, to_server);
                let range = flow.tcp.as_deref_mut().and_then(|s| {
                    if s.payload == tcp::PayloadInspection::Off {
                        return None;
                    }
                    let side = &mut s.sides[d];
                    (side.next() > side.raw_done).then(|| {
                        let r = (side.raw_done, side.next());
                        side.raw_done = side.next();
                        r
                    })
                });
                self.pseudo_app_rules = suricata_pseudo[d];
                if let Some((a, b)) = range {
                    let chunk = flow
                        .tcp
                        .as_deref()
                        .map(|s| s.sides[d].bytes(a, b).to_vec())
                        .unwrap_or_default();
                    self.inspect_packet(c, Some((&mut flow, to_server)), Some(&chunk), None, false);
                } else if suricata_pseudo[d] {
                    self.inspect_packet(c, Some((&mut flow, to_server)), None, None, false);
                }
                self.pseudo_app_rules = false;
                if progressed {
                    self.inspect_txs(c, &mut flow, to_server, dir, false);
                }
                self.inspect_stream_frames(c, &mut flow, to_server, true);
            } else if flow.app.state.is_some() {
                let mut out = ParseOutput::default();
                if let Some(state) = flow.app.state.as_deref_mut() {
                    state.eof(dir, &mut out);
                }
                self.parse_output(&out, &mut flow.app, dir);
            }
            self.log_app_anomalies(c, &flow);
        }
        // Whatever is left: inspect once more as final, and log.
        if flow.app.state.is_some() {
            let pkt = pseudo_packet(flow.proto, flow.client, flow.server, &flow);
            let meta = PacketMeta {
                ts_ns: flow.last_ns,
                link_type: self.link_type,
                ..Default::default()
            };
            let c = Ctx {
                pkt: &pkt,
                meta: &meta,
                src: events::PacketSrc::FlowTimeout,
            };
            self.inspect_txs(c, &mut flow, true, Dir::ToServer, true);
            self.inspect_txs(c, &mut flow, false, Dir::ToClient, true);
        }
        if self.cfg.want_flow {
            self.emit(events::flow_end(&flow, reason));
        }
    }
}

/// A packet made from a flow's tuple, for inspection at flow end (or when a flow
/// changes protocol).
/// The directions of a TCP flow Suricata makes a pseudo packet for when the flow ends
/// (to_server, to_client): both while the session is still open, and each direction
/// with data not yet processed or a transaction whose part of that direction is not
/// complete. UDP flows get none.
fn pseudo_directions(flow: &Flow) -> [bool; 2] {
    let Some(s) = flow.tcp.as_deref() else {
        return [false; 2];
    };
    let open = matches!(s.state, tcp::State::Established | tcp::State::Closing);
    let incomplete = flow
        .app
        .state
        .as_deref()
        .map_or([false; 2], incomplete_directions);
    let mut need = [open; 2];
    for (d, side) in s.sides.iter().enumerate() {
        need[d] |= side.next() > side.app_done
            || side.next() > side.raw_done
            || incomplete[d]
            || flow.app.eof_open[d];
    }
    need
}

/// The directions (to_server, to_client) in which some transaction of `state` is not
/// complete yet.
fn incomplete_directions(state: &dyn app::AppState) -> [bool; 2] {
    let mut open = [false; 2];
    for i in 0..state.tx_count() {
        let Some(tx) = state.tx(i) else { break };
        if tx.frames_only() {
            continue;
        }
        for (d, dir) in [Dir::ToServer, Dir::ToClient].into_iter().enumerate() {
            open[d] |= tx.inspects(dir) && !tx.complete(dir);
        }
    }
    open
}

pub(super) fn pseudo_packet(
    proto: u8,
    src: (IpAddr, u16),
    dst: (IpAddr, u16),
    flow: &Flow,
) -> Packet<'static> {
    let mut p = Packet::empty(decode::LINKTYPE_RAW, &[]);
    p.vlan = flow.vlan;
    p.vlan_len = flow.vlan_len;
    p.ip = Some(IpInfo {
        version: if src.0.is_ipv4() { 4 } else { 6 },
        src: src.0,
        dst: dst.0,
        proto,
        ttl: 0,
        tos: 0,
        ident: 0,
        offset: 0,
        header_len: 0,
        end: 0,
        fragment: None,
    });
    p.l4 = match proto {
        6 => L4::Tcp {
            src_port: src.1,
            dst_port: dst.1,
            seq: 0,
            ack: 0,
            flags: 0,
            window: 0,
            offset: 0,
            header_len: 0,
        },
        17 => L4::Udp {
            src_port: src.1,
            dst_port: dst.1,
            offset: 0,
        },
        _ => L4::Other,
    };
    p
}
