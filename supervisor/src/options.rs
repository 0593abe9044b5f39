//! What a run is asked to do: the command line of `meerkat run` as plain data, the log
//! settings handed to the roles, and the signal flags the run watches.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use crate::SupervisorError;

/// The options of `meerkat run` (Suricata's habits: `-c`, `-r`, `-S`, `-l`, `-k`, `--set`).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `-c`: the configuration file.
    pub config: Option<PathBuf>,
    /// `-r`: capture files, directories or patterns.
    pub pcap: Vec<PathBuf>,
    /// `-i`: a live AF_PACKET interface.
    pub interface: Option<String>,
    /// `--dpdk`: the DPDK port of the `dpdk` section.
    pub dpdk: bool,
    /// `--af-packet` without an interface: the first interface of the `af-packet`
    /// section.
    pub af_packet_default: bool,
    /// `-S`: the only rule files.
    pub exclusive_rules: Vec<PathBuf>,
    /// `-s`: rule files in addition to `rule-files`.
    pub extra_rules: Vec<PathBuf>,
    /// `-l`: the log directory.
    pub log_dir: Option<PathBuf>,
    /// `-k`: `none`, `all` or `auto`.
    pub checksum: Option<String>,
    /// `--set key=value`, in order.
    pub set: Vec<String>,
    /// `--workers N`.
    pub workers: Option<usize>,
    pub pcap_file_continuous: bool,
    pub pcap_file_recursive: bool,
    pub pcap_file_delete: bool,
    /// `--runmode` (accepted for Suricata command lines, ignored).
    pub runmode: Option<String>,
    /// `--simulate-ips` (accepted, ignored with a warning).
    pub simulate_ips: bool,
    /// `--summary-json FILE`.
    pub summary_json: Option<PathBuf>,
    /// The BPF filter expression after the options (`meerkat run -i eth0 not port 22`),
    /// word by word.
    pub bpf_filter: Vec<String>,
    /// `-F FILE`: the BPF filter read from a file (`#` comments, lines joined).
    pub bpf_file: Option<PathBuf>,
    /// `--init-errors-fatal`: a rule that does not load stops the start (and fails `-T`).
    pub init_errors_fatal: bool,
    /// `--unix-socket[=PATH]`: Suricata's unix-socket run mode: no input of its own, the
    /// rules loaded once, pcaps queued by the socket's `pcap-file` commands, each with
    /// its own output directory.
    pub unix_socket: bool,
    /// The socket of `--unix-socket=PATH` (else `unix-command.filename`).
    pub unix_socket_path: Option<PathBuf>,
    /// A pipe to write one byte to once the stack runs (`-D`: the parent process exits
    /// then, as Suricata's).
    pub ready_fd: Option<i32>,
}

impl RunOptions {
    /// The command line as config overrides: `-l`, `-k`, the `--pcap-file-*` switches and
    /// `--workers` first, then `--set` (so that an explicit `--set` wins, as with Suricata
    /// where -l and --set compose).
    pub fn overrides(&self) -> Result<Vec<String>, SupervisorError> {
        let mut o = Vec::new();
        if let Some(l) = &self.log_dir {
            o.push(format!("default-log-dir={}", l.display()));
        }
        if let Some(k) = &self.checksum {
            match k.as_str() {
                "none" => {
                    o.push("stream.checksum-validation=no".to_string());
                    o.push("pcap-file.checksum-checks=no".to_string());
                }
                "all" => {
                    o.push("stream.checksum-validation=yes".to_string());
                    o.push("pcap-file.checksum-checks=yes".to_string());
                }
                _ => {}
            }
        }
        if self.pcap_file_continuous {
            o.push("pcap-file.continuous=yes".to_string());
        }
        if self.pcap_file_recursive {
            o.push("pcap-file.recursive=yes".to_string());
        }
        if self.pcap_file_delete {
            o.push("pcap-file.delete-when-done=yes".to_string());
        }
        if self.unix_socket {
            o.push("supervisor.keep-running=yes".to_string());
            o.push("unix-command.enabled=yes".to_string());
            if let Some(p) = &self.unix_socket_path {
                o.push(format!("unix-command.filename={}", p.display()));
            }
        }
        if let Some(n) = self.workers {
            if n == 0 {
                return Err(SupervisorError::NoWorkers);
            }
            o.push(format!("detect.workers={n}"));
        }
        if let Some(f) = self.bpf()? {
            o.push(format!("bpf-filter={f}"));
        }
        o.extend(self.set.iter().cloned());
        Ok(o)
    }

