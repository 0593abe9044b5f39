//! Rule metadata keywords: `msg`, `sid`, `rev`, `gid`, `priority`, `classtype`,
//! `reference`, `metadata`, `target`, `noalert`, `tag`, `prefilter`, `requires`.

use super::*;

impl Builder<'_> {
    /// Applies `kw` if it is one of these keywords: `Ok(false)` when it is not.
    pub(super) fn meta_option(&mut self, kw: &str, v: Option<&str>) -> Result<bool, Fail> {
        match kw {
            "msg" => self.rule.msg = parse::unquote(value_of(kw, v)?),
            "sid" => self.rule.sid = num(kw, v)?,
            "rev" => self.rule.rev = num(kw, v)?,
            "gid" => self.rule.gid = num(kw, v)?,
            // Checked before the rule is built (`rules::requires`): met here.
            "requires" => {
                value_of(kw, v)?;
            }
            "priority" => self.priority = Some(num(kw, v)?),
            "classtype" => {
                let name = parse::unquote(value_of(kw, v)?);
                let (desc, prio) = self
                    .ctx
                    .classification
                    .get(name.trim())
                    .ok_or_else(|| fail(kw, format!("unknown classtype `{name}`")))?;
                self.rule.category = desc.to_string();
                self.class_priority = Some(prio);
                self.rule.classtype = Some(name.trim().to_string());
            }
            "reference" => {
                let r = parse::unquote(value_of(kw, v)?);
                let (kind, val) = r
                    .split_once(',')
                    .ok_or_else(|| fail(kw, "expected type,value"))?;
                self.rule
                    .references
                    .push(format!("{}|{}", kind.trim(), val.trim()));
            }
            "metadata" => {
                let m = parse::unquote(value_of(kw, v)?);
                for item in m.split(',') {
                    let item = item.trim();
                    if item.is_empty() {
                        continue;
                    }
                    let (k, val) = item.split_once(' ').unwrap_or((item, ""));
                    self.rule
                        .metadata
                        .push((k.trim().to_string(), val.trim().to_string()));
                }
            }
            "target" => {
                self.rule.target = Some(match value_of(kw, v)? {
                    "src_ip" => Target::SrcIp,
                    "dest_ip" => Target::DestIp,
                    other => return Err(fail(kw, format!("`{other}` is not src_ip or dest_ip"))),
                })
            }
            "noalert" => self.rule.noalert = true,
            // Tagging of the flow's or host's next packets: parsed; the alert itself is
            // unaffected (Meerkat does not log tagged packets).
            "tag" => {
                let args = split_args(value_of(kw, v)?);
                if !matches!(args.first().copied(), Some("session" | "host")) {
                    return Err(fail(kw, "expected session or host"));
                }
            }
            // `prefilter` picks the keyword Suricata's prefilter engine uses for the rule;
            // it does not change what the rule matches.
            "prefilter" => {
                if v.is_some() {
                    return Err(fail(kw, "takes no value"));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
