//! Meerkat's configuration.
//!
//! The file format is suricata.yaml's: the same key names, units and defaults where the
//! concept is the same (`vars.address-groups`, `stream.reassembly.depth`,
//! `outputs.eve-log.buffer-size`, `heartbeat.output-flush-interval`, ...), plus a few
//! sections of Meerkat's own (`capture`, `detect.workers`, `runtime-dir`).
//!
//! Loading goes: the defaults ([`Config::default`]) -> the file merged over them ->
//! command-line overrides (`--set key=value`, `-l`, `-S`, ...) -> key check (Suricata keys
//! Meerkat does not model are dropped with a warning; unknown keys are errors) -> typed
//! [`Config`] -> [`Config::validate`]. The supervisor writes the resolved config to the
//! runtime directory, and every role process starts from that file.
//!
//! One module per section, each with its serde types (`deny_unknown_fields`, every
//! default a named function, units in the field docs) and the checks types cannot make:
//! [`vars`], [`detect`], [`capture`], [`stream`], [`app_layer`], [`outputs`] (eve-log and
//! its redis server), [`heartbeat`], [`pcap_file`], [`scanner`], [`stats`], [`live`]
//! (`af-packet`, `dpdk`, `run-as`) and [`control`] (`control`, `supervisor`). [`load`]
//! resolves a file and its overrides into a [`Config`]; [`keys`] knows which keys are
//! Meerkat's and which Suricata's; [`set`] applies `--set`; [`de`] reads Suricata's value
//! spellings (`yes`, `1mb`).

pub mod app_layer;
pub mod bus;
pub mod capture;
pub mod client_tls;
pub mod control;
pub mod datasets;
pub mod de;
pub mod decoder;
pub mod detect;
pub mod fuzz;
pub mod heartbeat;
pub mod keys;
pub mod live;
pub mod load;
pub mod nats;
pub mod outputs;
pub mod pcap_file;
pub mod pcap_log;
pub mod redis;
pub mod scanner;
pub mod set;
pub mod spool;
pub mod stats;
pub mod stream;
pub mod syslog;
pub mod vars;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use app_layer::{AppEnabled, AppLayer, AppProtocol, DetectionPorts};
pub use capture::{Capture, RxPriority};
pub use control::{Control, Supervisor, UnixCommand, UnixCommandEnabled};
pub use datasets::{DatasetDef, Datasets};
pub use de::{ByteSize, FileMode, RotateInterval, Seconds};
pub use decoder::{Decoder, TunnelPortList, UdpTunnel, UdpTunnelKind};
pub use detect::Detect;
pub use heartbeat::Heartbeat;
pub use live::{AfPacketIface, ClusterType, Dpdk, DpdkIface, EalParams, RunAs};
pub use load::{default_tree, load_for_role, parse_text, read_file, resolve, resolve_tree};
pub use nats::Nats;
pub use outputs::{AlertExtras, EveLog, EveType, EveTypeOptions, FileType, MqttLog, Output};
pub use pcap_file::{ChecksumChecks, DeleteWhenDone, PcapFile};
pub use pcap_log::PcapLog;
pub use redis::{Redis, RedisMode};
pub use scanner::{FingerprintWindow, ScannerConfig, ScannerIdentity};
pub use spool::Spool;
pub use stats::Stats;
pub use stream::{Reassembly, Stream};
pub use vars::{VarValue, Vars};

/// Errors of loading and checking configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("bad --set `{0}`: expected key=value with a dotted key")]
    BadSet(String),
    #[error("unknown config key{}: {}", if .0.len() > 1 { "s" } else { "" }, .0.join(", "))]
    UnknownKeys(Vec<String>),
    #[error("config: {0}")]
    Invalid(String),
}

/// How a config was resolved: the typed config and what was said along the way.
#[derive(Debug)]
pub struct Resolved {
    pub config: Config,
    /// Suricata keys that Meerkat accepted but does not model (each worth a warning).
    pub ignored_suricata_keys: Vec<String>,
}