    /// The command line's BPF filter: the words after the options, or `-F FILE`, not
    /// both (as Suricata).
    pub fn bpf(&self) -> Result<Option<String>, SupervisorError> {
        let words = self.bpf_filter.join(" ");
        match &self.bpf_file {
            Some(file) if !words.trim().is_empty() => Err(SupervisorError::BpfTwice {
                file: file.clone(),
                expr: words,
            }),
            Some(file) => {
                let text = std::fs::read_to_string(file).map_err(|source| {
                    SupervisorError::Unreadable {
                        what: "BPF filter file",
                        path: file.clone(),
                        source,
                    }
                })?;
                let expr = meerkat_capture::bpf::from_file_text(&text);
                if expr.len() > meerkat_capture::bpf::MAX_EXPR_LEN {
                    return Err(meerkat_capture::bpf::BpfError::TooLarge(expr.len()).into());
                }
                Ok((!expr.is_empty()).then_some(expr))
            }
            None => Ok((!words.trim().is_empty()).then_some(words)),
        }
    }

    /// A live source (`-i` or `--dpdk`) rather than files.
    pub fn live(&self) -> bool {
        self.interface.is_some() || self.dpdk || self.af_packet_default
    }
}

/// Log settings handed to the roles (the supervisor's own `-v`/`-q`/`--log-format`).
#[derive(Debug, Clone, Default)]
pub struct LogArgs {
    pub verbose: u8,
    pub quiet: bool,
    /// `--log-format=json`.
    pub json: bool,
}

impl LogArgs {
    /// The arguments that give a role the same logging.
    pub(crate) fn args(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.verbose > 0 {
            v.push(format!("-{}", "v".repeat(usize::from(self.verbose))));
        }
        if self.quiet {
            v.push("--quiet".to_string());
        }
        if self.json {
            v.push("--log-format=json".to_string());
        }
        v
    }
}

/// The process's signal flags, set by its handlers (the binary installs them).
#[derive(Debug, Clone, Copy)]
pub struct Signals<'a> {
    /// SIGTERM or SIGINT: drain and stop.
    pub stop: &'a AtomicBool,
    /// How many SIGTERM/SIGINT came: a second one stops without draining.
    pub stop_count: &'a AtomicUsize,
    /// SIGHUP: the eve-writer reopens its outputs.
    pub hup: &'a AtomicBool,
    /// SIGUSR2: reload the rules (as Suricata's).
    pub usr2: &'a AtomicBool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_becomes_overrides_before_set() {
        let o = RunOptions {
            log_dir: Some(PathBuf::from("/l")),
            checksum: Some("none".to_string()),
            workers: Some(3),
            set: vec!["detect.workers=5".to_string()],
            ..Default::default()
        };
        assert_eq!(
            o.overrides().unwrap(),
            [
                "default-log-dir=/l",
                "stream.checksum-validation=no",
                "pcap-file.checksum-checks=no",
                "detect.workers=3",
                "detect.workers=5"
            ]
        );
        let bpf = RunOptions {
            bpf_filter: vec!["not".to_string(), "port".to_string(), "22".to_string()],
            ..Default::default()
        };
        assert_eq!(bpf.overrides().unwrap(), ["bpf-filter=not port 22"]);
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("filter.bpf");
        std::fs::write(&file, "# quiet\nnot host 10.0.0.5\n  and tcp # web\n").unwrap();
        let from_file = RunOptions {
            bpf_file: Some(file.clone()),
            ..Default::default()
        };
        assert_eq!(
            from_file.overrides().unwrap(),
            ["bpf-filter=not host 10.0.0.5 and tcp"]
        );
        let both = RunOptions {
            bpf_file: Some(file),
            ..bpf
        };
        let e = both.overrides().unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("given twice"), "{e}");
        let zero = RunOptions {
            workers: Some(0),
            ..Default::default()
        };
        assert!(matches!(zero.overrides(), Err(SupervisorError::NoWorkers)));
        let log = LogArgs {
            verbose: 2,
            quiet: false,
            json: true,
        };
        assert_eq!(log.args(), ["-vv", "--log-format=json"]);
    }
}
