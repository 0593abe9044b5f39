//! Command line: Suricata users' habits (`-c`, `-r`, `-S`, `-l`, `-k`, `--set`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::logging::LogFormat;

#[derive(Debug, Parser)]
#[command(
    name = "meerkat",
    version,
    disable_version_flag = true,
    about = "A network intrusion detection system that speaks Suricata's rules, config and EVE JSON",
    long_about = "A network intrusion detection system that speaks Suricata's rules, config and EVE JSON.\n\n\
                  With no command and no options, runs on the embedded sample capture and rules \
                  and writes ./meerkat-logs/eve.json. With Suricata's options and no command \
                  (`meerkat -c suricata.yaml -i eth0`, `meerkat -T -S x.rules`), does what \
                  `meerkat run` with them does, so that Suricata's command lines, systemd units \
                  and tools (suricata-update) work unchanged."
)]
pub struct Cli {
    /// Print Meerkat's version.
    #[arg(long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
    /// Print the Suricata version Meerkat follows, as `suricata -V` (what suricata-update
    /// reads).
    #[arg(short = 'V')]
    pub suricata_version: bool,
    /// Print the build's features, as `suricata --build-info`.
    #[arg(long)]
    pub build_info: bool,
    /// List the rule keywords (`all`: with documentation, `csv`, or one keyword).
    #[arg(long, value_name = "all|csv|KEYWORD", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub list_keywords: Option<String>,
    /// List the application-layer protocols Meerkat parses.
    #[arg(long)]
    pub list_app_layer_protos: bool,
    /// `meerkat run`'s options, given without the command (Suricata's command lines).
    #[command(flatten)]
    pub run: RunArgs,
    /// More log output (-v debug, -vv trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only warnings and errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Option<Command>,
}

// Parsed once at start and moved into the role it names: the size of `Run` costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the whole stack (supervisor, eve-writer, detect workers, capture) on this machine.
    Run(RunArgs),
    /// Role: read packets and feed the detect workers' rings.
    Capture(CaptureArgs),
    /// Role: one detect worker.
    Detect(DetectArgs),
    /// Role: receive events and write EVE JSON.
    #[command(name = "eve-writer")]
    EveWriter(RoleArgs),
    /// Rule tools.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Configuration tools.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Is a role started on its own alive and serving? (container healthchecks and probes:
    /// exit 0 when it is, 1 with the reason when not)
    Probe(ProbeArgs),
    /// Drive a running stack through its control socket (as suricatasc).
    Ctl(CtlArgs),
}

/// `meerkat ctl`. Exit codes: 0 done, 1 the stack refused or failed the request (or
/// `health` is not serving; an unauthenticated call is refused: 1), 2 usage error (bad
/// flags, unreadable or invalid token or PEM file), 3 the stack is not reachable (nothing
/// listens, or no trusted TLS connection: the server's certificate is not signed by
/// `--tls-ca` or does not carry the expected name, or the stack refused the client
/// certificate, or TLS was expected and not spoken).
#[derive(Debug, Args, Clone)]
pub struct CtlArgs {
    /// Control socket of the stack (default: $MEERKAT_CONTROL_SOCKET, else the only
    /// running stack's `<runtime-dir>/control.sock`, found under /dev/shm/meerkat-*).
    #[arg(long, value_name = "PATH", env = "MEERKAT_CONTROL_SOCKET")]
    pub socket: Option<PathBuf>,
    /// Talk to the control API on TCP (`host:port`, `control.listen`) instead.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "socket")]
    pub connect: Option<String>,
    /// Bearer token for TCP (`control.token-file` of the stack).
    #[arg(long, value_name = "FILE", env = "MEERKAT_CONTROL_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// Speak TLS on `--connect`, trusting the CA certificates of this PEM file (the stack
    /// has `control.tls-cert`). Without it, `--connect` is plain text.
    #[arg(long, value_name = "PEM", requires = "connect")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS (the stack has `control.tls-client-ca`).
    #[arg(long, value_name = "PEM", requires_all = ["tls_ca", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of `--tls-cert`.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The name the stack's certificate must carry (default: the host of `--connect`).
    #[arg(long, value_name = "NAME", requires = "tls_ca")]
    pub tls_server_name: Option<String>,
    /// Print the reply as JSON (one object) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Give up on the request after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,
    #[command(subcommand)]
    pub command: CtlCommand,
}

