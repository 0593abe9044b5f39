//! Connections announced by another flow (FTP data connections): the control flow's
//! parser announces them ([`app::Expectation`]), this worker adds them to the table all
//! workers share, and a TCP flow whose first data no probe recognised is looked up
//! there, after waiting until every packet before its own has been processed by the
//! worker that owns it (see `meerkat_app::ftp_data` for why, and `meerkat_shm::order`
//! for how). In-process runs (one worker) keep the table locally.

use std::net::IpAddr;

use meerkat_shm::{ExpectTable, Expected, OrderPage, Waited};

use super::*;

/// Suricata 8 takes an expectation whatever its age (a data connection opened an hour
/// after its command is still `ftp-data`): so does Meerkat. An expectation lives until
/// it is taken or, the table being full, pushed out by a newer one.
const MAX_AGE_NS: Option<u64> = None;
/// Expectations an in-process run keeps at most (the oldest is forgotten).
const MAX_LOCAL: usize = 256;

/// Where this worker's expectations live.
pub(super) enum Expectations {
    /// The table every worker shares, and the order page to wait by (`None`: no
    /// waiting, e.g. the page could not be mapped).
    Shared {
        table: ExpectTable,
        order: Option<OrderPage>,
        workers: usize,
    },
    /// One worker alone: a local list in packet order.
    Local(Vec<Expected>),
}

impl std::fmt::Debug for Expectations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expectations::Shared { workers, .. } => write!(f, "Shared({workers} workers)"),
            Expectations::Local(v) => write!(f, "Local({})", v.len()),
        }
    }
}

impl Expectations {
    /// The detect role's: the runtime directory's table and order page.
    pub(super) fn shared(runtime: &std::path::Path, workers: usize) -> Expectations {
        let table = ExpectTable::open_or_create(
            &meerkat_runtime::expectations_path(runtime),
            meerkat_shm::expect::DEFAULT_SLOTS,
        );
        let order = OrderPage::open_or_create(&meerkat_runtime::order_path(runtime));
        match (table, order) {
            (Ok(table), order) => {
                if let Err(e) = &order {
                    tracing::warn!("{e}: FTP data connections are matched without ordering");
                }
                Expectations::Shared {
                    table,
                    order: order.ok(),
                    workers,
                }
            }
            (Err(e), _) => {
                tracing::warn!("{e}: FTP data connections are matched within this worker only");
                Expectations::Local(Vec::new())
            }
        }
    }

    fn add(&mut self, e: Expected) {
        match self {
            Expectations::Shared { table, .. } => table.add(&e),
            Expectations::Local(v) => {
                if v.len() >= MAX_LOCAL {
                    v.remove(0);
                }
                v.push(e);
            }
        }
    }

    /// Worker `me`, at packet `seq` (time `now_ns`), takes the expectation for a flow
    /// between `addrs` to responder port `port`, if any.
    fn take(
        &mut self,
        me: usize,
        addrs: (IpAddr, IpAddr),
        port: u16,
        seq: u64,
        now_ns: u64,
        stalls: &mut u64,
    ) -> Option<Expected> {
        match self {
            Expectations::Shared {
                table,
                order,
                workers,
            } => {
                if *workers > 1
                    && let Some(o) = order
                    && o.wait_before(me, *workers, seq, meerkat_shm::order::STALL)
                        == Waited::Stalled
                {
                    *stalls += 1;
                    if *stalls == 1 {
                        tracing::warn!(
                            worker = me,
                            packet = seq,
                            "another worker made no progress for {:?}: FTP data \
                             connections are matched without waiting for it",
                            meerkat_shm::order::STALL
                        );
                    }
                }
                table.take(addrs, port, seq, now_ns, MAX_AGE_NS.unwrap_or(u64::MAX))
            }
            Expectations::Local(v) => {
                let pair = |e: &Expected| {
                    (e.addrs == addrs || e.addrs == (addrs.1, addrs.0)) && e.port == port
                };
                if let Some(max) = MAX_AGE_NS {
                    v.retain(|e| !(pair(e) && now_ns.saturating_sub(e.ts_ns) > max));
                }
                let i = v.iter().position(|e| pair(e) && e.seq < seq)?;
                Some(v.remove(i))
            }
        }
    }

    /// Worker `me` has processed every packet of its own up to `seq`.
    pub(super) fn done(&self, me: usize, seq: u64) {
        if let Expectations::Shared {
            order: Some(o),
            workers,
            ..
        } = self
            && *workers > 1
        {
            o.set_done(me, seq);
        }
    }
}

impl Inner {
    /// Moves the connections the flow's parser announced into the table.
    pub(super) fn add_expectations(&mut self, flow: &mut Flow) {
        let Some(state) = flow.app.state.as_deref_mut() else {
            return;
        };
        let mut new = Vec::new();
        state.take_expectations(&mut new);
        if self.replaying.is_some() {
            // The dead predecessor made them (see `replay`).
            return;
        }
        for e in new {
            self.expect.add(Expected {
                proto: e.proto as u16,
                port: e.port,
                addrs: (flow.client.0, flow.server.0),
                seq: self.cur_seq,
                ts_ns: self.now_ns,
                parent: flow.id,
                payload: e.data,
            });
        }
    }

    /// A TCP flow whose first data no probe recognised: is it a connection another
    /// flow announced? Then it becomes that protocol's, with its parser told what the
    /// announcement said; returns whether it did.
    pub(super) fn claim_expected(&mut self, flow: &mut Flow) -> bool {
        let addrs = (flow.client.0, flow.server.0);
        let Some(e) = self.expect.take(
            self.index,
            addrs,
            flow.server.1,
            self.cur_seq,
            self.now_ns,
            &mut self.stats.order_stalls,
        ) else {
            return false;
        };
        let Some(proto) = AppProto::ALL.iter().copied().find(|p| *p as u16 == e.proto) else {
            return false;
        };
        let Some(mut state) = self.registry.new_state(proto, Transport::Tcp) else {
            return false;
        };
        state.set_expected(&e.payload);
        let app = &mut flow.app;
        app.stream_depth = self.registry.stream_depth(proto);
        app.proto = proto;
        app.dir_proto = [proto; 2];
        app.parent_id = e.parent;
        app.parse_error = false;
        app.state = Some(state);
        self.stats.app_flows[proto as usize % app::APP_PROTOS] += 1;
        true
    }
}
