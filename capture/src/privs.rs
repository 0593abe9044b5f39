//! Dropping privileges after the capture sockets are open (`run-as`).
//!
//! Opening an AF_PACKET socket or a NIC needs root (or `CAP_NET_RAW`/`CAP_NET_ADMIN`);
//! reading from an open one does not. So capture opens its sources, rings and counter
//! page first, then switches to the configured user and group for good: supplementary
//! groups are replaced, then the gid, then the uid (in that order, since after `setuid`
//! the others are no longer allowed).
//!
//! The source threads' real-time priority (`capture.rx-priority`) is set here too, before
//! the switch, because an unprivileged user may not raise it.

use meerkat_config::RunAs;
use nix::unistd::{Gid, Group, Uid, User, setgid, setgroups, setuid};

use crate::live::SourceError;

fn err(msg: String) -> SourceError {
    SourceError::Privileges(msg)
}

/// Resolves `run-as` to ids. `None` when no user is configured.
pub fn resolve(run_as: &RunAs) -> Result<Option<(Uid, Gid)>, SourceError> {
    let Some(user) = &run_as.user else {
        if let Some(g) = &run_as.group {
            return Err(err(format!("run-as.group `{g}` needs run-as.user")));
        }
        return Ok(None);
    };
    let (uid, primary) = match user.parse::<u32>() {
        Ok(n) => {
            let uid = Uid::from_raw(n);
            let gid = User::from_uid(uid)
                .ok()
                .flatten()
                .map(|u| u.gid)
                .unwrap_or(Gid::from_raw(n));
            (uid, gid)
        }
        Err(_) => {
            let u = User::from_name(user)
                .map_err(|e| err(format!("cannot look up run-as.user `{user}`: {e}")))?
                .ok_or_else(|| err(format!("run-as.user `{user}` does not exist")))?;
            (u.uid, u.gid)
        }
    };
    let gid = match &run_as.group {
        None => primary,
        Some(g) => match g.parse::<u32>() {
            Ok(n) => Gid::from_raw(n),
            Err(_) => {
                Group::from_name(g)
                    .map_err(|e| err(format!("cannot look up run-as.group `{g}`: {e}")))?
                    .ok_or_else(|| err(format!("run-as.group `{g}` does not exist")))?
                    .gid
            }
        },
    };
    Ok(Some((uid, gid)))
}

/// Switches to `run-as` if configured. Returns the ids switched to.
pub fn drop_to(run_as: &RunAs) -> Result<Option<(Uid, Gid)>, SourceError> {
    let Some((uid, gid)) = resolve(run_as)? else {
        return Ok(None);
    };
    if Uid::effective() == uid && Gid::effective() == gid {
        return Ok(Some((uid, gid)));
    }
    setgroups(&[gid]).map_err(|e| err(format!("setgroups({gid}): {e}")))?;
    setgid(gid).map_err(|e| err(format!("setgid({gid}): {e}")))?;
    setuid(uid).map_err(|e| err(format!("setuid({uid}): {e}")))?;
    tracing::info!(
        uid = uid.as_raw(),
        gid = gid.as_raw(),
        "switched to run-as user"
    );
    Ok(Some((uid, gid)))
}

/// Puts the calling thread under SCHED_FIFO priority 1 (threads it starts inherit it).
/// Returns the error when not permitted.
pub fn realtime_thread() -> Result<(), std::io::Error> {
    let p = libc::sched_param { sched_priority: 1 };
    // SAFETY: pid 0 = the calling thread; the param struct is ours and initialised.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Puts the calling thread back under the normal scheduler (always permitted).
pub fn normal_thread() {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: as above; lowering one's own policy needs no privilege.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_OTHER, &p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_names_and_numbers() {
        assert_eq!(resolve(&RunAs::default()).unwrap(), None);
        let root = resolve(&RunAs {
            user: Some("root".to_string()),
            group: None,
        })
        .unwrap()
        .unwrap();
        assert_eq!(root, (Uid::from_raw(0), Gid::from_raw(0)));
        let num = resolve(&RunAs {
            user: Some("4242".to_string()),
            group: Some("4343".to_string()),
        })
        .unwrap()
        .unwrap();
        assert_eq!(num, (Uid::from_raw(4242), Gid::from_raw(4343)));
        let e = resolve(&RunAs {
            user: Some("no-such-user-xyz".to_string()),
            group: None,
        })
        .unwrap_err();
        assert!(e.to_string().contains("no-such-user-xyz"), "{e}");
        let e = resolve(&RunAs {
            user: None,
            group: Some("wheel".to_string()),
        })
        .unwrap_err();
        assert!(e.to_string().contains("needs run-as.user"), "{e}");
    }
}