fn default_log_dir() -> PathBuf {
    PathBuf::from("/var/log/meerkat")
}
fn default_data_dir() -> PathBuf {
    PathBuf::from("/var/lib/meerkat/data")
}
fn default_rule_path() -> PathBuf {
    PathBuf::from("/etc/meerkat/rules")
}
fn default_rule_files() -> Vec<String> {
    vec!["meerkat.rules".to_string()]
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    #[serde(default)]
    pub vars: Vars,
    /// Where EVE and other logs go (`-l`).
    #[serde(default = "default_log_dir")]
    pub default_log_dir: PathBuf,
    /// Directory that relative `rule-files` are in.
    #[serde(default = "default_rule_path")]
    pub default_rule_path: PathBuf,
    #[serde(default = "default_rule_files")]
    pub rule_files: Vec<String>,
    /// Classtype table; absent = the built-in one (Suricata's default table).
    #[serde(default)]
    pub classification_file: Option<PathBuf>,
    /// Reference systems (`config reference: <system> <url-prefix>` lines) that rules'
    /// `reference:<system>,<id>` keywords name; absent = the built-in table (Suricata's
    /// default reference.config).
    #[serde(default)]
    pub reference_config_file: Option<PathBuf>,
    /// Suricata's threshold.config (`suppress`, `threshold`/`event_filter`,
    /// `rate_filter` lines), read with the rules at start and on each reload. Absent:
    /// `/etc/meerkat/threshold.config` when it exists, else no entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_file: Option<PathBuf>,
    /// Directory for the shared-memory rings, counter pages and sockets between the
    /// processes. Absent: `meerkat run` makes a private one under /dev/shm; a role started
    /// alone needs it set (all roles of one sensor share it).
    #[serde(default)]
    pub runtime_dir: Option<PathBuf>,
    /// Where datasets' `save`/`state` files go when their path is relative (Suricata's
    /// `default-data-dir`).
    #[serde(default = "default_data_dir")]
    pub default_data_dir: PathBuf,
    /// The sets of the `dataset`/`datarep` keywords the config declares, and every
    /// set's defaults and limits.
    #[serde(default, skip_serializing_if = "Datasets::is_default")]
    pub datasets: Datasets,
    #[serde(default)]
    pub detect: Detect,
    #[serde(default)]
    pub capture: Capture,
    #[serde(default)]
    pub stream: Stream,
    /// The tunnels the packet decoder opens.
    #[serde(default)]
    pub decoder: Decoder,
    #[serde(default)]
    pub app_layer: AppLayer,
    #[serde(default = "outputs::default_outputs")]
    pub outputs: Vec<Output>,
    #[serde(default)]
    pub heartbeat: Heartbeat,
    #[serde(default)]
    pub pcap_file: PcapFile,
    #[serde(default)]
    pub scanner: ScannerConfig,
    #[serde(default)]
    pub stats: Stats,
    /// Live capture from AF_PACKET sockets (`-i`), one entry per interface.
    #[serde(default)]
    pub af_packet: Vec<AfPacketIface>,
    /// Live capture from a DPDK port (`--dpdk`).
    #[serde(default)]
    pub dpdk: Dpdk,
    /// The user the capture role switches to once its sockets are open.
    #[serde(default)]
    pub run_as: RunAs,
    /// The BPF filter of the command line (`meerkat run -i eth0 not port 22`, `-F FILE`),
    /// as Suricata keeps it: it applies to every capture method and to `-r` files, and
    /// takes the place of an interface's own `bpf-filter`. Absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bpf_filter: Option<String>,
    /// Prefilter matcher (Suricata's `mpm-algo`): `auto` (Hyperscan when the build has it,
    /// else Meerkat's pure-Rust fingerprint filter), `hs`, or `ac`/`ac-ks`/`ac-bs` (the
    /// pure-Rust filter).
    #[serde(default = "default_mpm_algo")]
    pub mpm_algo: String,
    #[serde(default)]
    pub control: Control,
    /// Suricata's unix-socket protocol (`suricatasc`), served by the supervisor beside
    /// the control API.
    #[serde(default)]
    pub unix_command: UnixCommand,
    #[serde(default)]
    pub supervisor: Supervisor,
}

fn default_mpm_algo() -> String {
    "auto".to_string()
}

