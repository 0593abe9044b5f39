//! Issue 8's security of the control API on TCP, end to end: TLS (rustls) on
//! `control.listen` with a bearer token, mutual TLS with `control.tls-client-ca`, and
//! `meerkat ctl --connect --tls-ca/--tls-cert/--tls-key/--tls-server-name`. A CA, the
//! stack's certificate and client certificates are made at test time (rcgen); everything
//! talks on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::stack::*;
use common::*;

const RULE: &str =
    "alert udp any any -> any 53 (msg:\"marker\"; content:\"MARKER\"; sid:7; rev:1;)\n";
const TOKEN: &str = "s3cret-token-of-the-tls-test\n";

/// Certificates of one test, as PEM files in `dir`: `ca.pem` signed `server.pem`
/// (127.0.0.1 and meerkat.test) and `client.pem`; `rogue-ca.pem` is another CA that signed
/// `rogue-server.pem` and `rogue-client.pem`.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new(dir: &Path) -> Pki {
        let dir = dir.join("pki");
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: String| std::fs::write(dir.join(name), text).unwrap();
        for ca_name in ["ca", "rogue-ca"] {
            let ca_key = rcgen::KeyPair::generate().unwrap();
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, format!("meerkat test {ca_name}"));
            write(
                &format!("{ca_name}.pem"),
                params.self_signed(&ca_key).unwrap().pem(),
            );
            let issuer = rcgen::Issuer::new(params, ca_key);
            let prefix = if ca_name == "ca" { "" } else { "rogue-" };
            for (name, sans) in [
                ("server", vec!["127.0.0.1", "meerkat.test"]),
                ("client", vec!["ctl.meerkat.test"]),
            ] {
                let key = rcgen::KeyPair::generate().unwrap();
                let sans: Vec<String> = sans.into_iter().map(String::from).collect();
                let cert = rcgen::CertificateParams::new(sans)
                    .unwrap()
                    .signed_by(&key, &issuer)
                    .unwrap();
                write(&format!("{prefix}{name}.pem"), cert.pem());
                write(&format!("{prefix}{name}.key"), key.serialize_pem());
            }
        }
        Pki { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// `meerkat ctl --connect ADDR` with `args`.
fn tcp_ctl(addr: &str, args: &[&str]) -> Output {
    meerkat()
        .args(["ctl", "--timeout", "20", "--connect", addr])
        .args(args)
        .output()
        .unwrap()
}

/// Asserts the exit code and that stderr says `what`.
fn fails(out: &Output, code: i32, what: &str, case: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{case}: {}{}",
        stdout(out),
        stderr(out)
    );
    assert!(
        stderr(out).contains(what),
        "{case}: expected `{what}` in: {}",
        stderr(out)
    );
}

