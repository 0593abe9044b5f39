//! Payload keywords: `content` and its modifiers, `pkt_data`, the packet-header
//! buffers, `base64_decode`/`base64_data`, `pcre`, `isdataat`, the `byte_*` keywords,
//! `absent`, `bsize` and the transforms.

use super::*;

impl Builder<'_> {
    /// Applies `kw` if it is one of these keywords: `Ok(false)` when it is not.
    pub(super) fn payload_option(&mut self, kw: &str, v: Option<&str>) -> Result<bool, Fail> {
        match kw {
            "content" => self.content(kw, v)?,
            "nocase" => {
                let c = self.last_content_mut(kw)?;
                c.nocase = true;
                c.pattern.make_ascii_lowercase();
            }
            "depth" | "offset" | "distance" | "within" => {
                let raw = value_of(kw, v)?.to_string();
                let val = self.var_or_const(kw, &raw)?;
                let c = self.last_content_mut(kw)?;
                let slot = match kw {
                    "depth" => &mut c.depth,
                    "offset" => &mut c.offset,
                    "distance" => &mut c.distance,
                    _ => &mut c.within,
                };
                if slot.is_some() {
                    return Err(fail(kw, "given twice for one content"));
                }
                *slot = Some(val);
                if let Value::Const(n) = val {
                    if (kw == "depth" || kw == "within")
                        && (n < 1 || (n as usize) < c.pattern.len())
                    {
                        return Err(fail(
                            kw,
                            format!(
                                "{n} is smaller than the content ({} bytes)",
                                c.pattern.len()
                            ),
                        ));
                    }
                    if kw == "offset" && n < 0 {
                        return Err(fail(kw, "must not be negative"));
                    }
                }
            }
            "startswith" => {
                let c = self.last_content_mut(kw)?;
                c.startswith = true;
            }
            "endswith" => {
                let c = self.last_content_mut(kw)?;
                c.endswith = true;
            }
            "rawbytes" => {
                // Raw bytes are what Meerkat inspects for the payload; only meaningful
                // with a content on the payload.
                self.last_content_mut(kw)?;
                if !matches!(self.last_content, Some((Cur::Payload, _))) {
                    return Err(fail(kw, "only applies to payload content"));
                }
            }
            "fast_pattern" => {
                let arg = v.map(str::trim);
                let c = self.last_content_mut(kw)?;
                c.fast_pattern = true;
                match arg {
                    None | Some("") => {}
                    Some("only") => c.fast_only = true,
                    Some(chop) => {
                        let (o, l) = chop
                            .split_once(',')
                            .ok_or_else(|| fail(kw, "expected only or <offset>,<length>"))?;
                        let (o, l): (u16, u16) = (
                            o.trim().parse().map_err(|_| fail(kw, "bad offset"))?,
                            l.trim().parse().map_err(|_| fail(kw, "bad length"))?,
                        );
                        if l == 0 || usize::from(o) + usize::from(l) > c.pattern.len() {
                            return Err(fail(kw, "chop is outside the content"));
                        }
                        c.fast_chop = Some((o, l));
                    }
                }
            }
            "pkt_data" => self.cur = Cur::Payload,
            "ipv4.hdr" | "ipv6.hdr" | "tcp.hdr" | "udp.hdr" => {
                let buf = HdrBuffer::from_keyword(kw).ok_or_else(|| fail(kw, "unknown buffer"))?;
                let i = match self.rule.hdr_buffers.iter().position(|h| h.buf == buf) {
                    Some(i) => i,
                    None => {
                        self.rule.hdr_buffers.push(HdrBufferList {
                            buf,
                            list: MatchList::default(),
                        });
                        self.rule.hdr_buffers.len() - 1
                    }
                };
                self.cur = Cur::Header(i);
            }
            "base64_data" => {
                if !self.has_base64_decode() {
                    return Err(fail(kw, "needs a base64_decode before it"));
                }
                self.cur = Cur::Base64;
            }
            "base64_decode" => self.base64_decode(kw, v)?,
            "pcre" => self.pcre(kw, v)?,
            "isdataat" => self.isdataat(kw, v)?,
            "byte_test" => self.byte_test(kw, v)?,
            "byte_jump" => self.byte_jump(kw, v)?,
            "byte_extract" => self.byte_extract(kw, v)?,
            "byte_math" => self.byte_math(kw, v)?,
            "absent" => {
                let mode = match v.map(str::trim) {
                    None | Some("") => Absent::Only,
                    Some("or_else") => Absent::OrElse,
                    Some(o) => return Err(fail(kw, format!("unknown option `{o}`"))),
                };
                let Cur::Buffer(_) = self.cur else {
                    return Err(fail(kw, "needs a sticky buffer"));
                };
                let c = self.cur;
                let list = self.list_mut(c);
                if list.absent.is_some() || !list.items.is_empty() || list.bsize.is_some() {
                    return Err(fail(kw, "must come first in its buffer, once"));
                }
                list.absent = Some(mode);
            }
            "bsize" => {
                let cmp = parse_num_cmp(value_of(kw, v)?).ok_or_else(|| fail(kw, "bad size"))?;
                let Cur::Buffer(_) = self.cur else {
                    return Err(fail(kw, "needs a sticky buffer"));
                };
                let c = self.cur;
                self.list_mut(c).bsize = Some(cmp);
            }
            "dotprefix"
            | "to_lowercase"
            | "to_uppercase"
            | "strip_whitespace"
            | "compress_whitespace"
            | "url_decode"
            | "to_sha256"
            | "to_md5"
            | "to_sha1"
            | "header_lowercase"
            | "strip_pseudo_headers"
            | "from_base64"
            | "zlib_deflate"
            | "pcrexform"
            | "domain"
            | "tld"
            | "xor" => self.transform(kw, v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub(super) fn content(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let raw = value_of(kw, v)?;
        let (negated, raw) = negatable_quoted(kw, raw)?;
        let pattern =
            crate::rules::decode_content(&parse::unquote(raw)).map_err(|e| fail(kw, e))?;
        if pattern.len() > MAX_CONTENT {
            return Err(fail(kw, "longer than 65535 bytes"));
        }
        self.push(Match::Content(Content::plain(pattern, false, negated)));
        Ok(())
    }

    pub(super) fn has_base64_decode(&self) -> bool {
        let has = |l: &MatchList| l.items.iter().any(|m| matches!(m, Match::Base64Decode(_)));
        has(&self.rule.payload) || self.rule.buffers.iter().any(|b| has(&b.list))
    }

    pub(super) fn transform(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let Cur::Buffer(mut i) = self.cur else {
            return Err(fail(kw, "transforms need a sticky buffer before them"));
        };
        if !self.rule.buffers[i].list.items.is_empty() {
            // A transform after matches starts a second, transformed instance of the
            // buffer; the matches after it inspect that one (both must match).
            let def = self.rule.buffers[i].def;
            let transforms = self.rule.buffers[i].transforms.clone();
            self.rule.buffers.push(BufferList {
                def,
                transforms,
                list: MatchList::default(),
            });
            i = self.rule.buffers.len() - 1;
            self.cur = Cur::Buffer(i);
        }
        let t = match kw {
            "dotprefix" => Transform::DotPrefix,
            "to_lowercase" => Transform::ToLowercase,
            "to_uppercase" => Transform::ToUppercase,
            "strip_whitespace" => Transform::StripWhitespace,
            "compress_whitespace" => Transform::CompressWhitespace,
            "url_decode" => Transform::UrlDecode,
            "to_sha256" => Transform::ToSha256,
            "to_md5" => Transform::ToMd5,
            "to_sha1" => Transform::ToSha1,
            "header_lowercase" => Transform::HeaderLowercase,
            "strip_pseudo_headers" => Transform::StripPseudoHeaders,
            "domain" | "tld" => {
                if v.is_some_and(|x| !x.trim().is_empty()) {
                    return Err(fail(kw, "takes no value"));
                }
                if kw == "domain" {
                    Transform::Domain
                } else {
                    Transform::Tld
                }
            }
            "from_base64" => {
                let (mut offset, mut bytes, mut mode) = (0u32, 0u32, Base64Mode::Rfc4648);
                for opt in split_args(v.unwrap_or("")) {
                    let (name, val) = opt
                        .split_once(' ')
                        .map_or((opt, ""), |(n, x)| (n, x.trim()));
                    let num = || {
                        parse_u64(val)
                            .and_then(|n| u32::try_from(n).ok())
                            .ok_or_else(|| fail(kw, format!("bad {name} `{val}`")))
                    };
                    match name {
                        "offset" => offset = num()?,
                        "bytes" => bytes = num()?,
                        "mode" => {
                            mode = match val.to_ascii_lowercase().as_str() {
                                "rfc4648" => Base64Mode::Rfc4648,
                                "rfc2045" => Base64Mode::Rfc2045,
                                "strict" => Base64Mode::Strict,
                                other => return Err(fail(kw, format!("unknown mode `{other}`"))),
                            }
                        }
                        other => return Err(fail(kw, format!("unknown option `{other}`"))),
                    }
                }
                Transform::FromBase64 {
                    offset,
                    bytes,
                    mode,
                }
            }
            "zlib_deflate" => {
                let mut max_size = crate::transforms::DEFAULT_ZLIB_MAX;
                for opt in split_args(v.unwrap_or("")) {
                    let (name, val) = opt
                        .split_once(' ')
                        .map_or((opt, ""), |(n, x)| (n, x.trim()));
                    match name {
                        "max-size" => {
                            max_size = parse_u64(val)
                                .and_then(|n| u32::try_from(n).ok())
                                .filter(|&n| n > 0)
                                .ok_or_else(|| fail(kw, format!("bad max-size `{val}`")))?
                        }
                        other => return Err(fail(kw, format!("unknown option `{other}`"))),
                    }
                }
                Transform::ZlibDeflate { max_size }
            }
            "pcrexform" => {
                let source = parse::unquote(value_of(kw, v)?);
                let mut b = pcre2::bytes::RegexBuilder::new();
                b.jit_if_available(true);
                let regex = b
                    .build(&source)
                    .map_err(|e| fail(kw, format!("bad regex: {e}")))?;
                Transform::PcreXform(PcreXform {
                    source,
                    regex: Arc::new(regex),
                })
            }
            _ => {
                let key = value_of(kw, v)?.trim_matches('"');
                let bytes = (0..key.len())
                    .step_by(2)
                    .map(|i| {
                        key.get(i..i + 2)
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                    })
                    .collect::<Option<Vec<u8>>>()
                    .filter(|b| !b.is_empty() && key.len() % 2 == 0)
                    .ok_or_else(|| fail(kw, "expected a hex key"))?;
                Transform::Xor(bytes)
            }
        };
        self.rule.buffers[i].transforms.push(t);
        Ok(())
    }

    pub(super) fn pcre(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let (negated, raw) = negation(value_of(kw, v)?);
        // Suricata takes the regex quoted or not (`pcre:/x/U;`).
        let inner = match raw.strip_prefix('"') {
            Some(s) => s
                .strip_suffix('"')
                .ok_or_else(|| fail(kw, "the closing quote is missing"))?,
            None => raw,
        };
        let body = inner
            .strip_prefix('/')
            .ok_or_else(|| fail(kw, "expected /regex/flags"))?;
        let end = body
            .rfind('/')
            .ok_or_else(|| fail(kw, "expected /regex/flags"))?;
        let (pattern, flags) = (&body[..end], &body[end + 1..]);
        let mut b = pcre2::bytes::RegexBuilder::new();
        b.jit_if_available(true);
        let mut relative = false;
        let mut anchored = false;
        let mut ungreedy = false;
        let mut buffer: Option<&'static str> = None;
        for f in flags.chars() {
            match f {
                'i' => {
                    b.caseless(true);
                }
                's' => {
                    b.dotall(true);
                }
                'm' => {
                    b.multi_line(true);
                }
                'x' => {
                    b.extended(true);
                }
                'A' => anchored = true,
                'E' => {} // dollar-endonly: handled below by rewriting
                'G' => ungreedy = true,
                'R' => relative = true,
                'O' | 'B' => {} // match-limit override; rawbytes: no effect on meaning here
                'U' => buffer = Some("http.uri"),
                'I' => buffer = Some("http.uri.raw"),
                'P' => buffer = Some("http.request_body"),
                'Q' => buffer = Some("http.response_body"),
                'H' => buffer = Some("http.header"),
                'D' => buffer = Some("http.header.raw"),
                'M' => buffer = Some("http.method"),
                'C' => buffer = Some("http.cookie"),
                'S' => buffer = Some("http.stat_code"),
                'Y' => buffer = Some("http.stat_msg"),
                'V' => buffer = Some("http.user_agent"),
                'W' => buffer = Some("http.host"),
                'Z' => buffer = Some("http.host.raw"),
                other => return Err(fail(kw, format!("unknown flag `{other}`"))),
            }
        }
        let mut source = pattern.to_string();
        if flags.contains('E') {
            // PCRE2_DOLLAR_ENDONLY: `$` matches only at the very end.
            source = format!("(?:{source})(?-m)");
        }
        if ungreedy {
            source = format!("(?U){source}");
        }
        if anchored {
            source = format!("\\G(?:{source})");
        }
        let regex = b
            .build(&source)
            .map_err(|e| fail(kw, format!("bad regex: {e}")))?;
        let m = Match::Pcre(Pcre {
            source: raw.to_string(),
            regex: Arc::new(regex),
            negated,
            relative,
            anchored,
        });
        match buffer {
            Some(name) => {
                let def = app::buffers::sticky(name).ok_or_else(|| fail(kw, "no such buffer"))?;
                let saved = self.cur;
                self.switch_buffer(def)?;
                self.push(m);
                self.cur = saved;
            }
            None if relative => self.push_relative(m),
            None => self.push(m),
        }
        Ok(())
    }

    pub(super) fn isdataat(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let first = args.first().ok_or_else(|| fail(kw, "needs a value"))?;
        let (negated, n) = negation(first);
        let offset = self.var_or_const(kw, n)?;
        let mut relative = false;
        for a in &args[1..] {
            match *a {
                "relative" => relative = true,
                "rawbytes" => {}
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        let m = Match::IsDataAt(IsDataAt {
            offset,
            relative,
            negated,
        });
        if relative {
            self.push_relative(m);
        } else {
            self.push(m);
        }
        Ok(())
    }

    /// Reads the common trailing options of the byte keywords.
    pub(super) fn byte_opts(
        &mut self,
        kw: &str,
        read: &mut ByteRead,
        opts: &[&str],
    ) -> Result<Vec<(String, String)>, Fail> {
        let mut rest = Vec::new();
        let mut i = 0;
        while i < opts.len() {
            let o = opts[i];
            let (name, arg) = match o.split_once(' ') {
                Some((n, a)) => (n.trim(), Some(a.trim())),
                None => (o, None),
            };
            match (name, arg) {
                ("relative", None) => read.relative = true,
                ("big", None) => read.big_endian = true,
                ("little", None) => read.big_endian = false,
                ("string", None) => {
                    if read.base == NumBase::Binary {
                        read.base = NumBase::Dec;
                    }
                }
                ("string", Some(b)) | ("endian", Some(b))
                    if name == "string" || matches!(b, "big" | "little") =>
                {
                    match b {
                        "hex" => read.base = NumBase::Hex,
                        "dec" => read.base = NumBase::Dec,
                        "oct" => read.base = NumBase::Oct,
                        "big" => read.big_endian = true,
                        "little" => read.big_endian = false,
                        other => return Err(fail(kw, format!("unknown encoding `{other}`"))),
                    }
                }
                ("hex", None) => read.base = NumBase::Hex,
                ("dec", None) => read.base = NumBase::Dec,
                ("oct", None) => read.base = NumBase::Oct,
                // The byte order of the DCE/RPC stub data (byte_math has no `dce` in
                // Suricata 8). As Suricata's, it makes a rule of no protocol a DCE/RPC
                // rule.
                ("dce", None) if kw != "byte_math" => {
                    read.dce = true;
                    if self.rule.app_proto.is_none() {
                        self.rule.app_proto = Some(crate::app::AppProto::Dcerpc);
                    }
                }
                ("bitmask", Some(m)) => {
                    read.bitmask = Some(parse_u64(m).ok_or_else(|| fail(kw, "bad bitmask"))?);
                }
                (n, a) => rest.push((n.to_string(), a.unwrap_or("").to_string())),
            }
            i += 1;
        }
        // `dce` says the byte order and that the number is binary: Suricata refuses it
        // with `big`, `little` or `string`.
        if read.dce {
            let clash = opts.iter().any(|o| {
                let name = o.split_once(' ').map_or(*o, |(n, _)| n.trim());
                matches!(
                    name,
                    "big" | "little" | "string" | "endian" | "hex" | "dec" | "oct"
                )
            });
            if clash {
                return Err(fail(
                    kw,
                    "`dce` gives the byte order and a binary number: no `big`, `little` or `string` with it",
                ));
            }
        }
        // byte_jump reads zero bytes when told to (a jump by post_offset alone), or a
        // count taken from a variable (checked when the rule runs); Suricata accepts both.
        let min = if kw == "byte_jump" { 0 } else { 1 };
        if read.base != NumBase::Binary && read.nbytes > 20 {
            return Err(fail(kw, "string numbers are at most 20 bytes"));
        }
        if read.base == NumBase::Binary && !(min..=8).contains(&read.nbytes) {
            return Err(fail(
                kw,
                format!("binary numbers are {min} to 8 bytes, not {}", read.nbytes),
            ));
        }
        Ok(rest)
    }

    pub(super) fn byte_test(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.len() < 4 {
            return Err(fail(kw, "expected bytes,operator,value,offset[,options]"));
        }
        let nbytes: u8 = args[0].parse().map_err(|_| fail(kw, "bad byte count"))?;
        let (negated, op) = match args[1].strip_prefix('!') {
            Some(r) if !r.is_empty() && r != "=" => (true, r),
            Some(_) => (true, "="),
            None => (false, args[1]),
        };
        let op = match op {
            "<" => ByteOp::Lt,
            ">" => ByteOp::Gt,
            "=" => ByteOp::Eq,
            "<=" => ByteOp::Le,
            ">=" => ByteOp::Ge,
            "&" => ByteOp::And,
            "^" => ByteOp::Xor,
            other => return Err(fail(kw, format!("unknown operator `{other}`"))),
        };
        let value = match parse_u64(args[2]) {
            Some(n) => Value::Const(n as i64),
            None => self.var_or_const(kw, args[2])?,
        };
        let offset = self.var_or_const(kw, args[3])?;
        let mut read = byte_read(nbytes, offset);
        let rest = self.byte_opts(kw, &mut read, &args[4..])?;
        if let Some((n, _)) = rest.first() {
            return Err(fail(kw, format!("unknown option `{n}`")));
        }
        self.push_maybe_relative(Match::ByteTest(ByteTest {
            read,
            op,
            negated,
            value,
        }));
        Ok(())
    }

    pub(super) fn byte_jump(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.len() < 2 {
            return Err(fail(kw, "expected bytes,offset[,options]"));
        }
        // The count may be a byte_extract variable (Suricata 7).
        let (nbytes, nbytes_var) = match args[0].parse::<u8>() {
            Ok(n) => (n, None),
            Err(_) => match self.var_or_const(kw, args[0]) {
                Ok(Value::Var(i)) => (0, Some(i)),
                _ => return Err(fail(kw, format!("bad byte count `{}`", args[0]))),
            },
        };
        let offset = self.var_or_const(kw, args[1])?;
        let mut read = byte_read(nbytes, offset);
        let rest = self.byte_opts(kw, &mut read, &args[2..])?;
        let mut j = ByteJump {
            read,
            multiplier: 1,
            align: false,
            from_beginning: false,
            from_end: false,
            post_offset: 0,
            nbytes_var,
        };
        for (n, a) in rest {
            match (n.as_str(), a.as_str()) {
                ("multiplier", m) => {
                    j.multiplier = m.parse().map_err(|_| fail(kw, "bad multiplier"))?
                }
                ("align", "") => j.align = true,
                ("from_beginning", "") => j.from_beginning = true,
                ("from_end", "") => j.from_end = true,
                ("post_offset", p) => {
                    j.post_offset = p.parse().map_err(|_| fail(kw, "bad post_offset"))?
                }
                (n, _) => return Err(fail(kw, format!("unknown option `{n}`"))),
            }
        }
        if j.from_beginning && j.from_end {
            return Err(fail(kw, "from_beginning and from_end exclude each other"));
        }
        self.push_maybe_relative(Match::ByteJump(j));
        Ok(())
    }

    pub(super) fn byte_extract(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.len() < 3 {
            return Err(fail(kw, "expected bytes,offset,name[,options]"));
        }
        let nbytes: u8 = args[0].parse().map_err(|_| fail(kw, "bad byte count"))?;
        let offset = Value::Const(args[1].parse().map_err(|_| fail(kw, "bad offset"))?);
        let mut read = byte_read(nbytes, offset);
        let rest = self.byte_opts(kw, &mut read, &args[3..])?;
        let var = self.new_var(kw, args[2])?;
        let mut e = ByteExtract {
            read,
            multiplier: 1,
            align: 0,
            var,
        };
        for (n, a) in rest {
            match (n.as_str(), a.as_str()) {
                ("multiplier", m) => {
                    e.multiplier = m.parse().map_err(|_| fail(kw, "bad multiplier"))?
                }
                ("align", a) => {
                    e.align = match a {
                        "2" => 2,
                        "4" => 4,
                        _ => return Err(fail(kw, "align is 2 or 4")),
                    }
                }
                (n, _) => return Err(fail(kw, format!("unknown option `{n}`"))),
            }
        }
        self.push_maybe_relative(Match::ByteExtract(e));
        Ok(())
    }

    pub(super) fn byte_math(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let mut nbytes = None;
        let mut offset = None;
        let mut op = None;
        let mut rvalue = None;
        let mut result = None;
        let mut read = byte_read(0, Value::Const(0));
        let mut others: Vec<&str> = Vec::new();
        for a in &args {
            let (n, val) = option_pair(a);
            match n {
                "bytes" => nbytes = Some(val.parse::<u8>().map_err(|_| fail(kw, "bad bytes"))?),
                "offset" => offset = Some(self.var_or_const(kw, val)?),
                "oper" => {
                    op = Some(match val {
                        "+" => MathOp::Add,
                        "-" => MathOp::Sub,
                        "*" => MathOp::Mul,
                        "/" => MathOp::Div,
                        "<<" => MathOp::Shl,
                        ">>" => MathOp::Shr,
                        other => return Err(fail(kw, format!("unknown operator `{other}`"))),
                    })
                }
                "rvalue" => {
                    rvalue = Some(match parse_u64(val) {
                        Some(n) => Value::Const(n as i64),
                        None => self.var_or_const(kw, val)?,
                    })
                }
                "result" => result = Some(val.to_string()),
                _ => others.push(a),
            }
        }
        read.nbytes = nbytes.ok_or_else(|| fail(kw, "needs bytes"))?;
        read.offset = offset.ok_or_else(|| fail(kw, "needs offset"))?;
        let rest = self.byte_opts(kw, &mut read, &others)?;
        if let Some((n, _)) = rest.first() {
            return Err(fail(kw, format!("unknown option `{n}`")));
        }
        let var = self.new_var(kw, &result.ok_or_else(|| fail(kw, "needs result"))?)?;
        self.push_maybe_relative(Match::ByteMath(ByteMath {
            read,
            op: op.ok_or_else(|| fail(kw, "needs oper"))?,
            rvalue: rvalue.ok_or_else(|| fail(kw, "needs rvalue"))?,
            var,
        }));
        Ok(())
    }

    pub(super) fn base64_decode(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let mut d = Base64Decode {
            bytes: None,
            offset: 0,
            relative: false,
        };
        for a in v.map(split_args).unwrap_or_default() {
            let (n, val) = option_pair(a);
            match n {
                "bytes" => d.bytes = Some(val.parse().map_err(|_| fail(kw, "bad bytes"))?),
                "offset" => d.offset = val.parse().map_err(|_| fail(kw, "bad offset"))?,
                "relative" => d.relative = true,
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        self.push(Match::Base64Decode(d));
        Ok(())
    }
}

/// A read of `nbytes` at `offset` as the byte keywords start it: absolute, big-endian,
/// binary, no bitmask (their options change that).
pub(super) fn byte_read(nbytes: u8, offset: Value) -> ByteRead {
    ByteRead {
        nbytes,
        offset,
        relative: false,
        big_endian: true,
        dce: false,
        base: NumBase::Binary,
        bitmask: None,
    }
}
