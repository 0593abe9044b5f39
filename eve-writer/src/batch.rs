//! An `EventBatch` as it came off the wire: its header fields decoded, its events left
//! encoded, each one decoded by the writer thread right before it is rendered.
//!
//! Why: decoding a whole batch into `Vec<Event>` on a gRPC thread allocates every
//! string and address of every event there, and the writer thread frees them all, so
//! neither thread's allocator cache ever serves the other's requests (about a quarter
//! of the writer's instructions went to malloc and free). Decoding each event into one
//! reused [`Event`] on the writer thread keeps the top-level strings' and addresses'
//! capacity, and the nested messages' few allocations are served from the allocator's
//! per-thread cache that the previous event's just filled.
//!
//! [`RawBatch::parse`] (on the gRPC thread) checks the batch's framing: every field's
//! key, length and wire type, the producer's UTF-8, and where each event's bytes are. An
//! event whose own bytes do not decode is skipped and counted by the writer
//! (`eve.bad_events`); it cannot make the events after it unreadable, since each
//! event's extent is already known.

use std::ops::Range;

use meerkat_proto::events::{Event, EventBatch};
use prost::Message;
use prost::bytes::Bytes;
use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};

/// Field numbers of `EventBatch` (events.proto).
const PRODUCER: u32 = 1;
const EPOCH: u32 = 2;
const SEQ: u32 = 3;
const WORKER: u32 = 4;
const EVENTS: u32 = 5;
const FLUSH: u32 = 6;
const RING_MARK: u32 = 7;

/// Largest event count used to size a batch's extent list ahead of parsing.
const MAX_EVENTS_HINT: usize = 4096;

/// An `EventBatch` with its events still encoded (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct RawBatch {
    pub producer: String,
    pub epoch: u64,
    pub seq: u64,
    pub worker: u32,
    pub flush: bool,
    pub ring_mark: u64,
    /// The whole message.
    buf: Bytes,
    /// Where each event's encoding is in `buf`, in order.
    events: Vec<Range<u32>>,
}

/// Why a batch's framing is bad.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("batch of {0} bytes is larger than 4 GiB")]
    TooLarge(usize),
    #[error("bad field in EventBatch: {0}")]
    Field(#[from] prost::DecodeError),
    #[error("EventBatch field {tag} has wire type {got:?}, expected {want:?}")]
    WireType {
        tag: u32,
        got: WireType,
        want: WireType,
    },
    #[error("EventBatch field {tag} says {len} bytes, {left} left in the message")]
    Truncated { tag: u32, len: u64, left: usize },
    #[error("EventBatch producer name is not UTF-8")]
    Producer,
}

impl RawBatch {
    /// Parses the framing of one encoded `EventBatch`; `hint` is the event count to
    /// expect (the previous batch's), for sizing the extent list once.
    pub fn parse(buf: Bytes, hint: usize) -> Result<RawBatch, BatchError> {
        if u32::try_from(buf.len()).is_err() {
            return Err(BatchError::TooLarge(buf.len()));
        }
        let mut b = RawBatch {
            events: Vec::with_capacity(hint.min(MAX_EVENTS_HINT)),
            ..Default::default()
        };
        let total = buf.len();
        let mut rest: &[u8] = &buf;
        while !rest.is_empty() {
            let (tag, wt) = decode_key(&mut rest)?;
            let want = |want: WireType| {
                if wt == want {
                    Ok(())
                } else {
                    Err(BatchError::WireType { tag, got: wt, want })
                }
            };
            match tag {
                EPOCH | SEQ | WORKER | FLUSH | RING_MARK => {
                    want(WireType::Varint)?;
                    let v = decode_varint(&mut rest)?;
                    match tag {
                        EPOCH => b.epoch = v,
                        SEQ => b.seq = v,
                        // uint32 on the wire is a varint truncated to 32 bits, as prost reads it.
                        WORKER => b.worker = v as u32,
                        FLUSH => b.flush = v != 0,
                        _ => b.ring_mark = v,
                    }
                }
                PRODUCER | EVENTS => {
                    want(WireType::LengthDelimited)?;
                    let len = decode_varint(&mut rest)?;
                    if len > rest.len() as u64 {
                        return Err(BatchError::Truncated {
                            tag,
                            len,
                            left: rest.len(),
                        });
                    }
                    let len = len as usize;
                    let start = total - rest.len();
                    let (field, after) = rest.split_at(len);
                    if tag == PRODUCER {
                        b.producer = std::str::from_utf8(field)
                            .map_err(|_| BatchError::Producer)?
                            .to_string();
                    } else {
                        // Offsets fit: the message is shorter than 4 GiB (checked above).
                        b.events.push(start as u32..(start + len) as u32);
                    }
                    rest = after;
                }
                _ => skip_field(wt, tag, &mut rest, DecodeContext::default())?,
            }
        }
        b.buf = buf;
        Ok(b)
    }

