//! The EVE `enip` object, in Suricata's field order: the request and the reply, each
//! with its command and status, and the CIP message of its first data item (service,
//! path, class name, status, embedded services), a RegisterSession's version, a
//! ListServices or ListIdentity reply's first item.

use meerkat_eve::Obj;
use meerkat_proto::events::Enip;

use super::parser::{self, Cip, CipDir, Payload, RequestPayload, Segment};
use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Enip(e) = r {
        enip(o, e);
    }
}

/// A name, or `unknown-<n>`.
fn named(o: &mut Obj<'_>, k: &str, name: Option<&str>, n: impl std::fmt::Display) {
    match name {
        Some(s) => o.str(k, s),
        None => o.str(k, &format!("unknown-{n}")),
    };
}

fn enip(o: &mut Obj<'_>, e: &Enip) {
    o.obj("enip", |o| {
        for (k, bytes, reply) in [
            ("request", &e.request, false),
            ("response", &e.response, true),
        ] {
            let Some(b) = bytes else { continue };
            let Ok((pdu, _)) = parser::parse(b) else {
                continue;
            };
            o.obj(k, |x| message(x, &pdu, reply));
        }
    });
}

fn message(x: &mut Obj<'_>, p: &parser::Pdu, reply: bool) {
    let h = &p.header;
    named(x, "command", parser::command_name(h.cmd), h.cmd);
    named(x, "status", parser::status_name(h.status), h.status);
    if h.options != 0 {
        x.u64("options", u64::from(h.options));
    }
    match &p.payload {
        Payload::Cip { .. } => {
            if let Some(c) = p.cip() {
                x.obj("cip", |o| cip(o, c));
            }
        }
        Payload::RegisterSession {
            protocol_version,
            options,
        } => {
            x.obj("register_session", |o| {
                o.u64("protocol_version", u64::from(*protocol_version))
                    .u64("options", u64::from(*options));
            });
        }
        _ if !reply => {}
        Payload::ListServices(_) => {
            if let Some(s) = p.services() {
                x.obj("list_services", |o| {
                    o.u64("protocol_version", u64::from(s.protocol_version))
                        .u64("capabilities", u64::from(s.capabilities))
                        .str("service_name", &String::from_utf8_lossy(&s.service_name));
                });
            }
        }
        Payload::ListIdentity(_) => {
            if let Some(i) = p.identity() {
                x.obj("identity", |o| {
                    o.u64("protocol_version", u64::from(i.protocol_version))
                        .str(
                            "revision",
                            &format!("{}.{}", i.revision_major, i.revision_minor),
                        );
                    named(o, "vendor_id", vendor_name(i.vendor_id), i.vendor_id);
                    named(
                        o,
                        "device_type",
                        device_type_name(i.device_type),
                        i.device_type,
                    );
                    o.u64("product_code", u64::from(i.product_code))
                        .u64("status", u64::from(i.status))
                        .u64("serial", u64::from(i.serial))
                        .str("product_name", &String::from_utf8_lossy(&i.product_name))
                        .u64("state", u64::from(i.state));
                });
            }
        }
        _ => {}
    }
}

fn segment(o: &mut Obj<'_>, s: &Segment) {
    let kind = match s.segment_type >> 2 {
        parser::SEGMENT_CLASS => Some("class"),
        parser::SEGMENT_INSTANCE => Some("instance"),
        parser::SEGMENT_ATTRIBUTE => Some("attribute"),
        _ => None,
    };
    named(o, "segment_type", kind, s.segment_type);
    o.u64("value", u64::from(s.value));
}

fn multiple(o: &mut Obj<'_>, packets: &[Cip]) {
    if packets.is_empty() {
        return;
    }
    o.raw("multiple", |buf| {
        meerkat_eve::array(buf, packets, cip);
    });
}

fn cip(o: &mut Obj<'_>, c: &Cip) {
    named(o, "service", service_name(c.service), c.service);
    match &c.dir {
        CipDir::Response {
            status,
            status_extended,
            multiple: m,
        } => {
            named(o, "status", cip_status_name(*status), status);
            if !status_extended.is_empty() {
                let mut hex = String::with_capacity(2 * status_extended.len());
                for b in status_extended {
                    hex.push_str(&format!("{b:02X}"));
                }
                o.str("status_extended", &hex);
                if let [lo, hi] = status_extended[..]
                    && let Some(s) = extended_status_name(u16::from_le_bytes([lo, hi]))
                {
                    o.str("status_extended_meaning", s);
                }
            }
            if let Some(m) = m {
                multiple(o, &m.packets);
            }
        }
        CipDir::Request { path, payload } => {
            if !path.is_empty() {
                o.raw("path", |buf| meerkat_eve::array(buf, path, segment));
                // The last class of the path.
                if let Some(k) = path.iter().rev().find(|s| s.segment_type & 0xfc == 0x20) {
                    named(o, "class_name", class_name(k.value), k.value);
                }
            }
            if let RequestPayload::Multiple(m) = payload {
                multiple(o, &m.packets);
            }
        }
    }
}

