//! Delivery that loses nothing: the eve-writer killed with SIGKILL in the middle of a
//! run, and a log directory whose filesystem fills up and then frees space. Each run is
//! compared by content with an undisturbed run of the same traffic; every line must
//! validate against Suricata's EVE schema.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod eve_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use eve_common::*;

const WORKERS: usize = 2;

/// Runs the whole pipeline (writer, workers, capture) undisturbed; returns the records.
fn undisturbed(extra: &str, pcap: &Path) -> Vec<serde_json::Value> {
    let s = Setup::new(extra);
    let mut writer = s.start_writer();
    let mut workers = s.start_workers(WORKERS);
    run_capture(&s, pcap);
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(120));
    }
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    read_eve(&s.log_dir.join("eve.json"), schema().as_ref())
}

/// Every event of `want` is in `got`; returns the number of extra copies in `got`.
fn compare(want: &BTreeMap<String, usize>, got: &BTreeMap<String, usize>) -> usize {
    let mut missing = 0;
    let mut dups = 0;
    for (line, n) in want {
        let m = got.get(line).copied().unwrap_or(0);
        if m < *n {
            missing += n - m;
            if missing <= 3 {
                println!("missing: {line}");
            }
        } else {
            dups += m - n;
        }
    }
    let unknown: Vec<&String> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        unknown.is_empty(),
        "lines not in the undisturbed run: {:?}",
        &unknown[..unknown.len().min(3)]
    );
    assert_eq!(missing, 0, "{missing} events lost");
    dups
}

fn kill9(child: &mut Child) {
    signal(child, libc::SIGKILL);
    let _ = child.wait();
}

#[test]
fn sigkill_of_the_writer_mid_run_loses_nothing() {
    let extra = "detect:\n  workers: 2\nheartbeat:\n  output-flush-interval: 1\n\
                 outputs:\n  - eve-log:\n      buffer-size: 16kb\n      types: [alert, flow, stats]\n";
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("traffic.pcap");
    write_pcap(&pcap, 12_000);
    let schema = schema();
    let want = event_multiset(&undisturbed(extra, &pcap));
    let total: usize = want.values().sum();
    assert_eq!(total, 24_000, "one alert and one flow per exchange");

    let s = Setup::new(extra);
    let mut writer = s.start_writer();
    let mut workers = s.start_workers(WORKERS);
    let mut capture = s.spawn("capture", &["-r", pcap.to_str().unwrap()]);
    // Kill the writer once a third of the events are written: mid-run.
    wait_for("a third of the events", Duration::from_secs(120), || {
        s.counter("eve-writer", "eve.events_written") >= total as u64 / 3
    });
    kill9(&mut writer);
    let first = s.counter("eve-writer", "eve.events_written");
    assert!(
        first < total as u64,
        "the writer was killed after the end ({first})"
    );
    let mut writer = s.start_writer();
    wait_success(&mut capture, "capture", Duration::from_secs(120));
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(120));
    }
    let second = s.counter("eve-writer", "eve.events_written");
    let dropped_dups = s.counter("eve-writer", "eve.duplicate_batches");
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    assert!(
        second > 0,
        "the new writer wrote nothing: the kill was not mid-run"
    );

    let got = event_multiset(&read_eve(&s.log_dir.join("eve.json"), schema.as_ref()));
    let dups = compare(&want, &got);
    println!(
        "SIGKILL after {first} of {total} events; the new writer wrote {second}, dropped \
         {dropped_dups} batches already delivered; {dups} events written twice"
    );
    // At most the batches that were partly delivered when the writer died: one batch
    // (256 events) per producer.
    assert!(dups <= WORKERS * 256, "{dups} duplicates");
}

/// A 1 MiB tmpfs mounted on `dir` for the test, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path) -> Option<Tmpfs> {
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => {
                println!(
                    "skipped: cannot mount a tmpfs here ({})",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: cannot run mount ({e})");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn full_disk_holds_events_until_space_is_freed() {
    // Small batches and windows so that a full disk stops the producers quickly.
    let extra = "detect:\n  workers: 2\n  event-batch-size: 16\n  max-unacked-batches: 2\n\
                 outputs:\n  - eve-log:\n      buffer-size: 4kb\n      types: [alert, flow, stats]\n";
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("traffic.pcap");
    write_pcap(&pcap, 600);
    let want = event_multiset(&undisturbed(extra, &pcap));
    let total: usize = want.values().sum();

    let s = Setup::new(extra);
    let Some(_mount) = Tmpfs::mount(&s.log_dir) else {
        return;
    };
    // Leave room for about a third of the output.
    let ballast = s.log_dir.join("ballast");
    let free = nix_free_bytes(&s.log_dir);
    std::fs::write(
        &ballast,
        vec![0u8; free.saturating_sub(200 * 1024) as usize],
    )
    .unwrap();
    let mut writer = s.start_writer();
    let mut workers = s.start_workers(WORKERS);
    let mut capture = s.spawn("capture", &["-r", pcap.to_str().unwrap()]);
    wait_for("the disk to fill", Duration::from_secs(120), || {
        s.counter("eve-writer", "eve.errors") > 0
    });
    // Backpressure: the writer holds what it got, the producers stop once their window
    // is full, so not every event reaches the writer while the disk is full.
    let held = s.counter("eve-writer", "eve.held_bytes");
    assert!(held > 0, "nothing held");
    let events_in = s.counter("eve-writer", "eve.events_in");
    assert!(
        writer.try_wait().unwrap().is_none(),
        "the writer died on a full disk"
    );
    assert!(
        events_in < total as u64,
        "all {events_in} events reached the writer: no backpressure"
    );
    std::fs::remove_file(&ballast).unwrap();
    wait_success(&mut capture, "capture", Duration::from_secs(120));
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(120));
    }
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    let errors = s.counter("eve-writer", "eve.errors");
    let got = event_multiset(&read_eve(&s.log_dir.join("eve.json"), schema().as_ref()));
    let dups = compare(&want, &got);
    assert_eq!(dups, 0, "a full disk wrote events twice");
    println!(
        "disk full: {errors} failed writes, {held} bytes held; all {total} events written once"
    );
}

/// Free bytes of the filesystem holding `dir`.
fn nix_free_bytes(dir: &Path) -> u64 {
    let out = std::process::Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap()
}
