//! The detect worker loop: ring -> decode -> flow -> rules -> events.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_capture::{counters_path, ring_path};
use meerkat_config::{ChecksumChecks, Config};
use meerkat_ring::{Consumer, CounterPage, CounterRef, WaitOutcome};

use crate::DetectError;
use crate::decode::{self, DecodeEvent};
use crate::engine::Engine;
use crate::events;
use crate::flow::FlowTable;
use crate::rules::{self, RuleContext};
use crate::sink::{AckedMark, EventSink, SinkConfig};

/// Records processed before the ring space is released and counters are refreshed.
const BATCH: usize = 256;
/// Packets whose checksums decide `checksum-checks: auto`.
const CHECKSUM_SAMPLE: u64 = 1000;

/// What a worker did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WorkerSummary {
    pub packets: u64,
    pub alerts: u64,
    pub events: u64,
    pub rules_loaded: usize,
    pub rules_failed: usize,
}

/// Path of the eve-writer's event socket in the runtime directory.
pub fn eve_socket(runtime_dir: &std::path::Path) -> PathBuf {
    runtime_dir.join("eve.sock")
}

/// Counter names of worker `index`.
pub fn counter_names(index: usize) -> Vec<String> {
    let mut names: Vec<String> = [
        "packets",
        "bytes",
        "alerts",
        "events",
        "flows",
        "flows_active",
        "invalid_checksum",
        "ring_corrupt",
        "rules_loaded",
        "rules_failed",
        // The highest ring sequence number whose events the eve-writer has all written
        // (see sink.rs: marks); capture's checkpoints wait on it.
        "acked_seq",
    ]
    .iter()
    .map(|n| format!("detect.{index}.{n}"))
    .collect();
    for ev in DecodeEvent::ALL {
        names.push(format!("detect.{index}.{}", ev.name()));
    }
    names
}

struct Counters {
    packets: CounterRef,
    bytes: CounterRef,
    alerts: CounterRef,
    events: CounterRef,
    flows: CounterRef,
    flows_active: CounterRef,
    invalid_checksum: CounterRef,
    ring_corrupt: CounterRef,
    decode: Vec<CounterRef>,
    _page: CounterPage,
}

#[derive(Debug, Clone, Copy)]
enum Checksums {
    Off,
    On,
    /// Sampling the first packets: (seen, bad).
    Auto(u64, u64),
}

