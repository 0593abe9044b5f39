//! BPF filter expressions end to end: `meerkat run -r FILE EXPR` and `-F FILE` keep
//! exactly the packets the filter takes (the alerts of the other hosts' flows stay, the
//! filtered host's go), a bad expression is a usage error naming it and its place, and
//! on a veth pair AF_PACKET's kernel filter drops one host's traffic and keeps the rest.
//! Filter expressions need libpcap at run time: those tests skip with a message without
//! it (CI installs libpcap0.8); the veth test also needs root and iproute2.

#![allow(clippy::unwrap_used)]

mod capture_common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use capture_common::*;
use meerkat_capture::replay::Sender;
use meerkat_capture::vethns::VethNs;

/// The host filtered out of the sample in these tests (12 of its packets, and alerts).
const HOST: &str = "192.168.1.23";

fn no_libpcap(test: &str) -> bool {
    if meerkat_capture::libpcap::available() {
        return false;
    }
    eprintln!("skipping {test}: libpcap is not installed");
    true
}

fn run_r(extra: &[&str], log: &Path) -> Output {
    Command::new(MEERKAT)
        .arg("run")
        .arg("-r")
        .arg(repo("sample/sample.pcap"))
        .arg("-S")
        .arg(repo("sample/sample.rules"))
        .arg("-l")
        .arg(log)
        .args(COMMON)
        .arg("--summary-json")
        .arg(log.join("summary.json"))
        .args(extra)
        .output()
        .unwrap()
}

fn involves(a: &(u64, String, u64, String, u64, String), host: &str) -> bool {
    a.1 == host || a.3 == host
}

/// Packets of the sample the filter takes, by libpcap's own filter code path
/// (compiled by libpcap, run by the interpreter that the differential unit test holds to
/// `pcap_offline_filter`).
fn kept(expr: &str) -> u64 {
    let mut f = meerkat_capture::bpf::UserFilter::new(expr).unwrap();
    let mut r =
        meerkat_capture::Reader::new(std::fs::File::open(repo("sample/sample.pcap")).unwrap())
            .unwrap();
    let mut n = 0;
    while let Some(p) = r.next_packet().unwrap() {
        n += u64::from(f.accepts(p.link_type, p.data, p.origlen).unwrap());
    }
    n
}

fn summary_packets(log: &Path) -> u64 {
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(log.join("summary.json")).unwrap()).unwrap();
    s["packets"].as_u64().unwrap_or_else(|| panic!("{s}"))
}

#[test]
fn trailing_expression_and_file_filter_a_pcap_file() {
    if no_libpcap("trailing_expression_and_file_filter_a_pcap_file") {
        return;
    }
    let all = offline(
        &repo("sample/sample.pcap"),
        &repo("sample/sample.rules"),
        &[],
    );
    assert!(
        all.keys().any(|a| involves(a, HOST)) && all.keys().any(|a| !involves(a, HOST)),
        "the sample must have alerts with and without {HOST}: {all:?}"
    );
    let want: Alerts = all
        .iter()
        .filter(|(a, _)| !involves(a, HOST))
        .map(|(a, n)| (a.clone(), *n))
        .collect();
    let expr = format!("not host {HOST}");
    let total = frames(&repo("sample/sample.pcap")).len() as u64;
    let expect_packets = kept(&expr);
    assert!(expect_packets < total && expect_packets > 0);

    // `meerkat run ... not host 192.168.1.23`
    let log = tempfile::tempdir().unwrap();
    let words: Vec<&str> = expr.split(' ').collect();
    let out = run_r(&words, log.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(alerts(&log.path().join("eve.json")), want);
    assert_eq!(summary_packets(log.path()), expect_packets);

    // `-F FILE`, with a comment, over two lines.
    let log = tempfile::tempdir().unwrap();
    let file = log.path().join("filter.bpf");
    std::fs::write(
        &file,
        format!("# drop the laptop\nnot host\n  {HOST} # here\n"),
    )
    .unwrap();
    let out = run_r(&["-F", file.to_str().unwrap()], log.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(alerts(&log.path().join("eve.json")), want);
    assert_eq!(summary_packets(log.path()), expect_packets);
}

#[test]
fn bad_expression_is_a_usage_error_naming_its_place() {
    if no_libpcap("bad_expression_is_a_usage_error_naming_its_place") {
        return;
    }
    let log = tempfile::tempdir().unwrap();
    let out = run_r(&["not", "hostt", HOST], log.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "BPF filter `not hostt {HOST}`: can't parse filter expression: syntax error at character 5 (`hostt`)"
        )),
        "{err}"
    );
    // Both -F and an expression: refused, as by Suricata.
    let file = log.path().join("f.bpf");
    std::fs::write(&file, "tcp").unwrap();
    let out = run_r(&["-F", file.to_str().unwrap(), "udp"], log.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("given twice"));
}

