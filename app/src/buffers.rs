//! The inspection buffers that app-layer protocols provide, and the rule keywords that
//! select them.
//!
//! A rule selects a buffer with a sticky-buffer keyword (`http.uri; content:"/x";`) or,
//! for the older HTTP keywords, with a content modifier (`content:"/x"; http_uri;`). Some
//! keywords mean a different buffer per direction: `http.header` is the request's headers
//! for a `to_server` rule and the response's for a `to_client` one; the table names one
//! buffer per direction.

use super::AppProto;

/// Items of a multi-buffer inspected at most (e.g. DNS questions, certificates).
pub const MAX_ITEMS: usize = 256;

/// An inspection buffer. The numbering is internal (not a wire contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u16);

impl BufferId {
    // HTTP request side.
    pub const HTTP_URI: BufferId = BufferId(1);
    pub const HTTP_URI_RAW: BufferId = BufferId(2);
    pub const HTTP_METHOD: BufferId = BufferId(3);
    pub const HTTP_PROTOCOL_REQ: BufferId = BufferId(4);
    pub const HTTP_REQUEST_LINE: BufferId = BufferId(5);
    pub const HTTP_HOST: BufferId = BufferId(6);
    pub const HTTP_HOST_RAW: BufferId = BufferId(7);
    pub const HTTP_USER_AGENT: BufferId = BufferId(8);
    pub const HTTP_HEADER_REQ: BufferId = BufferId(9);
    pub const HTTP_HEADER_RAW_REQ: BufferId = BufferId(10);
    pub const HTTP_HEADER_NAMES_REQ: BufferId = BufferId(11);
    pub const HTTP_COOKIE_REQ: BufferId = BufferId(12);
    pub const HTTP_ACCEPT: BufferId = BufferId(13);
    pub const HTTP_ACCEPT_ENC: BufferId = BufferId(14);
    pub const HTTP_ACCEPT_LANG: BufferId = BufferId(15);
    pub const HTTP_REFERER: BufferId = BufferId(16);
    pub const HTTP_CONTENT_TYPE_REQ: BufferId = BufferId(17);
    pub const HTTP_CONTENT_LEN_REQ: BufferId = BufferId(18);
    pub const HTTP_CONNECTION_REQ: BufferId = BufferId(19);
    pub const HTTP_START_REQ: BufferId = BufferId(20);
    pub const HTTP_REQUEST_BODY: BufferId = BufferId(21);
    /// `http.request_header`: one item per header, `Name: value`.
    pub const HTTP_REQUEST_HEADER: BufferId = BufferId(22);
    /// `file.name` of the request's file (a request body): the URI path.
    pub const HTTP_FILE_NAME_REQ: BufferId = BufferId(23);
    // HTTP response side.
    pub const HTTP_STAT_CODE: BufferId = BufferId(40);
    pub const HTTP_STAT_MSG: BufferId = BufferId(41);
    pub const HTTP_RESPONSE_LINE: BufferId = BufferId(42);
    pub const HTTP_PROTOCOL_RESP: BufferId = BufferId(43);
    pub const HTTP_HEADER_RESP: BufferId = BufferId(44);
    pub const HTTP_HEADER_RAW_RESP: BufferId = BufferId(45);
    pub const HTTP_HEADER_NAMES_RESP: BufferId = BufferId(46);
    pub const HTTP_COOKIE_RESP: BufferId = BufferId(47);
    pub const HTTP_CONTENT_TYPE_RESP: BufferId = BufferId(48);
    pub const HTTP_CONTENT_LEN_RESP: BufferId = BufferId(49);
    pub const HTTP_CONNECTION_RESP: BufferId = BufferId(50);
    pub const HTTP_START_RESP: BufferId = BufferId(51);
    pub const HTTP_SERVER: BufferId = BufferId(52);
    pub const HTTP_LOCATION: BufferId = BufferId(53);
    /// The response body, decompressed (`http.response_body`, and `file_data` to_client).
    pub const HTTP_RESPONSE_BODY: BufferId = BufferId(54);
    /// `http.response_header`: one item per header, `Name: value`.
    pub const HTTP_RESPONSE_HEADER: BufferId = BufferId(55);
    /// `file.name` of the response's file (a response body): the Content-Disposition
    /// `filename=`, else the URI path.
    pub const HTTP_FILE_NAME_RESP: BufferId = BufferId(56);
    // DNS.
    /// `dns.query`: one item per question name.
    pub const DNS_QUERY: BufferId = BufferId(80);
    /// `dns.queries.rrname` in a response: one item per question name.
    pub const DNS_RESP_QUERIES: BufferId = BufferId(81);
    /// `dns.answers.rrname` in a request (rare, but Suricata inspects it).
    pub const DNS_REQ_ANSWERS: BufferId = BufferId(82);
    /// `dns.answers.rrname` in a response: one item per answer record name.
    pub const DNS_RESP_ANSWERS: BufferId = BufferId(83);
    /// `dns.response.rrname`: every name of a response: question names, the owner names
    /// of answer, authority and additional records, and the names in their rdata (CNAME,
    /// PTR, NS, DNAME targets, MX exchange, SRV target, SOA mname and rname).
    pub const DNS_RESPONSE_RRNAME: BufferId = BufferId(84);
    /// `dns.authorities.rrname`: one item per authority record name.
    pub const DNS_REQ_AUTHORITIES: BufferId = BufferId(85);
    pub const DNS_RESP_AUTHORITIES: BufferId = BufferId(86);
    /// `dns.additionals.rrname`: one item per additional record name.
    pub const DNS_REQ_ADDITIONALS: BufferId = BufferId(87);
    pub const DNS_RESP_ADDITIONALS: BufferId = BufferId(88);
    /// Not a sticky buffer: 1 byte, the opcode of the request (`dns.opcode`).
    pub const DNS_OPCODE_REQ: BufferId = BufferId(90);
    /// Not a sticky buffer: 1 byte, the opcode of the response.
    pub const DNS_OPCODE_RESP: BufferId = BufferId(91);
    // TLS.
    pub const TLS_SNI: BufferId = BufferId(100);
    pub const TLS_CERT_SUBJECT: BufferId = BufferId(101);
    pub const TLS_CERT_ISSUER: BufferId = BufferId(102);
    pub const TLS_CERT_SERIAL: BufferId = BufferId(103);
    pub const TLS_CERT_FINGERPRINT: BufferId = BufferId(104);
    pub const JA3_HASH: BufferId = BufferId(105);
    pub const JA3_STRING: BufferId = BufferId(106);
    pub const JA3S_HASH: BufferId = BufferId(107);
    pub const JA3S_STRING: BufferId = BufferId(108);
    /// `tls.certs`: one item per certificate (DER).
    pub const TLS_CERTS: BufferId = BufferId(109);
    /// `tls.subjectaltname`: one item per SAN.
    pub const TLS_SUBJECTALTNAME: BufferId = BufferId(110);
    pub const JA4_HASH: BufferId = BufferId(111);
    /// Not a sticky buffer: 2 bytes, big endian, of the TLS version the server chose
    /// (or the client offered, before the ServerHello), for `tls.version`/`ssl_version`.
    pub const TLS_VERSION_NUM: BufferId = BufferId(120);
    /// Not a sticky buffer: 1 byte, the bit set of `ssl_state` states seen
    /// (1 client_hello, 2 server_hello, 4 client_keyx, 8 server_keyx, 16 unknown).
    pub const TLS_STATE: BufferId = BufferId(121);
    /// `tls.random` of the ClientHello (32 bytes).
    pub const TLS_RANDOM_CLIENT: BufferId = BufferId(122);
    /// `tls.random` of the ServerHello.
    pub const TLS_RANDOM_SERVER: BufferId = BufferId(123);
    /// `tls.random_time`: the first 4 bytes of the ClientHello random.
    pub const TLS_RANDOM_TIME_CLIENT: BufferId = BufferId(124);
    pub const TLS_RANDOM_TIME_SERVER: BufferId = BufferId(125);
    /// `tls.random_bytes`: the last 28 bytes of the ClientHello random.
    pub const TLS_RANDOM_BYTES_CLIENT: BufferId = BufferId(126);
    pub const TLS_RANDOM_BYTES_SERVER: BufferId = BufferId(127);
    /// Not a sticky buffer: 2 bytes, big endian, the version the client's hello shows
    /// (`ssl_version` on `to_server`).
    pub const TLS_VERSION_CLIENT: BufferId = BufferId(128);
    /// Not a sticky buffer: the version the server's hello chose (`ssl_version` on
    /// `to_client`).
    pub const TLS_VERSION_SERVER: BufferId = BufferId(129);
    /// Not a sticky buffer: 8 bytes, big-endian i64 seconds since the epoch, the server
    /// certificate's notBefore (`tls_cert_notbefore`).
    pub const TLS_NOTBEFORE: BufferId = BufferId(130);
    /// Not a sticky buffer: the server certificate's notAfter (`tls_cert_notafter`).
    pub const TLS_NOTAFTER: BufferId = BufferId(131);
    // SSH: each side's identification line and KEXINIT.
    pub const SSH_PROTO_CLIENT: BufferId = BufferId(140);
    pub const SSH_PROTO_SERVER: BufferId = BufferId(141);
    pub const SSH_SOFTWARE_CLIENT: BufferId = BufferId(142);
    pub const SSH_SOFTWARE_SERVER: BufferId = BufferId(143);
    pub const SSH_HASSH: BufferId = BufferId(144);
    pub const SSH_HASSH_STRING: BufferId = BufferId(145);
    pub const SSH_HASSH_SERVER: BufferId = BufferId(146);
    pub const SSH_HASSH_SERVER_STRING: BufferId = BufferId(147);
}

