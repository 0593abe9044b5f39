//! File names of regular EVE outputs: Suricata's strftime patterns
//! (`eve-%Y-%m-%d-%H:%M.json`, expanded in local time each time the file is opened),
//! the `threaded: yes` suffix (`eve.json` -> `eve.3.json`), and when the next
//! `rotate-interval` rotation is due.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use meerkat_config::RotateInterval;

/// Broken-down local time, from `localtime_r(3)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// Day of the year, 1-366.
    pub yday: u32,
    /// Seconds east of UTC.
    pub utc_offset: i64,
    /// Seconds since the Unix epoch.
    pub epoch: i64,
}

/// Local time at `t` (UTC if the C library cannot say).
pub fn local_time(t: SystemTime) -> LocalTime {
    let epoch = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let secs: libc::time_t = epoch as libc::time_t;
    // SAFETY: `tm` is plain data that localtime_r fills in; both pointers are valid for
    // the call. localtime_r is the reentrant form (no shared static buffer).
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            None
        } else {
            Some(tm)
        }
    };
    match tm {
        Some(tm) => LocalTime {
            year: i64::from(tm.tm_year) + 1900,
            month: (tm.tm_mon + 1) as u32,
            day: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            minute: tm.tm_min as u32,
            second: tm.tm_sec as u32,
            yday: (tm.tm_yday + 1) as u32,
            utc_offset: tm.tm_gmtoff,
            epoch,
        },
        None => {
            let days = epoch.div_euclid(86_400);
            let sod = epoch.rem_euclid(86_400);
            let (year, month, day) = crate::render::civil_from_days(days);
            let yday = (days - crate::render::days_from_civil(year, 1, 1) + 1) as u32;
            LocalTime {
                year,
                month,
                day,
                hour: (sod / 3600) as u32,
                minute: ((sod / 60) % 60) as u32,
                second: (sod % 60) as u32,
                yday,
                utc_offset: 0,
                epoch,
            }
        }
    }
}

/// Expands `%Y %m %d %H %M %S %y %j %s %%` in `pattern`; other `%x` stay as written.
pub fn expand(pattern: &str, t: &LocalTime) -> String {
    if !pattern.contains('%') {
        return pattern.to_string();
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Y') => out.push_str(&format!("{:04}", t.year)),
            Some('y') => out.push_str(&format!("{:02}", t.year.rem_euclid(100))),
            Some('m') => out.push_str(&format!("{:02}", t.month)),
            Some('d') => out.push_str(&format!("{:02}", t.day)),
            Some('H') => out.push_str(&format!("{:02}", t.hour)),
            Some('M') => out.push_str(&format!("{:02}", t.minute)),
            Some('S') => out.push_str(&format!("{:02}", t.second)),
            Some('j') => out.push_str(&format!("{:03}", t.yday)),
            Some('s') => out.push_str(&t.epoch.to_string()),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Whether `name` has a time pattern (so that rotation makes new files).
pub fn has_time_pattern(name: &str) -> bool {
    ["%Y", "%y", "%m", "%d", "%H", "%M", "%S", "%j", "%s"]
        .iter()
        .any(|p| name.contains(p))
}

/// The name of worker `n`'s file for `threaded: yes`: the number goes before the last
/// extension, as Suricata does (`eve.json` -> `eve.3.json`, `eve` -> `eve.3`).
pub fn threaded_name(path: &Path, n: u32) -> PathBuf {
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let new = match name.rfind('.') {
        Some(dot) if dot > 0 => format!("{}.{n}{}", &name[..dot], &name[dot..]),
        _ => format!("{name}.{n}"),
    };
    path.with_file_name(new)
}

/// When the file opened at `opened` is next due for rotation. Aligned intervals rotate
/// at the next local minute, hour or day boundary; others `seconds` after the open.
pub fn next_rotation(interval: RotateInterval, opened: SystemTime) -> SystemTime {
    let every = interval.seconds.max(1);
    if !interval.aligned {
        return opened + Duration::from_secs(every);
    }
    let lt = local_time(opened);
    let local = lt.epoch + lt.utc_offset;
    let every_i = every as i64;
    let next_local = (local.div_euclid(every_i) + 1) * every_i;
    let wait = (next_local - local).max(1) as u64;
    let base = UNIX_EPOCH + Duration::from_secs(lt.epoch.max(0) as u64);
    base + Duration::from_secs(wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lt() -> LocalTime {
        LocalTime {
            year: 2023,
            month: 9,
            day: 8,
            hour: 6,
            minute: 3,
            second: 1,
            yday: 251,
            utc_offset: 0,
            epoch: 1_694_152_981,
        }
    }

    #[test]
    fn expands_patterns() {
        assert_eq!(
            expand("eve-%Y-%m-%d-%H:%M:%S.json", &lt()),
            "eve-2023-09-08-06:03:01.json"
        );
        assert_eq!(
            expand("e-%y%j-%s-%%-%q.json", &lt()),
            "e-23251-1694152981-%-%q.json"
        );
        assert_eq!(expand("eve.json", &lt()), "eve.json");
        assert!(has_time_pattern("eve-%H.json"));
        assert!(!has_time_pattern("eve.json"));
    }

    #[test]
    fn threaded_names() {
        assert_eq!(
            threaded_name(Path::new("/l/eve.json"), 3),
            Path::new("/l/eve.3.json")
        );
        assert_eq!(threaded_name(Path::new("/l/eve"), 0), Path::new("/l/eve.0"));
        assert_eq!(
            threaded_name(Path::new("/l/eve-%H.x.json"), 12),
            Path::new("/l/eve-%H.x.12.json")
        );
        assert_eq!(
            threaded_name(Path::new("/l/.eve"), 1),
            Path::new("/l/.eve.1")
        );
    }

    #[test]
    fn rotation_times() {
        let t = UNIX_EPOCH + Duration::from_secs(1_000_000_030);
        let every = RotateInterval {
            seconds: 30,
            aligned: false,
        };
        assert_eq!(next_rotation(every, t), t + Duration::from_secs(30));
        let minute = RotateInterval {
            seconds: 60,
            aligned: true,
        };
        let next = next_rotation(minute, t);
        let lt = local_time(next);
        // On a minute boundary of local time, within a minute of `t`.
        assert_eq!(lt.second, 0);
        let wait = next.duration_since(t).unwrap();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(60),
            "{wait:?}"
        );
    }

    #[test]
    fn local_time_is_consistent() {
        let now = SystemTime::now();
        let lt = local_time(now);
        assert!((1..=12).contains(&lt.month) && (1..=31).contains(&lt.day));
        let local = lt.epoch + lt.utc_offset;
        assert_eq!(
            local.rem_euclid(86_400),
            i64::from(lt.hour * 3600 + lt.minute * 60 + lt.second)
        );
    }
}