#[derive(Debug, Subcommand, Clone)]
pub enum CtlCommand {
    /// Whether the stack serves (grpc.health.v1): exit 0 when serving.
    Health,
    /// Roles, pids, uptime, restarts, ruleset generation, inputs.
    Status,
    /// Every counter of every role.
    Stats {
        /// Only roles whose name starts with this (`detect`, `capture`, `eve-writer`).
        #[arg(long)]
        role: Option<String>,
    },
    /// Load the rules again (or these files instead) and swap them in every worker.
    ReloadRules {
        /// Swap even if some rules do not load (default: refuse and keep the old set).
        #[arg(long)]
        allow_errors: bool,
        /// Rule files to load instead of the configured ones.
        files: Vec<PathBuf>,
    },
    /// Return once every event produced so far is written by the eve-writer.
    Flush {
        /// Give up after this many milliseconds.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u32,
    },
    /// Drain and stop the stack (as SIGTERM).
    Shutdown,
    /// Queue a pcap file or directory (as suricatasc's pcap-file).
    AddPcap { path: PathBuf },
    /// Restart one detect worker; it resumes its ring.
    RestartWorker { worker: u32 },
    /// A dataset of the `dataset`/`datarep` keywords, as Suricata's socket commands
    /// (`dataset add dns-seen string ZXhhbXBsZS5jb20=`; strings base64, digests hex,
    /// addresses as text): exit 1 when the reply is not OK.
    Dataset {
        /// add, remove, lookup, clear, dump.
        command: String,
        /// The set's name (not needed by dump).
        #[arg(default_value = "")]
        name: String,
        /// string, md5, sha256, ipv4, ip (not needed by dump).
        #[arg(default_value = "")]
        kind: String,
        /// The value (not needed by clear and dump).
        #[arg(default_value = "")]
        value: String,
    },
    /// Packet sources.
    ListInterfaces,
    /// Counters of one packet source (default: the current one).
    InterfaceStats { name: Option<String> },
}