/// AF_PACKET on a veth pair with `not host HOST`: the kernel filter keeps exactly the
/// other packets, and the alerts are those of the filtered `-r` run.
#[test]
fn af_packet_filter_drops_one_host_and_keeps_the_rest() {
    if no_libpcap("af_packet_filter_drops_one_host_and_keeps_the_rest") {
        return;
    }
    if let Some(why) = VethNs::unavailable() {
        eprintln!("skipping af_packet_filter_drops_one_host_and_keeps_the_rest: {why}");
        return;
    }
    let expr = format!("not host {HOST}");
    let words: Vec<&str> = expr.split(' ').collect();
    let pcap = repo("sample/sample.pcap");
    let rules = repo("sample/sample.rules");
    let want_log = tempfile::tempdir().unwrap();
    let out = run_r(&words, want_log.path());
    assert!(out.status.success());
    let want = alerts(&want_log.path().join("eve.json"));
    let expect_packets = kept(&expr);

    let ns = VethNs::create("bpf", 1500).unwrap();
    let log = tempfile::tempdir().unwrap();
    let rt = tempfile::tempdir().unwrap();
    let mut c = ns.command(MEERKAT);
    c.args(["run", "-i", &ns.b, "-S"])
        .arg(&rules)
        .arg("-l")
        .arg(log.path())
        .args(COMMON)
        .arg("--set")
        .arg(format!("runtime-dir={}", rt.path().display()))
        .args(&words)
        .stdout(Stdio::null());
    let mut run = Running(c.spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    run.wait_for("live capture to start", deadline, || {
        counter(rt.path(), "capture", "capture.live") == 1
    });
    let sent = frames(&pcap);
    std::thread::scope(|s| {
        s.spawn(|| {
            ns.enter_current_thread().unwrap();
            let refs: Vec<&[u8]> = sent.iter().map(Vec::as_slice).collect();
            Sender::open(&ns.a).unwrap().send(&refs).unwrap();
        });
    });
    run.wait_for("the workers to inspect the kept packets", deadline, || {
        inspected(rt.path(), 2) >= expect_packets
    });
    // Everything sent is on the wire by now; what the filter refused never arrives.
    let status = run.terminate();
    assert!(status.success(), "{status}");
    assert_eq!(
        counter(rt.path(), "capture", "capture.source.packets"),
        expect_packets
    );
    assert_eq!(alerts(&log.path().join("eve.json")), want);
}

/// Packets of `pcap` that tcpdump (libpcap's own filter code path, another program)
/// keeps for `expr`: what it writes with `-w`, counted by the project's reader.
fn tcpdump_kept(pcap: &Path, expr: &str, dir: &Path) -> u64 {
    let out = dir.join("tcpdump.pcap");
    let st = Command::new("tcpdump")
        .arg("-r")
        .arg(pcap)
        .arg("-w")
        .arg(&out)
        .arg(expr)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "tcpdump {expr}");
    frames(&out).len() as u64
}

/// `meerkat run -r FILE EXPR` hands the workers exactly the packets tcpdump keeps, on
/// the sample and on the shared corpus' mix (IPv6, VLAN, fragments) when present.
#[test]
fn pcap_file_filter_keeps_what_tcpdump_keeps() {
    if no_libpcap("pcap_file_filter_keeps_what_tcpdump_keeps") {
        return;
    }
    if Command::new("tcpdump").arg("--version").output().is_err() {
        eprintln!("skipping pcap_file_filter_keeps_what_tcpdump_keeps: tcpdump is not installed");
        return;
    }
    let mut cases: Vec<(std::path::PathBuf, &str)> = [
        "udp",
        "tcp and not port 80",
        "host 192.168.1.10 or arp",
        "tcp[tcpflags] & tcp-syn != 0",
    ]
    .into_iter()
    .map(|e| (repo("sample/sample.pcap"), e))
    .collect();
    let mix = repo("../shared/corpus/traffic/mix-small.pcap");
    if mix.exists() {
        for e in [
            "vlan and tcp",
            "ip6 and udp port 53",
            "not (tcp port 443 or udp)",
        ] {
            cases.push((mix.clone(), e));
        }
    } else {
        eprintln!("pcap_file_filter_keeps_what_tcpdump_keeps: no shared corpus, the sample only");
    }
    for (pcap, expr) in cases {
        let log = tempfile::tempdir().unwrap();
        let want = tcpdump_kept(&pcap, expr, log.path());
        let out = Command::new(MEERKAT)
            .arg("run")
            .arg("-r")
            .arg(&pcap)
            .arg("-S")
            .arg(repo("sample/sample.rules"))
            .arg("-l")
            .arg(log.path())
            .args(COMMON)
            .arg("--summary-json")
            .arg(log.path().join("summary.json"))
            .args(expr.split(' '))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(want > 0, "{expr} keeps nothing of {}", pcap.display());
        assert_eq!(
            summary_packets(log.path()),
            want,
            "{expr} on {}",
            pcap.display()
        );
    }
}