/// CIP service names (CIP Vol. 1, Appendix A; the class-specific ones Suricata names).
pub fn service_name(s: u8) -> Option<&'static str> {
    Some(match s {
        0x01 => "Get Attributes All",
        0x02 => "Set Attributes All",
        0x03 => "Get Attribute List",
        0x04 => "Set Attribute List",
        0x05 => "Reset",
        0x06 => "Start",
        0x07 => "Stop",
        0x08 => "Create",
        0x09 => "Delete",
        0x0a => "Multiple Service Packet",
        0x0d => "Apply Attributes",
        0x0e => "Get Attributes Single",
        0x10 => "Set Attributes Single",
        0x11 => "Find Next Object Instance",
        0x15 => "Restore",
        0x16 => "Save",
        0x17 => "No Forward Open",
        0x18 => "Get Member",
        0x19 => "Set Member",
        0x1a => "Insert Member",
        0x1b => "Remove Member",
        0x1c => "Group Sync",
        0x1d => "Get Connection Point Member List",
        0x4b => "Execute PCCC Service",
        0x4c => "Read Data",
        0x4d => "Write Data",
        0x4e => "Read Write Modify Data",
        0x52 => "Read Data Fragmented",
        0x53 => "Write Data Fragmented",
        0x54 => "Forward Open",
        _ => return None,
    })
}

/// CIP general status names (CIP Vol. 1, Appendix B).
pub fn cip_status_name(s: u8) -> Option<&'static str> {
    const NAMES: [&str; 0x2d] = [
        "Success",
        "Connection Failure",
        "Resource Unavailable",
        "Invalid Parameter Value",
        "Path Segment Error",
        "Path Destination Unknown",
        "Partial Transfer",
        "Connection Lost",
        "Service Not Supported",
        "Invalid Attribute Value",
        "Attribute List Error",
        "Already In Requested Mode/State",
        "Object State Conflict",
        "Object Already Exists",
        "Attribute Not Settable",
        "Privilege Violation",
        "Device State Conflict",
        "Reply Data Too Large",
        "Fragmentation Of A Primitive Value",
        "Not Enough Data",
        "Attribute Not Supported",
        "Too Much Data",
        "Object Does Not Exist",
        "Service Fragmentation Sequence Not In Progress",
        "No Stored Attribute Data",
        "Store Operation Failure",
        "Routing Failure, Request Packet Too Large",
        "Routing Failure, Response Packet Too Large",
        "Missing Attribute List Entry Data",
        "Invalid Attribute Value List",
        "Embedded Service Error",
        "Vendor Specific Error",
        "Invalid Parameter",
        "Write-Once Value Or Medium Already Written",
        "Invalid Reply Received",
        "Buffer Overflow",
        "Invalid Message Format",
        "Key Failure In Path",
        "Path Size Invalid",
        "Unexpected Attribute In List",
        "Invalid Member ID",
        "Member Not Settable",
        "Group 2 Only Server General Failure",
        "Unknown Modbus Error",
        "Attribute Not Gettable",
    ];
    match s {
        0xff => Some("Still Processing"),
        _ => NAMES.get(usize::from(s)).copied(),
    }
}

