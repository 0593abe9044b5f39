//! Modbus/TCP messages (Modbus Application Protocol V1.1b, Messaging on TCP/IP V1.0b)
//! over borrowed bytes: the MBAP header (transaction id, protocol id, length, unit id),
//! the function code and the PDU as the function defines it for a request or a
//! response, with the checks Suricata's parser makes recorded as error flags rather than
//! refused (a message whose header is whole always parses).
//!
//! A message is at most [`MAX_LENGTH`] bytes after the 6 bytes before the unit id; one
//! whose length field is outside `MIN_LENGTH..=MAX_LENGTH` is taken as a header with no
//! PDU (flag `DATA_LENGTH`) and its announced bytes, as far as they are there, skipped.

use crate::Dir;

/// Smallest length field: the unit id and the function code.
pub const MIN_LENGTH: u16 = 2;
/// Largest length field: a unit id and a PDU of 253 bytes.
pub const MAX_LENGTH: u16 = 254;
/// Bytes of the header before the unit id.
pub const MBAP_LEN: usize = 6;
/// Longest message on the wire.
pub const MAX_MESSAGE: usize = MBAP_LEN + MAX_LENGTH as usize;

/// A function code above this is an exception response to function `code & 0x7f`.
pub const ERROR_MASK: u8 = 0x80;
const MAX_QUANTITY_BIT_ACCESS: u16 = 2000;
const MAX_QUANTITY_WORD_ACCESS: u16 = 125;
const MIN_RD_COUNT: u8 = 1;
const MAX_RD_COUNT: u8 = 250;

/// Access type flags (Suricata's names, in its order for EVE).
pub mod access {
    pub const READ: u8 = 0x01;
    pub const WRITE: u8 = 0x02;
    pub const DISCRETES: u8 = 0x04;
    pub const COILS: u8 = 0x08;
    pub const INPUT: u8 = 0x10;
    pub const HOLDING: u8 = 0x20;
    pub const SINGLE: u8 = 0x40;
    pub const MULTIPLE: u8 = 0x80;
    pub const BIT_ACCESS_MASK: u8 = DISCRETES | COILS;
    pub const FUNC_MASK: u8 = DISCRETES | COILS | INPUT | HOLDING;
    pub const WRITE_SINGLE: u8 = WRITE | SINGLE;
    pub const WRITE_MULTIPLE: u8 = WRITE | MULTIPLE;
    /// Every flag with its EVE name, composite ones included (EVE lists each whose
    /// bits are all set).
    pub const NAMES: &[(&str, u8)] = &[
        ("READ", READ),
        ("WRITE", WRITE),
        ("DISCRETES", DISCRETES),
        ("COILS", COILS),
        ("INPUT", INPUT),
        ("HOLDING", HOLDING),
        ("SINGLE", SINGLE),
        ("MULTIPLE", MULTIPLE),
        ("BIT_ACCESS_MASK", BIT_ACCESS_MASK),
        ("FUNC_MASK", FUNC_MASK),
        ("WRITE_SINGLE", WRITE_SINGLE),
        ("WRITE_MULTIPLE", WRITE_MULTIPLE),
    ];
}

/// Function code categories.
pub mod category {
    pub const PUBLIC_ASSIGNED: u8 = 0x01;
    pub const PUBLIC_UNASSIGNED: u8 = 0x02;
    pub const USER_DEFINED: u8 = 0x04;
    pub const RESERVED: u8 = 0x08;
    pub const NAMES: &[(&str, u8)] = &[
        ("PUBLIC_ASSIGNED", PUBLIC_ASSIGNED),
        ("PUBLIC_UNASSIGNED", PUBLIC_UNASSIGNED),
        ("USER_DEFINED", USER_DEFINED),
        ("RESERVED", RESERVED),
    ];
}

/// What is wrong with a message that parsed.
pub mod error {
    pub const DATA_VALUE: u8 = 0x01;
    pub const DATA_LENGTH: u8 = 0x02;
    pub const EXC_CODE: u8 = 0x04;
    pub const FUNC_CODE: u8 = 0x08;
    pub const PROTO_ID: u8 = 0x10;
    pub const NAMES: &[(&str, u8)] = &[
        ("DATA_VALUE", DATA_VALUE),
        ("DATA_LENGTH", DATA_LENGTH),
        ("EXC_CODE", EXC_CODE),
        ("FUNC_CODE", FUNC_CODE),
        ("PROTO_ID", PROTO_ID),
    ];
}

