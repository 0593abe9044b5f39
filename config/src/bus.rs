//! Checks of the `eve-log` outputs that leave the host or the file system: redis, NATS
//! JetStream, syslog, and the disk spool of the network ones (their sections are in
//! [`crate::redis`], [`crate::nats`], [`crate::syslog`], [`crate::spool`]).

use crate::{ConfigError, EveLog, FileType};

/// Whether `filetype` sends records over a network connection (and so has a spool).
pub fn is_network(filetype: FileType) -> bool {
    matches!(filetype, FileType::Redis | FileType::Nats)
}

/// Whether `filetype` ignores `filename`.
pub fn ignores_filename(filetype: FileType) -> bool {
    matches!(
        filetype,
        FileType::Redis | FileType::Nats | FileType::Syslog
    )
}

/// Checks one `eve-log` output's bus settings; errors name the key.
pub fn validate(eve: &EveLog) -> Result<(), ConfigError> {
    let bad = |m: &str| Err(ConfigError::Invalid(m.to_string()));
    if let Some(r) = &eve.redis {
        if eve.filetype == FileType::Redis && r.key.is_empty() {
            return bad("outputs.eve-log.redis.key must not be empty");
        }
        if r.password.is_none() && r.username.is_some() {
            return bad("outputs.eve-log.redis.username needs a password");
        }
        if let Some(t) = &r.tls {
            t.validate("outputs.eve-log.redis.tls")?;
            if t.enabled && r.server.starts_with('/') {
                return bad("outputs.eve-log.redis.tls applies to TCP, not a Unix socket server");
            }
        }
    }
    if eve.filetype == FileType::Nats {
        eve.nats.clone().unwrap_or_default().validate()?;
    } else if eve.nats.is_some() {
        return bad("outputs.eve-log.nats applies to filetype nats");
    }
    if let Some(s) = &eve.spool {
        if !is_network(eve.filetype) && s.enabled {
            return bad("outputs.eve-log.spool applies to filetype redis and nats");
        }
        s.validate()?;
    }
    // facility/level/identity on another filetype are ignored, as Suricata does.
    if eve.identity.as_deref().is_some_and(|i| {
        i.is_empty() || i.len() > 48 || i.contains(|c: char| c.is_whitespace() || c == ':')
    }) {
        return bad("outputs.eve-log.identity must be 1 to 48 characters, no blanks or `:`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::syslog::{Facility, Level};
    use crate::{FileType, RedisMode, resolve};

    fn sets(v: &[&str]) -> Result<crate::Config, crate::ConfigError> {
        let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        resolve(None, &v).map(|r| r.config)
    }

    #[test]
    fn bus_keys_resolve_and_bad_ones_name_the_key() {
        let c = sets(&[
            "outputs.eve-log.filetype=redis",
            "outputs.eve-log.redis.mode=stream",
            "outputs.eve-log.redis.stream-maxlen=5000",
            "outputs.eve-log.redis.stream-trim-exact=yes",
            "outputs.eve-log.redis.password=pw",
            "outputs.eve-log.redis.tls.ca-file=/ca.pem",
            "outputs.eve-log.spool.when-full=drop-oldest",
        ])
        .unwrap();
        let eve = c.eve_logs().next().unwrap();
        let r = eve.redis.as_ref().unwrap();
        assert_eq!(
            (r.mode, r.stream_maxlen, r.stream_trim_exact),
            (RedisMode::Xadd, 5000, true)
        );
        assert!(r.tls.as_ref().unwrap().enabled);
        let c = sets(&[
            "outputs.eve-log.filetype=nats",
            "outputs.eve-log.nats.servers=nats://10.0.0.1:4222",
            "outputs.eve-log.nats.subject=ids.{event_type}",
        ])
        .unwrap();
        let eve = c.eve_logs().next().unwrap();
        assert_eq!(eve.filetype, FileType::Nats);
        assert_eq!(eve.nats.as_ref().unwrap().stream_subject(), "ids.*");
        let c = sets(&[
            "outputs.eve-log.filetype=syslog",
            "outputs.eve-log.facility=local3",
            "outputs.eve-log.level=Warning",
            "outputs.eve-log.identity=ids",
        ])
        .unwrap();
        let eve = c.eve_logs().next().unwrap();
        assert_eq!(
            (eve.facility, eve.level),
            (Some(Facility::Local3), Some(Level::Warning))
        );
        let back = crate::resolve_tree(crate::parse_text(&c.to_yaml()).unwrap()).unwrap();
        assert_eq!(back.config, c);
        for (bad, key) in [
            (vec!["outputs.eve-log.spool.fsync=sometimes"], "fsync"),
            (vec!["outputs.eve-log.spool.enabled=yes"], "spool"),
            (vec!["outputs.eve-log.nats.stream=X"], "nats"),
            (
                vec![
                    "outputs.eve-log.filetype=nats",
                    "outputs.eve-log.nats.stream=a.b",
                ],
                "nats.stream",
            ),
            (
                vec![
                    "outputs.eve-log.filetype=syslog",
                    "outputs.eve-log.identity=a b",
                ],
                "identity",
            ),
            (vec!["outputs.eve-log.filetype=kafka"], "kafka"),
            (
                vec!["outputs.eve-log.redis.tls.ca=x"],
                "outputs.eve-log.redis.tls.ca",
            ),
        ] {
            let e = sets(&bad).unwrap_err().to_string();
            assert!(e.contains(key), "{bad:?}: {e}");
        }
    }
}
