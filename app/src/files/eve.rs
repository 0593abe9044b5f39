//! The EVE `fileinfo` object and an alert's `files` array, in Suricata 8's field order:
//! `filename, sid, magic, gaps, state, md5, sha1, sha256, stored, file_id | storing,
//! size, start, end, tx_id`.

use std::io::Write;

use meerkat_eve::{Obj, array};
use meerkat_proto::events::FileInfo;

/// The fields of one file (inside `"fileinfo":{...}` or an item of `"files":[...]`).
pub fn fields(x: &mut Obj<'_>, f: &FileInfo) {
    if !f.filename.is_empty() {
        x.bytes("filename", &f.filename);
    }
    if !f.sid.is_empty() {
        x.raw("sid", |b| {
            b.push(b'[');
            for (i, s) in f.sid.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                // Writing into a Vec cannot fail.
                let _ = write!(b, "{s}");
            }
            b.push(b']');
        });
    }
    if !f.magic.is_empty() {
        x.str("magic", &f.magic);
    }
    x.bool("gaps", f.gaps);
    x.str(
        "state",
        if f.state.is_empty() {
            "UNKNOWN"
        } else {
            &f.state
        },
    );
    if !f.md5.is_empty() {
        x.str("md5", &f.md5);
    }
    if !f.sha1.is_empty() {
        x.str("sha1", &f.sha1);
    }
    if !f.sha256.is_empty() {
        x.str("sha256", &f.sha256);
    }
    x.bool("stored", f.stored);
    if f.stored {
        if let Some(id) = f.file_id {
            x.u64("file_id", id);
        }
    } else if f.storing {
        x.bool("storing", true);
    }
    x.u64("size", f.size);
    if let (Some(s), Some(e)) = (f.start, f.end) {
        x.u64("start", s).u64("end", e);
    }
    x.u64("tx_id", f.tx_id);
}

/// `"fileinfo":{...}`.
pub fn fileinfo(o: &mut Obj<'_>, f: &FileInfo) {
    o.obj("fileinfo", |x| fields(x, f));
}

/// An alert's `"files":[...]` (nothing when the transaction has no file).
pub fn files(o: &mut Obj<'_>, fs: &[FileInfo]) {
    if fs.is_empty() {
        return;
    }
    o.raw("files", |b| array(b, fs, fields));
}