/// The Connection Manager's extended status names (CIP Vol. 1, Table 3-5.33).
pub fn extended_status_name(v: u16) -> Option<&'static str> {
    Some(match v {
        0x100 => "Connection in use or duplicate Forward Open",
        0x103 => "Transport class and trigger combination not supported",
        0x106 => "Ownership conflict",
        0x107 => "Target connection not found",
        0x108 => "Invalid network connection parameter",
        0x109 => "Invalid connection size",
        0x110 => "Target for connection not configured",
        0x111 => "RPI not supported",
        0x112 => "RPI value(s) not acceptable",
        0x113 => "Out of connections",
        0x114 => "Vendor ID or product code mismatch",
        0x115 => "Device type mismatch",
        0x116 => "Revision mismatch",
        0x117 => "Invalid produced or consumed application path",
        0x118 => "Invalid or inconsistent configuration application path",
        0x119 => "Non-listen only connection not opened",
        0x11a => "Target object out of connections",
        0x11b => "RPI is smaller than the production inhibit time",
        0x11c => "Transport class not supported",
        0x11d => "Production trigger not supported",
        0x11e => "Direction not supported",
        0x11f => "Invalid O->T Fixed/Variable",
        0x120 => "Invalid T->O Fixed/Variable",
        0x121 => "Invalid O->T Priority",
        0x122 => "Invalid T->O Priority",
        0x123 => "Invalid O->T connection type",
        0x124 => "Invalid T->O connection type",
        0x125 => "Invalid O->T redundant owner",
        0x126 => "Invalid configuration size",
        0x127 => "Invalid O->T size",
        0x128 => "Invalid T->O size",
        0x129 => "Invalid configuration application path",
        0x12a => "Invalid consuming application path",
        0x12b => "Invalid producing application path",
        0x12c => "Configuration symbol does not exist",
        0x12d => "Consuming symbol does not exist",
        0x12e => "Producing symbol does not exist",
        0x12f => "Inconsistent application path combination",
        0x130 => "Inconsistent consume data format",
        0x131 => "Inconsistent produce data format",
        0x132 => "NULL ForwardOpen not supported",
        0x203 => "Connection timed out",
        0x204 => "Unconnected request timed out",
        0x205 => "Parameter error in unconnected request",
        0x206 => "Message too large for UnconnectedSend",
        0x207 => "Unconnected acknowledged without reply",
        0x301 => "No buffer memory available",
        0x302 => "Network bandwidth not available for data",
        0x303 => "No consumed connection ID filter available",
        0x304 => "Not configured to send scheduled priority data",
        0x305 => "Schedule signature mismatch",
        0x306 => "Schedule signature validation not possible",
        0x311 => "Port not available",
        0x312 => "Link address not valid",
        0x315 => "Invalid segment in connection path",
        0x316 => "ForwardClose connection path mismatch",
        0x317 => "Scheduling not specified",
        0x318 => "Link address to self invalid",
        0x319 => "Secondary resources unavailable",
        0x31a => "Rack connection already established",
        0x31b => "Module connection already established",
        0x31c => "Miscellaneous",
        0x31d => "Redundant connection mismatch",
        0x31e => {
            "No more user configurable link consumer resources available in the producing module"
        }
        0x31f => {
            "No more user configurable link consumer resources configured in the producing module"
        }
        0x800 => "Network link offline",
        0x801 => "Incompatible Multicast RPI",
        0x802 => "Invalid Safety Connection Size",
        0x803 => "Invalid Safety Connection Format",
        0x804 => "Invalid Time Correction Connection Parameters",
        0x805 => "Invalid Ping Interval EPI Multiplier",
        0x806 => "Time Coordination Msg Min Multiplier",
        0x807 => "Network Time Expectation Multiplier",
        0x808 => "Timeout Multiplier",
        0x809 => "Invalid Max Consumer Number",
        0x80a => "Invalid CPCRC",
        0x80b => "Time Correction Connection ID Invalid",
        0x80c => "SCID Mismatch",
        0x80d => "TUNID not set",
        0x80e => "TUNID Mismatch",
        0x80f => "Configuration operation not allowed",
        0x810 => "No target application data available",
        0x811 => "No originator application data available",
        0x812 => "Node address has changed since the network was scheduled",
        0x813 => "Not configured for off-subnet multicast",
        0x814 => "Invalid produce/consume data format",
        _ => return None,
    })
}

