//! The sample capture that ships with Meerkat (`sample/sample.pcap`) and that
//! `meerkat run` with no arguments inspects with `sample/sample.rules`.
//!
//! A small office network (192.168.1.0/24, 2001:db8::/64) on one morning: some ordinary
//! web, DNS and TLS, and a handful of things a sensor should flag — a scanner's
//! User-Agent and a path traversal, SQL injection in a login form, a dynamic-DNS lookup,
//! TLS to a `.top` domain, a web shell command over IPv6 and a failed `su` in syslog on
//! a VLAN.

use std::net::{IpAddr, SocketAddr};

use crate::Frame;
use crate::pcap::{self, Format, LINKTYPE_ETHERNET};
use crate::session::{self, TcpSession};

/// 2024-01-15T10:00:00Z.
const BASE_NS: u64 = 1_705_312_800 * 1_000_000_000;
const MS: u64 = 1_000_000;

fn sa(s: &str) -> SocketAddr {
    s.parse().expect("sample addresses are valid")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("sample addresses are valid")
}

/// A DNS query message for `name`, type `qtype`, with transaction id `id`.
pub fn dns_query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.push(0);
    m.extend_from_slice(&qtype.to_be_bytes());
    m.extend_from_slice(&1u16.to_be_bytes());
    m
}

/// The response to [`dns_query`] with one A record (name compressed to the question).
pub fn dns_response_a(id: u16, name: &str, addr: [u8; 4]) -> Vec<u8> {
    let mut m = dns_query(id, name, 1);
    m[2] = 0x81;
    m[3] = 0x80;
    m[7] = 1; // ancount
    m.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4]);
    m.extend_from_slice(&addr);
    m
}

/// A TLS 1.2-record ClientHello offering TLS 1.3 with `sni`.
pub fn tls_client_hello(sni: &str, seed: u8) -> Vec<u8> {
    let mut ext = Vec::new();
    let mut push_ext = |ty: u16, body: &[u8]| {
        ext.extend_from_slice(&ty.to_be_bytes());
        ext.extend_from_slice(&(body.len() as u16).to_be_bytes());
        ext.extend_from_slice(body);
    };
    let mut sn = Vec::new();
    sn.extend_from_slice(&((sni.len() + 3) as u16).to_be_bytes());
    sn.push(0);
    sn.extend_from_slice(&(sni.len() as u16).to_be_bytes());
    sn.extend_from_slice(sni.as_bytes());
    push_ext(0x0000, &sn);
    push_ext(0x000a, &[0, 6, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x18]);
    push_ext(0x000b, &[1, 0]);
    push_ext(0x000d, &[0, 6, 0x04, 0x03, 0x08, 0x04, 0x04, 0x01]);
    push_ext(0x002b, &[4, 0x03, 0x04, 0x03, 0x03]);
    let mut hello = Vec::new();
    hello.extend_from_slice(&[0x03, 0x03]);
    hello.extend((0..32u8).map(|i| i.wrapping_mul(37).wrapping_add(seed)));
    hello.push(0); // session id
    let suites: [u16; 5] = [0x1301, 0x1302, 0xc02f, 0xc030, 0x009c];
    hello.extend_from_slice(&((suites.len() * 2) as u16).to_be_bytes());
    for s in suites {
        hello.extend_from_slice(&s.to_be_bytes());
    }
    hello.extend_from_slice(&[1, 0]); // compression: null
    hello.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    hello.extend_from_slice(&ext);
    let mut hs = vec![1u8];
    hs.extend_from_slice(&(hello.len() as u32).to_be_bytes()[1..]);
    hs.extend_from_slice(&hello);
    let mut rec = vec![0x16, 0x03, 0x01];
    rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    rec.extend_from_slice(&hs);
    rec
}

