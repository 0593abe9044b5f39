//! Which configuration keys exist: Meerkat's own, and Suricata's.
//!
//! A config tree is checked before it is turned into typed config:
//! - a key Meerkat models is kept;
//! - a key that Suricata has but Meerkat does not model (yet) is removed with a warning
//!   naming it, so Suricata config files and command lines keep working;
//! - any other key is an error naming it.
//!
//! Paths skip list indices: `outputs: [{eve-log: {types: [{http: {extended: yes}}]}}]`
//! holds the key `outputs.eve-log.types.http.extended`.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_yaml::Value;

/// Every key path of Suricata's annotated default suricata.yaml (8.0), commented-out keys
/// included; regenerate with `tools/gen-suricata-keys.py`.
const SURICATA_KEYS: &str = include_str!("suricata_keys.txt");

/// Key paths that Meerkat models. `*` matches any one segment (a variable name, an
/// app-layer protocol, an EVE record type).
pub const MEERKAT_KEYS: &[&str] = &[
    "vars.address-groups.*",
    "vars.port-groups.*",
    "default-log-dir",
    "default-rule-path",
    "rule-files",
    "classification-file",
    "reference-config-file",
    "threshold-file",
    "default-data-dir",
    "datasets.*.type",
    "datasets.*.load",
    "datasets.*.state",
    "datasets.*.memcap",
    "datasets.*.hashsize",
    "datasets.limits.single-hashsize",
    "datasets.limits.total-hashsizes",
    "datasets.rules.allow-write",
    "datasets.rules.allow-absolute-filenames",
    "unix-command.enabled",
    "unix-command.filename",
    "runtime-dir",
    "detect.workers",
    "decoder.teredo.enabled",
    "decoder.teredo.ports",
    "decoder.vxlan.enabled",
    "decoder.vxlan.ports",
    "decoder.geneve.enabled",
    "decoder.geneve.ports",
    "detect.event-batch-size",
    "detect.event-batch-delay-ms",
    "detect.max-unacked-batches",
    "capture.ring-size",
    "control.socket",
    "control.listen",
    "control.tls-cert",
    "control.tls-key",
    "control.tls-client-ca",
    "control.token-file",
    "control.metrics-listen",
    "control.max-message-size",
    "supervisor.restart-backoff-ms",
    "supervisor.restart-backoff-max-ms",
    "supervisor.max-restarts",
    "supervisor.restart-window",
    "supervisor.shutdown-timeout",
    "supervisor.keep-running",
    "capture.backlog-size",
    "capture.rx-priority",
    "capture.replay-window",
    "af-packet.interface",
    "af-packet.threads",
    "af-packet.cluster-id",
    "af-packet.cluster-type",
    "af-packet.defrag",
    "af-packet.ring-size",
    "af-packet.block-size",
    "af-packet.block-timeout",
    "af-packet.bpf-filter",
    "af-packet.disable-promisc",
    "dpdk.eal-params",
    "dpdk.interfaces.interface",
    "dpdk.interfaces.rx-descriptors",
    "dpdk.interfaces.mempool-size",
    "dpdk.interfaces.mempool-cache-size",
    "dpdk.interfaces.burst-size",
    "dpdk.interfaces.promisc",
    "dpdk.interfaces.mtu",
    "dpdk.interfaces.bpf-filter",
    "bpf-filter",
    "run-as.user",
    "run-as.group",
    "stream.midstream",
    "stream.inline",
    "stream.checksum-validation",
    "stream.async-oneside",
    "stream.reassembly.depth",
    "stream.reassembly.toserver-chunk-size",
    "stream.reassembly.toclient-chunk-size",
    "stream.reassembly.randomize-chunk-size",
    "stream.reassembly.randomize-chunk-range",
    "app-layer.protocols.*.enabled",
    "app-layer.protocols.*.detection-ports.dp",
    "app-layer.protocols.*.detection-ports.sp",
    "outputs.eve-log.enabled",
    "outputs.eve-log.filetype",
    "outputs.eve-log.filename",
    "outputs.eve-log.threaded",
    "outputs.eve-log.buffer-size",
    "outputs.eve-log.pcap-file",
    "outputs.eve-log.community-id",
    "outputs.eve-log.community-id-seed",
    "outputs.eve-log.append",
    "outputs.eve-log.filemode",
    "outputs.eve-log.rotate-interval",
    "outputs.eve-log.redis.server",
    "outputs.eve-log.redis.port",
    "outputs.eve-log.redis.mode",
    "outputs.eve-log.redis.key",
    "outputs.eve-log.redis.stream-maxlen",
    "outputs.eve-log.redis.stream-trim-exact",
    "outputs.eve-log.redis.stream-keep-unacked",
    "outputs.eve-log.redis.username",
    "outputs.eve-log.redis.password",
    "outputs.eve-log.redis.tls.enabled",
    "outputs.eve-log.redis.tls.ca-file",
    "outputs.eve-log.redis.tls.cert-file",
    "outputs.eve-log.redis.tls.key-file",
    "outputs.eve-log.redis.tls.server-name",
    "outputs.eve-log.nats.servers",
    "outputs.eve-log.nats.subject",
    "outputs.eve-log.nats.stream",
    "outputs.eve-log.nats.create-stream",
    "outputs.eve-log.nats.duplicate-window",
    "outputs.eve-log.nats.msg-id-prefix",
    "outputs.eve-log.nats.ack-timeout",
    "outputs.eve-log.nats.max-in-flight",
    "outputs.eve-log.nats.credentials",
    "outputs.eve-log.nats.token",
    "outputs.eve-log.nats.user",
    "outputs.eve-log.nats.password",
    "outputs.eve-log.nats.tls.enabled",
    "outputs.eve-log.nats.tls.ca-file",
    "outputs.eve-log.nats.tls.cert-file",
    "outputs.eve-log.nats.tls.key-file",
    "outputs.eve-log.nats.tls.server-name",
    "outputs.eve-log.spool.enabled",
    "outputs.eve-log.spool.directory",
    "outputs.eve-log.spool.max-size",
    "outputs.eve-log.spool.segment-size",
    "outputs.eve-log.spool.memory",
    "outputs.eve-log.spool.fsync",
    "outputs.eve-log.spool.fsync-interval",
    "outputs.eve-log.spool.when-full",
    "outputs.eve-log.facility",
    "outputs.eve-log.level",
    "outputs.eve-log.identity",
    "outputs.eve-log.syslog-socket",
    "outputs.eve-log.types",
    "outputs.eve-log.types.*.enabled",
    "outputs.eve-log.types.*.metadata",
    "outputs.eve-log.types.*.payload",
    "outputs.eve-log.types.*.payload-buffer-size",
    "outputs.eve-log.types.*.payload-printable",
    "outputs.eve-log.types.*.packet",
    "outputs.eve-log.types.*.extended",
    "outputs.eve-log.types.*.totals",
    "outputs.eve-log.types.*.threads",
    "outputs.eve-log.types.*.types.*",
    "outputs.pcap-log.enabled",
    "outputs.pcap-log.filename",
    "outputs.pcap-log.limit",
    "outputs.pcap-log.max-files",
    "outputs.pcap-log.mode",
    "outputs.pcap-log.dir",
    "outputs.pcap-log.ts-format",
    "outputs.pcap-log.use-stream-depth",
    "outputs.pcap-log.honor-pass-rules",
    "outputs.pcap-log.conditional",
    "outputs.pcap-log.compression",
    "outputs.pcap-log.lz4-level",
    "outputs.pcap-log.lz4-checksum",
    "outputs.pcap-log.bpf-filter",
    "outputs.eve-log.types.files.force-magic",
    "outputs.eve-log.types.files.force-hash",
    "outputs.eve-log.types.mqtt.passwords",
    "outputs.eve-log.types.mqtt.string-log-limit",
    "outputs.eve-log.types.pgsql.passwords",
    "outputs.eve-log.types.smtp.custom",
    "outputs.eve-log.types.smtp.md5",
    "outputs.file-store.version",
    "outputs.file-store.enabled",
    "outputs.file-store.dir",
    "outputs.file-store.write-fileinfo",
    "outputs.file-store.force-filestore",
    "outputs.file-store.stream-depth",
    "outputs.file-store.max-open-files",
    "outputs.file-store.force-hash",
    "outputs.file-store.memcap",
    "outputs.file-store.xff",
    "outputs.file-store.xff.*",
    "heartbeat.output-flush-interval",
    "pcap-file.checksum-checks",
    "pcap-file.continuous",
    "pcap-file.recursive",
    "pcap-file.delete-when-done",
    "pcap-file.delay",
    "pcap-file.poll-interval",
    "scanner.registry",
    "scanner.identity",
    "scanner.fingerprint.offset",
    "scanner.fingerprint.length",
    "scanner.exclude",
    "scanner.checkpoint-interval",
    "scanner.forget-after",
    "stats.enabled",
    "stats.interval",
    "mpm-algo",
];

