//! The buffers and keywords of a data connection: its file's `file.data`,
//! `file.name` and `file.magic` (in the direction the data flows; `filename`,
//! `fileext` and `filemagic` use them), and `ftpdata_command`, the command that opened
//! the connection (`retr`, `stor`, `appe`, `stou`, `list`, `nlst`, `mlsd`; Suricata
//! takes them in lower case only).

use super::FtpDataTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const FILE_DATA_TS: BufferId = BufferId::of(AppProto::FtpData, 1);
pub const FILE_DATA_TC: BufferId = BufferId::of(AppProto::FtpData, 2);
pub const FILE_NAME_TS: BufferId = BufferId::of(AppProto::FtpData, 3);
pub const FILE_NAME_TC: BufferId = BufferId::of(AppProto::FtpData, 4);
pub const FILE_MAGIC_TS: BufferId = BufferId::of(AppProto::FtpData, 5);
pub const FILE_MAGIC_TC: BufferId = BufferId::of(AppProto::FtpData, 6);

/// The file buffers (their names are shared with the other protocols that carry
/// files: a rule of `alert ftp-data` gets these, [`crate::buffers::sticky_in`]).
pub static BUFFERS: &[BufferDef] = &[
    def(
        "file.data",
        &["file_data"],
        None,
        AppProto::FtpData,
        Some(FILE_DATA_TS),
        Some(FILE_DATA_TC),
        false,
    ),
    def(
        "file.name",
        &[],
        None,
        AppProto::FtpData,
        Some(FILE_NAME_TS),
        Some(FILE_NAME_TC),
        false,
    ),
    def(
        "file.magic",
        &[],
        None,
        AppProto::FtpData,
        Some(FILE_MAGIC_TS),
        Some(FILE_MAGIC_TC),
        false,
    ),
];

/// Buffer `id` (item 0 only): the file of the direction the buffer is for.
pub fn buffer(tx: &FtpDataTx, id: BufferId, index: usize) -> Buf<'_> {
    let dir = match id {
        FILE_DATA_TS | FILE_NAME_TS | FILE_MAGIC_TS => Dir::ToServer,
        FILE_DATA_TC | FILE_NAME_TC | FILE_MAGIC_TC => Dir::ToClient,
        _ => return Buf::Absent,
    };
    let file = tx.files[dir.index()].as_slice().first();
    let Some(f) = file.filter(|_| index == 0) else {
        return if tx.done || index > 0 {
            Buf::Absent
        } else {
            Buf::NotYet
        };
    };
    match id {
        FILE_NAME_TS | FILE_NAME_TC => Buf::Ready(f.name()),
        FILE_DATA_TS | FILE_DATA_TC if f.is_open() => Buf::Partial(&tx.data),
        FILE_DATA_TS | FILE_DATA_TC => Buf::Ready(&tx.data),
        _ => match f.magic() {
            Some(m) => Buf::Ready(m.as_bytes()),
            None if f.is_open() && f.wants_magic() => Buf::NotYet,
            None => Buf::Absent,
        },
    }
}

/// ftp-data's keywords.
pub static KEYWORDS: &[KeywordDef] = &[KeywordDef::check(
    "ftpdata_command",
    &[],
    parse_command,
    eval_command,
)];

fn parse_command(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?.trim();
    super::COMMANDS
        .iter()
        .position(|c| c.to_ascii_lowercase() == val)
        .map(|i| KwValue::Exact(i as u64))
        .ok_or_else(|| format!("bad command `{val}` (retr, stor, appe, stou, list, nlst or mlsd)"))
}

fn eval_command(v: &KwValue, _dir: Dir, _now: i64, tx: &dyn Transaction) -> Option<bool> {
    let (KwValue::Exact(want), Some(tx)) = (v, tx.as_any()?.downcast_ref::<FtpDataTx>()) else {
        return Some(false);
    };
    Some(super::COMMANDS.get(*want as usize) == Some(&tx.command))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_values() {
        assert_eq!(parse_command(Some("retr")), Ok(KwValue::Exact(0)));
        assert_eq!(parse_command(Some(" mlsd ")), Ok(KwValue::Exact(6)));
        assert!(parse_command(Some("RETR")).is_err());
        assert!(parse_command(Some("port")).is_err());
        let tx = FtpDataTx {
            command: "STOR",
            ..FtpDataTx::default()
        };
        assert_eq!(
            eval_command(&KwValue::Exact(1), Dir::ToServer, 0, &tx),
            Some(true)
        );
        assert_eq!(
            eval_command(&KwValue::Exact(0), Dir::ToServer, 0, &tx),
            Some(false)
        );
    }
}