/// The function codes with a name; any other is `Unknown`.
pub const FUNCTION_NAMES: &[(u8, &str)] = &[
    (0x01, "RdCoils"),
    (0x02, "RdDiscreteInputs"),
    (0x03, "RdHoldRegs"),
    (0x04, "RdInputRegs"),
    (0x05, "WrSingleCoil"),
    (0x06, "WrSingleReg"),
    (0x07, "RdExcStatus"),
    (0x08, "Diagnostic"),
    (0x09, "Program484"),
    (0x0a, "Poll484"),
    (0x0b, "GetCommEventCtr"),
    (0x0c, "GetCommEventLog"),
    (0x0d, "ProgramController"),
    (0x0e, "PollController"),
    (0x0f, "WrMultCoils"),
    (0x10, "WrMultRegs"),
    (0x11, "ReportServerID"),
    (0x12, "Program884"),
    (0x13, "ResetCommLink"),
    (0x14, "RdFileRec"),
    (0x15, "WrFileRec"),
    (0x16, "MaskWrReg"),
    (0x17, "RdWrMultRegs"),
    (0x18, "RdFIFOQueue"),
    (0x2b, "MEI"),
];

/// The function code of a raw function byte (the exception bit cleared); 0 for an
/// unknown one (code 0 has no name either).
pub fn function_code(raw: u8) -> u8 {
    let c = if raw >= ERROR_MASK {
        raw ^ ERROR_MASK
    } else {
        raw
    };
    match c {
        0x01..=0x18 | 0x2b => c,
        _ => 0,
    }
}

/// The EVE name of a code from [`function_code`].
pub fn function_name(code: u8) -> &'static str {
    FUNCTION_NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("Unknown", |(_, n)| n)
}

pub const FN_RD_COILS: u8 = 0x01;
pub const FN_RD_DISCRETE_INPUTS: u8 = 0x02;
pub const FN_RD_HOLD_REGS: u8 = 0x03;
pub const FN_RD_INPUT_REGS: u8 = 0x04;
pub const FN_WR_SINGLE_COIL: u8 = 0x05;
pub const FN_WR_SINGLE_REG: u8 = 0x06;
pub const FN_RD_EXC_STATUS: u8 = 0x07;
pub const FN_DIAGNOSTIC: u8 = 0x08;
pub const FN_GET_COMM_EVENT_CTR: u8 = 0x0b;
pub const FN_GET_COMM_EVENT_LOG: u8 = 0x0c;
pub const FN_WR_MULT_COILS: u8 = 0x0f;
pub const FN_WR_MULT_REGS: u8 = 0x10;
pub const FN_REPORT_SERVER_ID: u8 = 0x11;
pub const FN_RD_FILE_REC: u8 = 0x14;
pub const FN_WR_FILE_REC: u8 = 0x15;
pub const FN_MASK_WR_REG: u8 = 0x16;
pub const FN_RD_WR_MULT_REGS: u8 = 0x17;
pub const FN_RD_FIFO_QUEUE: u8 = 0x18;
pub const FN_MEI: u8 = 0x2b;

/// The access type of a function code.
pub fn access_of(code: u8) -> u8 {
    use access::*;
    match code {
        FN_RD_COILS => COILS | READ,
        FN_RD_DISCRETE_INPUTS => DISCRETES | READ,
        FN_RD_HOLD_REGS => HOLDING | READ,
        FN_RD_INPUT_REGS => INPUT | READ,
        FN_WR_SINGLE_COIL => COILS | WRITE_SINGLE,
        FN_WR_SINGLE_REG => HOLDING | WRITE_SINGLE,
        FN_WR_MULT_COILS => COILS | WRITE_MULTIPLE,
        FN_WR_MULT_REGS => HOLDING | WRITE_MULTIPLE,
        FN_MASK_WR_REG => HOLDING | WRITE,
        FN_RD_WR_MULT_REGS => HOLDING | READ | WRITE_MULTIPLE,
        _ => 0,
    }
}

/// The category of an unknown function's raw byte.
fn category_of_raw(raw: u8) -> u8 {
    use category::*;
    match raw {
        0 => 0,
        x if x < 9 => PUBLIC_UNASSIGNED,
        x if x < 15 => RESERVED,
        x if x < 41 => PUBLIC_UNASSIGNED,
        x if x < 43 => RESERVED,
        x if x < 65 => PUBLIC_UNASSIGNED,
        x if x < 73 => USER_DEFINED,
        x if x < 90 => PUBLIC_UNASSIGNED,
        x if x < 92 => RESERVED,
        x if x < 100 => PUBLIC_UNASSIGNED,
        x if x < 111 => USER_DEFINED,
        x if x < 125 => PUBLIC_UNASSIGNED,
        x if x < 128 => RESERVED,
        _ => 0,
    }
}

