//! The detect role: a worker on its ring, with its counter page, event sink and control
//! socket.

use super::*;

/// CPU time (user + system) this process has used so far, µs.
fn self_cpu_us() -> u64 {
    // SAFETY: getrusage fills the struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(ru.ru_utime) + us(ru.ru_stime)
}

/// How long a starting worker tries to reach the eve-writer to learn where to resume.
const RESUME_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs worker `index` until its ring ends (or `stop` is set: it ends after the current
/// batch, leaving the rest of the ring to the next worker), with the ruleset generation 1.
pub fn run(config: &Config, index: usize, stop: &AtomicBool) -> Result<WorkerSummary, DetectError> {
    run_generation(config, index, 1, stop)
}

/// Runs worker `index` (see [`run`]) reporting its configured ruleset as `generation`
/// (a worker started again after live reloads is handed the current one). Meant to be
/// the last thing its process does: on success the ruleset is not freed (the process's
/// exit returns its memory at once).
///
/// Crash safety: the worker holds the ring records it processed until the eve-writer has
/// acknowledged their events (see `sink`'s ring marks); a worker started on a ring whose
/// previous worker died asks the writer where to resume and skips what is written. Its
/// flows start empty: the packets the dead worker had seen of a flow are gone, so a
/// flow that straddles the crash is tracked from the first packet after it.
pub fn run_generation(
    config: &Config,
    index: usize,
    generation: u64,
    stop: &AtomicBool,
) -> Result<WorkerSummary, DetectError> {
    let runtime = config
        .runtime_dir
        .clone()
        .ok_or(DetectError::NoRuntimeDir)?;
    let started = Instant::now();
    let registry = app::Registry::from_config(config)?;
    let loaded = load_ruleset(config, index)?;
    // What a predecessor on this ring left (before this incarnation's page replaces its).
    let before = Predecessor::read(&runtime, index);
    let counters = Published::create(&runtime, index, &loaded.summary, started, generation)?;
    let window = config.capture.replay_window_bytes();
    let mut consumer = attach_ring(config, &runtime, index, &counters, window)?;
    let sink = EventSink::start(SinkConfig {
        socket: eve_socket_path(&runtime),
        producer: Role::Detect(index).to_string(),
        worker: index as u32,
        batch_size: config.detect.event_batch_size,
        batch_delay: Duration::from_millis(config.detect.event_batch_delay_ms),
        max_unacked: config.detect.max_unacked_batches,
        finish_timeout: Duration::from_secs(60),
        epoch: consumer.epoch,
        acked: Some(AckedMark {
            page: counters.page.clone(),
            counter: counters.get(DetectCounter::AckedSeq),
        }),
    })?;
    let commands = control::start(
        &meerkat_runtime::worker_socket_path(&runtime, index),
        control::Setup {
            index,
            ctx: loaded.ctx,
            algo: loaded.algo,
            names: loaded.engine.names.clone(),
            sink: sink.shared_stats(),
        },
    )?;
    // Host-tracked state (thresholds by host, xbits) is shared by all workers.
    let table =
        meerkat_shm::SharedTable::open_or_create(&host_table_path(&runtime), HOST_TABLE_SLOTS)?;
    let mut w = Worker::new(
        config,
        registry,
        index,
        loaded.engine,
        DetectState::with_shared(table),
        Out::Grpc(Box::new(sink)),
        FileSource::Table(meerkat_shm::FileNames::new(
            &meerkat_runtime::pcap_files_path(&runtime),
        )),
    );
    // Connections announced by flows of other workers (FTP data), and the order page
    // lookups wait by: this worker starts with none of its packets processed.
    w.x.expect = super::expect::Expectations::shared(&runtime, config.workers());
    w.x.expect.done(index, 0);
    before.hand_over(&mut w, &counters);
    if let Some(until) = consumer.replay_until {
        w.x.start_replay(until);
    }
    w.run_ring(&mut consumer.ring, &counters, &commands, stop);
    w.drain();
    let mut summary = loaded.summary;
    summary.packets = w.x.stats.packets;
    summary.alerts = w.x.stats.alerts;
    summary.events = w.x.sink.events();
    counters.get(DetectCounter::Alerts).set(summary.alerts);
    counters.get(DetectCounter::Events).set(summary.events);
    if let Out::Grpc(sink) = w.x.sink {
        sink.finish()?;
    }
    // Everything is acknowledged: the ring space can go (not before, so that a worker
    // that fails here leaves its records to a replacement).
    consumer.ring.release_to(consumer.ring.position());
    // The detect role's process ends with this function: its ruleset is left to the OS
    // rather than freed allocation by allocation (for ET Open, about a million cold
    // allocations: 0.29 G instructions with glibc's malloc, charged to the packet path).
    std::mem::forget(w.x.engine);
    Ok(summary)
}

/// The ruleset a worker starts with, and what it needs to build later ones.
struct Loaded {
    engine: Engine,
    ctx: RuleContext,
    algo: crate::engine::mpm::Algo,
    summary: WorkerSummary,
}

/// Loads the configured rule files (worker 0 reports the rules that do not load) and
/// compiles them with the configured prefilter.
fn load_ruleset(config: &Config, index: usize) -> Result<Loaded, DetectError> {
    let started = Instant::now();
    let ctx = RuleContext::from_config(config).map_err(DetectError::Rules)?;
    // The config's datasets exist whether or not a rule names them (the socket's
    // `dataset-add` may fill them).
    for p in ctx.datasets.open_declared() {
        if index == 0 {
            tracing::warn!("dataset not set up: {p}");
        }
    }
    let loaded = rules::load_files(&config.rule_paths(), &ctx).map_err(DetectError::Rules)?;
    if index == 0 {
        for p in &loaded.problems {
            tracing::warn!("rule not loaded: {p}");
        }
        if !loaded.skipped.is_empty() {
            tracing::info!(
                skipped = loaded.skipped.len(),
                "rules skipped: their `requires` is not met by Suricata {}",
                rules::requires::SURICATA_VERSION
            );
        }
        loaded.log_threshold_problems();
    }
    let summary = WorkerSummary {
        rules_loaded: loaded.rules.len(),
        rules_failed: loaded.problems.len(),
        ..Default::default()
    };
    let algo = crate::engine::mpm::Algo::parse(&config.mpm_algo).unwrap_or_default();
    if algo == crate::engine::mpm::Algo::Hyperscan && !crate::engine::mpm::Algo::HYPERSCAN_AVAILABLE
    {
        return Err(DetectError::Rules(
            "mpm-algo: hs, but this build has no Hyperscan (install libhyperscan-dev and rebuild)"
                .to_string(),
        ));
    }
    let engine = Engine::with_algo(loaded.rules, loaded.names, algo);
    tracing::info!(
        worker = index,
        rules = summary.rules_loaded,
        failed = summary.rules_failed,
        secs = format!("{:.3}", started.elapsed().as_secs_f64()),
        "rules loaded"
    );
    Ok(Loaded {
        engine,
        ctx,
        algo,
        summary,
    })
}

/// The worker's counter page and the counters it refreshes after each batch.
struct Published {
    schema: DetectCounters,
    page: CounterPage,
    per_batch: Vec<CounterRef>,
    decode: Vec<CounterRef>,
    app: Vec<CounterRef>,
}

impl Published {
    /// Makes worker `index`'s page, with the ruleset's figures (rule loading is reported
    /// apart so that packet-path CPU can be told from it).
    fn create(
        runtime: &std::path::Path,
        index: usize,
        summary: &WorkerSummary,
        started: Instant,
        generation: u64,
    ) -> Result<Published, DetectError> {
        let schema = DetectCounters::new(index);
        let page = CounterPage::create(
            &counters_path(runtime, Role::Detect(index)),
            &counter_names(index),
        )?;
        let p = Published {
            per_batch: PER_BATCH
                .into_iter()
                .map(|n| page.expect(&schema.counter(n)))
                .collect(),
            decode: DecodeEvent::ALL
                .iter()
                .map(|e| page.expect(&schema.event(e.name())))
                .collect(),
            app: AppProto::ALL
                .iter()
                .map(|p| page.expect(&schema.app(p.name())))
                .collect(),
            schema,
            page,
        };
        p.get(DetectCounter::RulesLoaded)
            .set(summary.rules_loaded as u64);
        p.get(DetectCounter::RulesFailed)
            .set(summary.rules_failed as u64);
        p.get(DetectCounter::RulesLoadUs)
            .set(started.elapsed().as_micros() as u64);
        p.get(DetectCounter::RulesLoadCpuUs).set(self_cpu_us());
        p.get(DetectCounter::RulesGeneration).set(generation);
        Ok(p)
    }

    fn get(&self, n: DetectCounter) -> CounterRef {
        self.page.expect(&self.schema.counter(n))
    }

    /// Refreshes the per-batch counters from the worker.
    fn publish(&self, w: &Worker, ring_corrupt: u64) {
        let s = w.x.stats;
        let values = [
            s.packets,
            s.bytes,
            s.alerts,
            w.x.sink.events(),
            w.flows.created(),
            w.flows.len() as u64,
            w.flows.evicted,
            s.invalid_checksum,
            s.tcp_sessions,
            s.tcp_untracked,
            s.tcp_gaps,
            s.fragments,
            w.defrag.stats.reassembled,
            s.app_parse_errors,
            s.anomalies,
            ring_corrupt,
            s.files,
            s.files_truncated,
            s.files_hashed,
            s.files_magic,
            w.x.store.as_ref().map_or(0, |st| st.stats().stored),
            w.x.store.as_ref().map_or(0, |st| st.stats().fs_errors),
            w.x.store.as_ref().map_or(0, |st| st.stats().open_files),
            w.x.store.as_ref().map_or(0, |st| st.stats().dropped),
            app::files::BUDGET.hits(),
            app::files::range::MEMCAP_HITS.load(std::sync::atomic::Ordering::Relaxed),
            s.replayed,
            w.x.replay.outside(),
            w.x.checksums.mode(),
        ];
        for (r, v) in self.per_batch.iter().zip(values) {
            r.set(v);
        }
        for (r, v) in self.decode.iter().zip(w.x.decode_counts) {
            r.set(v);
        }
        for (r, &p) in self.app.iter().zip(AppProto::ALL) {
            r.set(s.app_flows[p.index()]);
        }
    }
}

/// The worker's ring, attached where this worker resumes.
struct Attached {
    ring: Consumer,
    /// This incarnation's epoch of the event stream.
    epoch: u64,
    /// The ring position whose events the eve-writer has, when the records before it
    /// are to be replayed (see `replay`): a predecessor died holding flows.
    replay_until: Option<u64>,
}

/// What the previous worker on this ring left in its counter page: the decisions a
/// replacement goes on with, and what it could not hand over.
#[derive(Debug, Default)]
struct Predecessor {
    /// Its process, when it left a page.
    pid: Option<u32>,
    /// Its `checksum-checks: auto` decision (`DetectCounter::ChecksumMode`).
    checksum_mode: u64,
    /// Its live flows out of its replay window: lost with it.
    outside: u64,
    /// Flows lost at earlier restarts.
    lost_before: u64,
}

impl Predecessor {
    fn read(runtime: &std::path::Path, index: usize) -> Predecessor {
        let Ok(page) =
            meerkat_shm::CounterReader::open(&counters_path(runtime, Role::Detect(index)))
        else {
            return Predecessor::default();
        };
        let schema = DetectCounters::new(index);
        let get = |c: DetectCounter| page.get(&schema.counter(c)).unwrap_or(0);
        Predecessor {
            pid: Some(page.pid()),
            checksum_mode: get(DetectCounter::ChecksumMode),
            outside: get(DetectCounter::ReplayFlowsOutside),
            lost_before: get(DetectCounter::FlowsLostOnRestart),
        }
    }

    /// Goes on with the predecessor's decisions, and counts (and reports) the flows it
    /// held that cannot be rebuilt.
    fn hand_over(&self, w: &mut Worker, counters: &Published) {
        if self.pid.is_none() {
            return;
        }
        w.x.inherit_checksums(self.checksum_mode);
        if self.outside > 0 {
            tracing::warn!(
                worker = w.x.index,
                flows = self.outside,
                "flows the previous worker held are lost (their first packets are out of \
                 capture.replay-window): their remaining packets are seen as new traffic"
            );
        }
        counters
            .get(DetectCounter::FlowsLostOnRestart)
            .set(self.lost_before + self.outside);
    }
}

/// Makes (or joins) worker `index`'s ring and asks the eve-writer where to resume: a
/// worker that replaces a dead one skips the records whose events are already written.
fn attach_ring(
    config: &Config,
    runtime: &std::path::Path,
    index: usize,
    counters: &Published,
    window: u64,
) -> Result<Attached, DetectError> {
    let path = ring_path(runtime, index);
    meerkat_shm::create(&path, config.capture.ring_size.bytes() as usize)?;
    let mut ring = Consumer::attach(&path)?;
    ring.hold();
    let epoch = sink::new_epoch();
    let producer = Role::Detect(index).to_string();
    // Asked even of a new ring: the question fences the producer's older epochs.
    let resume = sink::resume_point(&eve_socket_path(runtime), &producer, epoch, RESUME_TIMEOUT)?;
    // A ring no consumer read before is a new one (its file was made again under a
    // writer that outlived the old one): the writer's mark is the old ring's, and the
    // records of this one are all new, however far its producer already wrote.
    let resume = if ring.had_consumer() { resume } else { 0 };
    // Only what the ring holds (a mark past it cannot be this ring's).
    let until = resume.min(ring.published());
    if until > ring.position() && window > 0 {
        // The predecessor kept the records of its flows: process them again, writing
        // nothing, up to what the eve-writer has (see `replay`).
        tracing::info!(
            worker = index,
            bytes = until - ring.position(),
            "replaying the records of the previous worker's flows"
        );
        return Ok(Attached {
            ring,
            epoch,
            replay_until: Some(until),
        });
    }
    if resume > ring.position() {
        let skipped = ring.skip_to(resume)?;
        ring.release_to(ring.position());
        counters.get(DetectCounter::ResumeSkipped).set(skipped);
        tracing::info!(
            worker = index,
            skipped,
            "resuming after the records whose events the eve-writer already has"
        );
    }
    Ok(Attached {
        ring,
        epoch,
        replay_until: None,
    })
}

impl Worker {
    /// Processes the ring in batches until it ends or `stop` is set: after each batch the
    /// counters are refreshed, flows swept, the ring space whose events are acknowledged
    /// released, and control commands (ruleset swaps, flushes) served.
    fn run_ring(
        &mut self,
        ring: &mut Consumer,
        counters: &Published,
        commands: &std::sync::mpsc::Receiver<Command>,
        stop: &AtomicBool,
    ) {
        // Past this many held bytes (processed, not yet acknowledged) the worker asks for
        // acknowledgements at once, so that capture does not wait on a full ring.
        let hold_limit = (ring.capacity() / 4) as u64;
        // The eve-writer has the events of every record before this position (where a
        // replacement replays up to: see `replay`).
        let acked_before = self.x.replaying.unwrap_or(0);
        let mut ring_corrupt = 0u64;
        // Ring sequence number of the last packet processed.
        let mut last_seq = 0u64;
        // `EndInput` requests waiting for the ring to be empty.
        let mut end_input: Vec<tokio::sync::oneshot::Sender<u64>> = Vec::new();
        loop {
            let mut n = 0;
            self.x.sink.begin();
            loop {
                let rec = match ring.next_record() {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::error!("{e}; skipping what the ring holds");
                        ring_corrupt += 1;
                        ring.skip_to_head();
                        break;
                    }
                };
                last_seq = rec.meta.seq;
                self.packet(&rec.meta, rec.data, rec.pos);
                n += 1;
                if n == BATCH {
                    break;
                }
            }
            // Every packet of this worker's up to the batch's last is processed.
            self.x.expect.done(self.x.index, last_seq);
            // Every event of the records read so far is pushed.
            self.x.sink.mark(ring.position(), last_seq);
            self.x.sink.tick(Instant::now());
            let acked = self.x.sink.acked_mark().max(acked_before);
            if ring.position().saturating_sub(acked) > hold_limit {
                self.x.sink.flush_mark();
            }
            // Released up to the replay floor: what a replacement needs stays.
            let floor = self
                .x
                .replay
                .floor(acked, ring.position(), self.x.replay_window);
            ring.release_to(floor);
            // After the floor: a successor reads what this worker could not keep for it.
            counters.publish(self, ring_corrupt);
            while let Ok(cmd) = commands.try_recv() {
                if let Some(reply) = self.command(cmd, counters) {
                    end_input.push(reply);
                }
            }
            if n == 0 && !end_input.is_empty() {
                // Everything of the input is processed: end it as its end of file would.
                self.end_input();
                counters.publish(self, ring_corrupt);
                self.x.sink.mark(ring.position(), last_seq);
                let target = self.x.sink.flush_mark();
                for reply in end_input.drain(..) {
                    let _ = reply.send(target);
                }
            }
            if stop.load(Ordering::Relaxed) {
                // Asked to stop (a restart): what is left in the ring stays there for the
                // next worker, which resumes where this one ends.
                break;
            }
            if n == 0 {
                // Idle: have what is pushed acknowledged now (the ring space it holds, and
                // capture's checkpoints, wait on it).
                self.x.sink.flush_mark();
                // Holding records: look for their acknowledgement again soon.
                let wait = if ring.position() > self.x.sink.acked_mark().max(acked_before) {
                    Duration::from_millis(2)
                } else {
                    Duration::from_millis(100)
                };
                match ring.wait(wait) {
                    WaitOutcome::Eof => break,
                    WaitOutcome::Ready | WaitOutcome::TimedOut => {}
                }
            }
        }
    }

    /// Ends every flow and drops held fragments, as at the end of the input, and forgets
    /// the input's packet time (the next input's may be earlier).
    fn end_input(&mut self) {
        self.drain();
        self.defrag.expire(u64::MAX);
        self.x.now_ns = 0;
        tracing::debug!(worker = self.x.index, "input ended: flows flushed");
    }

    /// Serves one control command between batches; an `EndInput` is handed back, to be
    /// answered once the ring is empty.
    fn command(
        &mut self,
        cmd: Command,
        counters: &Published,
    ) -> Option<tokio::sync::oneshot::Sender<u64>> {
        match cmd {
            Command::Swap {
                generation,
                engine,
                reply,
            } => {
                let old = std::mem::replace(&mut self.x.engine, *engine);
                self.x.st.renew();
                // New flows get what the new rules need of the file layer.
                let files = super::file_config(&self.x.cfg, &self.x.engine);
                self.x.registry.set_files(files);
                self.x.registry.set_frames(self.x.engine.frame_buffers());
                self.x
                    .registry
                    .set_rule_buffers(self.x.engine.rule_buffers());
                counters.get(DetectCounter::RulesGeneration).set(generation);
                counters.get(DetectCounter::RulesReloads).add(1);
                tracing::info!(
                    worker = self.x.index,
                    generation,
                    rules = self.x.engine.len(),
                    "ruleset swapped in"
                );
                // The old engine is freed by the control thread.
                let _ = reply.send(Box::new(old));
            }
            Command::Flush { reply } => {
                let _ = reply.send(self.x.sink.flush_mark());
            }
            Command::EndInput { reply } => return Some(reply),
            Command::FlowStats { id, reply } => {
                let now = self.x.now_ns;
                let found =
                    self.flows
                        .find_by_id(id)
                        .map(|f| meerkat_proto::control::FlowStatsReply {
                            found: true,
                            pkts_toserver: f.pkts_toserver,
                            pkts_toclient: f.pkts_toclient,
                            bytes_toserver: f.bytes_toserver,
                            bytes_toclient: f.bytes_toclient,
                            age_s: now.saturating_sub(f.start_ns) / 1_000_000_000,
                        });
                let _ = reply.send(found);
            }
        }
        None
    }
}