fn http_response(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nServer: nginx/1.24.0\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn http_conversation(
    client: &str,
    server: &str,
    start_ns: u64,
    request: &[u8],
    response: &[u8],
    vlan: Option<u16>,
) -> Vec<Frame> {
    let mut s = TcpSession::new(sa(client), sa(server), start_ns);
    if let Some(v) = vlan {
        s = s.vlan(v);
    }
    s.handshake();
    s.client_sends(request);
    s.server_sends(response);
    s.close();
    s.into_frames()
}

/// Every frame of the sample, in time order.
pub fn sample_frames() -> Vec<Frame> {
    let t = |ms: u64| BASE_NS + ms * MS;
    let mut convs = Vec::new();

    // Ordinary browsing.
    convs.push(session::udp_exchange(
        sa("192.168.1.10:53001"),
        sa("192.168.1.1:53"),
        t(0),
        2 * MS,
        &dns_query(0x1a2b, "www.example.com", 1),
        Some(&dns_response_a(
            0x1a2b,
            "www.example.com",
            [93, 184, 216, 34],
        )),
        None,
    ));
    convs.push(http_conversation(
        "192.168.1.10:49152",
        "93.184.216.34:80",
        t(10),
        b"GET / HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0\r\nAccept: text/html\r\n\r\n",
        &http_response("200 OK", "<html><body><h1>Example Domain</h1></body></html>"),
        None,
    ));

    // A scanner probing for path traversal.
    convs.push(http_conversation(
        "192.168.1.23:51200",
        "203.0.113.80:80",
        t(120),
        b"GET /cgi-bin/../../../../etc/passwd HTTP/1.1\r\nHost: 203.0.113.80\r\nUser-Agent: sqlmap/1.7.2#stable (https://sqlmap.org)\r\nAccept: */*\r\n\r\n",
        &http_response("404 Not Found", "<html><body>Not Found</body></html>"),
        None,
    ));

    // SQL injection in a login form.
    let body = "user=admin%27+UNION+SELECT+password+FROM+users--&pass=x";
    let post = format!(
        "POST /login.php HTTP/1.1\r\nHost: intranet.example.lan\r\nUser-Agent: Mozilla/5.0\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    convs.push(http_conversation(
        "192.168.1.23:51210",
        "192.168.1.80:80",
        t(250),
        post.as_bytes(),
        &http_response("302 Found", ""),
        None,
    ));

    // A dynamic-DNS lookup, typical of malware command and control.
    convs.push(session::udp_exchange(
        sa("192.168.1.42:53100"),
        sa("9.9.9.9:53"),
        t(400),
        15 * MS,
        &dns_query(0x7c01, "c2-node7.duckdns.org", 1),
        Some(&dns_response_a(
            0x7c01,
            "c2-node7.duckdns.org",
            [198, 51, 100, 7],
        )),
        None,
    ));

    // TLS to a .top domain.
    let mut tls = TcpSession::new(sa("192.168.1.42:49160"), sa("198.51.100.20:443"), t(450));
    tls.handshake();
    tls.client_sends(&tls_client_hello("update.malware-cdn.top", 7));
    // ServerHello (TLS 1.2 record, TLS 1.3 via supported_versions) is opaque here.
    tls.server_sends(&[0x16, 0x03, 0x03, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00]);
    tls.close();
    convs.push(tls.into_frames());

    // Ping.
    convs.push(session::ping(
        ip("192.168.1.10"),
        ip("8.8.8.8"),
        t(600),
        0x0042,
        b"meerkat sample ping 0123456789abcdef",
    ));

    // A web shell command over IPv6.
    convs.push(http_conversation(
        "[2001:db8::10]:49170",
        "[2001:db8::80]:8080",
        t(700),
        b"GET /uploads/shell.php?cmd=cat+/etc/shadow HTTP/1.1\r\nHost: [2001:db8::80]:8080\r\nUser-Agent: curl/8.4.0\r\nAccept: */*\r\n\r\n",
        &http_response("200 OK", "root:*:19000:0:99999:7:::"),
        None,
    ));

    // Syslog on VLAN 100: a failed su.
    convs.push(session::udp_exchange(
        sa("192.168.1.20:514"),
        sa("192.168.1.5:514"),
        t(800),
        0,
        b"<34>Jan 15 10:00:00 fileserver su: 'su root' failed for mallory on /dev/pts/8",
        None,
        Some(100),
    ));

    session::interleave(convs)
}

/// The sample capture: classic pcap, microsecond timestamps, Ethernet.
pub fn sample_pcap() -> Vec<u8> {
    pcap::to_bytes(
        &sample_frames(),
        Format::Micro { big_endian: false },
        LINKTYPE_ETHERNET,
    )
}

/// Rules that fire on the sample (and nothing that fires on its ordinary traffic).
pub const SAMPLE_RULES: &str = include_str!("../../sample/sample.rules");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_sample_is_what_the_generator_makes() {
        let committed = include_bytes!("../../sample/sample.pcap");
        assert!(
            committed[..] == sample_pcap()[..],
            "sample/sample.pcap is stale: run `cargo run -p meerkat-synth --example make-sample`"
        );
    }

    #[test]
    fn client_hello_lengths_are_consistent() {
        let r = tls_client_hello("a.example", 0);
        let rec_len = u16::from_be_bytes([r[3], r[4]]) as usize;
        assert_eq!(rec_len + 5, r.len());
        let hs_len = u32::from_be_bytes([0, r[6], r[7], r[8]]) as usize;
        assert_eq!(hs_len + 4, rec_len);
    }
}
