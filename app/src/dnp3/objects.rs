//! DNP3 application objects: the object headers (group, variation, qualifier with its
//! prefix and range codes, the range) and the points of the object types Suricata
//! decodes, field by field, with the field names its EVE `dnp3` records use.
//!
//! The protocol does not describe itself: an object of a type not in [`TYPES`] ends the
//! decoding of its message (`dnp3.unknown_object`), as a truncated one does, or one whose
//! lengths do not hold (Suricata raises `dnp3.unknown_object` for both). Points are
//! bounded per message (`max-points`, `dnp3.too_many_points`) and objects too
//! (`max-objects`, `dnp3.too_many_objects`).
//!
//! Variable-length types (file transfer, 70; data sets, 83; secure authentication, 120)
//! carry strings and octet strings whose length is a field before them or what the
//! point's size prefix leaves after its fixed fields; every such length is checked
//! against the bytes left (and [`MAX_TEXT_U8`] / [`MAX_TEXT_U16`] where Suricata
//! bounds it) before anything is read.

/// The longest text a 70.4, 70.5 or 70.6 point carries (Suricata's one-byte length):
/// a longer one ends the decoding.
pub const MAX_TEXT_U8: usize = 255;
/// The longest text a 70.8 or 120.7 point carries (Suricata's two-byte length).
pub const MAX_TEXT_U16: usize = 65535;
/// Fields of one object type at most (the length of a variable field refers to an
/// earlier one by its place).
pub const MAX_FIELDS: usize = 16;

/// Where a variable field's length comes from.
#[derive(Debug, Clone, Copy)]
pub enum Len {
    /// The value of the point's field at this place (among the type's fields).
    Field(usize),
    /// What the point's prefix (its size) leaves after the fields before: more than
    /// `Some(max)` ends the decoding; with `None` the length is cut to 16 bits, as
    /// Suricata's (only 120.9 can have a longer prefix).
    Rest(Option<usize>),
}