/// Suricata maps whose keys are names the user chooses.
const SURICATA_OPEN: &[&str] = &[
    "vars.address-groups.*",
    "vars.port-groups.*",
    "app-layer.protocols.*.enabled",
    "app-layer.protocols.*.detection-enabled",
    "app-layer.protocols.*.detection-ports.*",
    "outputs.eve-log.types.*",
];

fn suricata_keys() -> &'static HashSet<&'static str> {
    static KEYS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut set = HashSet::new();
        for line in SURICATA_KEYS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            // Every prefix of a key is a key (a section) too.
            let mut end = 0;
            for (i, c) in line.char_indices() {
                if c == '.' {
                    set.insert(&line[..i]);
                }
                end = i + c.len_utf8();
            }
            set.insert(&line[..end]);
        }
        set
    })
}

/// App-layer protocol names that Suricata knows (`app-layer.protocols.<name>`).
pub fn suricata_app_protocols() -> Vec<&'static str> {
    let mut v: Vec<&str> = suricata_keys()
        .iter()
        .filter_map(|k| k.strip_prefix("app-layer.protocols."))
        .filter(|rest| !rest.contains('.'))
        .collect();
    v.sort_unstable();
    v
}

fn matches(pattern: &str, path: &[&str]) -> bool {
    let pat: Vec<&str> = pattern.split('.').collect();
    pat.len() == path.len() && pat.iter().zip(path).all(|(p, s)| *p == "*" || p == s)
}

