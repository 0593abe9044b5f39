//! The EVE `dnp3` object, in Suricata's field order: the message's type, link control
//! and addresses, its application header with its objects and their points, and for
//! responses the internal indications. Inside an alert it is wrapped in `request` or
//! `response`.

use meerkat_eve::Obj;
use meerkat_proto::events::{Dnp3, Dnp3Object, dnp3_value};

use super::objects;
use super::parser::{self as p, INDICATORS};
use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    let AppRecord::Dnp3(d) = r else { return };
    o.obj("dnp3", |o| {
        // An unfinished message (see `logger::record`).
        if d.kind.is_empty() {
            return;
        }
        if d.in_alert {
            let side = if d.kind == "request" {
                "request"
            } else {
                "response"
            };
            o.obj(side, |o| message(o, d));
        } else {
            message(o, d);
        }
    });
}

fn message(o: &mut Obj<'_>, d: &Dnp3) {
    let lc = d.link_control as u8;
    o.str("type", &d.kind);
    o.obj("control", |c| {
        c.bool("dir", lc & p::LINK_DIR != 0)
            .bool("pri", lc & p::LINK_PRI != 0)
            .bool("fcb", lc & p::LINK_FCB != 0)
            .bool("fcv", lc & p::LINK_FCV != 0)
            .u64("function_code", u64::from(lc & 0x0f));
    });
    o.u64("src", u64::from(d.src)).u64("dst", u64::from(d.dst));
    let ac = d.app_control as u8;
    o.obj("application", |a| {
        a.obj("control", |c| {
            c.bool("fir", ac & p::AC_FIR != 0)
                .bool("fin", ac & p::AC_FIN != 0)
                .bool("con", ac & p::AC_CON != 0)
                .bool("uns", ac & p::AC_UNS != 0)
                .u64("sequence", u64::from(ac & p::AC_SEQ));
        });
        a.u64("function_code", u64::from(d.function_code));
        if !d.objects.is_empty() {
            a.raw("objects", |buf| {
                meerkat_eve::array(buf, &d.objects, object);
            });
        }
        a.bool("complete", d.complete);
    });
    if d.has_iin {
        o.obj("iin", |i| {
            if d.iin != 0 {
                i.raw("indicators", |buf| {
                    meerkat_eve::str_array(
                        buf,
                        INDICATORS
                            .iter()
                            .filter(|(_, bit)| d.iin & u32::from(*bit) != 0)
                            .map(|(n, _)| *n),
                    );
                });
            }
        });
    }
}

fn object(x: &mut Obj<'_>, ob: &Dnp3Object) {
    x.u64("group", u64::from(ob.group))
        .u64("variation", u64::from(ob.variation))
        .u64("qualifier", u64::from(ob.qualifier))
        .u64("prefix_code", u64::from((ob.qualifier >> 4) & 0x7))
        .u64("range_code", u64::from(ob.qualifier & 0xf))
        .u64("start", u64::from(ob.start))
        .u64("stop", u64::from(ob.stop))
        .u64("count", u64::from(ob.count));
    if ob.points.is_empty() {
        return;
    }
    let t = objects::find(ob.group as u8, ob.variation as u8);
    let size = objects::prefix_is_size(((ob.qualifier >> 4) & 0x7) as u8);
    x.raw("points", |buf| {
        meerkat_eve::array(buf, &ob.points, |pt, point| {
            pt.u64("prefix", u64::from(point.prefix))
                .u64("index", u64::from(point.index));
            if size {
                pt.u64("size", u64::from(point.prefix));
            }
            let Some(t) = t else { return };
            for (name, v) in t.names().zip(&point.values) {
                match v.value {
                    Some(dnp3_value::Value::Uint(u)) => {
                        pt.u64(name, u);
                    }
                    // As Suricata, which writes every integer field unsigned: a
                    // negative one as its 64-bit two's complement.
                    Some(dnp3_value::Value::Int(i)) => {
                        pt.u64(name, i as u64);
                    }
                    Some(dnp3_value::Value::Float(f)) => float(pt, name, f),
                    Some(dnp3_value::Value::Text(ref b)) => {
                        text(pt, name, b);
                    }
                    // Empty octets are not written.
                    Some(dnp3_value::Value::Octets(ref b)) if !b.is_empty() => {
                        pt.raw(name, |buf| base64(buf, b));
                    }
                    Some(dnp3_value::Value::Cstr(ref b)) => {
                        if let Ok(s) = std::str::from_utf8(b) {
                            pt.str(name, s);
                        }
                    }
                    Some(dnp3_value::Value::Octets(_)) | None => {}
                }
            }
        });
    });
}

/// A float as Suricata writes it (Rust's shortest form: `1` for 1.0, `0.5`); one that
/// is not finite, which JSON cannot hold, as `null`.
fn float(o: &mut Obj<'_>, name: &str, f: f64) {
    o.raw(name, |buf| {
        if f.is_finite() {
            buf.extend_from_slice(f.to_string().as_bytes());
        } else {
            buf.extend_from_slice(b"null");
        }
    });
}

/// Bytes as Suricata writes a string of them: as they are when UTF-8, else every byte
/// from 0x80 up as the four characters `\xNN`.
fn text(o: &mut Obj<'_>, name: &str, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(s) => {
            o.str(name, s);
        }
        Err(_) => {
            let mut s = String::with_capacity(b.len() * 2);
            for &c in b {
                if c.is_ascii() {
                    s.push(char::from(c));
                } else {
                    s.push_str("\\x");
                    s.push(char::from(HEX[usize::from(c >> 4)]));
                    s.push(char::from(HEX[usize::from(c & 15)]));
                }
            }
            o.str(name, &s);
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes `b` in standard base64 with padding, quoted.
fn base64(buf: &mut Vec<u8>, b: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    buf.push(b'"');
    for chunk in b.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | u32::from(c) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                buf.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]);
            } else {
                buf.push(b'=');
            }
        }
    }
    buf.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(f: impl FnOnce(&mut Obj<'_>)) -> String {
        let mut buf = Vec::new();
        let mut o = Obj::new(&mut buf);
        f(&mut o);
        o.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn base64_pads() {
        for (b, want) in [
            (&b""[..], r#""""#),
            (b"\x10\x20\x30\x40", r#""ECAwQA==""#),
            (b"\xaa\xbb\xcc", r#""qrvM""#),
            (b"\x01\x02\x03\x04\x05", r#""AQIDBAU=""#),
        ] {
            let mut buf = Vec::new();
            base64(&mut buf, b);
            assert_eq!(String::from_utf8(buf).unwrap(), want);
        }
    }

    #[test]
    fn text_as_suricata() {
        // UTF-8 as it is (control characters escaped); else every byte from 0x80 up as
        // `\xNN`, even those of a valid character.
        assert_eq!(
            field(|o| text(o, "t", "é\0".as_bytes())),
            "{\"t\":\"é\\u0000\"}"
        );
        assert_eq!(
            field(|o| text(o, "t", b"\xe9\xff\xc3\xa9a")),
            r#"{"t":"\\xe9\\xff\\xc3\\xa9a"}"#
        );
    }
}