/// Diagnostic sub-function names (0x05-0x09 and from 0x16 on are reserved).
pub fn diagnostic_name(raw: u16) -> &'static str {
    const NAMES: [&str; 22] = [
        "RetQueryData",
        "RestartCommOpt",
        "RetDiagReg",
        "ChangeInputDelimiter",
        "ForceListenOnlyMode",
        "",
        "",
        "",
        "",
        "",
        "ClearCtrDiagReg",
        "RetBusMsgCount",
        "RetBusCommErrCount",
        "RetBusExcErrCount",
        "RetServerMsgCount",
        "RetServerNoRespCount",
        "RetServerNAKCount",
        "RetServerBusyCount",
        "RetBusCharOverrunCount",
        "RetOverrunErrCount",
        "ClearOverrunCounterFlag",
        "GetClearPlusStats",
    ];
    match NAMES.get(usize::from(raw)) {
        Some(n) if !n.is_empty() => n,
        _ => "Reserved",
    }
}

/// MEI type names.
pub fn mei_name(raw: u8) -> &'static str {
    match raw {
        0x0d => "CANOpenGenRefReqResp",
        0x0e => "RdDevId",
        _ => "Unknown",
    }
}

/// Exception code names.
pub fn exception_name(raw: u8) -> &'static str {
    match raw {
        1 => "IllegalFunction",
        2 => "IllegalDataAddr",
        3 => "IllegalDataValue",
        4 => "ServerDeviceFail",
        5 => "Ack",
        6 => "ServerDeviceBusy",
        7 => "NegAck",
        8 => "MemParityErr",
        0x0a => "GatewayPathUnavailable",
        0x0b => "GatewayTargetFailToResp",
        _ => "Unknown",
    }
}

/// The PDU after the function code, as the function defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data<'a> {
    Exception(u8),
    Diagnostic {
        sub: u16,
        data: &'a [u8],
    },
    Mei {
        mei: u8,
        data: &'a [u8],
    },
    ReadRequest {
        address: u16,
        quantity: u16,
    },
    ReadResponse(&'a [u8]),
    /// A multiple write request.
    WriteMultiple {
        address: u16,
        quantity: u16,
        data: &'a [u8],
    },
    WriteMask {
        address: u16,
        and_mask: u16,
        or_mask: u16,
    },
    /// A single write, or a multiple write's response (`data` is then the quantity).
    WriteOther {
        address: u16,
        data: u16,
    },
    /// Read/write multiple registers' request.
    ReadWrite {
        read_address: u16,
        read_quantity: u16,
        address: u16,
        quantity: u16,
        data: &'a [u8],
    },
    /// Anything else: the PDU's bytes.
    Bytes(&'a [u8]),
    Empty,
}

/// One message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    pub transaction_id: u16,
    pub protocol_id: u16,
    pub length: u16,
    pub unit_id: u8,
    pub function_raw: u8,
    /// [`function_code`] of `function_raw`.
    pub code: u8,
    pub access: u8,
    pub category: u8,
    pub data: Data<'a>,
    pub flags: u8,
}

/// Why no message came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The header is not whole yet, or the message's announced bytes are not all in.
    Incomplete,
}

/// A cursor over a PDU; reads past its end are "short" (`None`).
struct Cur<'a> {
    b: &'a [u8],
}

impl<'a> Cur<'a> {
    fn u8(&mut self) -> Option<u8> {
        let (&x, rest) = self.b.split_first()?;
        self.b = rest;
        Some(x)
    }
    fn u16(&mut self) -> Option<u16> {
        let (x, rest) = self.b.split_first_chunk::<2>()?;
        self.b = rest;
        Some(u16::from_be_bytes(*x))
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (x, rest) = self.b.split_at_checked(n)?;
        self.b = rest;
        Some(x)
    }
}

/// Which side sent a message: the probe knows neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Request,
    Response,
    Unknown,
}

impl From<Dir> for Side {
    fn from(d: Dir) -> Side {
        match d {
            Dir::ToServer => Side::Request,
            Dir::ToClient => Side::Response,
        }
    }
}

impl<'a> Message<'a> {
    /// Bytes of the PDU after the function code.
    fn data_length(&self) -> u16 {
        self.length - 2
    }