#[derive(Debug, Args, Default, Clone, PartialEq)]
pub struct RunArgs {
    /// Configuration file (suricata.yaml style).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Read packets from this pcap/pcapng file, or every file of this directory (each file
    /// once, across runs with the same log directory: see `scanner.registry`), or the
    /// files a pattern matches (`'/data/**/*.pcap'`).
    #[arg(short = 'r', value_name = "PCAP", conflicts_with_all = ["interface", "dpdk"])]
    pub pcap: Vec<PathBuf>,
    /// Capture live from this interface (AF_PACKET; settings from its `af-packet` entry)
    /// until SIGTERM/SIGINT.
    #[arg(short = 'i', value_name = "IFACE", conflicts_with = "dpdk")]
    pub interface: Option<String>,
    /// Capture live from the DPDK port of the `dpdk` section until SIGTERM/SIGINT.
    #[arg(long)]
    pub dpdk: bool,
    /// Use only this rule file (repeat for more); replaces `rule-files`.
    #[arg(short = 'S', value_name = "RULES")]
    pub exclusive_rules: Vec<PathBuf>,
    /// Load this rule file in addition to `rule-files` (repeat for more).
    #[arg(short = 's', value_name = "RULES")]
    pub extra_rules: Vec<PathBuf>,
    /// Log directory (EVE goes here).
    #[arg(short = 'l', value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Checksum validation: `none` turns it off, `all` forces it on.
    #[arg(short = 'k', value_name = "all|none", value_parser = ["all", "none", "auto"])]
    pub checksum: Option<String>,
    /// Override a config key: --set stream.midstream=true (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Number of detect worker processes (default: number of CPUs).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Keep watching directory inputs for new and growing files until stopped
    /// (`pcap-file.continuous`).
    #[arg(long, conflicts_with_all = ["interface", "dpdk"])]
    pub pcap_file_continuous: bool,
    /// Read the subdirectories of directory inputs too (`pcap-file.recursive`).
    #[arg(long, conflicts_with_all = ["interface", "dpdk"])]
    pub pcap_file_recursive: bool,
    /// Delete each input file once it is processed (`pcap-file.delete-when-done`).
    #[arg(long, conflicts_with_all = ["interface", "dpdk"])]
    pub pcap_file_delete: bool,
    /// Accepted for Suricata command lines; Meerkat always runs its process layout.
    #[arg(long, value_name = "MODE", hide = true)]
    pub runmode: Option<String>,
    /// Accepted for Suricata command lines; IPS simulation is not available (ignored with a warning).
    #[arg(long, hide = true)]
    pub simulate_ips: bool,
    /// Also write the end-of-run summary (counts, CPU and memory per role) as JSON here.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Read the BPF filter from this file (`#` starts a comment); not with a filter
    /// expression after the options.
    #[arg(short = 'F', value_name = "FILE")]
    pub bpf_file: Option<PathBuf>,
    /// BPF filter expression (pcap syntax, as tcpdump's), after the options:
    /// `meerkat run -i eth0 not host 10.0.0.5`. Applies to every capture method and to
    /// `-r` files, in place of an interface's `bpf-filter`.
    #[arg(value_name = "BPF", trailing_var_arg = true)]
    pub bpf_filter: Vec<String>,
    /// Test the configuration and the rules, then exit: 0 when they load, 1 with every
    /// problem (as `suricata -T`, which suricata-update runs).
    #[arg(short = 'T')]
    pub test: bool,
    /// Print the resolved configuration as Suricata's `key = value` lines and exit.
    #[arg(long)]
    pub dump_config: bool,
    /// Write a report per rule (rules.json, rules_analysis.txt) to the log directory and
    /// exit.
    #[arg(long)]
    pub engine_analysis: bool,
    /// A rule that does not load is an error that stops the start (and fails -T).
    #[arg(long)]
    pub init_errors_fatal: bool,
    /// Suricata's unix-socket run mode: no input of its own; loads the rules once and
    /// reads the pcaps that the socket's `pcap-file` commands queue, each into its own
    /// output directory (socket: PATH, else `unix-command.filename`).
    #[arg(long, value_name = "PATH", num_args = 0..=1, require_equals = true, default_missing_value = "", conflicts_with_all = ["pcap", "interface", "dpdk"])]
    pub unix_socket: Option<PathBuf>,
    /// Run in the background (as `suricata -D`): returns once the stack runs; logs go to
    /// `<log-dir>/meerkat.log`.
    #[arg(short = 'D')]
    pub daemon: bool,
    /// Write the supervisor's pid to this file (removed at exit).
    #[arg(long, value_name = "FILE")]
    pub pidfile: Option<PathBuf>,
    /// Suricata's `--af-packet[=IFACE]`: capture from IFACE, or the first interface of
    /// the `af-packet` section.
    #[arg(long, value_name = "IFACE", num_args = 0..=1, require_equals = true, default_missing_value = "", conflicts_with_all = ["pcap", "interface", "dpdk"])]
    pub af_packet: Option<String>,
    /// Suricata's `--user`: the user capture switches to (`run-as.user`).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// Suricata's `--group` (`run-as.group`).
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,
}

impl RunArgs {
    /// Whether nothing was given (a bare `meerkat` runs the sample).
    pub fn is_empty(&self) -> bool {
        *self == RunArgs::default()
    }
}