fn is_prefix_of(path: &[&str], pattern: &str) -> bool {
    let pat: Vec<&str> = pattern.split('.').collect();
    pat.len() > path.len() && pat.iter().zip(path).all(|(p, s)| *p == "*" || p == s)
}

/// Whether Meerkat models exactly this key.
pub fn is_meerkat_key(path: &[&str]) -> bool {
    MEERKAT_KEYS.iter().any(|p| matches(p, path))
}

/// Whether Meerkat models keys below this one (it is a section of Meerkat's config).
pub fn is_meerkat_section(path: &[&str]) -> bool {
    MEERKAT_KEYS.iter().any(|p| is_prefix_of(path, p))
}

/// Whether the key is a protocol's own setting (`app-layer.protocols.<name>.<key>`,
/// other than the keys every protocol has): each protocol checks its own section
/// (`meerkat_app::config`), so it is kept whole here.
pub fn is_protocol_setting(path: &[&str]) -> bool {
    matches!(path, ["app-layer", "protocols", _, key] if !matches!(*key, "enabled" | "detection-ports"))
}

/// Whether Suricata has this key or section.
pub fn is_suricata_key(path: &[&str]) -> bool {
    if suricata_keys().contains(path.join(".").as_str()) {
        return true;
    }
    SURICATA_OPEN.iter().any(|p| {
        matches(p, path) || is_prefix_of(path, p) || {
            // Anything below an open entry, e.g. outputs.eve-log.types.http.custom.
            let pat: Vec<&str> = p.split('.').collect();
            path.len() > pat.len() && pat.iter().zip(path).all(|(p, s)| *p == "*" || p == s)
        }
    })
}

/// Outcome of checking a config tree.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeyReport {
    /// Suricata keys that were removed because Meerkat does not model them.
    pub ignored_suricata_keys: Vec<String>,
    /// Keys that are neither Meerkat's nor Suricata's.
    pub unknown_keys: Vec<String>,
}

/// Removes Suricata-only keys from `root` and lists unknown ones.
pub fn check_and_prune(root: &mut Value) -> KeyReport {
    let mut report = KeyReport::default();
    let mut path = Vec::new();
    prune(root, &mut path, &mut report);
    report.ignored_suricata_keys.dedup();
    report
}

fn key_str(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => "?".to_string(),
    }
}