    fn exception(&mut self, c: &mut Cur<'a>) -> Option<()> {
        let exc = c.u8()?;
        let raw = self.function_raw;
        let group = (raw > 6 && raw < 15) || (raw > 16 && raw < 20);
        let bad = match exc {
            3 => self.code != FN_DIAGNOSTIC && group,
            2 => group,
            8 => self.code != FN_RD_FILE_REC && self.code != FN_WR_FILE_REC,
            1..=8 | 0x0a | 0x0b => false,
            _ => true,
        };
        if bad {
            self.flags |= error::EXC_CODE;
        }
        self.data = Data::Exception(exc);
        Some(())
    }

    fn diagnostic(&mut self, c: &mut Cur<'a>) -> Option<()> {
        if self.data_length() < 2 {
            self.flags |= error::DATA_LENGTH;
            return Some(());
        }
        let sub = c.u16()?;
        let data = c.take(usize::from(self.data_length() - 2))?;
        self.data = Data::Diagnostic { sub, data };
        Some(())
    }

    fn mei(&mut self, c: &mut Cur<'a>) -> Option<()> {
        if self.data_length() < 1 {
            self.flags |= error::DATA_LENGTH;
            return Some(());
        }
        let mei = c.u8()?;
        let data = c.take(usize::from(self.data_length() - 1))?;
        self.data = Data::Mei { mei, data };
        Some(())
    }

    fn bytes(&mut self, c: &mut Cur<'a>) -> Option<()> {
        self.data = Data::Bytes(c.take(usize::from(self.data_length()))?);
        Some(())
    }

    fn read_request(&mut self, c: &mut Cur<'a>) -> Option<()> {
        let address = c.u16()?;
        let quantity = c.u16()?;
        if quantity == 0 {
            self.flags |= error::DATA_VALUE;
        }
        if self.code != FN_RD_WR_MULT_REGS && self.data_length() > 4 {
            self.flags |= error::DATA_LENGTH;
        }
        let max = if self.access & access::BIT_ACCESS_MASK != 0 {
            MAX_QUANTITY_BIT_ACCESS
        } else {
            MAX_QUANTITY_WORD_ACCESS
        };
        if quantity > max {
            self.flags |= error::DATA_VALUE;
        }
        self.data = Data::ReadRequest { address, quantity };
        Some(())
    }

    fn read_response(&mut self, c: &mut Cur<'a>) -> Option<()> {
        if self.data_length() < 1 {
            self.flags |= error::DATA_LENGTH;
            return Some(());
        }
        let count = c.u8()?;
        if !(MIN_RD_COUNT..=MAX_RD_COUNT).contains(&count) {
            self.flags |= error::DATA_VALUE;
        }
        if self.data_length() - 1 != u16::from(count) {
            self.flags |= error::DATA_VALUE;
        }
        self.data = Data::ReadResponse(c.take(usize::from(self.data_length() - 1))?);
        Some(())
    }

    fn write_request(&mut self, c: &mut Cur<'a>) -> Option<()> {
        let address = c.u16()?;
        if self.access & access::SINGLE != 0 {
            let data = c.u16()?;
            if self.access & access::COILS != 0 && data != 0x0000 && data != 0xff00 {
                self.flags |= error::DATA_VALUE;
            }
            self.data = Data::WriteOther { address, data };
        } else if self.access & access::MULTIPLE != 0 {
            let quantity = c.u16()?;
            let count = c.u8()?;
            let offset: u16 = if self.code == FN_RD_WR_MULT_REGS {
                11
            } else {
                7
            };
            // A length below the offset reads as a huge count, as the 16-bit
            // subtraction wraps in Suricata's parser (release build): the take fails.
            let rest = self.length.wrapping_sub(offset);
            if quantity == 0 || rest != u16::from(count) {
                self.flags |= error::DATA_LENGTH;
            }
            if self.access & access::BIT_ACCESS_MASK != 0 {
                if quantity > MAX_QUANTITY_BIT_ACCESS
                    || u16::from(count) != quantity / 8 + u16::from(!quantity.is_multiple_of(8))
                {
                    self.flags |= error::DATA_VALUE;
                }
            } else if quantity > MAX_QUANTITY_WORD_ACCESS
                || u32::from(count) != 2 * u32::from(quantity)
            {
                self.flags |= error::DATA_VALUE;
            }
            let data = c.take(usize::from(rest))?;
            self.data = match self.data {
                Data::ReadRequest {
                    address: read_address,
                    quantity: read_quantity,
                } => Data::ReadWrite {
                    read_address,
                    read_quantity,
                    address,
                    quantity,
                    data,
                },
                _ => Data::WriteMultiple {
                    address,
                    quantity,
                    data,
                },
            };
        } else {
            let and_mask = c.u16()?;
            let or_mask = c.u16()?;
            self.data = Data::WriteMask {
                address,
                and_mask,
                or_mask,
            };
        }
        Some(())
    }

