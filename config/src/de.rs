//! Deserializers for the value spellings that suricata.yaml uses: `yes`/`no` booleans,
//! sizes such as `1mb`, numbers written as strings (every `--set` value is a string).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The default of a switch that is on unless turned off (`#[serde(default = "yes")]`).
pub(crate) fn yes() -> bool {
    true
}

/// Suricata's truth values (`ConfValIsTrue`/`ConfValIsFalse`).
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" | "enable" | "enabled" => Some(true),
        "0" | "no" | "false" | "off" | "disable" | "disabled" => Some(false),
        _ => None,
    }
}

/// A boolean, or `auto` (Suricata's "on when running inline"): Meerkat runs as an IDS,
/// so `auto` is off.
pub fn flex_bool_or_auto<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_any(BoolVisitor { auto: true })
}

/// `bool` from a YAML bool, `yes`/`no`/`true`/`false`/`on`/`off`/`1`/`0`.
pub fn flex_bool<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_any(BoolVisitor { auto: false })
}

/// The visitor of [`flex_bool`] (and, taking `auto` as off, [`flex_bool_or_auto`]).
struct BoolVisitor {
    auto: bool,
}

impl Visitor<'_> for BoolVisitor {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a boolean (yes/no, true/false, on/off, 1/0)")?;
        if self.auto {
            f.write_str(" or auto")?;
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        Ok(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(E::custom(format!("{v} is not a boolean"))),
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        self.visit_u64(v.max(2) as u64)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        if self.auto && v.eq_ignore_ascii_case("auto") {
            return Ok(false);
        }
        let what = if self.auto {
            "a boolean or auto"
        } else {
            "a boolean"
        };
        parse_bool(v).ok_or_else(|| E::custom(format!("`{v}` is not {what}")))
    }
}

fn number_from_str<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.trim().parse().ok()
}

macro_rules! flex_uint {
    ($name:ident, $t:ty) => {
        /// An unsigned number, also written as a string.
        pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = $t;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    write!(f, "a number from 0 to {}", <$t>::MAX)
                }
                fn visit_u64<E: de::Error>(self, v: u64) -> Result<$t, E> {
                    <$t>::try_from(v).map_err(|_| E::custom(format!("{v} is out of range")))
                }
                fn visit_i64<E: de::Error>(self, v: i64) -> Result<$t, E> {
                    <$t>::try_from(v).map_err(|_| E::custom(format!("{v} is out of range")))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<$t, E> {
                    number_from_str(v).ok_or_else(|| E::custom(format!("`{v}` is not a number")))
                }
            }
            d.deserialize_any(V)
        }
    };
}

flex_uint!(flex_u32, u32);
flex_uint!(flex_u64, u64);
flex_uint!(flex_usize, usize);
flex_uint!(flex_u16, u16);

/// An optional unsigned number (`null`/`~`/`auto` or absent = none).
pub fn flex_opt_usize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = Option<usize>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number, or `auto`")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<usize>, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Option<usize>, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<usize>, E> {
            Ok(Some(v as usize))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<usize>, E> {
            usize::try_from(v)
                .map(Some)
                .map_err(|_| E::custom(format!("{v} is out of range")))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
            if v.eq_ignore_ascii_case("auto") || v.is_empty() {
                return Ok(None);
            }
            number_from_str(v)
                .map(Some)
                .ok_or_else(|| E::custom(format!("`{v}` is not a number")))
        }
    }
    d.deserialize_any(V)
}