/// One field of an object type.
#[derive(Debug, Clone, Copy)]
pub enum Field {
    /// A byte of bit fields, `(name, width)` from the lowest bit up.
    Bits(&'static [(&'static str, u8)]),
    U8(&'static str),
    U16(&'static str),
    U32(&'static str),
    /// DNP3 time: milliseconds since the epoch in 48 bits.
    Time(&'static str),
    I16(&'static str),
    I32(&'static str),
    F32(&'static str),
    F64(&'static str),
    /// A 24-bit unsigned integer.
    U24(&'static str),
    /// Four bytes logged as a C string (up to the first NUL).
    Code4(&'static str),
    /// A string of bytes (logged as text).
    Text(&'static str, Len),
    /// An octet string (logged in base64).
    Octets(&'static str, Len),
}

impl Field {
    /// The values the field makes.
    fn values(&self) -> usize {
        match self {
            Field::Bits(b) => b.len(),
            _ => 1,
        }
    }

    /// Its bytes on the wire, when fixed.
    fn size(&self) -> Option<usize> {
        match self {
            Field::Bits(_) | Field::U8(_) => Some(1),
            Field::U16(_) | Field::I16(_) => Some(2),
            Field::U24(_) => Some(3),
            Field::U32(_) | Field::I32(_) | Field::F32(_) | Field::Code4(_) => Some(4),
            Field::Time(_) => Some(6),
            Field::F64(_) => Some(8),
            Field::Text(..) | Field::Octets(..) => None,
        }
    }
}

/// The prefix codes an object type is decoded with (others end the decoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefixes {
    Any,
    /// A size: codes 4 to 6.
    Size,
    /// A two-byte size: code 5.
    Size2,
}

impl Prefixes {
    fn allow(self, code: u8) -> bool {
        match self {
            Prefixes::Any => true,
            Prefixes::Size => prefix_is_size(code),
            Prefixes::Size2 => code == 5,
        }
    }
}

/// An object type's layout.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// Points of `bits` bits each, packed from the lowest bit of each byte, one value
    /// named `name` per point.
    Packed { bits: u8, name: &'static str },
    /// Points of fixed fields, each after its prefix.
    Fields(&'static [Field]),
}

/// An object type.
#[derive(Debug, Clone, Copy)]
pub struct ObjType {
    pub group: u8,
    pub variation: u8,
    pub layout: Layout,
    pub prefixes: Prefixes,
}

impl ObjType {
    /// The names of a point's values, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        let (packed, fields): (Option<&'static str>, &'static [Field]) = match self.layout {
            Layout::Packed { name, .. } => (Some(name), &[]),
            Layout::Fields(f) => (None, f),
        };
        packed.into_iter().chain(fields.iter().flat_map(|f| {
            let (bits, one): (&'static [(&'static str, u8)], Option<&'static str>) = match *f {
                Field::Bits(b) => (b, None),
                Field::U8(n)
                | Field::U16(n)
                | Field::U32(n)
                | Field::Time(n)
                | Field::I16(n)
                | Field::I32(n)
                | Field::F32(n)
                | Field::F64(n)
                | Field::U24(n)
                | Field::Code4(n)
                | Field::Text(n, _)
                | Field::Octets(n, _) => (&[], Some(n)),
            };
            bits.iter().map(|(n, _)| *n).chain(one)
        }))
    }

    /// Values per point.
    pub fn values(&self) -> usize {
        match self.layout {
            Layout::Packed { .. } => 1,
            Layout::Fields(f) => f.iter().map(Field::values).sum(),
        }
    }
}

/// The object type `group`/`variation`, if it is one that is decoded.
pub fn find(group: u8, variation: u8) -> Option<&'static ObjType> {
    TYPES
        .binary_search_by_key(&(group, variation), |t| (t.group, t.variation))
        .ok()
        .map(|i| &TYPES[i])
}

/// A point's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U(u64),
    I(i64),
    F(f64),
    /// Bytes logged as text.
    Text(Box<[u8]>),
    /// Bytes logged in base64.
    Octets(Box<[u8]>),
    /// A C string's bytes (before its NUL), logged when they are UTF-8.
    CStr(Box<[u8]>),
}

/// A decoded object header and its points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object {
    pub group: u8,
    pub variation: u8,
    pub qualifier: u8,
    pub start: u32,
    pub stop: u32,
    pub count: u32,
    /// Per point: its prefix and index.
    pub points: Vec<(u32, u32)>,
    /// The points' values, [`ObjType::values`] per point.
    pub values: Vec<Value>,
}

impl Object {
    pub fn prefix_code(&self) -> u8 {
        (self.qualifier >> 4) & 0x7
    }

    pub fn range_code(&self) -> u8 {
        self.qualifier & 0xf
    }
}

/// What went wrong decoding a message's objects (its anomaly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// An object header or its range is cut short, or its range code is reserved:
    /// nothing to report.
    Short,
    /// An object of a type not decoded, or its points cut short (Suricata reports
    /// both as unknown).
    UnknownObject,
    TooManyPoints,
    TooManyObjects,
}

impl Stop {
    /// The anomaly, if the stop raises one.
    pub fn event(self) -> Option<&'static str> {
        match self {
            Stop::Short => None,
            Stop::UnknownObject => Some("dnp3.unknown_object"),
            Stop::TooManyPoints => Some("dnp3.too_many_points"),
            Stop::TooManyObjects => Some("dnp3.too_many_objects"),
        }
    }
}

/// The limits of one message's decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_points: usize,
    pub max_objects: usize,
}

/// Reads little-endian integers off the front of a slice.
struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn uint(&mut self, n: usize) -> Option<u64> {
        let b = self.take(n)?;
        Some(b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    }
}

/// Decodes the objects of `data` (the message after its application header) into
/// `out`; `Ok` when every object was decoded, else why decoding stopped (the objects
/// before, and the points decoded of the last, are kept).
pub fn decode(data: &[u8], limits: Limits, out: &mut Vec<Object>) -> Result<(), Stop> {
    let mut r = Rd(data);
    let mut points = 0usize;
    while !r.0.is_empty() {
        if out.len() >= limits.max_objects {
            return Err(Stop::TooManyObjects);
        }
        let h = r.take(3).ok_or(Stop::Short)?;
        let o = Object {
            group: h[0],
            variation: h[1],
            qualifier: h[2],
            ..Object::default()
        };
        // As Suricata, the object is listed before its range is read: one whose range
        // is cut short or reserved is listed with none.
        let range = o.range_code();
        out.push(o);
        let (start, stop, count) = match range {
            0 | 3 => range_pair(&mut r, 1)?,
            1 | 4 => range_pair(&mut r, 2)?,
            2 | 5 => range_pair(&mut r, 4)?,
            6 => (0, 0, 0),
            7 | 0xb => (0, 0, r.uint(1).ok_or(Stop::Short)? as u32),
            8 => (0, 0, r.uint(2).ok_or(Stop::Short)? as u32),
            9 => (0, 0, r.uint(4).ok_or(Stop::Short)? as u32),
            _ => return Err(Stop::Short),
        };
        let o = out.last_mut().expect("pushed above");
        (o.start, o.stop, o.count) = (start, stop, count);
        if h[1] == 0 || count == 0 {
            continue;
        }
        let count = count as usize;
        if count > limits.max_points.saturating_sub(points) {
            return Err(Stop::TooManyPoints);
        }
        points += count;
        let Some(t) = find(h[0], h[1]) else {
            return Err(Stop::UnknownObject);
        };
        let o = out.last_mut().expect("pushed above");
        points_of(t, &mut r, o, count)?;
    }
    Ok(())
}

/// A range of start and stop indexes of `n` bytes each, and its count (as Suricata
/// counts it, in 32 bits).
fn range_pair(r: &mut Rd<'_>, n: usize) -> Result<(u32, u32, u32), Stop> {
    let start = r.uint(n).ok_or(Stop::Short)? as u32;
    let stop = r.uint(n).ok_or(Stop::Short)? as u32;
    Ok((start, stop, stop.wrapping_sub(start).wrapping_add(1)))
}

/// Bytes of the prefix of prefix code `code` (1-3: an index, 4-6: a size; as
/// Suricata, the reserved code 7 has none).
fn prefix_len(code: u8) -> usize {
    match code {
        1 | 4 => 1,
        2 | 5 => 2,
        3 | 6 => 4,
        _ => 0,
    }
}

/// A point's index: its prefix when that is an index, else its place counted from the
/// range's start.
fn point_index(code: u8, prefix: u32, index: u32) -> u32 {
    if (1..=3).contains(&code) {
        prefix
    } else {
        index
    }
}

/// Whether prefix code `code` is a size (logged as the point's `size`).
pub fn prefix_is_size(code: u8) -> bool {
    (4..=6).contains(&code)
}

fn points_of(t: &ObjType, r: &mut Rd<'_>, o: &mut Object, count: usize) -> Result<(), Stop> {
    let code = o.prefix_code();
    let plen = prefix_len(code);
    let mut index = o.start;
    match t.layout {
        Layout::Packed { bits, .. } => {
            // Eight points a byte at most.
            let room = count.min(r.0.len().saturating_mul(8));
            o.points.reserve(room);
            o.values.reserve(room);
            // As Suricata: one prefix for every point, and `count / 8 + 1` bytes
            // whatever the width (a last byte may be read for no point).
            let prefix = r.uint(plen).ok_or(Stop::UnknownObject)? as u32;
            let mask = (1u8 << bits) - 1;
            let mut left = count;
            for _ in 0..count / 8 + 1 {
                let b = r.uint(1).ok_or(Stop::UnknownObject)? as u8;
                for shift in (0..8).step_by(usize::from(bits)) {
                    if left == 0 {
                        break;
                    }
                    o.points.push((prefix, point_index(code, prefix, index)));
                    o.values.push(Value::U(u64::from((b >> shift) & mask)));
                    index = index.wrapping_add(1);
                    left -= 1;
                }
            }
        }
        Layout::Fields(fields) => {
            // As Suricata: fewer bytes than a bit per point decode none.
            if !t.prefixes.allow(code) || r.0.len() < count / 8 {
                return Err(Stop::UnknownObject);
            }
            // Reserved for the points the bytes left can hold (a point takes one at
            // least, but for a 120.9 without prefix, which grows the vectors as it goes).
            let room = count.min(r.0.len());
            o.points.reserve(room);
            o.values.reserve(room * t.values());
            for _ in 0..count {
                let prefix = r.uint(plen).ok_or(Stop::UnknownObject)? as u32;
                let at = o.values.len();
                if point(fields, r, prefix, &mut o.values).is_none() {
                    // The point cut short is not kept.
                    o.values.truncate(at);
                    return Err(Stop::UnknownObject);
                }
                o.points.push((prefix, point_index(code, prefix, index)));
                index = index.wrapping_add(1);
            }
        }
    }
    Ok(())
}

/// Decodes one point's fields after its prefix (`prefix`) into `out`; `None` when its
/// bytes or lengths do not hold.
fn point(fields: &[Field], r: &mut Rd<'_>, prefix: u32, out: &mut Vec<Value>) -> Option<()> {
    let start = r.0.len();
    // The integer value of each field so far, for the lengths that refer to them.
    let mut ints = [0u64; MAX_FIELDS];
    for (i, f) in fields.iter().enumerate() {
        let len = |len: Len, left: usize| -> Option<usize> {
            match len {
                Len::Field(j) => usize::try_from(*ints.get(j)?).ok(),
                Len::Rest(max) => {
                    let rest = usize::try_from(prefix).ok()?.checked_sub(start - left)?;
                    match max {
                        Some(m) => (rest <= m).then_some(rest),
                        None => Some(rest & 0xffff),
                    }
                }
            }
        };
        match *f {
            Field::Text(_, l) => {
                let n = len(l, r.0.len())?;
                out.push(Value::Text(r.take(n)?.into()));
                continue;
            }
            Field::Octets(_, l) => {
                let n = len(l, r.0.len())?;
                out.push(Value::Octets(r.take(n)?.into()));
                continue;
            }
            Field::Code4(_) => {
                let b = r.take(4)?;
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                out.push(Value::CStr(b.get(..end)?.into()));
                continue;
            }
            _ => {}
        }
        let b = r.take(f.size()?)?;
        let u = b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
        if let Some(slot) = ints.get_mut(i) {
            *slot = u;
        }
        match *f {
            Field::Bits(bits) => {
                let mut shift = 0u8;
                for &(_, w) in bits {
                    let m = (1u64 << w) - 1;
                    out.push(Value::U((u >> shift) & m));
                    shift += w;
                }
            }
            Field::I16(_) => out.push(Value::I(i64::from(u as u16 as i16))),
            Field::I32(_) => out.push(Value::I(i64::from(u as u32 as i32))),
            Field::F32(_) => out.push(Value::F(f64::from(f32::from_bits(u as u32)))),
            Field::F64(_) => out.push(Value::F(f64::from_bits(u))),
            _ => out.push(Value::U(u)),
        }
    }
    Some(())
}

use Field::*;

const BIN: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("chatter_filter", 1),
    ("reserved", 1),
    ("state", 1),
]);
const DBIN: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("chatter_filter", 1),
    ("state", 2),
]);
const BOUT: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("reserved0", 1),
    ("reserved1", 1),
    ("state", 1),
]);
const CROB: &[Field] = &[
    Bits(&[("op_type", 4), ("qu", 1), ("cr", 1), ("tcc", 2)]),
    U8("count"),
    U32("ontime"),
    U32("offtime"),
    Bits(&[("status_code", 7), ("reserved", 1)]),
];
const CMD: Field = Bits(&[("status_code", 7), ("commanded_state", 1)]);
/// Counter flags with the discontinuity bit.
const CTR_D: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("rollover", 1),
    ("discontinuity", 1),
    ("reserved0", 1),
]);
/// Counter flags with two reserved bits.
const CTR_R: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("rollover", 1),
    ("reserved0", 1),
    ("reserved1", 1),
]);
/// Frozen counter flags with time (group 21 variations 5 and 6).
const CTR_D1: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("rollover", 1),
    ("discontinuity", 1),
    ("reserved1", 1),
]);
const ANA: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("over_range", 1),
    ("reference_err", 1),
    ("reserved0", 1),
]);
const AOUT_STATUS: Field = Bits(&[("status_code", 7), ("reserved0", 1)]);
const SEC: Field = Bits(&[
    ("online", 1),
    ("restart", 1),
    ("comm_lost", 1),
    ("remote_forced", 1),
    ("local_forced", 1),
    ("reserved0", 1),
    ("discontinuity", 1),
    ("reserved1", 1),
]);
const TS: Field = Time("timestamp");