/// A rule keyword that selects an inspection buffer.
#[derive(Debug, Clone, Copy)]
pub struct BufferDef {
    /// The sticky-buffer keyword.
    pub name: &'static str,
    /// Other sticky-buffer spellings.
    pub aliases: &'static [&'static str],
    /// The content-modifier spelling (`http_uri`), if the keyword has one.
    pub modifier: Option<&'static str>,
    pub proto: AppProto,
    /// The buffer a `to_server` rule inspects, if any.
    pub to_server: Option<BufferId>,
    /// The buffer a `to_client` rule inspects, if any.
    pub to_client: Option<BufferId>,
    /// Whether the buffer has several items (a rule matches if one item matches).
    pub multi: bool,
}

const fn def(
    name: &'static str,
    aliases: &'static [&'static str],
    modifier: Option<&'static str>,
    proto: AppProto,
    to_server: Option<BufferId>,
    to_client: Option<BufferId>,
    multi: bool,
) -> BufferDef {
    BufferDef {
        name,
        aliases,
        modifier,
        proto,
        to_server,
        to_client,
        multi,
    }
}

use AppProto::{Dns, Http, Llmnr, Ssh, Tls};
use BufferId as B;

/// Every buffer keyword.
pub const BUFFERS: &[BufferDef] = &[
    def(
        "http.uri",
        &["http_uri"],
        Some("http_uri"),
        Http,
        Some(B::HTTP_URI),
        None,
        false,
    ),
    def(
        "http.uri.raw",
        &["http_raw_uri"],
        Some("http_raw_uri"),
        Http,
        Some(B::HTTP_URI_RAW),
        None,
        false,
    ),
    def(
        "http.method",
        &["http_method"],
        Some("http_method"),
        Http,
        Some(B::HTTP_METHOD),
        None,
        false,
    ),
    def(
        "http.protocol",
        &["http_protocol"],
        None,
        Http,
        Some(B::HTTP_PROTOCOL_REQ),
        Some(B::HTTP_PROTOCOL_RESP),
        false,
    ),
    def(
        "http.request_line",
        &["http_request_line"],
        None,
        Http,
        Some(B::HTTP_REQUEST_LINE),
        None,
        false,
    ),
    def(
        "http.host",
        &["http_host"],
        Some("http_host"),
        Http,
        Some(B::HTTP_HOST),
        None,
        false,
    ),
    def(
        "http.host.raw",
        &["http_raw_host"],
        Some("http_raw_host"),
        Http,
        Some(B::HTTP_HOST_RAW),
        None,
        false,
    ),
    def(
        "http.user_agent",
        &["http_user_agent"],
        Some("http_user_agent"),
        Http,
        Some(B::HTTP_USER_AGENT),
        None,
        false,
    ),
    def(
        "http.header",
        &["http_header"],
        Some("http_header"),
        Http,
        Some(B::HTTP_HEADER_REQ),
        Some(B::HTTP_HEADER_RESP),
        false,
    ),
    def(
        "http.header.raw",
        &["http_raw_header"],
        Some("http_raw_header"),
        Http,
        Some(B::HTTP_HEADER_RAW_REQ),
        Some(B::HTTP_HEADER_RAW_RESP),
        false,
    ),
    def(
        "http.header_names",
        &["http_header_names"],
        None,
        Http,
        Some(B::HTTP_HEADER_NAMES_REQ),
        Some(B::HTTP_HEADER_NAMES_RESP),
        false,
    ),
    def(
        "http.cookie",
        &["http_cookie"],
        Some("http_cookie"),
        Http,
        Some(B::HTTP_COOKIE_REQ),
        Some(B::HTTP_COOKIE_RESP),
        false,
    ),
    def(
        "http.accept",
        &["http_accept"],
        None,
        Http,
        Some(B::HTTP_ACCEPT),
        None,
        false,
    ),
    def(
        "http.accept_enc",
        &["http_accept_enc"],
        None,
        Http,
        Some(B::HTTP_ACCEPT_ENC),
        None,
        false,
    ),
    def(
        "http.accept_lang",
        &["http_accept_lang"],
        None,
        Http,
        Some(B::HTTP_ACCEPT_LANG),
        None,
        false,
    ),
    def(
        "http.referer",
        &["http_referer"],
        None,
        Http,
        Some(B::HTTP_REFERER),
        None,
        false,
    ),
    def(
        "http.content_type",
        &["http_content_type"],
        None,
        Http,
        Some(B::HTTP_CONTENT_TYPE_REQ),
        Some(B::HTTP_CONTENT_TYPE_RESP),
        false,
    ),
    def(
        "http.content_len",
        &["http_content_len"],
        None,
        Http,
        Some(B::HTTP_CONTENT_LEN_REQ),
        Some(B::HTTP_CONTENT_LEN_RESP),
        false,
    ),
    def(
        "http.connection",
        &["http_connection"],
        None,
        Http,
        Some(B::HTTP_CONNECTION_REQ),
        Some(B::HTTP_CONNECTION_RESP),
        false,
    ),
    def(
        "http.start",
        &["http_start"],
        None,
        Http,
        Some(B::HTTP_START_REQ),
        Some(B::HTTP_START_RESP),
        false,
    ),
    def(
        "http.request_body",
        &["http_client_body"],
        Some("http_client_body"),
        Http,
        Some(B::HTTP_REQUEST_BODY),
        None,
        false,
    ),
    def(
        "http.request_header",
        &[],
        None,
        Http,
        Some(B::HTTP_REQUEST_HEADER),
        None,
        true,
    ),
    def(
        "http.stat_code",
        &["http_stat_code"],
        Some("http_stat_code"),
        Http,
        None,
        Some(B::HTTP_STAT_CODE),
        false,
    ),
    def(
        "http.stat_msg",
        &["http_stat_msg"],
        Some("http_stat_msg"),
        Http,
        None,
        Some(B::HTTP_STAT_MSG),
        false,
    ),
    def(
        "http.response_line",
        &["http_response_line"],
        None,
        Http,
        None,
        Some(B::HTTP_RESPONSE_LINE),
        false,
    ),
    def(
        "http.server",
        &["http_server"],
        None,
        Http,
        None,
        Some(B::HTTP_SERVER),
        false,
    ),
    def(
        "http.location",
        &["http_location"],
        None,
        Http,
        None,
        Some(B::HTTP_LOCATION),
        false,
    ),
    def(
        "http.response_body",
        &["http_server_body"],
        Some("http_server_body"),
        Http,
        None,
        Some(B::HTTP_RESPONSE_BODY),
        false,
    ),
    def(
        "http.response_header",
        &[],
        None,
        Http,
        None,
        Some(B::HTTP_RESPONSE_HEADER),
        true,
    ),
    // file_data: the HTTP body in the rule's direction (response body by default).
    def(
        "file.data",
        &["file_data"],
        None,
        Http,
        Some(B::HTTP_REQUEST_BODY),
        Some(B::HTTP_RESPONSE_BODY),
        false,
    ),
    // file.name: the name of the file an HTTP body carries, in the rule's direction
    // (Suricata's HTTP/1 file naming; multipart uploads are not split into files).
    def(
        "file.name",
        &[],
        None,
        Http,
        Some(B::HTTP_FILE_NAME_REQ),
        Some(B::HTTP_FILE_NAME_RESP),
        false,
    ),
    def(
        "dns.query",
        &["dns_query"],
        None,
        Dns,
        Some(B::DNS_QUERY),
        None,
        true,
    ),
    def(
        "dns.queries.rrname",
        &[],
        None,
        Dns,
        Some(B::DNS_QUERY),
        Some(B::DNS_RESP_QUERIES),
        true,
    ),
    def(
        "dns.answers.rrname",
        &[],
        None,
        Dns,
        Some(B::DNS_REQ_ANSWERS),
        Some(B::DNS_RESP_ANSWERS),
        true,
    ),
    def(
        "dns.response.rrname",
        &[],
        None,
        Dns,
        None,
        Some(B::DNS_RESPONSE_RRNAME),
        true,
    ),
    def(
        "dns.authorities.rrname",
        &[],
        None,
        Dns,
        Some(B::DNS_REQ_AUTHORITIES),
        Some(B::DNS_RESP_AUTHORITIES),
        true,
    ),
    def(
        "dns.additionals.rrname",
        &[],
        None,
        Dns,
        Some(B::DNS_REQ_ADDITIONALS),
        Some(B::DNS_RESP_ADDITIONALS),
        true,
    ),
    // LLMNR: DNS messages, the same buffers under the protocol's own keywords.
    def(
        "llmnr.queries.rrname",
        &[],
        None,
        Llmnr,
        Some(B::DNS_QUERY),
        Some(B::DNS_RESP_QUERIES),
        true,
    ),
    def(
        "llmnr.answers.rrname",
        &[],
        None,
        Llmnr,
        Some(B::DNS_REQ_ANSWERS),
        Some(B::DNS_RESP_ANSWERS),
        true,
    ),
    def(
        "llmnr.authorities.rrname",
        &[],
        None,
        Llmnr,
        Some(B::DNS_REQ_AUTHORITIES),
        Some(B::DNS_RESP_AUTHORITIES),
        true,
    ),
    def(
        "llmnr.additionals.rrname",
        &[],
        None,
        Llmnr,
        Some(B::DNS_REQ_ADDITIONALS),
        Some(B::DNS_RESP_ADDITIONALS),
        true,
    ),
    def(
        "llmnr.response.rrname",
        &[],
        None,
        Llmnr,
        None,
        Some(B::DNS_RESPONSE_RRNAME),
        true,
    ),
    def(
        "tls.random",
        &[],
        None,
        Tls,
        Some(B::TLS_RANDOM_CLIENT),
        Some(B::TLS_RANDOM_SERVER),
        false,
    ),
    def(
        "tls.random_time",
        &[],
        None,
        Tls,
        Some(B::TLS_RANDOM_TIME_CLIENT),
        Some(B::TLS_RANDOM_TIME_SERVER),
        false,
    ),
    def(
        "tls.random_bytes",
        &[],
        None,
        Tls,
        Some(B::TLS_RANDOM_BYTES_CLIENT),
        Some(B::TLS_RANDOM_BYTES_SERVER),
        false,
    ),
    def(
        "tls.sni",
        &["tls_sni"],
        None,
        Tls,
        Some(B::TLS_SNI),
        None,
        false,
    ),
    def(
        "tls.cert_subject",
        &["tls_cert_subject"],
        None,
        Tls,
        None,
        Some(B::TLS_CERT_SUBJECT),
        false,
    ),
    def(
        "tls.cert_issuer",
        &["tls_cert_issuer"],
        None,
        Tls,
        None,
        Some(B::TLS_CERT_ISSUER),
        false,
    ),
    def(
        "tls.cert_serial",
        &["tls_cert_serial"],
        None,
        Tls,
        None,
        Some(B::TLS_CERT_SERIAL),
        false,
    ),
    def(
        "tls.cert_fingerprint",
        &["tls_cert_fingerprint"],
        None,
        Tls,
        None,
        Some(B::TLS_CERT_FINGERPRINT),
        false,
    ),
    def("tls.certs", &[], None, Tls, None, Some(B::TLS_CERTS), true),
    def(
        "tls.subjectaltname",
        &[],
        None,
        Tls,
        None,
        Some(B::TLS_SUBJECTALTNAME),
        true,
    ),
    def(
        "ja3.hash",
        &["ja3_hash"],
        None,
        Tls,
        Some(B::JA3_HASH),
        None,
        false,
    ),
    def(
        "ja3.string",
        &["ja3_string"],
        None,
        Tls,
        Some(B::JA3_STRING),
        None,
        false,
    ),
    def(
        "ja3s.hash",
        &["ja3s_hash"],
        None,
        Tls,
        None,
        Some(B::JA3S_HASH),
        false,
    ),
    def(
        "ja3s.string",
        &["ja3s_string"],
        None,
        Tls,
        None,
        Some(B::JA3S_STRING),
        false,
    ),
    def(
        "ja4.hash",
        &["ja4_hash"],
        None,
        Tls,
        Some(B::JA4_HASH),
        None,
        false,
    ),
    def(
        "ssh.proto",
        &["ssh_proto"],
        None,
        Ssh,
        Some(B::SSH_PROTO_CLIENT),
        Some(B::SSH_PROTO_SERVER),
        false,
    ),
    def(
        "ssh.software",
        &["ssh_software"],
        None,
        Ssh,
        Some(B::SSH_SOFTWARE_CLIENT),
        Some(B::SSH_SOFTWARE_SERVER),
        false,
    ),
    def("ssh.hassh", &[], None, Ssh, Some(B::SSH_HASSH), None, false),
    def(
        "ssh.hassh.string",
        &[],
        None,
        Ssh,
        Some(B::SSH_HASSH_STRING),
        None,
        false,
    ),
    def(
        "ssh.hassh.server",
        &[],
        None,
        Ssh,
        None,
        Some(B::SSH_HASSH_SERVER),
        false,
    ),
    def(
        "ssh.hassh.server.string",
        &[],
        None,
        Ssh,
        None,
        Some(B::SSH_HASSH_SERVER_STRING),
        false,
    ),
];

/// The buffer keyword spelled `kw` as a sticky buffer.
pub fn sticky(kw: &str) -> Option<&'static BufferDef> {
    BUFFERS
        .iter()
        .find(|d| d.name == kw || d.aliases.contains(&kw))
}

/// The buffer keyword spelled `kw` as a content modifier (`http_uri`).
pub fn modifier(kw: &str) -> Option<&'static BufferDef> {
    BUFFERS.iter().find(|d| d.modifier == Some(kw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(sticky("http_uri").unwrap().name, "http.uri");
        assert_eq!(
            sticky("file_data").unwrap().to_client,
            Some(BufferId::HTTP_RESPONSE_BODY)
        );
        assert_eq!(
            modifier("http_client_body").unwrap().name,
            "http.request_body"
        );
        assert!(modifier("dns_query").is_none());
        assert!(sticky("http.nope").is_none());
        // Names are unique.
        let mut names: Vec<&str> = BUFFERS
            .iter()
            .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
