//! `filetype: syslog` of `outputs.eve-log`: each EVE record is one syslog message to the
//! local syslog daemon, with Suricata's keys `facility` (default `local5`), `level`
//! (default `Info`) and `identity` (Suricata's default is its program name, `suricata`;
//! Meerkat's is `meerkat`). Meerkat's `syslog-socket` names the daemon's socket
//! (default `/dev/log`).

use serde::{Deserialize, Serialize};

/// A syslog facility (RFC 5424 codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Facility {
    Kern,
    User,
    Mail,
    Daemon,
    Auth,
    Syslog,
    Lpr,
    News,
    Uucp,
    Cron,
    Authpriv,
    Ftp,
    Local0,
    Local1,
    Local2,
    Local3,
    Local4,
    #[default]
    Local5,
    Local6,
    Local7,
}

const FACILITIES: &[(&str, Facility, u8)] = &[
    ("kern", Facility::Kern, 0),
    ("user", Facility::User, 1),
    ("mail", Facility::Mail, 2),
    ("daemon", Facility::Daemon, 3),
    ("auth", Facility::Auth, 4),
    ("syslog", Facility::Syslog, 5),
    ("lpr", Facility::Lpr, 6),
    ("news", Facility::News, 7),
    ("uucp", Facility::Uucp, 8),
    ("cron", Facility::Cron, 9),
    ("authpriv", Facility::Authpriv, 10),
    ("ftp", Facility::Ftp, 11),
    ("local0", Facility::Local0, 16),
    ("local1", Facility::Local1, 17),
    ("local2", Facility::Local2, 18),
    ("local3", Facility::Local3, 19),
    ("local4", Facility::Local4, 20),
    ("local5", Facility::Local5, 21),
    ("local6", Facility::Local6, 22),
    ("local7", Facility::Local7, 23),
];

impl Facility {
    /// The facility's code (the PRI is code * 8 + severity).
    pub fn code(self) -> u8 {
        FACILITIES
            .iter()
            .find(|(_, f, _)| *f == self)
            .map_or(21, |(_, _, c)| *c)
    }
}

impl<'de> Deserialize<'de> for Facility {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let l = s.to_ascii_lowercase();
        FACILITIES
            .iter()
            .find(|(n, _, _)| *n == l)
            .map(|(_, f, _)| *f)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "`{s}` is not a syslog facility (kern, user, mail, daemon, auth, syslog, \
                     lpr, news, uucp, cron, authpriv, ftp, local0 .. local7)"
                ))
            })
    }
}

/// A syslog severity, as Suricata names them (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub enum Level {
    Emergency,
    Alert,
    Critical,
    Error,
    Warning,
    Notice,
    #[default]
    Info,
    Debug,
}

impl Level {
    /// The severity code (0 emergency .. 7 debug).
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.to_ascii_lowercase().as_str() {
            "emergency" | "emerg" => Level::Emergency,
            "alert" => Level::Alert,
            "critical" | "crit" => Level::Critical,
            "error" | "err" => Level::Error,
            "warning" | "warn" => Level::Warning,
            "notice" => Level::Notice,
            "info" => Level::Info,
            "debug" => Level::Debug,
            _ => {
                return Err(serde::de::Error::custom(format!(
                    "`{s}` is not a syslog level (Emergency, Alert, Critical, Error, Warning, \
                     Notice, Info, Debug)"
                )));
            }
        })
    }
}

/// Default `identity`.
pub const DEFAULT_IDENTITY: &str = "meerkat";
/// Default `syslog-socket`.
pub const DEFAULT_SOCKET: &str = "/dev/log";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes() {
        let f: Facility = serde_yaml::from_str("LOCAL5").unwrap();
        assert_eq!((f, f.code()), (Facility::Local5, 21));
        assert_eq!(Facility::default().code(), 21);
        assert_eq!(
            serde_yaml::from_str::<Facility>("authpriv").unwrap().code(),
            10
        );
        assert!(serde_yaml::from_str::<Facility>("local9").is_err());
        let l: Level = serde_yaml::from_str("Info").unwrap();
        assert_eq!((l, l.code()), (Level::Info, 6));
        assert_eq!(
            serde_yaml::from_str::<Level>("emergency").unwrap().code(),
            0
        );
        let e = serde_yaml::from_str::<Level>("loud").unwrap_err();
        assert!(e.to_string().contains("loud"));
        // What the supervisor writes reads back.
        for f in [Facility::Local0, Facility::Authpriv] {
            let s = serde_yaml::to_string(&f).unwrap();
            assert_eq!(serde_yaml::from_str::<Facility>(&s).unwrap(), f);
        }
        let s = serde_yaml::to_string(&Level::Warning).unwrap();
        assert_eq!(serde_yaml::from_str::<Level>(&s).unwrap(), Level::Warning);
    }
}