    fn write_response(&mut self, c: &mut Cur<'a>) -> Option<()> {
        let address = c.u16()?;
        if self.access & access::SINGLE != 0 {
            let data = c.u16()?;
            self.data = Data::WriteOther { address, data };
        } else if self.access & access::MULTIPLE != 0 {
            let quantity = c.u16()?;
            if quantity == 0 {
                self.flags |= error::DATA_VALUE;
            }
            // The bounds as Suricata's parser has them (the word bound for bits).
            let max = if self.access & access::BIT_ACCESS_MASK != 0 {
                MAX_QUANTITY_WORD_ACCESS
            } else {
                MAX_QUANTITY_BIT_ACCESS
            };
            if quantity > max {
                self.flags |= error::DATA_VALUE;
            }
            self.data = Data::WriteOther {
                address,
                data: quantity,
            };
        } else {
            let and_mask = c.u16()?;
            let or_mask = c.u16()?;
            self.data = Data::WriteMask {
                address,
                and_mask,
                or_mask,
            };
        }
        Some(())
    }

    fn request(&mut self, c: &mut Cur<'a>) -> Option<()> {
        let len = self.data_length();
        match self.code {
            FN_DIAGNOSTIC => {
                if len != 4 {
                    self.flags |= error::DATA_LENGTH;
                }
                self.diagnostic(c)?;
                if let Data::Diagnostic {
                    sub,
                    data: &[d0, d1],
                } = self.data
                {
                    let bad = match sub {
                        0 | 4 => false,
                        1 => d1 != 0 || (d0 != 0 && d0 != 0xff),
                        3 => d1 != 0,
                        _ if diagnostic_name(sub) == "Reserved" => false,
                        _ => d0 != 0 || d1 != 0,
                    };
                    if bad {
                        self.flags |= error::DATA_VALUE;
                    }
                }
                return Some(());
            }
            FN_MEI => return self.mei(c),
            FN_RD_FILE_REC | FN_WR_FILE_REC if len == 0 => self.flags |= error::DATA_LENGTH,
            FN_RD_EXC_STATUS
            | FN_GET_COMM_EVENT_CTR
            | FN_GET_COMM_EVENT_LOG
            | FN_REPORT_SERVER_ID
                if len > 0 =>
            {
                self.flags |= error::DATA_LENGTH
            }
            FN_RD_FIFO_QUEUE if len != 2 => self.flags |= error::DATA_LENGTH,
            _ => {
                if self.function_raw == 0 || self.function_raw >= ERROR_MASK {
                    self.flags |= error::FUNC_CODE;
                }
                if self.access & access::READ != 0 {
                    self.read_request(c)?;
                    if self.access & access::WRITE != 0 {
                        return self.write_request(c);
                    }
                    return Some(());
                }
                if self.access & access::WRITE != 0 {
                    return self.write_request(c);
                }
            }
        }
        self.bytes(c)
    }

    fn response(&mut self, c: &mut Cur<'a>) -> Option<()> {
        let len = self.data_length();
        if self.function_raw >= ERROR_MASK {
            return self.exception(c);
        }
        match self.code {
            FN_DIAGNOSTIC => return self.diagnostic(c),
            FN_MEI => return self.mei(c),
            FN_RD_EXC_STATUS if len != 1 => self.flags |= error::DATA_LENGTH,
            FN_GET_COMM_EVENT_CTR if len != 4 => self.flags |= error::DATA_LENGTH,
            _ => {
                if self.access & access::READ != 0 {
                    return self.read_response(c);
                }
                if self.access & access::WRITE != 0 {
                    return self.write_response(c);
                }
            }
        }
        self.bytes(c)
    }

    fn unknown(&mut self, c: &mut Cur<'a>) -> Option<()> {
        if self.function_raw >= ERROR_MASK {
            return self.exception(c);
        }
        match self.code {
            FN_DIAGNOSTIC => self.diagnostic(c),
            FN_MEI => self.mei(c),
            _ => self.bytes(c),
        }
    }

