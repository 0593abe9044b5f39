//! The writer's own count of write(2) calls, cross-checked with `strace -c`: unbuffered
//! output makes exactly one write per event; a 16 KiB buffer makes far fewer. Skipped
//! (with a message) when strace is not installed.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod eve_common;

use std::process::{Command, Stdio};
use std::time::Duration;

use eve_common::*;

/// Runs the pipeline with the writer under `strace -c -e trace=write -P eve.json`;
/// returns (records written, writer's write_calls counter, strace's write count).
fn traced_run(buffer_size: usize, exchanges: usize) -> (u64, u64, u64) {
    let s = Setup::new(&format!(
        "detect:\n  workers: 1\noutputs:\n  - eve-log:\n      buffer-size: {buffer_size}\n      types: [alert, flow]\n"
    ));
    let pcap = s.dir.path().join("t.pcap");
    write_pcap(&pcap, exchanges);
    let eve = s.log_dir.join("eve.json");
    std::fs::write(&eve, b"").unwrap();
    let summary = s.dir.path().join("strace.txt");
    let mut strace = Command::new("strace")
        .args(["-f", "-qq", "-c", "-e", "trace=write", "-P"])
        .arg(&eve)
        .arg("-o")
        .arg(&summary)
        .args([BIN, "-q", "eve-writer", "--config"])
        .arg(&s.config)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let sock = s.runtime.join("eve.sock");
    wait_for("the traced eve-writer", Duration::from_secs(60), || {
        std::os::unix::net::UnixStream::connect(&sock).is_ok()
    });
    let mut workers = s.start_workers(1);
    run_capture(&s, &pcap);
    wait_success(&mut workers[0], "detect", Duration::from_secs(60));
    let page = s.runtime.join("counters-eve-writer");
    let pid = meerkat_shm::CounterReader::open(&page).unwrap().pid();
    // SAFETY: signalling the eve-writer this test started (under strace).
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    wait_success(&mut strace, "strace eve-writer", Duration::from_secs(30));
    let records = read_eve(&eve, schema().as_ref()).len() as u64;
    let counted = s.counter("eve-writer", "eve.write_calls");
    let text = std::fs::read_to_string(&summary).unwrap();
    let traced = text
        .lines()
        .find(|l| l.split_whitespace().last() == Some("write"))
        .and_then(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // % time, seconds, usecs/call, calls, [errors,] syscall
            f.get(3).and_then(|c| c.parse().ok())
        })
        .unwrap_or_else(|| panic!("no write line in the strace summary:\n{text}"));
    (records, counted, traced)
}

#[test]
fn write_counts_match_strace() {
    if !have("strace") {
        println!("skipped: strace is not installed (apt-get install strace)");
        return;
    }
    let (records, counted, traced) = traced_run(0, 500);
    println!("unbuffered: {records} records, {counted} writes counted, {traced} traced");
    assert_eq!(records, 1000);
    assert_eq!(counted, records, "unbuffered must be one write per event");
    assert_eq!(traced, counted);

    let (records, counted, traced) = traced_run(16 * 1024, 2000);
    println!("16 KiB buffer: {records} records, {counted} writes counted, {traced} traced");
    assert_eq!(records, 4000);
    assert_eq!(traced, counted);
    assert!(
        records >= 25 * counted,
        "{records} records in {counted} writes with a 16 KiB buffer"
    );
}
