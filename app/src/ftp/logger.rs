//! The EVE `ftp` record of a transaction.

use meerkat_proto::events::Ftp;

use super::parser::Kind;
use super::state::{FtpTx, Mode};

/// The record of transaction `tx`.
pub fn record(tx: &FtpTx) -> Ftp {
    Ftp {
        command: tx.command.map(|c| c.name.to_string()).unwrap_or_default(),
        command_data: tx.data.clone(),
        command_truncated: tx.command_truncated,
        completion_code: tx
            .replies
            .iter()
            .filter_map(|r| r.code.map(|c| c.to_vec()))
            .collect(),
        reply: tx.replies.iter().map(|r| r.text.clone()).collect(),
        dynamic_port: tx.dyn_port.map_or(0, u32::from),
        // By the command, as Suricata logs it (a PASV whose reply gave no port is
        // still passive).
        mode: match tx.kind() {
            Some(Kind::Port | Kind::Eprt) => Mode::Active.name().to_string(),
            Some(Kind::Pasv | Kind::Epsv) => Mode::Passive.name().to_string(),
            _ => String::new(),
        },
        reply_received: tx.done,
        reply_truncated: tx.reply_truncated,
    }
}
