//! DNP3 against the reference: on the corpus pcaps (a session with unsolicited
//! responses, a request flood, a message of too many points), the alerts per signature
//! and the `dnp3` objects inside them must be the reference's
//! (`suricata-8.0.6-eve.json`), in order; skips when `../shared` is absent. The second
//! test, four sessions with the object types Suricata decodes (fixed and variable
//! length) made by `tests/data/dnp3_objects_pcap.py`, has the reference's `dnp3`
//! records beside it (`tests/data/dnp3_objects_ref.py`), compared value for value and
//! key order too.
//! DNP3 is off by default (as in Suricata): both turn it on. Small pcaps: about a
//! second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use common::{assert_schema_valid, eve, run_in, shared, stderr};

const TESTS: &[&str] = &[
    "dnp3/dnp3-dnp3_obj-alert",
    "dnp3/dnp3-flood",
    "dnp3/dnp3-max-points",
];

/// The `dnp3` objects of the alerts, by signature, in order.
fn alert_records(events: &[serde_json::Value]) -> BTreeMap<u64, Vec<serde_json::Value>> {
    let mut m: BTreeMap<u64, Vec<serde_json::Value>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == "alert") {
        m.entry(e["alert"]["signature_id"].as_u64().unwrap())
            .or_default()
            .push(e["dnp3"].clone());
    }
    m
}

#[test]
fn dnp3_alerts_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    for name in TESTS {
        let dir = set.join(name);
        let file = |ext: &str| {
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|x| x == ext))
                .unwrap()
        };
        let logs = tempfile::tempdir().unwrap();
        let run = |extra: &[&str]| {
            let pcap = file("pcap");
            let rules = file("rules");
            let mut args = vec![
                "run",
                "-q",
                "-r",
                pcap.to_str().unwrap(),
                "-S",
                rules.to_str().unwrap(),
                "-l",
                logs.path().to_str().unwrap(),
                "-k",
                "none",
            ];
            args.extend_from_slice(extra);
            let o = run_in(&dir, &args);
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            eve(&logs.path().join("eve.json"))
        };
        // Off by default: no alert at all.
        let off = run(&[]);
        assert!(
            alert_records(&off).is_empty(),
            "{name}: dnp3 is on by default"
        );
        std::fs::remove_file(logs.path().join("eve.json")).unwrap();
        let ours = run(&["--set", "app-layer.protocols.dnp3.enabled=yes"]);
        assert_schema_valid(&ours);
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        assert_eq!(
            alert_records(&ours),
            alert_records(&reference),
            "{name}: alerts and their dnp3 objects"
        );
    }
}