const fn t(group: u8, variation: u8, fields: &'static [Field]) -> ObjType {
    tp(group, variation, Prefixes::Any, fields)
}

/// A type decoded only with the prefix codes `prefixes`.
const fn tp(group: u8, variation: u8, prefixes: Prefixes, fields: &'static [Field]) -> ObjType {
    ObjType {
        group,
        variation,
        layout: Layout::Fields(fields),
        prefixes,
    }
}

const fn packed(group: u8, variation: u8, bits: u8, name: &'static str) -> ObjType {
    ObjType {
        group,
        variation,
        layout: Layout::Packed { bits, name },
        prefixes: Prefixes::Any,
    }
}

/// What the size prefix leaves, unbounded (cut to 16 bits).
const REST: Len = Len::Rest(None);
const SIZE: Prefixes = Prefixes::Size;
const SIZE2: Prefixes = Prefixes::Size2;

/// The object types decoded, sorted by group and variation: Suricata's table. Types it
/// does not decode (device attributes, 0; octet strings, 110 and 111; virtual terminal,
/// 112 and 113; data set prototypes and descriptors, 85 to 88 but 86.2; ...) end the
/// decoding as unknown.
pub static TYPES: &[ObjType] = &[
    packed(1, 1, 1, "state"),
    t(1, 2, &[BIN]),
    t(2, 1, &[U8("state")]),
    t(2, 2, &[BIN, TS]),
    t(2, 3, &[BIN, U16("timestamp")]),
    packed(3, 1, 2, "state"),
    t(3, 2, &[DBIN]),
    t(4, 1, &[DBIN]),
    t(4, 2, &[DBIN, TS]),
    t(4, 3, &[DBIN, U16("relative_time_ms")]),
    packed(10, 1, 1, "state"),
    t(10, 2, &[BOUT]),
    t(11, 1, &[BOUT]),
    t(11, 2, &[BOUT, TS]),
    t(12, 1, CROB),
    t(12, 2, CROB),
    packed(12, 3, 1, "point"),
    t(13, 1, &[CMD]),
    t(13, 2, &[CMD, TS]),
    t(20, 1, &[CTR_D, U32("count")]),
    t(20, 2, &[CTR_D, U16("count")]),
    t(20, 3, &[CTR_R, U32("count")]),
    t(20, 4, &[CTR_R, U16("count")]),
    t(20, 5, &[U32("count")]),
    t(20, 6, &[U16("count")]),
    t(20, 7, &[U32("count")]),
    t(20, 8, &[U16("count")]),
    t(21, 1, &[CTR_D, U32("count")]),
    t(21, 2, &[CTR_D, U16("count")]),
    t(21, 3, &[CTR_R, U32("count")]),
    t(21, 4, &[CTR_R, U16("count")]),
    t(21, 5, &[CTR_D1, U32("count"), TS]),
    t(21, 6, &[CTR_D1, U16("count"), TS]),
    t(21, 7, &[CTR_R, U32("count"), TS]),
    t(21, 8, &[CTR_R, U16("count"), TS]),
    t(21, 9, &[U32("count")]),
    t(21, 10, &[U16("count")]),
    t(21, 11, &[U32("count")]),
    t(21, 12, &[U16("count")]),
    t(22, 1, &[CTR_D, U32("count")]),
    t(22, 2, &[CTR_D, U16("count")]),
    t(22, 3, &[CTR_R, U32("count")]),
    t(22, 4, &[CTR_R, U16("count")]),
    t(22, 5, &[CTR_R, U32("count"), TS]),
    t(22, 6, &[CTR_D, U16("count"), TS]),
    t(22, 7, &[CTR_R, U32("count"), TS]),
    t(22, 8, &[CTR_R, U16("count"), TS]),
    t(23, 1, &[CTR_D, U32("count")]),
    t(23, 2, &[CTR_R, U16("count")]),
    t(23, 3, &[CTR_R, U32("count")]),
    t(23, 4, &[CTR_R, U16("count")]),
    t(23, 5, &[CTR_D, U32("count"), TS]),
    t(23, 6, &[CTR_D, U16("count"), TS]),
    t(23, 7, &[CTR_R, U32("count"), TS]),
    t(23, 8, &[CTR_R, U16("count"), TS]),
    t(30, 1, &[ANA, I32("value")]),
    t(30, 2, &[ANA, I16("value")]),
    t(30, 3, &[I32("value")]),
    t(30, 4, &[I16("value")]),
    t(30, 5, &[ANA, F32("value")]),
    t(30, 6, &[ANA, F64("value")]),
    t(31, 1, &[ANA, I32("value")]),
    t(31, 2, &[ANA, I16("value")]),
    t(31, 3, &[ANA, I32("value"), TS]),
    t(31, 4, &[ANA, I16("value"), TS]),
    t(31, 5, &[I32("value")]),
    t(31, 6, &[I16("value")]),
    t(31, 7, &[ANA, F32("value")]),
    t(31, 8, &[ANA, F64("value")]),
    t(32, 1, &[ANA, I32("value")]),
    t(32, 2, &[ANA, I16("value")]),
    t(32, 3, &[ANA, I32("value"), TS]),
    t(32, 4, &[ANA, I16("value"), TS]),
    t(32, 5, &[ANA, F32("value")]),
    t(32, 6, &[ANA, F64("value")]),
    t(32, 7, &[ANA, F32("value"), TS]),
    t(32, 8, &[ANA, F64("value"), TS]),
    t(33, 1, &[ANA, I32("value")]),
    t(33, 2, &[ANA, I16("value")]),
    t(33, 3, &[ANA, I32("value"), TS]),
    t(33, 4, &[ANA, I16("value"), TS]),
    t(33, 5, &[ANA, F32("value")]),
    t(33, 6, &[ANA, F64("value")]),
    t(33, 7, &[ANA, F32("value"), TS]),
    t(33, 8, &[ANA, F64("value"), TS]),
    t(34, 1, &[U16("deadband_value")]),
    t(34, 2, &[U32("deadband_value")]),
    t(34, 3, &[F32("deadband_value")]),
    t(40, 1, &[ANA, I32("value")]),
    t(40, 2, &[ANA, I16("value")]),
    t(40, 3, &[ANA, F32("value")]),
    t(40, 4, &[ANA, F64("value")]),
    t(41, 1, &[I32("value"), U8("control_status")]),
    t(41, 2, &[I16("value"), U8("control_status")]),
    t(41, 3, &[F32("value"), U8("control_status")]),
    t(41, 4, &[F64("value"), U8("control_status")]),
    t(42, 1, &[ANA, I32("value")]),
    t(42, 2, &[ANA, I16("value")]),
    t(42, 3, &[ANA, I32("value"), TS]),
    t(42, 4, &[ANA, I16("value"), TS]),
    t(42, 5, &[ANA, F32("value")]),
    t(42, 6, &[ANA, F64("value")]),
    t(42, 7, &[ANA, F32("value"), TS]),
    t(42, 8, &[ANA, F64("value"), TS]),
    t(43, 1, &[AOUT_STATUS, I32("commanded_value")]),
    t(43, 2, &[AOUT_STATUS, I16("commanded_value")]),
    t(43, 3, &[AOUT_STATUS, I32("commanded_value"), TS]),
    t(43, 4, &[AOUT_STATUS, I16("commanded_value"), TS]),
    t(43, 5, &[AOUT_STATUS, F32("commanded_value")]),
    t(43, 6, &[AOUT_STATUS, F64("commanded_value")]),
    t(43, 7, &[AOUT_STATUS, F32("commanded_value"), TS]),
    t(43, 8, &[AOUT_STATUS, F64("commanded_value"), TS]),
    t(50, 1, &[TS]),
    t(50, 2, &[TS, U32("interval")]),
    t(50, 3, &[TS]),
    t(50, 4, &[TS, U32("interval_count"), U8("interval_units")]),
    t(51, 1, &[TS]),
    t(51, 2, &[TS]),
    t(52, 1, &[U16("delay_secs")]),
    t(52, 2, &[U16("delay_ms")]),
    t(
        70,
        1,
        &[
            U16("filename_size"),
            U8("filetype_code"),
            U8("attribute_code"),
            U16("start_record"),
            U16("end_record"),
            U32("file_size"),
            Time("created_timestamp"),
            U16("permission"),
            U32("file_id"),
            U32("owner_id"),
            U32("group_id"),
            U8("file_function_code"),
            U8("status_code"),
            Text("filename", Len::Field(0)),
            U16("data_size"),
            Text("data", Len::Field(14)),
        ],
    ),
    t(
        70,
        2,
        &[
            U16("username_offset"),
            U16("username_size"),
            U16("password_offset"),
            U16("password_size"),
            U32("authentication_key"),
            Text("username", Len::Field(1)),
            Text("password", Len::Field(3)),
        ],
    ),
    t(
        70,
        3,
        &[
            U16("filename_offset"),
            U16("filename_size"),
            Time("created"),
            U16("permissions"),
            U32("authentication_key"),
            U32("file_size"),
            U16("operational_mode"),
            U16("maximum_block_size"),
            U16("request_id"),
            Text("filename", Len::Field(1)),
        ],
    ),
    tp(
        70,
        4,
        SIZE,
        &[
            U32("file_handle"),
            U32("file_size"),
            U16("maximum_block_size"),
            U16("request_id"),
            U8("status_code"),
            Text("optional_text", Len::Rest(Some(MAX_TEXT_U8))),
        ],
    ),
    tp(
        70,
        5,
        SIZE,
        &[
            U32("file_handle"),
            U32("block_number"),
            Text("file_data", Len::Rest(Some(MAX_TEXT_U8))),
        ],
    ),
    tp(
        70,
        6,
        SIZE,
        &[
            U32("file_handle"),
            U32("block_number"),
            U8("status_code"),
            Text("optional_text", Len::Rest(Some(MAX_TEXT_U8))),
        ],
    ),
    t(
        70,
        7,
        &[
            U16("filename_offset"),
            U16("filename_size"),
            U16("file_type"),
            U32("file_size"),
            Time("created_timestamp"),
            U16("permissions"),
            U16("request_id"),
            Text("filename", Len::Field(1)),
        ],
    ),
    tp(
        70,
        8,
        SIZE2,
        &[Text("file_specification", Len::Rest(Some(MAX_TEXT_U16)))],
    ),
    packed(80, 1, 1, "state"),
    t(
        81,
        1,
        &[
            Bits(&[("fill_percentage", 7), ("overflow_state", 1)]),
            U8("group"),
            U8("variation"),
        ],
    ),
    // Suricata's keys for the vendor code and the data objects name its C fields.
    t(
        83,
        1,
        &[
            Code4("data->vendor_code"),
            U16("object_id"),
            U16("length"),
            Octets("data->data_objects", Len::Field(2)),
        ],
    ),
    t(
        86,
        2,
        &[Bits(&[
            ("rd", 1),
            ("wr", 1),
            ("st", 1),
            ("ev", 1),
            ("df", 1),
            ("padding0", 1),
            ("padding1", 1),
            ("padding2", 1),
        ])],
    ),
    t(102, 1, &[U8("value")]),
    tp(
        120,
        1,
        SIZE2,
        &[
            U32("csq"),
            U16("usr"),
            U8("mal"),
            U8("reason"),
            Octets("data->challenge_data", REST),
        ],
    ),
    tp(
        120,
        2,
        SIZE2,
        &[U32("csq"), U16("usr"), Octets("data->mac_value", REST)],
    ),
    t(120, 3, &[U32("csq"), U16("user_number")]),
    t(120, 4, &[U16("user_number")]),
    tp(
        120,
        5,
        SIZE2,
        &[
            U32("ksq"),
            U16("user_number"),
            U8("key_wrap_alg"),
            U8("key_status"),
            U8("mal"),
            U16("challenge_data_len"),
            Octets("data->challenge_data", Len::Field(5)),
            Octets("data->mac_value", REST),
        ],
    ),
    tp(
        120,
        6,
        SIZE2,
        &[
            U24("ksq"),
            U16("usr"),
            Octets("data->wrapped_key_data", REST),
        ],
    ),
    tp(
        120,
        7,
        SIZE2,
        &[
            U32("sequence_number"),
            U16("usr"),
            U16("association_id"),
            U8("error_code"),
            Time("time_of_error"),
            Text("error_text", Len::Rest(Some(MAX_TEXT_U16))),
        ],
    ),
    tp(
        120,
        8,
        SIZE2,
        &[
            U8("key_change_method"),
            U8("certificate_type"),
            Octets("data->certificate", REST),
        ],
    ),
    // As Suricata: any prefix, its value the MAC's length whatever it is.
    t(120, 9, &[Octets("data->mac_value", REST)]),
    tp(
        120,
        10,
        SIZE2,
        &[
            U8("key_change_method"),
            U8("operation"),
            U32("scs"),
            U16("user_role"),
            U16("user_role_expiry_interval"),
            U16("username_len"),
            U16("user_public_key_len"),
            U16("certification_data_len"),
            Text("username", Len::Field(5)),
            Octets("data->user_public_key", Len::Field(6)),
            Octets("data->certification_data", Len::Field(7)),
        ],
    ),
    tp(
        120,
        11,
        SIZE2,
        &[
            U8("key_change_method"),
            U16("username_len"),
            U16("master_challenge_data_len"),
            Text("username", Len::Field(1)),
            Octets("data->master_challenge_data", Len::Field(2)),
        ],
    ),
    tp(
        120,
        12,
        SIZE2,
        &[
            U32("ksq"),
            U16("user_number"),
            U16("challenge_data_len"),
            Octets("data->challenge_data", Len::Field(2)),
        ],
    ),
    tp(
        120,
        13,
        SIZE2,
        &[
            U32("ksq"),
            U16("user_number"),
            U16("encrypted_update_key_len"),
            Octets("data->encrypted_update_key_data", Len::Field(2)),
        ],
    ),
    tp(120, 14, SIZE2, &[Octets("data->digital_signature", REST)]),
    tp(120, 15, SIZE2, &[Octets("data->mac", REST)]),
    t(121, 1, &[SEC, U16("association_id"), U32("count_value")]),
    t(122, 1, &[SEC, U16("association_id"), U32("count_value")]),
    t(
        122,
        2,
        &[SEC, U16("association_id"), U32("count_value"), TS],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_points: 16384,
        max_objects: 2048,
    };

    #[test]
    fn the_table_is_sorted_and_bits_fill_bytes() {
        assert!(
            TYPES
                .windows(2)
                .all(|w| (w[0].group, w[0].variation) < (w[1].group, w[1].variation))
        );
        for t in TYPES {
            if let Layout::Fields(f) = t.layout {
                for field in f {
                    if let Field::Bits(b) = field {
                        assert_eq!(b.iter().map(|(_, w)| u32::from(*w)).sum::<u32>(), 8);
                    }
                }
            }
            assert_eq!(t.names().count(), t.values());
            let Layout::Fields(f) = t.layout else {
                continue;
            };
            assert!(f.len() <= MAX_FIELDS);
            // A length field comes before its field and is an integer.
            for (i, field) in f.iter().enumerate() {
                if let Text(_, Len::Field(j)) | Octets(_, Len::Field(j)) = *field {
                    assert!(
                        j < i && matches!(f[j], U16(_)),
                        "{}.{}",
                        t.group,
                        t.variation
                    );
                }
            }
        }
    }

    #[test]
    fn variable_lengths() {
        // 70.4, qualifier 0x5b (2-byte size prefix, 1-byte count), 2 points: size 15
        // (13 bytes of fields and "ok"), then size 13 (no text).
        let fixed = [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 4, 0, 5];
        let mut d = vec![70, 4, 0x5b, 2, 15, 0];
        d.extend_from_slice(&fixed);
        d.extend_from_slice(b"ok");
        d.extend_from_slice(&[13, 0]);
        d.extend_from_slice(&fixed);
        let mut out = Vec::new();
        decode(&d, LIMITS, &mut out).unwrap();
        assert_eq!(out[0].points, [(15, 0), (13, 1)]);
        assert_eq!(out[0].values[5], Value::Text(b"ok"[..].into()));
        assert_eq!(out[0].values[11], Value::Text(b""[..].into()));
        // A size short of the fixed fields, and no size prefix at all.
        for q in [[70, 4, 0x5b, 1, 12, 0], [70, 4, 0x07, 1, 0, 0]] {
            let mut d = q.to_vec();
            d.extend_from_slice(&fixed);
            out.clear();
            assert_eq!(decode(&d, LIMITS, &mut out), Err(Stop::UnknownObject));
            assert!(out[0].points.is_empty() && out[0].values.is_empty());
        }
        // 70.5: 255 bytes of data hold, 256 do not.
        for (n, ok) in [(255usize, true), (256, false)] {
            let mut d = vec![70, 5, 0x5b, 1];
            d.extend_from_slice(&((8 + n) as u16).to_le_bytes());
            d.extend_from_slice(&[0; 8]);
            d.resize(d.len() + n, b'x');
            out.clear();
            assert_eq!(decode(&d, LIMITS, &mut out).is_ok(), ok, "{n}");
        }
        // 83.1: a vendor code cut at its NUL, a length field beyond the bytes left.
        out.clear();
        let d = [83, 1, 0x5b, 1, 9, 0, b'A', 0, b'C', b'D', 6, 0, 1, 0, 0xff];
        decode(&d, LIMITS, &mut out).unwrap();
        assert_eq!(out[0].values[0], Value::CStr(b"A"[..].into()));
        assert_eq!(out[0].values[3], Value::Octets([0xff][..].into()));
        out.clear();
        let d = [83, 1, 0x5b, 1, 9, 0, b'A', 0, b'C', b'D', 6, 0, 2, 0, 0xff];
        assert_eq!(decode(&d, LIMITS, &mut out), Err(Stop::UnknownObject));
        // 120.9 without a prefix: empty MACs; with a 4-byte index: its length in 16
        // bits.
        out.clear();
        let d = [120, 9, 0x07, 2, 120, 9, 0x39, 1, 0, 0, 0, 2, 0, 1, 0, 7, 8];
        decode(&d, LIMITS, &mut out).unwrap();
        assert_eq!(
            out[0].values,
            [Value::Octets([][..].into()), Value::Octets([][..].into())]
        );
        assert_eq!(out[1].points, [(0x10002, 0x10002)]);
        assert_eq!(out[1].values, [Value::Octets([7, 8][..].into())]);
        // 120.1 takes only a 2-byte size.
        out.clear();
        let d = [120, 1, 0x4b, 1, 8, 1, 0, 0, 0, 2, 0, 3, 4];
        assert_eq!(decode(&d, LIMITS, &mut out), Err(Stop::UnknownObject));
    }

    #[test]
    fn reserved_prefix_and_short_counts() {
        // Prefix code 7 reads no prefix.
        let mut out = Vec::new();
        decode(&[30, 1, 0x70, 0, 0, 1, 5, 0, 0, 0], LIMITS, &mut out).unwrap();
        assert_eq!(out[0].points, [(0, 0)]);
        // 96 points of 30.1 (2-byte count) in 10 bytes, fewer than 96 / 8: none.
        let mut d = vec![30, 1, 0x08, 96, 0];
        d.extend_from_slice(&[1, 5, 0, 0, 0, 1, 5, 0, 0, 0]);
        out.clear();
        assert_eq!(decode(&d, LIMITS, &mut out), Err(Stop::UnknownObject));
        assert!(out[0].points.is_empty());
        // Three points of 30.1, the last cut short: two kept, with their values only.
        let d = [30, 1, 0, 0, 2, 1, 5, 0, 0, 0, 1, 6, 0, 0, 0, 1, 7];
        out.clear();
        assert_eq!(decode(&d, LIMITS, &mut out), Err(Stop::UnknownObject));
        assert_eq!((out[0].points.len(), out[0].values.len()), (2, 18));
    }

    #[test]
    fn counter_with_an_index_prefix_and_packed_states() {
        // 22.1, qualifier 0x28: 2-byte count, 2-byte index prefix; then 80.1, start 7
        // stop 7; then 60.2 all (no points).
        let data = [
            22, 1, 0x28, 1, 0, 5, 0, 0x01, 3, 0, 0, 0, 80, 1, 0x00, 7, 7, 0x00, 60, 2, 0x06,
        ];
        let mut out = Vec::new();
        decode(&data, LIMITS, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].points, [(5, 5)]);
        assert_eq!(out[0].values[0], Value::U(1));
        assert_eq!(out[0].values[8], Value::U(3));
        assert_eq!(out[1].points, [(0, 7)]);
        assert_eq!(out[2].count, 0);
        // Packed with an index prefix, 8 points: one prefix, and two bytes read.
        let mut out = Vec::new();
        decode(&[1, 1, 0x17, 8, 5, 0xff, 0x00, 60, 1, 6], LIMITS, &mut out).unwrap();
        assert_eq!(out[0].points, [(5, 5); 8]);
        assert_eq!(out[1].group, 60);
        // 2-bit states: 5 points but `5 / 8 + 1` bytes, so 4 points.
        let mut out = Vec::new();
        let r = decode(&[3, 1, 0x00, 0, 4, 0b1110_0100], LIMITS, &mut out);
        assert_eq!(r, Ok(()));
        assert_eq!(out[0].values, [0, 1, 2, 3].map(Value::U));
    }

    #[test]
    fn stops() {
        let mut out = Vec::new();
        assert_eq!(
            decode(&[110, 4, 0x00, 0, 0, 1, 2, 3, 4], LIMITS, &mut out),
            Err(Stop::UnknownObject)
        );
        out.clear();
        // 65535 points of 1.1 in a 2-byte range.
        assert_eq!(
            decode(&[1, 1, 0x01, 0, 0, 0xfe, 0xff], LIMITS, &mut out),
            Err(Stop::TooManyPoints)
        );
        assert_eq!(out.len(), 1);
        out.clear();
        // 30.1 with its value cut short.
        assert_eq!(
            decode(&[30, 1, 0x00, 0, 0, 1, 2], LIMITS, &mut out),
            Err(Stop::UnknownObject)
        );
        out.clear();
        assert_eq!(decode(&[30, 1, 0x0a], LIMITS, &mut out), Err(Stop::Short));
        assert_eq!(out.len(), 1);
        out.clear();
        assert_eq!(
            decode(&[30, 1, 0x01, 0], LIMITS, &mut out),
            Err(Stop::Short)
        );
        assert_eq!((out.len(), out[0].count), (1, 0));
        out.clear();
        let many: Vec<u8> = std::iter::repeat_n([60u8, 1, 6], 3).flatten().collect();
        let small = Limits {
            max_points: 10,
            max_objects: 2,
        };
        assert_eq!(decode(&many, small, &mut out), Err(Stop::TooManyObjects));
        assert_eq!(out.len(), 2);
        out.clear();
        assert_eq!(decode(&[1, 2], LIMITS, &mut out), Err(Stop::Short));
    }

    #[test]
    fn signed_and_float_values() {
        let mut d = vec![30, 2, 0x00, 0, 0, 0x01, 0xfe, 0xff];
        d.extend_from_slice(&[30, 5, 0x00, 0, 0, 0x01]);
        d.extend_from_slice(&1.5f32.to_le_bytes());
        let mut out = Vec::new();
        decode(&d, LIMITS, &mut out).unwrap();
        assert_eq!(out[0].values[8], Value::I(-2));
        assert_eq!(out[1].values[8], Value::F(1.5));
    }
}
