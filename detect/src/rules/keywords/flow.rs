//! Flow and state keywords: `flow`, `flowbits`, `flowint`, `xbits`, `hostbits`,
//! `threshold`, `detection_filter`.

use super::*;

impl Builder<'_> {
    /// Applies `kw` if it is one of these keywords: `Ok(false)` when it is not.
    pub(super) fn flow_option(&mut self, kw: &str, v: Option<&str>) -> Result<bool, Fail> {
        match kw {
            "flow" => self.flow(kw, v)?,
            "flowbits" => self.flowbits(kw, v)?,
            "flowint" => self.flowint(kw, v)?,
            "xbits" => self.xbits(kw, v)?,
            "hostbits" => self.hostbits(kw, v)?,
            "threshold" | "detection_filter" => {
                if self.rule.threshold.is_some() || self.rule.detection_filter.is_some() {
                    return Err(fail(kw, "a rule takes one threshold or detection_filter"));
                }
                let val = value_of(kw, v)?;
                if kw == "threshold" {
                    self.rule.threshold = Some(parse_threshold(kw, val)?);
                } else {
                    self.rule.detection_filter = Some(parse_detection_filter(kw, val)?);
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub(super) fn flow(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        for a in split_args(value_of(kw, v)?) {
            let f = &mut self.rule.flow;
            match a {
                "established" => f.established = Some(true),
                "not_established" => f.established = Some(false),
                "stateless" => f.stateless = true,
                "to_server" | "from_client" => f.to_server = Some(true),
                "to_client" | "from_server" => f.to_server = Some(false),
                "only_stream" => {
                    f.stream = true;
                    self.rule.payload_source = PayloadSource::Stream;
                }
                "no_stream" => {
                    f.stream = true;
                    self.rule.payload_source = PayloadSource::Packet;
                }
                "only_frag" => f.frag = Some(true),
                "no_frag" => f.frag = Some(false),
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        Ok(())
    }

    pub(super) fn flowbits(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let val = value_of(kw, v)?;
        let (cmd, names) = match val.split_once(',') {
            Some((c, n)) => (c.trim(), Some(n.trim())),
            None => (val.trim(), None),
        };
        if cmd == "noalert" {
            self.rule.noalert = true;
            return Ok(());
        }
        let names = names.ok_or_else(|| fail(kw, format!("{cmd} needs a name")))?;
        let ids = names
            .split(['|', '&'])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| self.names.intern(0, n).map_err(|e| fail(kw, e)))
            .collect::<Result<Vec<u16>, Fail>>()?;
        if ids.is_empty() {
            return Err(fail(kw, "needs a name"));
        }
        let and = names.contains('&');
        let c = match cmd {
            "set" => FlowbitCmd::Set(ids),
            "unset" => FlowbitCmd::Unset(ids),
            "toggle" => FlowbitCmd::Toggle(ids),
            // `a&b` (all set) is written as one check per name; `a|b` as one check.
            "isset" | "isnotset" if and => {
                let check: fn(Vec<u16>) -> FlowbitCmd = if cmd == "isset" {
                    FlowbitCmd::IsSet
                } else {
                    FlowbitCmd::IsNotSet
                };
                self.rule
                    .flowbits
                    .extend(ids.into_iter().map(|i| check(vec![i])));
                return Ok(());
            }
            "isset" => FlowbitCmd::IsSet(ids),
            "isnotset" => FlowbitCmd::IsNotSet(ids),
            other => return Err(fail(kw, format!("unknown command `{other}`"))),
        };
        self.rule.flowbits.push(c);
        Ok(())
    }

    pub(super) fn flowint(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let name = *args.first().ok_or_else(|| fail(kw, "needs a name"))?;
        let id = self.names.intern(1, name).map_err(|e| fail(kw, e))?;
        let op = *args.get(1).ok_or_else(|| fail(kw, "needs an operation"))?;
        let operand = |b: &mut Self| -> Result<IntOperand, Fail> {
            let a = *args
                .get(2)
                .ok_or_else(|| fail(kw, format!("{op} needs a value")))?;
            Ok(match parse_u64(a) {
                Some(n) => IntOperand::Const(n),
                None => IntOperand::Var(b.names.intern(1, a).map_err(|e| fail(kw, e))?),
            })
        };
        let c = match op {
            "=" => FlowintCmd::Assign(id, operand(self)?),
            "+" | "+=" => FlowintCmd::Add(id, operand(self)?),
            "-" | "-=" => FlowintCmd::Sub(id, operand(self)?),
            "==" => FlowintCmd::Compare(id, NumCmpOp::Eq, operand(self)?),
            "!=" => FlowintCmd::Compare(id, NumCmpOp::Ne, operand(self)?),
            "<" => FlowintCmd::Compare(id, NumCmpOp::Lt, operand(self)?),
            "<=" => FlowintCmd::Compare(id, NumCmpOp::Le, operand(self)?),
            ">" => FlowintCmd::Compare(id, NumCmpOp::Gt, operand(self)?),
            ">=" => FlowintCmd::Compare(id, NumCmpOp::Ge, operand(self)?),
            "isset" => FlowintCmd::IsSet(id),
            "notset" | "isnotset" => FlowintCmd::NotSet(id),
            other => return Err(fail(kw, format!("unknown operation `{other}`"))),
        };
        self.rule.flowints.push(c);
        Ok(())
    }

    pub(super) fn xbits(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let [cmd, name, rest @ ..] = &args[..] else {
            return Err(fail(kw, "expected command,name,track <type>[,expire <s>]"));
        };
        if *cmd == "noalert" {
            self.rule.noalert = true;
            return Ok(());
        }
        let op = xbit_op(kw, cmd)?;
        let mut track = None;
        let mut expire_s = 0;
        for r in rest {
            let (n, val) = option_pair(r);
            match n {
                "track" => {
                    track = Some(match val {
                        "ip_src" => XbitTrack::IpSrc,
                        "ip_dst" => XbitTrack::IpDst,
                        "ip_pair" => XbitTrack::IpPair,
                        other => return Err(fail(kw, format!("unknown track `{other}`"))),
                    })
                }
                "expire" => expire_s = val.parse().map_err(|_| fail(kw, "bad expire"))?,
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        let name = self.names.intern(2, name).map_err(|e| fail(kw, e))?;
        self.rule.xbits.push(XbitCmd {
            op,
            name,
            track: track.ok_or_else(|| fail(kw, "needs track"))?,
            expire_s,
        });
        Ok(())
    }

    /// `hostbits:<cmd>,<name>[,src|dst][,expire <s>]`: bits on a host, which are xbits
    /// tracked by the source (the default) or destination address, as in Suricata.
    pub(super) fn hostbits(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.as_slice() == ["noalert"] {
            self.rule.noalert = true;
            return Ok(());
        }
        let [cmd, name, rest @ ..] = &args[..] else {
            return Err(fail(kw, "expected command,name[,src|dst][,expire <s>]"));
        };
        let op = xbit_op(kw, cmd)?;
        let mut track = XbitTrack::IpSrc;
        let mut expire_s = 0;
        for r in rest {
            match r.split_once(' ').map(|(n, v)| (n.trim(), v.trim())) {
                Some(("expire", val)) => {
                    expire_s = val.parse().map_err(|_| fail(kw, "bad expire"))?;
                }
                None if *r == "src" => track = XbitTrack::IpSrc,
                None if *r == "dst" => track = XbitTrack::IpDst,
                _ => return Err(fail(kw, format!("unsupported option `{r}`"))),
            }
        }
        let name = self.names.intern(2, name).map_err(|e| fail(kw, e))?;
        self.rule.xbits.push(XbitCmd {
            op,
            name,
            track,
            expire_s,
        });
        Ok(())
    }
}

/// The command of `xbits`/`hostbits`.
pub(super) fn xbit_op(kw: &str, cmd: &str) -> Result<XbitOp, Fail> {
    Ok(match cmd {
        "set" => XbitOp::Set,
        "unset" => XbitOp::Unset,
        "toggle" => XbitOp::Toggle,
        "isset" => XbitOp::IsSet,
        "isnotset" => XbitOp::IsNotSet,
        other => return Err(fail(kw, format!("unknown command `{other}`"))),
    })
}

pub(super) fn parse_track(s: &str) -> Option<Track> {
    Some(match s {
        "by_src" => Track::BySrc,
        "by_dst" => Track::ByDst,
        "by_rule" => Track::ByRule,
        "by_both" => Track::ByBoth,
        "by_flow" => Track::ByFlow,
        _ => return None,
    })
}

/// The `track`, `count` and `seconds` options that `threshold` and `detection_filter`
/// share, all required; `own` takes the keyword's other options (name, value) and says
/// whether it knew the name.
pub(super) fn parse_rate_args(
    kw: &str,
    v: &str,
    own: impl FnMut(&str, &str) -> Result<bool, Fail>,
) -> Result<(Track, u32, u32), Fail> {
    let (track, count, seconds) = parse_rate_opts(kw, v, own)?;
    Ok((
        track,
        count,
        seconds.ok_or_else(|| fail(kw, "needs seconds"))?,
    ))
}

/// [`parse_rate_args`] with `seconds` optional.
fn parse_rate_opts(
    kw: &str,
    v: &str,
    mut own: impl FnMut(&str, &str) -> Result<bool, Fail>,
) -> Result<(Track, u32, Option<u32>), Fail> {
    let mut track = None;
    let mut count = None;
    let mut seconds = None;
    for a in split_args(v) {
        let (n, val) = option_pair(a);
        match n {
            "track" => {
                track = Some(
                    parse_track(val).ok_or_else(|| fail(kw, format!("unknown track `{val}`")))?,
                )
            }
            "count" => count = Some(val.parse().map_err(|_| fail(kw, "bad count"))?),
            "seconds" => seconds = Some(val.parse().map_err(|_| fail(kw, "bad seconds"))?),
            other => {
                if !own(other, val)? {
                    return Err(fail(kw, format!("unknown option `{other}`")));
                }
            }
        }
    }
    Ok((
        track.ok_or_else(|| fail(kw, "needs track"))?,
        count.ok_or_else(|| fail(kw, "needs count"))?,
        seconds,
    ))
}

/// Largest `backoff` multiplier (Suricata's limit).
const MAX_BACKOFF_MULTIPLIER: u32 = 999_999;

pub(super) fn parse_threshold(kw: &str, v: &str) -> Result<Threshold, Fail> {
    let mut kind = None;
    let mut multiplier = None;
    let (track, count, seconds) = parse_rate_opts(kw, v, |n, val| {
        match n {
            "type" => {
                kind = Some(match val {
                    "limit" => ThresholdKind::Limit,
                    "threshold" => ThresholdKind::Threshold,
                    "both" => ThresholdKind::Both,
                    "backoff" => ThresholdKind::Backoff { multiplier: 0 },
                    other => return Err(fail(kw, format!("unknown type `{other}`"))),
                })
            }
            "multiplier" => {
                multiplier = Some(
                    val.parse::<u32>()
                        .ok()
                        .filter(|m| (1..=MAX_BACKOFF_MULTIPLIER).contains(m))
                        .ok_or_else(|| fail(kw, format!("bad multiplier `{val}`")))?,
                )
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    let kind = kind.ok_or_else(|| fail(kw, "needs type"))?;
    backoff_checked(kind, track, count, seconds, multiplier).map_err(|m| fail(kw, m))
}

/// The threshold of `type kind` with its options checked: `backoff` takes `multiplier`
/// and `track by_flow` and no `seconds`; the other types need `seconds` and take no
/// `multiplier`.
pub(crate) fn backoff_checked(
    kind: ThresholdKind,
    track: Track,
    count: u32,
    seconds: Option<u32>,
    multiplier: Option<u32>,
) -> Result<Threshold, String> {
    match kind {
        ThresholdKind::Backoff { .. } => {
            let multiplier = multiplier.ok_or("type backoff needs multiplier")?;
            if track != Track::ByFlow {
                return Err("type backoff only supported for track by_flow".to_string());
            }
            if seconds.is_some() {
                return Err("type backoff takes no seconds".to_string());
            }
            if count == 0 {
                return Err("type backoff needs a count of at least 1".to_string());
            }
            Ok(Threshold {
                kind: ThresholdKind::Backoff { multiplier },
                track,
                count,
                seconds: 0,
            })
        }
        _ => {
            if multiplier.is_some() {
                return Err("multiplier is only for type backoff".to_string());
            }
            Ok(Threshold {
                kind,
                track,
                count,
                seconds: seconds.ok_or("needs seconds")?,
            })
        }
    }
}

pub(super) fn parse_detection_filter(kw: &str, v: &str) -> Result<DetectionFilter, Fail> {
    let mut unique = None;
    let (track, count, seconds) = parse_rate_args(kw, v, |n, val| {
        if n != "unique_on" {
            return Ok(false);
        }
        unique = Some(match val {
            "src_port" => true,
            "dst_port" => false,
            other => return Err(fail(kw, format!("unknown unique_on `{other}`"))),
        });
        Ok(true)
    })?;
    Ok(DetectionFilter {
        track,
        count,
        seconds,
        unique_on_src_port: unique,
    })
}