/// Starts a keep-running stack with `control.listen` on a free loopback port and the
/// given `control.*` settings; returns it and the address once its socket serves.
fn start(d: &Path, control: &[String]) -> (Running, String) {
    let rules = rules_file(d, "r.rules", RULE);
    let addr = format!("127.0.0.1:{}", free_port());
    let mut extra = vec![
        "--workers".to_string(),
        "1".to_string(),
        "--set".to_string(),
        format!("control.listen={addr}"),
    ];
    for c in control {
        extra.extend(["--set".to_string(), c.clone()]);
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let r = Running::serving(d, &rules, &extra);
    (r, addr)
}

/// `meerkat ctl shutdown` over TCP with the authentication `auth`; the stack must exit 0.
fn shut_down_over_tcp(r: Running, addr: &str, auth: &[&str]) {
    let mut args = auth.to_vec();
    args.push("shutdown");
    let bye = tcp_ctl(addr, &args);
    assert!(bye.status.success(), "{}", stderr(&bye));
    let (out, _) = r.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn tls_with_a_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pki = Pki::new(d);
    let token = d.join("token");
    std::fs::write(&token, TOKEN).unwrap();
    let token = token.display().to_string();
    let (r, addr) = start(
        d,
        &[
            format!("control.tls-cert={}", pki.path("server.pem")),
            format!("control.tls-key={}", pki.path("server.key")),
            format!("control.token-file={token}"),
        ],
    );
    let ca = pki.path("ca.pem");

    // The right CA and token: served.
    let ok = tcp_ctl(
        &addr,
        &["--json", "--tls-ca", &ca, "--token-file", &token, "status"],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    let v: serde_json::Value = serde_json::from_str(&stdout(&ok)).unwrap();
    assert_eq!(v["state"], "idle");
    // Health on TCP takes the token too.
    let h = tcp_ctl(&addr, &["--tls-ca", &ca, "--token-file", &token, "health"]);
    assert!(h.status.success(), "{}", stderr(&h));
    assert_eq!(stdout(&h).trim(), "serving");

    // A CA that did not sign the stack's certificate: no trusted connection (exit 3).
    let rogue = tcp_ctl(
        &addr,
        &[
            "--tls-ca",
            &pki.path("rogue-ca.pem"),
            "--token-file",
            &token,
            "status",
        ],
    );
    fails(&rogue, 3, "invalid peer certificate", "wrong CA");
    fails(&rogue, 3, "--tls-ca", "wrong CA names the flag");

    // The certificate is for 127.0.0.1 and meerkat.test, not another name.
    let name = tcp_ctl(
        &addr,
        &[
            "--tls-ca",
            &ca,
            "--tls-server-name",
            "other.test",
            "--token-file",
            &token,
            "status",
        ],
    );
    fails(&name, 3, "invalid peer certificate", "wrong server name");
    let named = tcp_ctl(
        &addr,
        &[
            "--tls-ca",
            &ca,
            "--tls-server-name",
            "meerkat.test",
            "--token-file",
            &token,
            "status",
        ],
    );
    assert!(named.status.success(), "{}", stderr(&named));

    // TLS without the token, or with another one: refused by the stack (exit 1).
    let wrong_token = d.join("wrong");
    std::fs::write(&wrong_token, "not-the-token-of-the-tls-test\n").unwrap();
    for (case, args) in [
        ("no token", vec!["--tls-ca", ca.as_str(), "status"]),
        ("no token, health", vec!["--tls-ca", ca.as_str(), "health"]),
        (
            "no token, shutdown",
            vec!["--tls-ca", ca.as_str(), "shutdown"],
        ),
        (
            "wrong token",
            vec![
                "--tls-ca",
                ca.as_str(),
                "--token-file",
                wrong_token.to_str().unwrap(),
                "status",
            ],
        ),
    ] {
        fails(&tcp_ctl(&addr, &args), 1, "Unauthenticated", case);
    }

    // Plain text against the TLS port: no connection (exit 3), and the stack keeps serving.
    let plain = tcp_ctl(&addr, &["--token-file", &token, "status"]);
    fails(&plain, 3, "give --tls-ca", "plain text against TLS");
    // Raw bytes that are not TLS, then a connection that closes mid-handshake.
    {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        // The server answers with a TLS alert or just closes; it never serves HTTP.
        let mut back = Vec::new();
        let _ = s.read_to_end(&mut back);
        assert!(
            !String::from_utf8_lossy(&back).contains("HTTP/"),
            "{back:?}"
        );
        let mut half = std::net::TcpStream::connect(&addr).unwrap();
        // The start of a TLS ClientHello record, then gone.
        half.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
            .unwrap();
    }
    let again = tcp_ctl(&addr, &["--tls-ca", &ca, "--token-file", &token, "status"]);
    assert!(
        again.status.success(),
        "after plain text: {}",
        stderr(&again)
    );
    assert!(r.ctl(&["health"]).status.success());

    shut_down_over_tcp(r, &addr, &["--tls-ca", &ca, "--token-file", &token]);
}

#[test]
fn mutual_tls_needs_a_client_certificate_of_the_ca() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pki = Pki::new(d);
    // No token: the client certificate is what authenticates.
    let (r, addr) = start(
        d,
        &[
            format!("control.tls-cert={}", pki.path("server.pem")),
            format!("control.tls-key={}", pki.path("server.key")),
            format!("control.tls-client-ca={}", pki.path("ca.pem")),
        ],
    );
    let ca = pki.path("ca.pem");
    let (cert, key) = (pki.path("client.pem"), pki.path("client.key"));
    let (rogue_cert, rogue_key) = (pki.path("rogue-client.pem"), pki.path("rogue-client.key"));

    let none = tcp_ctl(&addr, &["--tls-ca", &ca, "status"]);
    fails(
        &none,
        3,
        "give --tls-cert and --tls-key",
        "no client certificate",
    );
    let rogue = tcp_ctl(
        &addr,
        &[
            "--tls-ca",
            &ca,
            "--tls-cert",
            &rogue_cert,
            "--tls-key",
            &rogue_key,
            "status",
        ],
    );
    fails(
        &rogue,
        3,
        "may not accept this client certificate",
        "client certificate of another CA",
    );
    // A key that is not the certificate's is caught before connecting (usage, exit 2).
    let mixed = tcp_ctl(
        &addr,
        &[
            "--tls-ca",
            &ca,
            "--tls-cert",
            &cert,
            "--tls-key",
            &rogue_key,
            "status",
        ],
    );
    fails(
        &mixed,
        2,
        "does not go with --tls-cert",
        "mismatched client key",
    );

    let ok = tcp_ctl(
        &addr,
        &[
            "--json",
            "--tls-ca",
            &ca,
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "status",
        ],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    let v: serde_json::Value = serde_json::from_str(&stdout(&ok)).unwrap();
    assert_eq!(v["state"], "idle");
    shut_down_over_tcp(
        r,
        &addr,
        &["--tls-ca", &ca, "--tls-cert", &cert, "--tls-key", &key],
    );
}

#[test]
fn a_bad_tls_file_or_missing_authentication_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pki = Pki::new(d);
    let rules = rules_file(d, "r.rules", RULE);
    let addr = format!("127.0.0.1:{}", free_port());
    let token = d.join("token");
    std::fs::write(&token, TOKEN).unwrap();
    let token = format!("control.token-file={}", token.display());
    let listen = format!("control.listen={addr}");
    let run = |sets: &[String]| {
        let mut cmd = meerkat();
        cmd.current_dir(d)
            .args(["-q", "run", "-S", rules.to_str().unwrap()]);
        cmd.args(["--set", "supervisor.keep-running=yes"]);
        cmd.args(["-l", d.join("logs").to_str().unwrap()]);
        cmd.args(["--set", &format!("runtime-dir={}", d.join("rt").display())]);
        for s in sets {
            cmd.args(["--set", s]);
        }
        cmd.output().unwrap()
    };
    let cert = |p: &str| format!("control.tls-cert={}", pki.path(p));
    let key = |p: &str| format!("control.tls-key={}", pki.path(p));
    for (case, sets, what) in [
        (
            "missing certificate file",
            vec![
                listen.clone(),
                token.clone(),
                cert("nope.pem"),
                key("server.key"),
            ],
            format!("cannot read control.tls-cert {}", pki.path("nope.pem")),
        ),
        (
            "a key where the certificate goes",
            vec![
                listen.clone(),
                token.clone(),
                cert("server.key"),
                key("server.key"),
            ],
            format!(
                "control.tls-cert {} holds no certificate",
                pki.path("server.key")
            ),
        ),
        (
            "the key of another certificate",
            vec![
                listen.clone(),
                token.clone(),
                cert("server.pem"),
                key("client.key"),
            ],
            format!(
                "control.tls-key {} does not go with",
                pki.path("client.key")
            ),
        ),
        (
            "TLS without a token or client CA",
            vec![listen.clone(), cert("server.pem"), key("server.key")],
            "control.listen needs control.token-file and/or control.tls-client-ca".to_string(),
        ),
        (
            "TCP without TLS or token",
            vec![listen.clone()],
            "control.listen needs control.token-file".to_string(),
        ),
    ] {
        let out = run(&sets);
        fails(&out, 2, &what, case);
    }
    // Nothing was left listening.
    assert!(std::net::TcpStream::connect(&addr).is_err());
}