/// A size in bytes. Written as a number of bytes, or with Suricata's units
/// (`kb`, `mb`, `gb` are powers of 1024; `kib`, `mib`, `gib` too; case-insensitive,
/// a space before the unit allowed): `1mb`, `8 KiB`, `65536`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub const fn kib(n: u64) -> ByteSize {
        ByteSize(n * 1024)
    }
    pub const fn mib(n: u64) -> ByteSize {
        ByteSize(n * 1024 * 1024)
    }
    pub fn bytes(self) -> u64 {
        self.0
    }
    pub fn parse(s: &str) -> Option<ByteSize> {
        let s = s.trim();
        let split = s
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let unit = unit.trim().to_ascii_lowercase();
        let mult: u64 = match unit.as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            "t" | "tb" | "tib" => 1 << 40,
            _ => return None,
        };
        if num.contains('.') {
            let f: f64 = num.parse().ok()?;
            if !f.is_finite() || f < 0.0 {
                return None;
            }
            Some(ByteSize((f * mult as f64) as u64))
        } else {
            num.parse::<u64>().ok()?.checked_mul(mult).map(ByteSize)
        }
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as 65536, 64kb or 1mb")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom(format!("{v} is not a size")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
                ByteSize::parse(v).ok_or_else(|| E::custom(format!("`{v}` is not a size")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A file mode written as octal digits, as Suricata's `filemode` is: `600`, `"0640"`.
/// A YAML number's digits are read as octal too (`filemode: 644` means rw-r--r--).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMode(pub u32);

impl FileMode {
    pub fn parse(s: &str) -> Option<FileMode> {
        let s = s.trim();
        let digits = s.strip_prefix("0o").unwrap_or(s);
        if digits.is_empty() || digits.len() > 4 {
            return None;
        }
        u32::from_str_radix(digits, 8)
            .ok()
            .filter(|m| *m <= 0o7777)
            .map(FileMode)
    }
}

impl fmt::Display for FileMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04o}", self.0)
    }
}

impl Serialize for FileMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for FileMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FileMode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an octal file mode such as 600 or 0640")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<FileMode, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<FileMode, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FileMode, E> {
                FileMode::parse(v)
                    .ok_or_else(|| E::custom(format!("`{v}` is not an octal file mode")))
            }
        }
        d.deserialize_any(V)
    }
}

/// Suricata's `rotate-interval`: `minute`, `hour` or `day` (aligned to the start of the
/// next minute, hour or local day), or a duration with a unit (`30s`, `5m`, `2h`, `1d`;
/// a bare number is seconds), counted from when the file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotateInterval {
    /// Seconds between rotations (at least 1).
    pub seconds: u64,
    /// Rotate on wall-clock boundaries (`minute`, `hour`, `day`) rather than every
    /// `seconds` from the open.
    pub aligned: bool,
}

impl RotateInterval {
    pub fn parse(s: &str) -> Option<RotateInterval> {
        let t = s.trim().to_ascii_lowercase();
        let aligned = |seconds| {
            Some(RotateInterval {
                seconds,
                aligned: true,
            })
        };
        match t.as_str() {
            "minute" => return aligned(60),
            "hour" => return aligned(3600),
            "day" => return aligned(86_400),
            _ => {}
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let mult = match unit.trim() {
            "" | "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return None,
        };
        let seconds = num.parse::<u64>().ok()?.checked_mul(mult)?;
        (seconds > 0).then_some(RotateInterval {
            seconds,
            aligned: false,
        })
    }
}

impl fmt::Display for RotateInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.aligned, self.seconds) {
            (true, 60) => f.write_str("minute"),
            (true, 3600) => f.write_str("hour"),
            (true, 86_400) => f.write_str("day"),
            (_, s) => write!(f, "{s}s"),
        }
    }
}