/// CIP object class names (CIP Vol. 1, Chapter 5 and the network volumes).
pub fn class_name(c: u32) -> Option<&'static str> {
    Some(match c {
        0x00 => "",
        0x01 => "Identity",
        0x02 => "Message Router",
        0x03 => "DeviceNet",
        0x04 => "Assembly",
        0x05 => "Connection",
        0x06 => "Connection Manager",
        0x07 => "Register",
        0x08 => "Discrete Input Point",
        0x09 => "Discrete Output Point",
        0x0a => "Analog Input Point",
        0x0b => "Analog Output Point",
        0x0e => "Presence Sensing",
        0x0f => "Parameter",
        0x10 => "Parameter Group",
        0x12 => "Group",
        0x1d => "Discrete Input Group",
        0x1e => "Discrete Output Group",
        0x1f => "Discrete Group",
        0x20 => "Analog Input Group",
        0x21 => "Analog Output Group",
        0x22 => "Analog Group",
        0x23 => "Position Sensor",
        0x24 => "Position Controller Supervisor",
        0x25 => "Position Controller",
        0x26 => "Block Sequencer",
        0x27 => "Command Block",
        0x28 => "Motor Data",
        0x29 => "Control Supervisor",
        0x2a => "AC/DC Drive",
        0x2b => "Acknowledge Handler",
        0x2c => "Overload",
        0x2d => "Softstart",
        0x2e => "Selection",
        0x30 => "S-Device Supervisor",
        0x31 => "S-Analog Sensor",
        0x32 => "S-Analog Actuator",
        0x33 => "S-Single Stage Controller",
        0x34 => "S-Gas Calibration",
        0x35 => "Trip Point",
        0x37 => "File",
        0x38 => "S-Partial Pressure",
        0x39 => "Safety Supervisor",
        0x3a => "Safety Validator",
        0x3b => "Safety Discrete Output Point",
        0x3c => "Safety Discrete Output Group",
        0x3d => "Safety Discrete Input Point",
        0x3e => "Safety Discrete Input Group",
        0x3f => "Safety Dual Channel Output",
        0x40 => "S-Sensor Calibration",
        0x41 => "Event Log",
        0x42 => "Motion Device Axis",
        0x43 => "Time Sync",
        0x44 => "Modbus",
        0x45 => "Originator Connection List",
        0x46 => "Modbus Serial Link",
        0x47 => "Device Level Ring (DLR)",
        0x48 => "QoS",
        0x49 => "Safety Analog Input Point",
        0x4a => "Safety Analog Input Group",
        0x4b => "Safety Dual Channel Analog Input",
        0x4c => "SERCOS III Link",
        0x4d => "Target Connection List",
        0x4e => "Base Energy",
        0x4f => "Electrical Energy",
        0x50 => "Non-Electrical Energy",
        0x51 => "Base Switch",
        0x52 => "SNMP",
        0x53 => "Power Management",
        0x54 => "RSTP Bridge",
        0x55 => "RSTP Port",
        0x56 => "PRP/HSR Protocol",
        0x57 => "PRP/HSR Nodes Table",
        0x58 => "Safety Feedback",
        0x59 => "Safety Dual Channel Feedback",
        0x5a => "Safety Stop Functions",
        0x5b => "Safety Limit Functions",
        0x5c => "Power Curtailment",
        0x5d => "CIP Security",
        0x5e => "EtherNet/IP Security",
        0x5f => "Certificate Management",
        0x67 => "PCCC Class",
        0xf0 => "ControlNet",
        0xf1 => "ControlNet Keeper",
        0xf2 => "ControlNet Scheduling",
        0xf3 => "Connection Configuration",
        0xf4 => "Port",
        0xf5 => "TCP/IP Interface",
        0xf6 => "Ethernet Link",
        0xf7 => "CompoNet",
        0xf8 => "CompoNet Repeater",
        _ => return None,
    })
}

/// CIP device profile names (CIP Vol. 1, Chapter 6).
pub fn device_type_name(d: u16) -> Option<&'static str> {
    Some(match d {
        0 => "Generic Device (deprecated)",
        1 => "Control Station (deprecated)",
        2 => "AC Drive Device",
        3 => "Motor Overload",
        4 => "Limit Switch",
        5 => "Inductive Proximity Switch",
        6 => "Photoelectric Sensor",
        7 => "General Purpose Discrete I/O",
        8 => "Encoder (deprecated)",
        9 => "Resolver",
        10 => "General Purpose Analog I/O (deprecated)",
        12 => "Communications Adapter",
        13 => "Barcode Scanner (deprecated)",
        14 => "Programmable Logic Controller",
        16 => "Position Controller",
        17 => "Weigh Scale (deprecated)",
        18 => "Message Display (deprecated)",
        19 => "DC Drive",
        20 => "Servo Drives (deprecated)",
        21 => "Contactor",
        22 => "Motor Starter",
        23 => "Softstart Starter",
        24 => "Human-Machine Interface",
        25 => "Pneumatic Valve(s) (deprecated)",
        26 => "Mass Flow Controller",
        27 => "Pneumatic Valve(s)",
        28 => "Vacuum Pressure Gauge",
        29 => "Process Control Value",
        30 => "Residual Gas Analyzer",
        31 => "DC Power Generator",
        32 => "RF Power Generator",
        33 => "Turbomolecular Vacuum Pump",
        34 => "Encoder",
        35 => "Safety Discrete I/O Device",
        36 => "Fluid Flow Controller",
        37 => "CIP Motion Drive",
        38 => "CompoNet Repeater",
        39 => "Mass Flow Controller Enhanced",
        40 => "CIP Modbus Device",
        41 => "CIP Modbus Translator",
        42 => "Safety Analog I/O Device",
        43 => "Generic Device (keyable)",
        44 => "Managed Ethernet Switch",
        45 => "CIP Motion Safety Drive Device",
        46 => "Safety Drive Device",
        47 => "CIP Motion Encoder",
        48 => "CIP Motion Converter",
        49 => "CIP Motion I/O",
        50 => "ControlNet Physical Layer Component",
        100 => "In-Sight 2000 Series",
        150 => "PowerFlex 525",
        200 => "Embedded Component",
        773 => "DataMan Series Reader",
        _ => return None,
    })
}

/// The name of ODVA vendor `v` (see [`super::vendors`]).
pub fn vendor_name(v: u16) -> Option<&'static str> {
    super::vendors::name(v)
}