#[test]
fn object_types_as_the_reference() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // By client port: flows may be logged in either order (several workers), a flow's
    // records in order.
    let want: BTreeMap<String, Vec<serde_json::Value>> = serde_json::from_str(
        &std::fs::read_to_string(data.join("dnp3-objects.dnp3.json")).unwrap(),
    )
    .unwrap();
    let logs = tempfile::tempdir().unwrap();
    let o = run_in(
        &data,
        &[
            "run",
            "-q",
            "-r",
            data.join("dnp3-objects.pcap").to_str().unwrap(),
            "-l",
            logs.path().to_str().unwrap(),
            "-k",
            "none",
            "--set",
            "app-layer.protocols.dnp3.enabled=yes",
            "--set",
            "app-layer.protocols.dnp3.max-points=100",
            "--set",
            "outputs.0.eve-log.types.99=dnp3",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = eve(&logs.path().join("eve.json"));
    assert_schema_valid(&ours);
    let mut got: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for e in ours.iter().filter(|e| e["event_type"] == "dnp3") {
        got.entry(e["src_port"].to_string())
            .or_default()
            .push(e["dnp3"].clone());
    }
    // Keys in the reference's order too (serde_json's maps are sorted): the key
    // sequence of each record, as written.
    let want_order =
        Keys::parse(&std::fs::read_to_string(data.join("dnp3-objects.dnp3.json")).unwrap());
    let mut got_order: BTreeMap<String, Vec<Keys>> = BTreeMap::new();
    let text = std::fs::read_to_string(logs.path().join("eve.json")).unwrap();
    for (line, e) in text.lines().zip(&ours) {
        if e["event_type"] != "dnp3" {
            continue;
        }
        let Keys::Obj(top) = Keys::parse(line) else {
            panic!("not an object: {line}")
        };
        let rec = top.into_iter().find(|(k, _)| k == "dnp3").unwrap().1;
        got_order
            .entry(e["src_port"].to_string())
            .or_default()
            .push(rec);
    }
    let Keys::Obj(want_order) = want_order else {
        panic!("dnp3-objects.dnp3.json: not an object")
    };
    for (port, w) in want_order {
        let Keys::Arr(w) = w else { panic!() };
        for (i, (g, w)) in got_order[&port].iter().zip(&w).enumerate() {
            assert_eq!(
                g.keys(),
                w.keys(),
                "flow from port {port}: key order of record {i}"
            );
        }
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (port, w) in &want {
        let g = &got[port];
        assert_eq!(g.len(), w.len(), "flow from port {port}");
        for (i, (g, w)) in g.iter().zip(w).enumerate() {
            if let Some(d) = first_difference(g, w, String::new()) {
                panic!("flow from port {port}: dnp3 record {i}: {d}");
            }
        }
    }
}

/// A JSON document's shape with its keys in the order written (values but objects and
/// arrays left out).
#[derive(Debug)]
enum Keys {
    Obj(Vec<(String, Keys)>),
    Arr(Vec<Keys>),
    Leaf,
}

impl Keys {
    fn parse(text: &str) -> Keys {
        let b = text.as_bytes();
        let mut i = 0;
        let k = Keys::value(b, &mut i);
        assert!(text[i..].trim().is_empty(), "trailing bytes: {text}");
        k
    }

    fn ws(b: &[u8], i: &mut usize) {
        while b.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
    }

    /// A string at `i` (its quote), unescaped enough for keys (Suricata's are plain).
    fn string(b: &[u8], i: &mut usize) -> String {
        let start = *i + 1;
        *i += 1;
        while b[*i] != b'"' {
            *i += if b[*i] == b'\\' { 2 } else { 1 };
        }
        *i += 1;
        String::from_utf8_lossy(&b[start..*i - 1]).into_owned()
    }

    fn value(b: &[u8], i: &mut usize) -> Keys {
        Keys::ws(b, i);
        match b[*i] {
            b'{' => {
                *i += 1;
                let mut v = Vec::new();
                loop {
                    Keys::ws(b, i);
                    match b[*i] {
                        b'}' => {
                            *i += 1;
                            return Keys::Obj(v);
                        }
                        b',' => *i += 1,
                        _ => {
                            let k = Keys::string(b, i);
                            Keys::ws(b, i);
                            assert_eq!(b[*i], b':');
                            *i += 1;
                            v.push((k, Keys::value(b, i)));
                        }
                    }
                }
            }
            b'[' => {
                *i += 1;
                let mut v = Vec::new();
                loop {
                    Keys::ws(b, i);
                    match b[*i] {
                        b']' => {
                            *i += 1;
                            return Keys::Arr(v);
                        }
                        b',' => *i += 1,
                        _ => v.push(Keys::value(b, i)),
                    }
                }
            }
            b'"' => {
                Keys::string(b, i);
                Keys::Leaf
            }
            _ => {
                while !matches!(b.get(*i), None | Some(b',' | b'}' | b']')) {
                    *i += 1;
                }
                Keys::Leaf
            }
        }
    }

    /// Every key, depth first, in order.
    fn keys(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk(&mut out);
        out
    }

    fn walk<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Keys::Obj(v) => {
                for (k, x) in v {
                    out.push(k);
                    x.walk(out);
                }
            }
            Keys::Arr(v) => v.iter().for_each(|x| x.walk(out)),
            Keys::Leaf => {}
        }
    }
}

/// Where `got` and `want` first differ, and how.
fn first_difference(
    got: &serde_json::Value,
    want: &serde_json::Value,
    path: String,
) -> Option<String> {
    use serde_json::Value::{Array, Object};
    match (got, want) {
        (Object(g), Object(w)) => {
            for (k, wv) in w {
                let p = format!("{path}.{k}");
                match g.get(k) {
                    Some(gv) => {
                        if let Some(d) = first_difference(gv, wv, p) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{p}: missing, want {wv}")),
                }
            }
            g.keys()
                .find(|k| !w.contains_key(*k))
                .map(|k| format!("{path}.{k}: unwanted {}", g[k]))
        }
        (Array(g), Array(w)) => {
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                if let Some(d) = first_difference(gv, wv, format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (g.len() != w.len()).then(|| format!("{path}: {} items, want {}", g.len(), w.len()))
        }
        _ => (got != want).then(|| format!("{path}: {got}, want {want}")),
    }
}
