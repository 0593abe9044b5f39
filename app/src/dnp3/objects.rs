//! DNP3 application objects: the object headers (group, variation, qualifier with its
//! prefix and range codes, the range) and the points of the object types Suricata
//! decodes, field by field, with the field names its EVE `dnp3` records use.
//!
//! The protocol does not describe itself: an object of a type not in [`TYPES`] ends the
//! decoding of its message (`dnp3.unknown_object`), as a truncated one does
//! (`dnp3.malformed`). Points are bounded per message (`max-points`,
//! `dnp3.too_many_points`) and objects too (`max-objects`, `dnp3.too_many_objects`).

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
}

impl Field {
    /// The values the field makes.
    fn values(&self) -> usize {
        match self {
            Field::Bits(b) => b.len(),
            _ => 1,
        }
    }

    /// Its bytes on the wire.
    fn size(&self) -> usize {
        match self {
            Field::Bits(_) | Field::U8(_) => 1,
            Field::U16(_) | Field::I16(_) => 2,
            Field::U32(_) | Field::I32(_) | Field::F32(_) => 4,
            Field::Time(_) => 6,
            Field::F64(_) => 8,
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
                | Field::F64(n) => (&[], Some(n)),
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    U(u64),
    I(i64),
    F(f64),
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

/// Bytes of the prefix of prefix code `code` (1-3: an index, 4-6: a size).
fn prefix_len(code: u8) -> Option<usize> {
    match code {
        0 => Some(0),
        1 | 4 => Some(1),
        2 | 5 => Some(2),
        3 | 6 => Some(4),
        _ => None,
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
    let mut index = o.start;
    o.points.reserve(count);
    o.values.reserve(count * t.values());
    match t.layout {
        Layout::Packed { bits, .. } => {
            // As Suricata: one prefix for every point, and `count / 8 + 1` bytes
            // whatever the width (a last byte may be read for no point).
            let plen = prefix_len(code).ok_or(Stop::UnknownObject)?;
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
            let plen = prefix_len(code).ok_or(Stop::UnknownObject)?;
            for _ in 0..count {
                let prefix = r.uint(plen).ok_or(Stop::UnknownObject)? as u32;
                for f in fields {
                    let b = r.take(f.size()).ok_or(Stop::UnknownObject)?;
                    let u = b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
                    match *f {
                        Field::Bits(bits) => {
                            let mut shift = 0u8;
                            for &(_, w) in bits {
                                let m = (1u64 << w) - 1;
                                o.values.push(Value::U((u >> shift) & m));
                                shift += w;
                            }
                        }
                        Field::I16(_) => o.values.push(Value::I(i64::from(u as u16 as i16))),
                        Field::I32(_) => o.values.push(Value::I(i64::from(u as u32 as i32))),
                        Field::F32(_) => {
                            o.values.push(Value::F(f64::from(f32::from_bits(u as u32))))
                        }
                        Field::F64(_) => o.values.push(Value::F(f64::from_bits(u))),
                        _ => o.values.push(Value::U(u)),
                    }
                }
                o.points.push((prefix, point_index(code, prefix, index)));
                index = index.wrapping_add(1);
            }
        }
    }
    Ok(())
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
    ObjType {
        group,
        variation,
        layout: Layout::Fields(fields),
    }
}

const fn packed(group: u8, variation: u8, bits: u8, name: &'static str) -> ObjType {
    ObjType {
        group,
        variation,
        layout: Layout::Packed { bits, name },
    }
}

/// The object types decoded, sorted by group and variation (the fixed-size types of
/// Suricata's table; its variable-size ones, file transfer (70), data sets (83) and
/// secure authentication (120 but variations 3 and 4), end decoding as unknown).
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
    t(120, 3, &[U32("csq"), U16("user_number")]),
    t(120, 4, &[U16("user_number")]),
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
        }
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
