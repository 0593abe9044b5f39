//! The roles of a sensor and their names.

use std::fmt;
use std::str::FromStr;

/// One process of a sensor, as named in the runtime directory (`counters-detect-0`), in
/// the event stream's producer names, in `meerkat ctl status` and `meerkat probe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// `eve-writer`.
    EveWriter,
    /// `detect-N`: detect worker N (from 0), the consumer of ring N.
    Detect(usize),
    /// `capture`.
    Capture,
}

/// A name that is no role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleError(pub String);

impl fmt::Display for RoleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown role `{}`: expected eve-writer, capture or detect-N",
            self.0
        )
    }
}

impl std::error::Error for RoleError {}

impl Role {
    /// Name of the eve-writer role.
    pub const EVE_WRITER: &str = "eve-writer";
    /// Name of the capture role.
    pub const CAPTURE: &str = "capture";
    /// Prefix of a detect worker's name (`detect-` + index).
    pub const DETECT_PREFIX: &str = "detect-";

    /// Every role of a stack of `workers` detect workers, in start order (eve-writer,
    /// detect-0.., capture).
    pub fn stack(workers: usize) -> impl Iterator<Item = Role> {
        std::iter::once(Role::EveWriter)
            .chain((0..workers).map(Role::Detect))
            .chain(std::iter::once(Role::Capture))
    }

    /// The prefix of this role's counter names (`capture.`, `detect.N.`, `eve.`).
    pub fn counter_prefix(self) -> String {
        match self {
            Role::Capture => crate::counters::CAPTURE_PREFIX.to_string(),
            Role::Detect(n) => crate::counters::DetectCounters::new(n).prefix(),
            Role::EveWriter => crate::counters::EVE_PREFIX.to_string(),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::EveWriter => f.write_str(Role::EVE_WRITER),
            Role::Detect(n) => write!(f, "{}{n}", Role::DETECT_PREFIX),
            Role::Capture => f.write_str(Role::CAPTURE),
        }
    }
}

impl FromStr for Role {
    type Err = RoleError;

    /// `eve-writer`, `capture` or `detect-N` (N an index, as `usize` parses it).
    fn from_str(s: &str) -> Result<Role, RoleError> {
        match s {
            Role::EVE_WRITER => Ok(Role::EveWriter),
            Role::CAPTURE => Ok(Role::Capture),
            _ => s
                .strip_prefix(Role::DETECT_PREFIX)
                .and_then(|n| n.parse().ok())
                .map(Role::Detect)
                .ok_or_else(|| RoleError(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in Role::stack(3) {
            assert_eq!(r.to_string().parse::<Role>(), Ok(r));
        }
        let names: Vec<String> = Role::stack(2).map(|r| r.to_string()).collect();
        assert_eq!(names, ["eve-writer", "detect-0", "detect-1", "capture"]);
        assert_eq!("detect-12".parse(), Ok(Role::Detect(12)));
        for bad in ["detect", "detect-", "detect-x", "detect--1", "writer", ""] {
            let e = bad.parse::<Role>().unwrap_err().to_string();
            assert!(
                e.contains("expected eve-writer, capture or detect-N"),
                "{e}"
            );
        }
    }

    #[test]
    fn counter_prefixes() {
        assert_eq!(Role::Capture.counter_prefix(), "capture.");
        assert_eq!(Role::Detect(4).counter_prefix(), "detect.4.");
        assert_eq!(Role::EveWriter.counter_prefix(), "eve.");
    }
}