impl Default for Config {
    fn default() -> Self {
        Config {
            vars: Vars::default(),
            default_log_dir: default_log_dir(),
            default_rule_path: default_rule_path(),
            rule_files: default_rule_files(),
            classification_file: None,
            reference_config_file: None,
            threshold_file: None,
            runtime_dir: None,
            default_data_dir: default_data_dir(),
            datasets: Datasets::default(),
            detect: Detect::default(),
            capture: Capture::default(),
            stream: Stream::default(),
            decoder: Decoder::default(),
            app_layer: AppLayer::default(),
            outputs: outputs::default_outputs(),
            heartbeat: Heartbeat::default(),
            pcap_file: PcapFile::default(),
            scanner: ScannerConfig::default(),
            stats: Stats::default(),
            af_packet: Vec::new(),
            dpdk: Dpdk::default(),
            run_as: RunAs::default(),
            bpf_filter: None,
            mpm_algo: default_mpm_algo(),
            control: Control::default(),
            unix_command: UnixCommand::default(),
            supervisor: Supervisor::default(),
        }
    }
}

impl Config {
    /// Checks what types cannot: ranges and relations between keys.
    pub fn validate(&self) -> Result<(), ConfigError> {
        capture::validate(&self.capture)?;
        live::validate(&self.af_packet, &self.dpdk)?;
        heartbeat::validate(&self.heartbeat)?;
        detect::validate(&self.detect)?;
        stream::validate(&self.stream)?;
        for kind in [
            UdpTunnelKind::Teredo,
            UdpTunnelKind::Vxlan,
            UdpTunnelKind::Geneve,
        ] {
            self.tunnel_ports(kind)?;
        }
        if !matches!(
            self.mpm_algo.as_str(),
            "auto" | "hs" | "hyperscan" | "ac" | "ac-ks" | "ac-bs" | "fingerprint" | "fp"
        ) {
            return Err(ConfigError::Invalid(format!(
                "mpm-algo `{}` must be auto, hs or ac",
                self.mpm_algo
            )));
        }
        control::validate(&self.control, &self.supervisor)?;
        scanner::validate(&self.scanner)?;
        pcap_file::validate(&self.pcap_file)?;
        outputs::validate(&self.outputs)?;
        Ok(())
    }

    /// Number of detect workers to run.
    pub fn workers(&self) -> usize {
        self.detect.workers.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }

    /// The file store, when an enabled `file-store` output is configured.
    pub fn file_store(&self) -> Option<&outputs::FileStore> {
        self.outputs
            .iter()
            .filter_map(|o| o.file_store.as_ref())
            .find(|f| f.enabled)
    }

    /// Whether any enabled eve-log output logs records of type `name`.
    pub fn eve_wants(&self, name: &str) -> bool {
        self.eve_logs().any(|e| e.type_entry(name).is_some())
    }

    /// Whether some enabled eve-log output adds `pcap_filename` (`pcap-file: yes`).
    pub fn eve_pcap_filename(&self) -> bool {
        self.eve_logs().any(|e| e.pcap_file)
    }

    /// The BPF filter of a capture method whose own setting is `own` (an interface's
    /// `bpf-filter`): the command line's (`bpf-filter`) wins, as in Suricata. Empty text
    /// is no filter.
    pub fn bpf_filter_for<'a>(&'a self, own: Option<&'a str>) -> Option<&'a str> {
        self.bpf_filter
            .as_deref()
            .or(own)
            .map(str::trim)
            .filter(|f| !f.is_empty())
    }

    /// The pcap-log output, when one is enabled (the first).
    pub fn pcap_log(&self) -> Option<&PcapLog> {
        self.outputs
            .iter()
            .filter_map(|o| o.pcap_log.as_ref())
            .find(|p| p.enabled)
    }

    /// The enabled eve-log outputs.
    pub fn eve_logs(&self) -> impl Iterator<Item = &EveLog> {
        self.outputs
            .iter()
            .filter_map(|o| o.eve_log.as_ref())
            .filter(|e| e.enabled)
    }