/// Runs worker `index` until its ring ends (or `stop` is set and the ring is drained of
/// what is already there).
pub fn run(config: &Config, index: usize, stop: &AtomicBool) -> Result<WorkerSummary, DetectError> {
    let runtime = config
        .runtime_dir
        .clone()
        .ok_or(DetectError::NoRuntimeDir)?;
    let started = Instant::now();
    let ctx = RuleContext::from_config(config).map_err(DetectError::Rules)?;
    let loaded = rules::load_files(&config.rule_paths(), &ctx).map_err(DetectError::Rules)?;
    if index == 0 {
        for p in &loaded.problems {
            tracing::warn!("rule not loaded: {p}");
        }
    }
    let mut summary = WorkerSummary {
        rules_loaded: loaded.rules.len(),
        rules_failed: loaded.problems.len(),
        ..Default::default()
    };
    let engine = Engine::new(loaded.rules);
    tracing::info!(
        worker = index,
        rules = summary.rules_loaded,
        failed = summary.rules_failed,
        secs = format!("{:.3}", started.elapsed().as_secs_f64()),
        "rules loaded"
    );

    let page = CounterPage::create(
        &counters_path(&runtime, &format!("detect-{index}")),
        &counter_names(index),
    )?;
    let c = |n: &str| page.expect(&format!("detect.{index}.{n}"));
    c("rules_loaded").set(summary.rules_loaded as u64);
    c("rules_failed").set(summary.rules_failed as u64);
    let counters = Counters {
        packets: c("packets"),
        bytes: c("bytes"),
        alerts: c("alerts"),
        events: c("events"),
        flows: c("flows"),
        flows_active: c("flows_active"),
        invalid_checksum: c("invalid_checksum"),
        ring_corrupt: c("ring_corrupt"),
        decode: DecodeEvent::ALL
            .iter()
            .map(|e| page.expect(&format!("detect.{index}.{}", e.name())))
            .collect(),
        _page: page.clone(),
    };

    let ring = ring_path(&runtime, index);
    meerkat_ring::create(&ring, config.capture.ring_size.bytes() as usize)?;
    let mut consumer = Consumer::attach(&ring)?;

    let mut sink = EventSink::start(SinkConfig {
        socket: eve_socket(&runtime),
        producer: format!("detect-{index}"),
        worker: index as u32,
        batch_size: config.detect.event_batch_size,
        batch_delay: Duration::from_millis(config.detect.event_batch_delay_ms),
        max_unacked: config.detect.max_unacked_batches,
        finish_timeout: Duration::from_secs(60),
        acked: Some(AckedMark {
            page: page.clone(),
            counter: c("acked_seq"),
        }),
    })?;

    let eve = config.eve_logs().next();
    let want_anomaly = eve.is_some_and(|e| e.type_entry("anomaly").is_some());
    let want_flow = eve.is_some_and(|e| e.type_entry("flow").is_some());
    let mut checksums = if !config.stream.checksum_validation {
        Checksums::Off
    } else {
        match config.pcap_file.checksum_checks {
            ChecksumChecks::No => Checksums::Off,
            ChecksumChecks::Yes => Checksums::On,
            ChecksumChecks::Auto => Checksums::Auto(0, 0),
        }
    };

    let mut flows = FlowTable::new(index);
    let mut bytes = 0u64;
    let mut decode_counts = [0u64; DecodeEvent::ALL.len()];
    let mut bad_checksums = 0u64;
    // Packet time: flows end by the clock of the traffic, not the wall clock.
    let mut now_ns = 0u64;
    // Ring sequence number of the last packet processed.
    let mut last_seq = 0u64;
    loop {
        let mut n = 0;
        loop {
            let rec = match consumer.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    tracing::error!("{e}; skipping what the ring holds");
                    counters.ring_corrupt.add(1);
                    consumer.skip_to_head();
                    break;
                }
            };
            let meta = rec.meta;
            now_ns = now_ns.max(meta.ts_ns);
            last_seq = meta.seq;
            summary.packets += 1;
            bytes += rec.data.len() as u64;
            let (pkt, ev) = decode::decode(meta.link_type, rec.data);
            if let Some(ev) = ev {
                if let Some(i) = DecodeEvent::ALL.iter().position(|e| *e == ev) {
                    decode_counts[i] += 1;
                }
                if want_anomaly {
                    sink.push(events::decode_anomaly(ev.name(), &pkt, &meta));
                }
            } else {
                let valid = match checksums {
                    Checksums::Off => true,
                    Checksums::On => pkt.checksums_ok(),
                    Checksums::Auto(seen, bad) => {
                        let ok = pkt.checksums_ok();
                        let (seen, bad) = (seen + 1, bad + u64::from(!ok));
                        checksums = if seen < CHECKSUM_SAMPLE {
                            Checksums::Auto(seen, bad)
                        } else if bad * 10 > seen {
                            tracing::info!(
                                worker = index,
                                "{bad} of the first {seen} packets have bad checksums \
                                 (offloading?): checksum validation off"
                            );
                            Checksums::Off
                        } else {
                            Checksums::On
                        };
                        ok
                    }
                };
                if !valid {
                    bad_checksums += 1;
                } else {
                    let flow = flows.track(&pkt, meta.ts_ns);
                    let flow_ref = flow.as_ref().map(|(f, d)| (&**f, *d));
                    let mut alerted = false;
                    engine.inspect(&pkt, |rule| {
                        summary.alerts += 1;
                        alerted = true;
                        sink.push(events::alert(rule, &pkt, &meta, flow_ref));
                    });
                    if alerted && let Some((f, _)) = flow {
                        f.alerted = true;
                    }
                }
            }
            n += 1;
            if n == BATCH {
                break;
            }
        }
        consumer.release();
        counters.packets.set(summary.packets);
        counters.bytes.set(bytes);
        counters.alerts.set(summary.alerts);
        counters
            .events
            .set(sink.stats().events.load(Ordering::Relaxed));
        counters.flows.set(flows.created());
        counters.flows_active.set(flows.len() as u64);
        counters.invalid_checksum.set(bad_checksums);
        for (c, v) in counters.decode.iter().zip(decode_counts) {
            c.set(v);
        }
        sink.tick(Instant::now());
        if n == 0 {
            // Idle: have what is pushed acknowledged now (capture may be waiting on it).
            sink.flush_mark();
            if stop.load(Ordering::Relaxed) {
                break;
            }
            match consumer.wait(Duration::from_millis(100)) {
                WaitOutcome::Eof => break,
                WaitOutcome::Ready | WaitOutcome::TimedOut => {}
            }
        }
        flows.sweep(now_ns, |f, reason| {
            if want_flow {
                sink.push(events::flow_end(&f, reason));
            }
        });
        // Every event of the packets up to `last_seq` is pushed (the sweep included).
        sink.mark(last_seq);
    }
    flows.drain(|f, reason| {
        if want_flow {
            sink.push(events::flow_end(&f, reason));
        }
    });
    summary.events = sink.stats().events.load(Ordering::Relaxed);
    counters.events.set(summary.events);
    sink.finish()?;
    Ok(summary)
}