    /// The category of the function (after the PDU is parsed: diagnostic and MEI
    /// messages are reserved when their sub-code is).
    fn categorize(&self) -> u8 {
        match self.code {
            FN_DIAGNOSTIC => match self.data {
                Data::Diagnostic { sub, .. } if diagnostic_name(sub) == "Reserved" => {
                    category::RESERVED
                }
                Data::Diagnostic { .. } => category::PUBLIC_ASSIGNED,
                _ => 0,
            },
            FN_MEI => match self.data {
                Data::Mei { mei, .. } if mei_name(mei) == "Unknown" => category::RESERVED,
                Data::Mei { .. } => category::PUBLIC_ASSIGNED,
                _ => 0,
            },
            0 => category_of_raw(self.function_raw),
            _ => category::PUBLIC_ASSIGNED,
        }
    }

    /// The coils or registers the message addresses, numbered from 1 (the PDU's
    /// address plus one), as an inclusive range.
    pub fn address_range(&self) -> Option<(u16, u16)> {
        match self.data {
            Data::WriteOther { address, .. } | Data::WriteMask { address, .. } => {
                let a = address.wrapping_add(1);
                Some((a, a))
            }
            Data::ReadRequest { address, quantity }
            | Data::WriteMultiple {
                address, quantity, ..
            }
            | Data::ReadWrite {
                address, quantity, ..
            } => (quantity > 0 && quantity <= u16::MAX - address)
                .then(|| (address.wrapping_add(1), address + quantity)),
            _ => None,
        }
    }

    /// The value written at coil or register `address` (numbered from 1), if the
    /// message writes it.
    pub fn write_value_at(&self, address: u16) -> Option<u16> {
        if let Some((lo, hi)) = self.address_range()
            && !(lo..=hi).contains(&address)
        {
            return None;
        }
        if self.access & access::SINGLE != 0 {
            let Data::WriteOther { data, .. } = self.data else {
                return None;
            };
            return Some(if self.access & access::COILS != 0 {
                u16::from(data != 0)
            } else {
                data
            });
        }
        if self.access & access::MULTIPLE == 0 {
            return None;
        }
        let (start, data) = match self.data {
            Data::WriteMultiple { address, data, .. } | Data::ReadWrite { address, data, .. } => {
                (address, data)
            }
            _ => return None,
        };
        if start == u16::MAX || start >= address {
            return None;
        }
        let index = address - (start + 1);
        let mut offset = usize::from(index) * 2;
        if self.access & access::COILS != 0 {
            offset >>= 3;
        }
        let (&a, &b) = (data.get(offset)?, data.get(offset + 1)?);
        let mut value = u16::from_be_bytes([a, b]);
        if self.access & access::COILS != 0 {
            value = (value >> (index & 7)) & 1;
        }
        Some(value)
    }

    /// Checks a response (`self`) against the request `req`: whether it answers it
    /// (same transaction, unit, function and access) and, if so, flags the values
    /// that disagree with it (`DATA_VALUE`).
    pub fn answers(&mut self, req: &Message<'_>) -> bool {
        if self.transaction_id != req.transaction_id
            || self.unit_id != req.unit_id
            || self.code != req.code
            || self.access != req.access
        {
            return false;
        }
        if self.category != category::PUBLIC_ASSIGNED {
            return true;
        }
        if let Data::Exception(_) = req.data {
            return true;
        }
        let bits = |q: u16| usize::from(q / 8) + usize::from(!q.is_multiple_of(8));
        let mut mismatch = false;
        let ok = match (self.data, req.data) {
            (Data::Exception(_), _) => true,
            (Data::Bytes(_), Data::Bytes(_)) => true,
            (Data::Bytes(_), _) => self.flags & error::DATA_LENGTH != 0,
            (_, Data::Bytes(_)) => req.flags & error::DATA_LENGTH != 0,
            // The response's byte count as Suricata checks it: in bits for every read.
            (Data::ReadResponse(d), Data::ReadRequest { quantity, .. }) => {
                mismatch = d.len() != bits(quantity);
                true
            }
            (Data::ReadResponse(d), Data::ReadWrite { read_quantity, .. }) => {
                mismatch = d.len() != 2 * usize::from(read_quantity);
                true
            }
            (Data::ReadRequest { quantity, .. }, Data::ReadResponse(d)) => {
                mismatch = d.len() != bits(quantity);
                true
            }
            (Data::ReadWrite { read_quantity, .. }, Data::ReadResponse(d)) => {
                mismatch = d.len() != 2 * usize::from(read_quantity);
                true
            }
            (
                Data::WriteOther { address, data },
                Data::WriteOther {
                    address: a,
                    data: d,
                },
            ) => {
                mismatch = address != a || data != d;
                true
            }
            (
                Data::WriteOther { address, data },
                Data::WriteMultiple {
                    address: a,
                    quantity: q,
                    ..
                },
            ) => {
                mismatch = address != a || data != q;
                true
            }
            (Data::WriteOther { .. }, Data::WriteMask { .. }) => false,
            (
                Data::WriteMultiple {
                    address, quantity, ..
                },
                Data::WriteOther {
                    address: a,
                    data: d,
                },
            ) => {
                mismatch = address != a || quantity != d;
                true
            }
            (
                Data::WriteMask {
                    address,
                    and_mask,
                    or_mask,
                },
                Data::WriteMask {
                    address: a,
                    and_mask: x,
                    or_mask: y,
                },
            ) => {
                mismatch = address != a || and_mask != x || or_mask != y;
                true
            }
            (Data::Diagnostic { sub, .. }, Data::Diagnostic { sub: s, .. }) => sub == s,
            (Data::Mei { mei, .. }, Data::Mei { mei: m, .. }) => mei == m,
            _ => false,
        };
        if mismatch {
            self.flags |= error::DATA_VALUE;
        }
        ok
    }
}

