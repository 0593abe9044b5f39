//! LLMNR's sticky buffers: DNS's, under LLMNR's keywords.

use crate::AppProto;
use crate::buffers::{BufferDef, def};

/// The sticky buffers of LLMNR.
pub static BUFFERS: &[BufferDef] = &[
    // LLMNR: DNS messages, the same buffers under the protocol's own keywords.
    def(
        "llmnr.queries.rrname",
        &[],
        None,
        AppProto::Llmnr,
        Some(crate::dns::detect::QUERY),
        Some(crate::dns::detect::RESP_QUERIES),
        true,
    ),
    def(
        "llmnr.answers.rrname",
        &[],
        None,
        AppProto::Llmnr,
        Some(crate::dns::detect::REQ_ANSWERS),
        Some(crate::dns::detect::RESP_ANSWERS),
        true,
    ),
    def(
        "llmnr.authorities.rrname",
        &[],
        None,
        AppProto::Llmnr,
        Some(crate::dns::detect::REQ_AUTHORITIES),
        Some(crate::dns::detect::RESP_AUTHORITIES),
        true,
    ),
    def(
        "llmnr.additionals.rrname",
        &[],
        None,
        AppProto::Llmnr,
        Some(crate::dns::detect::REQ_ADDITIONALS),
        Some(crate::dns::detect::RESP_ADDITIONALS),
        true,
    ),
    def(
        "llmnr.response.rrname",
        &[],
        None,
        AppProto::Llmnr,
        None,
        Some(crate::dns::detect::RESPONSE_RRNAME),
        true,
    ),
];
