//! App-layer keywords: the protocols' sticky buffers, content modifiers and other
//! keywords (through their descriptors), `app-layer-protocol`, `app-layer-event`.

use super::*;

impl Builder<'_> {
    /// Applies `kw` if it is one of these keywords: `Ok(false)` when it is not.
    pub(super) fn app_option(&mut self, kw: &str, v: Option<&str>) -> Result<bool, Fail> {
        match kw {
            // `frame:pdu`, `frame:sip.request.line`: a frame of the protocol, inspected
            // as a buffer of the transaction its bytes belong to.
            "frame" => {
                let name = value_of(kw, v)?.trim();
                let def = app::buffers::frame(self.rule.app_proto, name)
                    .ok_or_else(|| fail(kw, format!("no frame `{name}` in Meerkat")))?;
                self.switch_buffer(def)?;
            }
            "app-layer-protocol" => {
                let val = value_of(kw, v)?;
                let (val, mode) = match val.split_once(',') {
                    None => (val, ProtoMode::Flow),
                    Some((p, m)) => (
                        p.trim(),
                        match m.trim() {
                            "final" | "original" => ProtoMode::Flow,
                            "to_server" => ProtoMode::ToServer,
                            "to_client" => ProtoMode::ToClient,
                            "either" => ProtoMode::Either,
                            "direction" => ProtoMode::Direction,
                            other => return Err(fail(kw, format!("unknown mode `{other}`"))),
                        },
                    ),
                };
                let (negated, name) = negation(val);
                // As Suricata 8: not in a rule whose protocol its header or an earlier
                // keyword set; a second one of the same mode only when both are
                // negated and name different protocols.
                if let Some(p) = self.rule.app_proto {
                    return Err(fail(kw, format!("the rule is a {} rule already", p.name())));
                }
                let proto = match name {
                    "failed" => AppProto::Failed,
                    "unknown" => AppProto::Unknown,
                    n => AppProto::from_rule_proto(n).ok_or_else(|| {
                        fail(kw, format!("protocol `{n}` is not parsed by Meerkat"))
                    })?,
                };
                let conflict = self.rule.header.iter().any(|h| match h {
                    HeaderMatch::AppLayerProtocol {
                        proto: p,
                        negated: n,
                        mode: m,
                    } => *m == mode && (!*n || !negated || *p == proto),
                    _ => false,
                });
                if conflict {
                    return Err(fail(
                        kw,
                        "a second app-layer-protocol of the same mode, not both negated"
                            .to_string(),
                    ));
                }
                self.rule.header.push(HeaderMatch::AppLayerProtocol {
                    proto,
                    negated,
                    mode,
                });
            }
            "app-layer-event" => {
                let name = value_of(kw, v)?;
                match app::events::lookup(name).map_err(|e| fail(kw, e))? {
                    app::events::EventRef::Packet(bit) => {
                        self.rule.header.push(HeaderMatch::AppLayerEvent(bit));
                    }
                    app::events::EventRef::Tx(proto, name) => {
                        self.require_app(kw, proto)?;
                        self.rule.tx_checks.push(TxCheck::AppEvent(name));
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub(super) fn switch_buffer(&mut self, def: &'static BufferDef) -> Result<(), Fail> {
        self.require_app(def.name, def.proto)?;
        // A multi-buffer keyword named again starts a list of its own, matched against
        // any instance on its own (Suricata 7+: `file.data; content:"a"; file.data;
        // content:"b";` matches when one file has "a" and another "b"); any other
        // buffer named again continues its list.
        let reuse = if def.multi {
            None
        } else {
            self.rule
                .buffers
                .iter()
                .enumerate()
                .position(|(i, b)| std::ptr::eq(b.def, def) && !self.legacy_lists.contains(&i))
        };
        let i = match reuse {
            Some(i) => i,
            None => {
                self.rule.buffers.push(BufferList {
                    def,
                    transforms: Vec::new(),
                    list: MatchList::default(),
                });
                self.rule.buffers.len() - 1
            }
        };
        self.cur = Cur::Buffer(i);
        Ok(())
    }

    pub(super) fn require_app(&mut self, kw: &str, proto: AppProto) -> Result<(), Fail> {
        match self.rule.app_proto {
            None => {
                self.rule.app_proto = Some(proto);
                Ok(())
            }
            Some(p) if p == proto => Ok(()),
            // A keyword of a protocol the rule's carries (`dcerpc.iface` in an `smb`
            // rule): the rule stays the carrier's.
            Some(p) if p.covers(proto) => Ok(()),
            // A keyword of the rule protocol's family (`http.uri` in `alert http2`).
            Some(p) if p.matches_rule(proto) => Ok(()),
            // A keyword of a protocol of the rule's family (`http2.frametype` in
            // `alert http`): the rule is that protocol's.
            Some(p) if proto.matches_rule(p) => {
                self.rule.app_proto = Some(proto);
                Ok(())
            }
            Some(p) => Err(fail(
                kw,
                format!("is a {} keyword in a {} rule", proto.name(), p.name()),
            )),
        }
    }

    /// A protocol's keyword that is not a sticky buffer, as its descriptor says.
    pub(super) fn protocol_keyword(
        &mut self,
        kw: &str,
        v: Option<&str>,
        desc: &'static app::Descriptor,
        def: &'static app::KeywordDef,
    ) -> Result<(), Fail> {
        match def.kind {
            KeywordKind::Check { parse, eval } => {
                self.require_app(kw, desc.proto)?;
                let value = parse(v).map_err(|e| fail(kw, e))?;
                self.rule.tx_checks.push(TxCheck::Keyword {
                    name: def.name,
                    value,
                    eval,
                });
            }
            KeywordKind::BufferContent {
                buffer,
                nocase,
                extension,
            } => {
                self.legacy_buffer_content(kw, v, buffer, nocase)?;
                if extension {
                    // `fileext:"pdf"`: the buffer ends with `.pdf`.
                    let list = self.rule.buffers.last_mut().map(|b| &mut b.list.items);
                    let Some([Match::Content(c)]) = list.map(|l| &mut l[..]) else {
                        return Err(fail(kw, "no content"));
                    };
                    c.pattern.insert(0, b'.');
                    c.endswith = true;
                }
            }
            KeywordKind::ContentIn { buffer } => {
                let def = app::buffers::sticky(buffer).ok_or_else(|| fail(kw, "no such buffer"))?;
                self.switch_buffer(def)?;
                self.content(kw, v)?;
                self.cur = Cur::Payload;
            }
            KeywordKind::Size { buffer, raw_buffer } => {
                let val = value_of(kw, v)?;
                // Suricata allows blanks around the comma (`urilen:15, norm;`).
                let (cmp, raw) = match val.split_once(',').map(|(c, m)| (c.trim(), m.trim())) {
                    Some((c, "raw")) => (c, true),
                    Some((c, "norm")) => (c, false),
                    Some(_) => return Err(fail(kw, "expected raw or norm after the comma")),
                    None => (val, false),
                };
                let cmp = parse_num_cmp(cmp).ok_or_else(|| fail(kw, "bad length"))?;
                let def = app::buffers::sticky(if raw { raw_buffer } else { buffer })
                    .ok_or_else(|| fail(kw, "no such buffer"))?;
                let saved = self.cur;
                self.switch_buffer(def)?;
                let c = self.cur;
                let list = self.list_mut(c);
                if list.bsize.is_some() {
                    return Err(fail(
                        kw,
                        format!("the {} buffer already has a size check", def.name),
                    ));
                }
                list.bsize = Some(cmp);
                self.cur = saved;
            }
            KeywordKind::Marker => self.require_app(kw, desc.proto)?,
        }
        Ok(())
    }

    /// A legacy keyword with a quoted value (`tls.subject:"CN=x"`, `tls.issuerdn:!"y"`):
    /// a content on buffer `buffer`, in a list of its own (other keywords of the rule
    /// and their sticky-buffer state are unaffected).
    pub(super) fn legacy_buffer_content(
        &mut self,
        kw: &str,
        v: Option<&str>,
        buffer: &str,
        nocase: bool,
    ) -> Result<(), Fail> {
        // The rule protocol's own buffer of a name several protocols share
        // (`filename:` in `alert ftp-data`).
        let def = app::buffers::sticky_in(buffer, self.rule.app_proto)
            .ok_or_else(|| fail(kw, "no such buffer"))?;
        self.require_app(kw, def.proto)?;
        let raw = value_of(kw, v)?;
        let (negated, raw) = negatable_quoted(kw, raw)?;
        let mut pattern = parse::unquote(raw).into_bytes();
        if pattern.is_empty() || pattern.len() > MAX_CONTENT {
            return Err(fail(kw, "needs 1 to 65535 bytes"));
        }
        if nocase {
            pattern.make_ascii_lowercase();
        }
        self.rule.buffers.push(BufferList {
            def,
            transforms: Vec::new(),
            list: MatchList {
                items: vec![Match::Content(Content::plain(pattern, nocase, negated))],
                bsize: None,
                absent: None,
                datasets: Vec::new(),
            },
        });
        self.legacy_lists.push(self.rule.buffers.len() - 1);
        // Content modifiers cannot apply to it (Suricata: "can't use nocase").
        self.last_content = None;
        Ok(())
    }

    /// `content:"x"; http_uri;` moves the content to the http.uri list.
    pub(super) fn legacy_modifier(
        &mut self,
        kw: &str,
        def: &'static BufferDef,
    ) -> Result<(), Fail> {
        let (c, i) = self
            .last_content
            .ok_or_else(|| fail(kw, "must follow a content"))?;
        if c != Cur::Payload {
            return Err(fail(kw, "the content is already in a sticky buffer"));
        }
        let m = self.rule.payload.items.remove(i);
        let saved = self.cur;
        self.switch_buffer(def)?;
        let b = self.cur;
        self.list_mut(b).items.push(m);
        let idx = self.list_mut(b).items.len() - 1;
        self.last_content = Some((b, idx));
        self.last_payload = Some(b);
        self.cur = saved;
        Ok(())
    }
}