fn prune(node: &mut Value, path: &mut Vec<String>, report: &mut KeyReport) {
    match node {
        Value::Mapping(map) => {
            let keys: Vec<Value> = map.keys().cloned().collect();
            for k in keys {
                path.push(key_str(&k));
                let segs: Vec<&str> = path.iter().map(String::as_str).collect();
                let keep_whole = (is_meerkat_key(&segs) && !is_meerkat_section(&segs))
                    || is_protocol_setting(&segs);
                if keep_whole {
                    // A leaf Meerkat models; the typed layer checks its value.
                } else if is_meerkat_section(&segs) && map.get(&k).is_some_and(Value::is_null) {
                    // A section with every key commented out (`capture:` in Suricata's
                    // stock suricata.yaml): unset, its defaults apply, as in Suricata.
                    map.remove(&k);
                } else if is_meerkat_section(&segs) {
                    if let Some(child) = map.get_mut(&k) {
                        prune(child, path, report);
                    }
                } else if is_suricata_key(&segs) {
                    report.ignored_suricata_keys.push(path.join("."));
                    map.remove(&k);
                } else {
                    report.unknown_keys.push(path.join("."));
                    map.remove(&k);
                }
                path.pop();
            }
        }
        Value::Sequence(seq) => {
            for item in seq.iter_mut() {
                // `- smb:` with only comments under it (Suricata's stock eve-log types)
                // is the entry `- smb`, not a section to drop.
                if let Value::Mapping(m) = item
                    && m.len() == 1
                    && let Some((k, v)) = m.iter().next()
                    && v.is_null()
                    && k.is_string()
                {
                    *item = k.clone();
                }
                prune(item, path, report);
            }
            // A list entry whose keys were all Suricata-only (`- fast: {...}`) goes away.
            seq.retain(|v| !matches!(v, Value::Mapping(m) if m.is_empty()));
        }
        Value::Tagged(t) => prune(&mut t.value, path, report),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<&str> {
        s.split('.').collect()
    }

    #[test]
    fn classifies_keys() {
        assert!(is_meerkat_key(&p("stream.midstream")));
        assert!(is_meerkat_key(&p("vars.address-groups.HOME_NET")));
        assert!(is_meerkat_section(&p("outputs.eve-log")));
        assert!(is_suricata_key(&p("af-packet.ring-size")));
        assert!(is_suricata_key(&p(
            "app-layer.protocols.http.libhtp.default-config.response-body-decompress-layer-limit"
        )));
        assert!(is_suricata_key(&p("app-layer.protocols.mqtt.enabled")));
        assert!(is_suricata_key(&p(
            "outputs.eve-log.types.anomaly.types.stream"
        )));
        assert!(!is_suricata_key(&p("stream.midstreem")));
        assert!(!is_meerkat_key(&p("stream.midstreem")));
    }

    #[test]
    fn a_list_entry_with_nothing_under_it_is_its_name() {
        let mut v: Value = serde_yaml::from_str(
            "outputs:\n  - eve-log:\n      types:\n        - alert\n        - smb:\n            # comments only\n",
        )
        .unwrap();
        let mut report = KeyReport::default();
        prune(&mut v, &mut Vec::new(), &mut report);
        let types = &v["outputs"][0]["eve-log"]["types"];
        assert_eq!(types[1], Value::String("smb".into()), "{v:?}");
    }

    #[test]
    fn prunes_suricata_only_and_reports_unknown() {
        let mut v: Value = serde_yaml::from_str(
            r#"
stream:
  midstream: true
  memcap: 64mb
  bogus: 1
outputs:
  - fast:
      enabled: yes
  - eve-log:
      filename: eve.json
      ethernet: yes
      types:
        - alert:
            tagged-packets: yes
            payload: yes
        - dns
logging:
  default-log-level: notice
"#,
        )
        .unwrap();
        let r = check_and_prune(&mut v);
        assert_eq!(r.unknown_keys, vec!["stream.bogus"]);
        assert!(
            r.ignored_suricata_keys
                .contains(&"stream.memcap".to_string())
        );
        assert!(
            r.ignored_suricata_keys
                .contains(&"outputs.fast".to_string())
        );
        assert!(r.ignored_suricata_keys.contains(&"logging".to_string()));
        assert!(
            r.ignored_suricata_keys
                .contains(&"outputs.eve-log.types.alert.tagged-packets".to_string())
        );
        let expect: Value = serde_yaml::from_str(
            r#"
stream:
  midstream: true
outputs:
  - eve-log:
      filename: eve.json
      types:
        - alert:
            payload: yes
        - dns
"#,
        )
        .unwrap();
        assert_eq!(v, expect);
    }

    #[test]
    fn knows_app_protocols() {
        let protos = suricata_app_protocols();
        for p in ["http", "dns", "tls", "mqtt", "dnp3"] {
            assert!(protos.contains(&p), "{p}");
        }
    }
}