#[derive(Debug, Args, Clone)]
pub struct RoleArgs {
    /// Configuration file; `meerkat run` hands each role its resolved config.
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override a config key (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct ProbeArgs {
    /// The role: eve-writer, capture or detect-N.
    #[arg(value_name = "ROLE")]
    pub role: meerkat_runtime::Role,
    /// Configuration file of the role (for `runtime-dir`).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override a config key (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct CaptureArgs {
    #[command(flatten)]
    pub role: RoleArgs,
    /// Pcap files or directories to read.
    #[arg(short = 'r', value_name = "PCAP", required_unless_present_any = ["interface", "dpdk"], conflicts_with_all = ["interface", "dpdk"])]
    pub pcap: Vec<PathBuf>,
    /// Continue the run of a capture that died: skip the packets the rings already have.
    #[arg(long)]
    pub resume: bool,
    /// Leave the rings open at the end (the supervisor ends them).
    #[arg(long)]
    pub keep_open: bool,
    /// Capture live from this interface (AF_PACKET) until SIGTERM/SIGINT.
    #[arg(short = 'i', value_name = "IFACE", conflicts_with = "dpdk")]
    pub interface: Option<String>,
    /// Capture live from the DPDK port of the `dpdk` section until SIGTERM/SIGINT.
    #[arg(long)]
    pub dpdk: bool,
}

#[derive(Debug, Args, Clone)]
pub struct DetectArgs {
    #[command(flatten)]
    pub role: RoleArgs,
    /// Index of this worker (its ring is `ring-<N>`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub worker: usize,
    /// Ruleset generation to report for the configured rules (after live reloads).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub generation: u64,
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Parse rule files and report every problem, without running.
    Check {
        /// Rule files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Configuration (for variables and the classification table).
        #[arg(short = 'c', long = "config", value_name = "FILE")]
        config: Option<PathBuf>,
        /// Override a config key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print only the summary, not each problem.
        #[arg(long)]
        summary: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate a configuration file (with overrides) and print the resolved config.
    Check {
        file: PathBuf,
        /// Override a config key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print the resolved configuration.
        #[arg(long)]
        print: bool,
    },
}

impl From<RunArgs> for meerkat_supervisor::RunOptions {
    fn from(a: RunArgs) -> Self {
        let mut set = Vec::new();
        if let Some(u) = &a.user {
            set.push(format!("run-as.user={u}"));
        }
        if let Some(g) = &a.group {
            set.push(format!("run-as.group={g}"));
        }
        set.extend(a.set);
        let af_packet_default = a.af_packet.as_deref() == Some("");
        meerkat_supervisor::RunOptions {
            config: a.config,
            pcap: a.pcap,
            interface: a.interface.or(a.af_packet.filter(|i| !i.is_empty())),
            af_packet_default,
            dpdk: a.dpdk,
            exclusive_rules: a.exclusive_rules,
            extra_rules: a.extra_rules,
            log_dir: a.log_dir,
            checksum: a.checksum,
            set,
            workers: a.workers,
            pcap_file_continuous: a.pcap_file_continuous,
            pcap_file_recursive: a.pcap_file_recursive,
            pcap_file_delete: a.pcap_file_delete,
            runmode: a.runmode,
            simulate_ips: a.simulate_ips,
            summary_json: a.summary_json,
            bpf_filter: a.bpf_filter,
            bpf_file: a.bpf_file,
            init_errors_fatal: a.init_errors_fatal,
            unix_socket: a.unix_socket.is_some(),
            unix_socket_path: a.unix_socket.filter(|p| !p.as_os_str().is_empty()),
            ready_fd: None,
        }
    }
}

impl CtlArgs {
    /// The connection options and the request, for `meerkat_ctl::run`.
    pub fn into_parts(self) -> (meerkat_ctl::CtlOptions, meerkat_ctl::Command) {
        use meerkat_ctl::Command as C;
        let command = match self.command {
            CtlCommand::Health => C::Health,
            CtlCommand::Status => C::Status,
            CtlCommand::Stats { role } => C::Stats { role },
            CtlCommand::ReloadRules {
                allow_errors,
                files,
            } => C::ReloadRules {
                allow_errors,
                files,
            },
            CtlCommand::Flush { timeout_ms } => C::Flush { timeout_ms },
            CtlCommand::Shutdown => C::Shutdown,
            CtlCommand::AddPcap { path } => C::AddPcap { path },
            CtlCommand::RestartWorker { worker } => C::RestartWorker { worker },
            CtlCommand::Dataset {
                command,
                name,
                kind,
                value,
            } => C::Dataset {
                command,
                name,
                kind,
                value,
            },
            CtlCommand::ListInterfaces => C::ListInterfaces,
            CtlCommand::InterfaceStats { name } => C::InterfaceStats { name },
        };
        let options = meerkat_ctl::CtlOptions {
            socket: self.socket,
            connect: self.connect,
            token_file: self.token_file,
            tls_ca: self.tls_ca,
            tls_cert: self.tls_cert,
            tls_key: self.tls_key,
            tls_server_name: self.tls_server_name,
            json: self.json,
            timeout: self.timeout,
        };
        (options, command)
    }
}