impl Serialize for RotateInterval {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for RotateInterval {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RotateInterval;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("minute, hour, day, or a duration such as 30s, 5m, 2h, 1d")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RotateInterval, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RotateInterval, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RotateInterval, E> {
                RotateInterval::parse(v)
                    .ok_or_else(|| E::custom(format!("`{v}` is not a rotate interval")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration in seconds: a number (fractions allowed: `0.5`), also written as a string.
/// Suricata writes whole seconds (`delay: 30`); Meerkat accepts fractions too.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Seconds(pub f64);

impl Seconds {
    pub fn duration(self) -> std::time::Duration {
        std::time::Duration::try_from_secs_f64(self.0).unwrap_or_default()
    }
}

impl Serialize for Seconds {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0 >= 0.0 && self.0 < 1e15 {
            s.serialize_u64(self.0 as u64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Seconds;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of seconds such as 30 or 0.5")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Seconds, E> {
                Ok(Seconds(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Seconds, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Seconds, E> {
                if (0.0..1e12).contains(&v) {
                    Ok(Seconds(v))
                } else {
                    Err(E::custom(format!("{v} is not a number of seconds")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Seconds, E> {
                match v.trim().parse::<f64>() {
                    Ok(f) => self.visit_f64(f),
                    Err(_) => Err(E::custom(format!("`{v}` is not a number of seconds"))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A list of strings, also written as one string of comma-separated items (as a `--set`
/// value is).
pub fn flex_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum L {
        List(Vec<String>),
        One(String),
    }
    Ok(match L::deserialize(d)? {
        L::List(v) => v,
        L::One(s) => s
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds() {
        let s: Seconds = serde_yaml::from_str("30").unwrap();
        assert_eq!(s.duration(), std::time::Duration::from_secs(30));
        let s: Seconds = serde_yaml::from_str("0.25").unwrap();
        assert_eq!(s.duration(), std::time::Duration::from_millis(250));
        let s: Seconds = serde_yaml::from_str("'1.5'").unwrap();
        assert_eq!(s.0, 1.5);
        assert!(serde_yaml::from_str::<Seconds>("-1").is_err());
        assert!(serde_yaml::from_str::<Seconds>("soon").is_err());
        assert_eq!(serde_yaml::to_string(&Seconds(5.0)).unwrap().trim(), "5");
    }

    #[test]
    fn sizes() {
        assert_eq!(ByteSize::parse("1mb"), Some(ByteSize(1 << 20)));
        assert_eq!(ByteSize::parse("8kb"), Some(ByteSize(8192)));
        assert_eq!(ByteSize::parse("8 KiB"), Some(ByteSize(8192)));
        assert_eq!(ByteSize::parse("0"), Some(ByteSize(0)));
        assert_eq!(ByteSize::parse("1.5mb"), Some(ByteSize(1572864)));
        assert_eq!(ByteSize::parse("12parsecs"), None);
        assert_eq!(ByteSize::parse("99999999999999999999gb"), None);
    }

    #[test]
    fn file_modes() {
        assert_eq!(FileMode::parse("600"), Some(FileMode(0o600)));
        assert_eq!(FileMode::parse("0640"), Some(FileMode(0o640)));
        assert_eq!(FileMode::parse("0o644"), Some(FileMode(0o644)));
        assert_eq!(FileMode::parse("800"), None);
        assert_eq!(FileMode::parse("77777"), None);
        assert_eq!(FileMode(0o640).to_string(), "0640");
    }

    #[test]
    fn rotate_intervals() {
        let r = |s: &str| RotateInterval::parse(s).map(|r| (r.seconds, r.aligned));
        assert_eq!(r("minute"), Some((60, true)));
        assert_eq!(r("Hour"), Some((3600, true)));
        assert_eq!(r("day"), Some((86_400, true)));
        assert_eq!(r("30s"), Some((30, false)));
        assert_eq!(r("5m"), Some((300, false)));
        assert_eq!(r("2h"), Some((7200, false)));
        assert_eq!(r("1d"), Some((86_400, false)));
        assert_eq!(r("90"), Some((90, false)));
        assert_eq!(r("0s"), None);
        assert_eq!(r("weekly"), None);
        for s in ["minute", "hour", "day", "45s"] {
            let v = RotateInterval::parse(s).unwrap();
            assert_eq!(RotateInterval::parse(&v.to_string()), Some(v));
        }
    }

    #[test]
    fn bools() {
        for t in ["yes", "Yes", "true", "on", "1"] {
            assert_eq!(parse_bool(t), Some(true));
        }
        for f in ["no", "false", "off", "0"] {
            assert_eq!(parse_bool(f), Some(false));
        }
        assert_eq!(parse_bool("maybe"), None);
    }
}
