//! Datasets (`dataset`, `datarep`; issue 24) end to end: the corpus test datasets-03-set,
//! a crafted DNS pcap whose alerts and saved state files are compared with what the
//! reference (Suricata 8.0.6) gives, with one and two workers (a set is shared by the
//! workers: a name `set` on a flow of one worker is not new on a flow of the other), and
//! the unix-socket `dataset-*` commands on a running stack.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use common::sc::Sc;
use common::stack::*;
use common::*;
use serde_json::{Value, json};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The query names each sid alerted on, sorted.
fn alerts_by_sid(events: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == "alert") {
        let name = e["dns"]["queries"][0]["rrname"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        m.entry(e["alert"]["signature_id"].to_string())
            .or_default()
            .push(name);
    }
    for v in m.values_mut() {
        v.sort();
    }
    m
}

fn sorted_lines(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

#[test]
fn corpus_datasets_03_set_alerts_once() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/datasets-03-set");
    let want = alert_sids(&eve(&dir.join("suricata-8.0.6-eve.json")));
    assert_eq!(want, [1]);
    for workers in ["1", "2"] {
        let got = run_pcap(
            &dir,
            &dir.join("input.pcap"),
            &dir.join("test.rules"),
            &["-k", "none", "--workers", workers],
        );
        assert_eq!(alert_sids(&got), want, "{workers} workers");
    }
}

/// dns-datasets.rules over dns-datasets.pcap: `set` (with a state file), `isset` and
/// `isnotset` on a set loaded beside the rules, `isset` on a set loaded from its state
/// file; the alerts and the saved files are the reference's (tests/data/
/// dns-datasets.expected.json), with one worker and with two. With two, the flows of
/// alpha.example (3) and beta.example (2) land on both workers (capture's flow hash:
/// 2 + 1 and 1 + 1), so sets kept per worker would alert on them twice.
#[test]
fn dns_sets_alert_and_save_as_the_reference_with_any_number_of_workers() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(data().join("dns-datasets.expected.json")).unwrap(),
    )
    .unwrap();
    let want_alerts: BTreeMap<String, Vec<String>> =
        serde_json::from_value(expected["alerts"].clone()).unwrap();
    for workers in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        let datadir = dir.path().join("data");
        std::fs::create_dir(&datadir).unwrap();
        std::fs::copy(
            data().join("dns-datasets.preset.lst"),
            datadir.join("preset.lst"),
        )
        .unwrap();
        let events = run_pcap(
            dir.path(),
            &data().join("dns-datasets.pcap"),
            &data().join("dns-datasets.rules"),
            &[
                "-k",
                "none",
                "--workers",
                workers,
                "--set",
                &format!("default-data-dir={}", datadir.display()),
            ],
        );
        assert_schema_valid(&events);
        assert_eq!(alerts_by_sid(&events), want_alerts, "{workers} workers");
        for file in ["dns-seen.lst", "preset.lst"] {
            let want: Vec<String> =
                serde_json::from_value(expected["saved"][file].clone()).unwrap();
            assert_eq!(
                sorted_lines(&datadir.join(file)),
                want,
                "{file}, {workers} workers"
            );
        }
    }
}

/// A bad line in a dataset file refuses the rule, naming the file and line; the other
/// rules load and run.
#[test]
fn a_bad_dataset_file_refuses_its_rule_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bad.lst"), "YWxwaGEuZXhhbXBsZQ==\nnot base64!\n").unwrap();
    let rules = rules_file(
        d,
        "r.rules",
        "alert dns any any -> any any (dns.query; dataset:isset,bad, type string, load bad.lst; sid:1;)\n\
         alert dns any any -> any any (dns.query; dataset:set,seen, type string; sid:2;)\n",
    );
    let out = run_in(d, &["rules", "check", rules.to_str().unwrap()]);
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("bad.lst:2:"), "{text}");
    let events = run_pcap(
        d,
        &data().join("dns-datasets.pcap"),
        &rules,
        &["-k", "none"],
    );
    let sids = alert_sids(&events);
    assert_eq!(
        sids,
        vec![2; 8],
        "sid 2 once per distinct name, sid 1 refused"
    );
}

/// (return, message) of a socket command.
fn ret(sc: &mut Sc, name: &str, args: Value) -> (String, Value) {
    let r = sc.cmd(name, args);
    (
        r["return"].as_str().unwrap().to_string(),
        r["message"].clone(),
    )
}

/// Whole EVE lines of one type in `path` so far (a line being written is not counted).
fn whole_lines(path: &Path, kind: &str) -> usize {
    let needle = format!("\"event_type\":\"{kind}\"");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n') && l.contains(&needle))
        .count()
}

