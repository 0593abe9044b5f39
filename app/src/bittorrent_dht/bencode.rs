//! A bounded bencode reader (BEP 3) over borrowed bytes, strict as the decoder Suricata
//! uses: integers without a leading zero or `-0`, string lengths without a leading zero,
//! dictionary keys strictly ascending (sorted, no duplicate), and a nesting depth
//! limit. Values are read lazily: a dictionary or list is walked entry by entry, and
//! a value the caller does not read is skipped (and checked) when the next one is
//! asked for. Nothing is copied.

/// Deepest nesting of dictionaries and lists a DHT message is read with (the message's
/// dictionary is 1; a response's `values` list inside `r` is 3), as Suricata's.
pub const MAX_DEPTH: usize = 3;
/// Longest byte string (a UDP datagram cannot hold a longer one).
pub const MAX_STRING_LEN: usize = 65_535;
/// Most digits of an integer or a string length (more cannot fit an `i64`).
pub const MAX_DIGITS: usize = 19;
/// Most entries of one dictionary or list (a datagram holds fewer: an entry is at
/// least two bytes).
pub const MAX_ENTRIES: usize = 32_768;

/// Why a message is not bencode the reader takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The input ended inside a value.
    Eof,
    /// A byte that starts no value, or a malformed integer or length.
    Syntax,
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A dictionary's keys out of order, or repeated.
    UnsortedKeys,
    /// A dictionary key that is not a byte string.
    KeyNotString,
    /// More than [`MAX_ENTRIES`] entries, or a string longer than [`MAX_STRING_LEN`].
    TooLong,
}

/// A value: a scalar, or a container still to be walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    Bytes(&'a [u8]),
    /// A list: walk it with [`Reader::list_next`]; its entries start at this offset.
    List(Container),
    /// A dictionary: walk it with [`Reader::dict_next`].
    Dict(Container),
}

/// Where a container's next entry is, and its depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Container {
    pos: usize,
    depth: usize,
    entries: usize,
    /// The last key read (offset and length in the message).
    last_key: (usize, usize),
}

/// The reader over one message.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data }
    }

    /// The first value (bytes after it are not read).
    pub fn top(&self) -> Result<Value<'a>, Error> {
        self.value(0, 1).map(|(v, _)| v)
    }

    fn byte(&self, at: usize) -> Result<u8, Error> {
        self.data.get(at).copied().ok_or(Error::Eof)
    }

    /// Digits up to `end` from `at`: the number and the offset of `end`.
    fn number(&self, mut at: usize, end: u8) -> Result<(i64, usize), Error> {
        let neg = self.byte(at)? == b'-';
        if neg {
            at += 1;
        }
        let start = at;
        let mut n: i64 = 0;
        loop {
            let c = self.byte(at)?;
            if c == end {
                break;
            }
            if !c.is_ascii_digit() || at - start >= MAX_DIGITS {
                return Err(Error::Syntax);
            }
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(i64::from(c - b'0')))
                .ok_or(Error::Syntax)?;
            at += 1;
        }
        let digits = self.data.get(start..at).unwrap_or_default();
        // No digits, a leading zero, or minus zero.
        if digits.is_empty() || (digits[0] == b'0' && (digits.len() > 1 || neg)) {
            return Err(Error::Syntax);
        }
        Ok((if neg { -n } else { n }, at))
    }

    /// The value at `at`, nested `depth` deep (1: the top), and the offset after it
    /// (for a container: after its opening byte).
    fn value(&self, at: usize, depth: usize) -> Result<(Value<'a>, usize), Error> {
        match self.byte(at)? {
            b'i' => {
                let (n, end) = self.number(at + 1, b'e')?;
                Ok((Value::Int(n), end + 1))
            }
            b'0'..=b'9' => {
                let (n, colon) = self.number(at, b':')?;
                let len = usize::try_from(n).map_err(|_| Error::Syntax)?;
                if len > MAX_STRING_LEN {
                    return Err(Error::TooLong);
                }
                let start = colon + 1;
                let s = self.data.get(start..start + len).ok_or(Error::Eof)?;
                Ok((Value::Bytes(s), start + len))
            }
            c @ (b'l' | b'd') => {
                if depth > MAX_DEPTH {
                    return Err(Error::TooDeep);
                }
                let c2 = Container {
                    pos: at + 1,
                    depth,
                    entries: 0,
                    last_key: (0, 0),
                };
                Ok((
                    if c == b'l' {
                        Value::List(c2)
                    } else {
                        Value::Dict(c2)
                    },
                    at + 1,
                ))
            }
            _ => Err(Error::Syntax),
        }
    }

    /// The offset after value `v` read at nesting `depth` whose scalar part ended at
    /// `after`: a container is walked to its end (iteratively: its depth is bounded).
    fn skip(&self, v: Value<'a>, after: usize) -> Result<usize, Error> {
        match v {
            Value::Int(_) | Value::Bytes(_) => Ok(after),
            Value::List(mut c) => {
                while self.list_next(&mut c)?.is_some() {}
                Ok(c.pos)
            }
            Value::Dict(mut c) => {
                while self.dict_next(&mut c)?.is_some() {}
                Ok(c.pos)
            }
        }
    }

    /// The next entry of list `c` (`None` at its end, after which `c` points past it).
    pub fn list_next(&self, c: &mut Container) -> Result<Option<Value<'a>>, Error> {
        if self.byte(c.pos)? == b'e' {
            c.pos += 1;
            return Ok(None);
        }
        c.entries += 1;
        if c.entries > MAX_ENTRIES {
            return Err(Error::TooLong);
        }
        let (v, after) = self.value(c.pos, c.depth + 1)?;
        c.pos = self.skip(v, after)?;
        Ok(Some(v))
    }

    /// The next (key, value) of dictionary `c` (`None` at its end). Keys must be byte
    /// strings in strictly ascending order.
    pub fn dict_next(&self, c: &mut Container) -> Result<Option<(&'a [u8], Value<'a>)>, Error> {
        if self.byte(c.pos)? == b'e' {
            c.pos += 1;
            return Ok(None);
        }
        c.entries += 1;
        if c.entries > MAX_ENTRIES {
            return Err(Error::TooLong);
        }
        let (k, after) = self.value(c.pos, c.depth + 1)?;
        let Value::Bytes(key) = k else {
            return Err(Error::KeyNotString);
        };
        // The previous key is kept as its place in the message: no copy.
        let key_start = after - key.len();
        if c.entries > 1 {
            let (p, n) = c.last_key;
            let prev = self.data.get(p..p + n).unwrap_or_default();
            if prev >= key {
                return Err(Error::UnsortedKeys);
            }
        }
        c.last_key = (key_start, key.len());
        let (v, vafter) = self.value(after, c.depth + 1)?;
        c.pos = self.skip(v, vafter)?;
        Ok(Some((key, v)))
    }
}