    /// Rule files with `default-rule-path` applied to relative names.
    pub fn rule_paths(&self) -> Vec<PathBuf> {
        self.rule_files
            .iter()
            .map(|f| {
                let p = Path::new(f);
                if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    self.default_rule_path.join(p)
                }
            })
            .collect()
    }

    /// Where the scanner's registry is: `scanner.registry`, or `pcap-registry.json` in
    /// the log directory.
    pub fn registry_path(&self) -> PathBuf {
        self.scanner
            .registry
            .clone()
            .unwrap_or_else(|| self.default_log_dir.join("pcap-registry.json"))
    }

    /// The files of the enabled eve-log outputs.
    pub fn eve_paths(&self) -> Vec<PathBuf> {
        self.eve_logs()
            .map(|e| self.default_log_dir.join(&e.filename))
            .collect()
    }

    /// The config as YAML (what the supervisor hands to the roles).
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_yaml::Value;

    #[test]
    fn default_round_trips() {
        let c = Config::default();
        let text = c.to_yaml();
        let back = resolve_tree(parse_text(&text).unwrap()).unwrap();
        assert_eq!(back.config, c);
        assert!(back.ignored_suricata_keys.is_empty());
    }

    #[test]
    fn every_default_key_is_a_meerkat_key() {
        fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
            match v {
                Value::Mapping(m) => {
                    for (k, v) in m {
                        path.push(k.as_str().unwrap_or("?").to_string());
                        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
                        if !keys::is_meerkat_key(&segs) && !keys::is_meerkat_section(&segs) {
                            out.push(path.join("."));
                        }
                        walk(v, path, out);
                        path.pop();
                    }
                }
                Value::Sequence(s) => s.iter().for_each(|i| walk(i, path, out)),
                _ => {}
            }
        }
        let mut missing = Vec::new();
        walk(&default_tree(), &mut Vec::new(), &mut missing);
        assert!(missing.is_empty(), "not in MEERKAT_KEYS: {missing:?}");
    }

    #[test]
    fn suricata_style_file_and_sets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("suricata.yaml");
        std::fs::write(
            &path,
            r#"%YAML 1.1
---
vars:
  address-groups:
    HOME_NET: "[10.0.0.0/8]"
default-log-dir: /tmp/x
stream:
  memcap: 64mb
  midstream: yes
  reassembly:
    depth: 8kb
outputs:
  - fast:
      enabled: yes
  - eve-log:
      enabled: yes
      filename: alerts.json
      types:
        - alert
app-layer:
  protocols:
    http:
      enabled: yes
      libhtp:
        default-config:
          personality: IDS
"#,
        )
        .unwrap();
        let r = resolve(
            Some(&path),
            &[
                "outputs.1.eve-log.buffer-size=64kb".to_string(),
                "heartbeat.output-flush-interval=2".to_string(),
                "vars.address-groups.EXTERNAL_NET=!$HOME_NET".to_string(),
                "app-layer.protocols.mqtt.enabled=yes".to_string(),
                "stream.reassembly.depth=0".to_string(),
            ],
        )
        .unwrap();
        let c = r.config;
        assert!(c.stream.midstream);
        assert_eq!(c.stream.reassembly.depth, ByteSize(0));
        assert_eq!(c.vars.address_groups["HOME_NET"].0, "[10.0.0.0/8]");
        // Defaults that the file did not mention stay.
        assert_eq!(c.vars.address_groups["HTTP_SERVERS"].0, "$HOME_NET");
        let eve: Vec<&EveLog> = c.eve_logs().collect();
        assert_eq!(eve.len(), 1);
        assert_eq!(eve[0].filename, "alerts.json");
        assert_eq!(eve[0].buffer_size, ByteSize(65536));
        assert_eq!(c.heartbeat.output_flush_interval, 2);
        assert_eq!(c.app_layer.enabled("mqtt", true), AppEnabled::Yes);
        assert!(
            r.ignored_suricata_keys
                .contains(&"stream.memcap".to_string())
        );
        assert!(
            r.ignored_suricata_keys
                .contains(&"outputs.fast".to_string())
        );
        // A protocol's own keys are its to check (meerkat_app::config).
        assert!(
            c.app_layer.protocols["http"]
                .settings
                .contains_key("libhtp")
        );
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let e = resolve(None, &["stream.midstreem=yes".to_string()]).unwrap_err();
        assert_eq!(e.to_string(), "unknown config key: stream.midstreem");
    }

    #[test]
    fn bad_values_are_errors_naming_the_key() {
        let e = resolve(None, &["stream.midstream=perhaps".to_string()]).unwrap_err();
        assert!(e.to_string().contains("midstream"), "{e}");
        let e = resolve(None, &["heartbeat.output-flush-interval=61".to_string()]).unwrap_err();
        assert!(e.to_string().contains("output-flush-interval"), "{e}");
        let e = resolve(None, &["capture.ring-size=1000".to_string()]).unwrap_err();
        assert!(e.to_string().contains("ring-size"), "{e}");
    }
}
