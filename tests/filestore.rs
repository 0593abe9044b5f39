//! The file store (`file-store` version 2 with `filestore` rules) on a real capture,
//! checked against what the reference (Suricata 8.0.6) stores for the same rules: which
//! files (by sha256), their `fileinfo` records (`stored`, `file_id`, `sid`), and the
//! `write-fileinfo` records beside them. Skips when `../shared` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{eve, run_in, shared, stderr};

/// The reference's result for one rule on suricata-verify's base64-decode-5885 capture
/// (four HTTP bodies: three responses and one POST body): the sha256 of the stored
/// files, in `file_id` order.
const CASES: &[(&str, &[&str])] = &[
    (
        "alert http any any -> any any (msg:\"all\"; filestore; sid:1;)",
        &[
            "d2744a681695c99f8cf4084678b72c09b3eb443fc062eb1dde00295c453474e5",
            "05eb745176d79ec27d52d544582483fc4d0f6378c7ed2060be24dfc4e8990668",
            "c6eac591b1f8f54f56ef1379f485106a82f3f41cc9226edd340fd78fa2d1a96e",
            "e21dad5590664f96735fc9e79cb604470ff260f5431f8591632f9e01937e83ae",
        ],
    ),
    (
        "alert http any any -> any any (msg:\"ok\"; http.stat_code; content:\"200\"; filestore; sid:1;)",
        &[
            "d2744a681695c99f8cf4084678b72c09b3eb443fc062eb1dde00295c453474e5",
            "05eb745176d79ec27d52d544582483fc4d0f6378c7ed2060be24dfc4e8990668",
            "e21dad5590664f96735fc9e79cb604470ff260f5431f8591632f9e01937e83ae",
        ],
    ),
    (
        // Matches on the body (kept in memory until then).
        "alert http any any -> any any (msg:\"gif\"; flow:to_client; file.data; content:\"GIF89\"; filestore; sid:1;)",
        &["05eb745176d79ec27d52d544582483fc4d0f6378c7ed2060be24dfc4e8990668"],
    ),
    (
        // A request-side match with no file in the request: no alert, nothing stored.
        "alert http any any -> any any (msg:\"req\"; http.uri; content:\"loader\"; filestore:response,tx; sid:1;)",
        &[],
    ),
];

const CONFIG: &str = "\
outputs:
  - eve-log:
      enabled: yes
      filename: eve.json
      types: [alert, http, files, flow]
  - file-store:
      version: 2
      enabled: yes
      dir: filestore
      write-fileinfo: yes
";

#[test]
fn filestore_stores_what_the_reference_stores() {
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared (the suricata-verify corpus) is absent");
        return;
    };
    let pcap = shared.join("corpus/suricata-verify/base64-decode-5885/input.pcap");
    for (rule, want) in CASES {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("meerkat.yaml"), CONFIG).unwrap();
        std::fs::write(dir.path().join("t.rules"), format!("{rule}\n")).unwrap();
        let o = run_in(
            dir.path(),
            &[
                "run",
                "-q",
                "-c",
                "meerkat.yaml",
                "-r",
                pcap.to_str().unwrap(),
                "-S",
                "t.rules",
                "-l",
                ".",
                "-k",
                "none",
                "--set",
                "detect.workers=1",
            ],
        );
        assert!(o.status.success(), "{rule}: {}", stderr(&o));
        let store = dir.path().join("filestore");
        let events = eve(&dir.path().join("eve.json"));
        let alerts = events.iter().filter(|e| e["event_type"] == "alert").count();
        assert_eq!(alerts, want.len(), "{rule}");
        let mut stored: Vec<(u64, String)> = events
            .iter()
            .filter(|e| e["event_type"] == "fileinfo" && e["fileinfo"]["stored"] == true)
            .map(|e| {
                let f = &e["fileinfo"];
                assert_eq!(f["sid"], serde_json::json!([1]), "{rule}");
                (
                    f["file_id"].as_u64().unwrap(),
                    f["sha256"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        stored.sort();
        let ids: Vec<u64> = (1..=want.len() as u64).collect();
        assert_eq!(
            stored.iter().map(|s| s.0).collect::<Vec<_>>(),
            ids,
            "{rule}"
        );
        assert_eq!(
            stored.iter().map(|s| s.1.as_str()).collect::<Vec<_>>(),
            *want,
            "{rule}"
        );
        for (id, sha) in &stored {
            use sha2::{Digest, Sha256};
            let sub = store.join(&sha[..2]);
            let data = std::fs::read(sub.join(sha)).unwrap();
            assert_eq!(hex(&Sha256::digest(&data)), *sha, "{rule}");
            // `<sha256>.<seconds>.<file_id>.json`: the file's `fileinfo` record.
            let json: Vec<_> = std::fs::read_dir(&sub)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.starts_with(sha.as_str()) && n.ends_with(&format!(".{id}.json")))
                .collect();
            assert_eq!(json.len(), 1, "{rule}: {json:?}");
            let rec = eve(&sub.join(&json[0]));
            assert_eq!(rec.len(), 1);
            assert_eq!(rec[0]["event_type"], "fileinfo");
            assert_eq!(rec[0]["fileinfo"]["sha256"], sha.as_str());
            assert_eq!(rec[0]["fileinfo"]["file_id"], *id);
        }
        let files_on_disk: usize = std::fs::read_dir(&store)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap() != "tmp")
            .map(|p| std::fs::read_dir(p).unwrap().count())
            .sum();
        assert_eq!(
            files_on_disk,
            2 * want.len(),
            "{rule}: a file and its JSON each"
        );
        assert_eq!(std::fs::read_dir(store.join("tmp")).unwrap().count(), 0);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
