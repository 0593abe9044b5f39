//! The keywords of an NFS transaction, as Suricata 8's: `nfs_procedure` (the call's
//! procedure, and for a file transfer the procedures that joined it, such as COMMIT;
//! an unsigned 32-bit integer whose ranges, unlike other integer keywords', are
//! inclusive) and `nfs.version` (the call's NFS version), both inspected toward the
//! server. File names and contents are the file layer's keywords (`file.name`, ...).

use super::state::NfsTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const FILE_NAME_TS: BufferId = BufferId::of(AppProto::Nfs, 1);
pub const FILE_NAME_TC: BufferId = BufferId::of(AppProto::Nfs, 2);

/// The sticky buffers of NFS: `file.name` of the file a transfer carries.
pub static BUFFERS: &[BufferDef] = &[def(
    "file.name",
    &[],
    None,
    AppProto::Nfs,
    Some(FILE_NAME_TS),
    Some(FILE_NAME_TC),
    false,
)];

/// Buffer `id` of a transaction: the name of the file of a transfer in that
/// direction.
pub fn buffer(tx: &NfsTx, id: BufferId, index: usize) -> Buf<'_> {
    let dir = match id {
        FILE_NAME_TS => Dir::ToServer,
        FILE_NAME_TC => Dir::ToClient,
        _ => return Buf::Absent,
    };
    match &tx.file {
        Some(f) if f.dir == Some(dir) && index == 0 && !tx.file_name.is_empty() => {
            Buf::Ready(&tx.file_name)
        }
        _ => Buf::Absent,
    }
}

pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("nfs_procedure", &[], parse_procedure, eval_procedure),
    KeywordDef::check("nfs.version", &[], parse_inclusive, eval_version),
];

fn parse_u32(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let cmp = parse_num_cmp(s).ok_or_else(|| format!("bad value `{s}`"))?;
    let bound = match cmp {
        NumCmp::Eq(a)
        | NumCmp::Ne(a)
        | NumCmp::Lt(a)
        | NumCmp::Le(a)
        | NumCmp::Gt(a)
        | NumCmp::Ge(a) => a,
        NumCmp::Between(_, b) | NumCmp::NotBetween(_, b) => b,
        NumCmp::MaskEq(m, x) | NumCmp::MaskNe(m, x) => m | x,
    };
    if bound > u64::from(u32::MAX) {
        return Err(format!("`{s}` is out of range (at most {})", u32::MAX));
    }
    Ok(KwValue::Num(cmp))
}

/// `nfs_procedure`: a range `a-b` (or `a<>b`) includes its ends; a negated range is
/// refused (as Suricata 8.0.6 refuses it).
fn parse_procedure(v: Option<&str>) -> Result<KwValue, String> {
    match parse_inclusive(v)? {
        KwValue::Num(NumCmp::NotBetween(..)) => Err("a negated range is not supported".into()),
        k => Ok(k),
    }
}

/// An integer whose ranges include their ends (`nfs.version` too, measured).
fn parse_inclusive(v: Option<&str>) -> Result<KwValue, String> {
    Ok(KwValue::Num(match parse_u32(v)? {
        KwValue::Num(NumCmp::Between(a, b)) => match a.checked_sub(1) {
            Some(a) => NumCmp::Between(a, b + 1),
            None => NumCmp::Le(b),
        },
        KwValue::Num(NumCmp::NotBetween(a, b)) => match a.checked_sub(1) {
            Some(a) => NumCmp::NotBetween(a, b + 1),
            None => NumCmp::Gt(b),
        },
        KwValue::Num(c) => c,
        other => return Ok(other),
    }))
}

fn nfs_tx(t: &dyn Transaction) -> Option<&NfsTx> {
    t.as_any()?.downcast_ref::<NfsTx>()
}

fn eval_procedure(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    if dir != Dir::ToServer {
        return Some(false);
    }
    let tx = nfs_tx(t)?;
    let extra = tx.file.iter().flat_map(|f| f.procs.iter().copied());
    Some(
        std::iter::once(tx.procedure)
            .chain(extra)
            .any(|p| cmp.test(u64::from(p))),
    )
}

fn eval_version(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    if dir != Dir::ToServer {
        return Some(false);
    }
    Some(cmp.test(u64::from(nfs_tx(t)?.nfs_version)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_inclusive() {
        assert_eq!(
            parse_procedure(Some("12-14")),
            Ok(KwValue::Num(NumCmp::Between(11, 15)))
        );
        assert_eq!(
            parse_procedure(Some("0-3")),
            Ok(KwValue::Num(NumCmp::Le(3)))
        );
        assert!(parse_procedure(Some("!2-4")).is_err());
        assert_eq!(
            parse_inclusive(Some("!2-4")),
            Ok(KwValue::Num(NumCmp::NotBetween(1, 5)))
        );
        assert_eq!(
            parse_inclusive(Some("2-4")),
            Ok(KwValue::Num(NumCmp::Between(1, 5)))
        );
        assert_eq!(
            parse_procedure(Some(">20")),
            Ok(KwValue::Num(NumCmp::Gt(20)))
        );
        assert_eq!(parse_u32(Some("<3")), Ok(KwValue::Num(NumCmp::Lt(3))));
        assert!(parse_u32(Some("4294967296")).is_err());
        assert!(parse_u32(None).is_err());
    }

    #[test]
    fn procedures_of_a_file_transfer() {
        let mut tx = NfsTx {
            procedure: 7,
            nfs_version: 3,
            ..NfsTx::default()
        };
        let mut f = super::super::state::FileXfer::default();
        f.procs.push(21);
        tx.file = Some(f);
        let v = parse_procedure(Some("21")).unwrap();
        assert_eq!(eval_procedure(&v, Dir::ToServer, 0, &tx), Some(true));
        assert_eq!(eval_procedure(&v, Dir::ToClient, 0, &tx), Some(false));
        let v = parse_u32(Some("3")).unwrap();
        assert_eq!(eval_version(&v, Dir::ToServer, 0, &tx), Some(true));
    }
}