fn b64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// `dataset-add`/`-lookup`/`-remove`/`-clear`/`-dump` on a running stack (unix-socket
/// mode, two workers): a name added over the socket is not new to the traffic's `set`,
/// names the traffic set are found, and the replies are Suricata's.
#[test]
fn socket_dataset_commands_reach_the_workers_sets() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let datadir = d.join("data");
    std::fs::create_dir(&datadir).unwrap();
    let rules = rules_file(
        d,
        "r.rules",
        "alert dns any any -> any any (dns.query; dataset:set,dns-seen, type string, state seen.lst; sid:1;)\n",
    );
    let sock = d.join("suricata-command.socket");
    let r = Running::start(
        d,
        &rules,
        &[],
        &[
            &format!("--unix-socket={}", sock.display()),
            "--workers",
            "2",
            "--set",
            &format!("default-data-dir={}", datadir.display()),
        ],
    );
    wait_until("the unix-command socket", 60, || {
        UnixStream::connect(&sock).is_ok()
    });
    let mut sc = Sc::connect(&sock);
    let arg =
        |set: &str, kind: &str, v: &str| json!({"setname": set, "settype": kind, "datavalue": v});
    let alpha = b64("alpha.example");
    let ok = |m: &str| ("OK".to_string(), json!(m));
    let nok = |m: &str| ("NOK".to_string(), json!(m));
    assert_eq!(
        ret(&mut sc, "dataset-add", arg("dns-seen", "string", &alpha)),
        ok("data added")
    );
    assert_eq!(
        ret(&mut sc, "dataset-add", arg("dns-seen", "string", &alpha)),
        ok("data already in set")
    );
    assert_eq!(
        ret(&mut sc, "dataset-add", arg("dns-seen", "md5", &alpha)),
        nok("set not found or wrong type")
    );
    assert_eq!(
        ret(
            &mut sc,
            "dataset-add",
            arg("dns-seen", "string", "not base64!")
        ),
        nok("failed to add data")
    );
    assert_eq!(
        ret(
            &mut sc,
            "dataset-lookup",
            arg("dns-seen", "string", &b64("beta.example"))
        ),
        nok("item not found in set")
    );
    let out = d.join("o1");
    std::fs::create_dir(&out).unwrap();
    assert_eq!(
        ret(
            &mut sc,
            "pcap-file",
            json!({"filename": data().join("dns-datasets.pcap"), "output-dir": out})
        ),
        ok("Successfully added file to list")
    );
    // The pcap's flows end once it has been read: 12 flow records.
    wait_until("the pcap to be read", 120, || {
        ret(&mut sc, "pcap-file-number", Value::Null).1 == json!(0)
            && ret(&mut sc, "pcap-current", Value::Null).1 == json!("None")
            && whole_lines(&out.join("eve.json"), "flow") == 12
    });
    // alpha.example was in the set before the traffic: 7 new names, not 8.
    let got = alerts_by_sid(&eve(&out.join("eve.json")));
    assert_eq!(got["1"].len(), 7, "{got:?}");
    assert!(!got["1"].contains(&"alpha.example".to_string()));
    assert_eq!(
        ret(
            &mut sc,
            "dataset-lookup",
            arg("dns-seen", "string", &b64("beta.example"))
        ),
        ok("item found in set")
    );
    assert_eq!(
        ret(
            &mut sc,
            "dataset-remove",
            arg("dns-seen", "string", &b64("beta.example"))
        ),
        ok("data removed")
    );
    assert_eq!(
        ret(
            &mut sc,
            "dataset-remove",
            arg("dns-seen", "string", &b64("beta.example"))
        ),
        nok("failed to remove data")
    );
    // The same through the gRPC control API (`meerkat ctl dataset ...`).
    let gamma = b64("gamma.example");
    let o = r.ctl(&["dataset", "lookup", "dns-seen", "string", &gamma]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "item found in set");
    let v = r.ctl_json(&["dataset", "add", "dns-seen", "string", &gamma]);
    assert_eq!(v, json!({"return": "OK", "message": "data already in set"}));
    let o = r.ctl(&["dataset", "lookup", "dns-seen", "md5", &gamma]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o).trim(), "set not found or wrong type");
    assert_eq!(
        ret(&mut sc, "dataset-dump", Value::Null),
        ok("datasets dump done")
    );
    let saved = sorted_lines(&datadir.join("seen.lst"));
    assert_eq!(saved.len(), 7, "{saved:?}");
    assert!(saved.contains(&alpha) && !saved.contains(&b64("beta.example")));
    assert_eq!(
        ret(
            &mut sc,
            "dataset-clear",
            json!({"setname": "dns-seen", "settype": "string"})
        ),
        ok("dataset cleared")
    );
    assert_eq!(
        ret(&mut sc, "dataset-lookup", arg("dns-seen", "string", &alpha)),
        nok("item not found in set")
    );
    assert_eq!(ret(&mut sc, "shutdown", Value::Null).0, "OK");
    let (o, _) = r.wait(60);
    assert!(o.status.success(), "{}", stderr(&o));
    // Saved again at shutdown: empty now.
    assert!(sorted_lines(&datadir.join("seen.lst")).is_empty());
}

/// `datarep` with its comparisons on a set loaded with reputations (`value,rep`
/// lines), and `dataset:isset` on the same set: the reference's alerts.
#[test]
fn datarep_compares_reputations_as_the_reference() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(data().join("dns-datarep.expected.json")).unwrap(),
    )
    .unwrap();
    let want: BTreeMap<String, Vec<String>> =
        serde_json::from_value(expected["alerts"].clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let events = run_pcap(
        dir.path(),
        &data().join("dns-datasets.pcap"),
        &data().join("dns-datarep.rules"),
        &["-k", "none", "--workers", "2"],
    );
    assert_eq!(alerts_by_sid(&events), want);
}