    /// Encodes `batch` and parses it: for producers inside this process (tests, tools).
    pub fn from_batch(batch: &EventBatch) -> RawBatch {
        let n = batch.events.len();
        // A message that prost just encoded has valid framing.
        RawBatch::parse(Bytes::from(batch.encode_to_vec()), n).unwrap_or_default()
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The encoding of each event, in order: views of the batch's buffer (so that
    /// prost takes the event's bytes fields as further views, not as new allocations).
    pub fn events(&self) -> impl Iterator<Item = Bytes> + '_ {
        self.events
            .iter()
            .map(|r| self.buf.slice(r.start as usize..r.end as usize))
    }
}

/// Decodes one event's encoding into `ev`, reusing its strings' and vectors' capacity.
/// On error `ev` holds a partly decoded event and must not be used.
pub fn decode_event(ev: &mut Event, encoded: Bytes) -> Result<(), prost::DecodeError> {
    ev.clear();
    ev.merge(encoded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::encoding::encode_key;
    use prost::encoding::encode_varint;

    fn sample() -> EventBatch {
        let mut a = crate::render::tests::sample_alert();
        a.vlan = vec![10, 20];
        EventBatch {
            producer: "detect-3".to_string(),
            epoch: u64::MAX,
            seq: 1 << 40,
            worker: 3,
            events: vec![a, crate::render::tests::sample_flow(), Event::default()],
            flush: true,
            ring_mark: 77,
        }
    }

    #[test]
    fn parse_and_decode_give_what_prost_gives() {
        let batch = sample();
        let raw = RawBatch::parse(Bytes::from(batch.encode_to_vec()), 0).unwrap();
        assert_eq!(raw.producer, batch.producer);
        assert_eq!(
            (raw.epoch, raw.seq, raw.worker, raw.flush, raw.ring_mark),
            (u64::MAX, 1 << 40, 3, true, 77)
        );
        assert_eq!(raw.len(), 3);
        // One reused event, decoded in turn into an alert, a flow and an empty event:
        // nothing of an earlier event may remain in a later one.
        let mut ev = Event::default();
        for (enc, want) in raw.events().zip(&batch.events) {
            decode_event(&mut ev, enc).unwrap();
            assert_eq!(&ev, want);
        }
    }

    #[test]
    fn unknown_fields_are_skipped_and_the_last_scalar_wins() {
        let mut buf = sample().encode_to_vec();
        // An unknown varint field, an unknown length-delimited one, seq again.
        encode_key(99, WireType::Varint, &mut buf);
        encode_varint(5, &mut buf);
        encode_key(100, WireType::LengthDelimited, &mut buf);
        encode_varint(3, &mut buf);
        buf.extend_from_slice(b"xyz");
        encode_key(SEQ, WireType::Varint, &mut buf);
        encode_varint(9, &mut buf);
        let raw = RawBatch::parse(Bytes::from(buf), 0).unwrap();
        assert_eq!((raw.seq, raw.len()), (9, 3));
    }

    #[test]
    fn bad_framing_is_an_error() {
        // Events last on the wire (flush and ring_mark at their defaults are not
        // encoded); cut inside the last event: its length says more than is left.
        let good = EventBatch {
            flush: false,
            ring_mark: 0,
            ..sample()
        }
        .encode_to_vec();
        let cut = Bytes::copy_from_slice(&good[..good.len() - 3]);
        assert!(matches!(
            RawBatch::parse(cut, 0),
            Err(BatchError::Truncated { tag: EVENTS, .. })
        ));
        // seq as a length-delimited field.
        let mut buf = Vec::new();
        encode_key(SEQ, WireType::LengthDelimited, &mut buf);
        encode_varint(1, &mut buf);
        buf.push(0);
        let e = RawBatch::parse(Bytes::from(buf), 0).unwrap_err();
        assert!(e.to_string().contains("field 3"), "{e}");
        // A producer name that is not UTF-8.
        let mut buf = Vec::new();
        encode_key(PRODUCER, WireType::LengthDelimited, &mut buf);
        encode_varint(2, &mut buf);
        buf.extend_from_slice(&[0xff, 0xfe]);
        assert!(matches!(
            RawBatch::parse(Bytes::from(buf), 0),
            Err(BatchError::Producer)
        ));
        // A key of field number 0.
        assert!(RawBatch::parse(Bytes::from_static(&[0x00, 0x01]), 0).is_err());
    }

    #[test]
    fn an_event_that_does_not_decode_is_an_error_of_its_own() {
        let mut buf = Vec::new();
        // Event 1: a string field (app_proto, 13) that is not UTF-8.
        let bad = {
            let mut e = Vec::new();
            encode_key(13, WireType::LengthDelimited, &mut e);
            encode_varint(1, &mut e);
            e.push(0xff);
            e
        };
        let good = crate::render::tests::sample_flow().encode_to_vec();
        for e in [&bad, &good] {
            encode_key(EVENTS, WireType::LengthDelimited, &mut buf);
            encode_varint(e.len() as u64, &mut buf);
            buf.extend_from_slice(e);
        }
        let raw = RawBatch::parse(Bytes::from(buf), 0).unwrap();
        let mut ev = Event::default();
        let mut it = raw.events();
        assert!(decode_event(&mut ev, it.next().unwrap()).is_err());
        decode_event(&mut ev, it.next().unwrap()).unwrap();
        assert_eq!(ev, crate::render::tests::sample_flow());
    }
}