/// Parses the message at the start of `input` as `side` sent it: the message and the
/// bytes it used.
pub fn parse(input: &[u8], side: Side) -> Result<(Message<'_>, usize), Error> {
    let Some(hdr) = input.first_chunk::<MBAP_LEN>() else {
        return Err(Error::Incomplete);
    };
    let transaction_id = u16::from_be_bytes([hdr[0], hdr[1]]);
    let protocol_id = u16::from_be_bytes([hdr[2], hdr[3]]);
    let length = u16::from_be_bytes([hdr[4], hdr[5]]);
    let mut m = Message {
        transaction_id,
        protocol_id,
        length,
        unit_id: 0,
        function_raw: 0,
        code: 0,
        access: 0,
        category: 0,
        data: Data::Empty,
        flags: if protocol_id != 0 { error::PROTO_ID } else { 0 },
    };
    let rest = &input[MBAP_LEN..];
    if !(MIN_LENGTH..=MAX_LENGTH).contains(&length) {
        // No PDU: the announced bytes that are there are skipped.
        m.flags |= error::DATA_LENGTH;
        return Ok((m, MBAP_LEN + rest.len().min(usize::from(length))));
    }
    let Some(body) = rest.get(..usize::from(length)) else {
        return Err(Error::Incomplete);
    };
    m.unit_id = body[0];
    m.function_raw = body[1];
    m.code = function_code(m.function_raw);
    m.access = access_of(m.code);
    let pdu = &body[2..];
    let mut c = Cur { b: pdu };
    let done = match side {
        Side::Request => m.request(&mut c),
        Side::Response => m.response(&mut c),
        Side::Unknown => m.unknown(&mut c),
    };
    match done {
        Some(()) if !c.b.is_empty() => m.flags |= error::DATA_LENGTH,
        Some(()) => {}
        None => {
            m.flags |= error::DATA_LENGTH;
            if m.data == Data::Empty {
                m.data = Data::Bytes(pdu);
            }
        }
    }
    m.category = m.categorize();
    Ok((m, MBAP_LEN + usize::from(length)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Read coils 0..1 of unit 10, transaction 1, and its response.
    pub const RD_COILS_REQ: &[u8] = b"\x00\x01\x00\x00\x00\x06\x0a\x01\x00\x00\x00\x01";
    pub const RD_COILS_RESP: &[u8] = b"\x00\x01\x00\x00\x00\x04\x0a\x01\x01\x00";
    /// Write single register 5 = 11.
    pub const WR_REG_REQ: &[u8] = b"\x00\x02\x00\x00\x00\x06\x0a\x06\x00\x05\x00\x0b";

    #[test]
    fn requests_and_responses() {
        let (m, n) = parse(RD_COILS_REQ, Side::Request).unwrap();
        assert_eq!(n, RD_COILS_REQ.len());
        assert_eq!((m.transaction_id, m.unit_id, m.code), (1, 10, FN_RD_COILS));
        assert_eq!(m.access, access::READ | access::COILS);
        assert_eq!(m.category, category::PUBLIC_ASSIGNED);
        assert_eq!(
            m.data,
            Data::ReadRequest {
                address: 0,
                quantity: 1
            }
        );
        assert_eq!(m.address_range(), Some((1, 1)));
        let (mut r, _) = parse(RD_COILS_RESP, Side::Response).unwrap();
        assert_eq!(r.data, Data::ReadResponse(b"\x00"));
        assert!(r.answers(&m));
        assert_eq!(r.flags, 0);

        let (w, _) = parse(WR_REG_REQ, Side::Request).unwrap();
        assert_eq!(
            w.data,
            Data::WriteOther {
                address: 5,
                data: 11
            }
        );
        assert_eq!(w.write_value_at(6), Some(11));
        assert_eq!(w.write_value_at(5), None);
    }

    #[test]
    fn register_reads_are_counted_in_bits_as_suricata_does() {
        let req = b"\x00\x01\x00\x00\x00\x06\x0a\x03\x00\x05\x00\x02";
        let resp = b"\x00\x01\x00\x00\x00\x07\x0a\x03\x04\x00\x09\x00\x18";
        let (q, _) = parse(req, Side::Request).unwrap();
        let (mut r, _) = parse(resp, Side::Response).unwrap();
        assert_eq!(r.flags, 0);
        assert!(r.answers(&q));
        assert_eq!(r.flags, error::DATA_VALUE);
    }

    #[test]
    fn exceptions_and_diagnostics() {
        let (m, _) = parse(b"\x00\x00\x00\x00\x00\x03\x0a\x88\x0b", Side::Response).unwrap();
        assert_eq!(m.data, Data::Exception(0x0b));
        assert_eq!((m.code, m.category, m.flags), (FN_DIAGNOSTIC, 0, 0));
        let (m, _) = parse(b"\x00\x00\x00\x00\x00\x03\x0a\x81\x20", Side::Response).unwrap();
        assert_eq!(m.flags, error::EXC_CODE);
        let (m, _) = parse(
            b"\x00\x00\x00\x00\x00\x06\x0a\x08\x00\x01\x12\x00",
            Side::Request,
        )
        .unwrap();
        assert_eq!(m.flags, error::DATA_VALUE);
        let (m, _) = parse(b"\x00\x00\x00\x00\x00\x04\x0a\x08\x00\x16", Side::Request).unwrap();
        assert_eq!(m.category, category::RESERVED);
        assert_eq!(m.flags, error::DATA_LENGTH);
    }

    #[test]
    fn bad_headers_and_short_pdus() {
        assert_eq!(
            parse(b"\x00\x01\x00", Side::Request),
            Err(Error::Incomplete)
        );
        assert_eq!(
            parse(&RD_COILS_REQ[..10], Side::Request),
            Err(Error::Incomplete)
        );
        // Length out of range: the header alone, what is there of the rest skipped.
        let (m, n) = parse(b"hello world", Side::Request).unwrap();
        assert_eq!(n, 11);
        assert_eq!(m.flags, error::PROTO_ID | error::DATA_LENGTH);
        // A read request with a two-byte PDU.
        let (m, n) = parse(b"\x00\x01\x00\x00\x00\x04\x0a\x01\x00\x00", Side::Request).unwrap();
        assert_eq!(n, 10);
        assert_eq!(m.flags, error::DATA_LENGTH);
        assert_eq!(m.data, Data::Bytes(b"\x00\x00"));
        // A multiple write whose length is below its fixed part.
        let (m, _) = parse(
            b"\x00\x01\x00\x00\x00\x06\x0a\x10\x00\x00\x00\x01",
            Side::Request,
        )
        .unwrap();
        assert_ne!(m.flags & error::DATA_LENGTH, 0);
        // Extra bytes after a single write.
        let (m, _) = parse(
            b"\x00\x01\x00\x00\x00\x07\x0a\x06\x00\x05\x00\x0b\x00",
            Side::Request,
        )
        .unwrap();
        assert_eq!(m.flags, error::DATA_LENGTH);
    }

    #[test]
    fn multiple_writes_and_values() {
        // Write registers 1..2 (PDU addresses 0, 1) = 0x000a, 0x0102.
        let req = b"\x00\x01\x00\x00\x00\x0b\x0a\x10\x00\x00\x00\x02\x04\x00\x0a\x01\x02";
        let (m, _) = parse(req, Side::Request).unwrap();
        assert_eq!(m.flags, 0);
        assert_eq!(m.address_range(), Some((1, 2)));
        assert_eq!(m.write_value_at(1), Some(0x000a));
        assert_eq!(m.write_value_at(2), Some(0x0102));
        assert_eq!(m.write_value_at(3), None);
        // Coils 1..10 = 0xcd 0x01.
        let req = b"\x00\x01\x00\x00\x00\x09\x0a\x0f\x00\x00\x00\x0a\x02\xcd\x01";
        let (m, _) = parse(req, Side::Request).unwrap();
        assert_eq!(m.flags, 0);
        assert_eq!(m.write_value_at(2), Some(((0xcd01u16) >> 1) & 1));
    }
}
