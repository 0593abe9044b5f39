//! `dataset` and `datarep`, on the current sticky buffer (as Suricata 8 parses them):
//!
//! ```text
//! dataset:<set|unset|isset|isnotset>,<name>[, type <t>, load <file>, save <file>,
//!         state <file>, memcap <size>, hashsize <n>]
//! datarep:<name>, <op: > < ==>, <value>[, type <t>, load <file>, memcap <size>,
//!         hashsize <n>]
//! ```
//!
//! Options are comma-separated `key value` pairs; the set itself is the rule context's
//! (see `rules::datasets`).

use std::path::PathBuf;

use meerkat_shm::dataset::Kind;

use super::*;
use crate::rules::datasets::SetRequest;

/// A keyword's value split Suricata's way: comma-separated items, each `key` or
/// `key value` (the value is what follows the first space, trimmed).
fn items(v: &str) -> Vec<(&str, Option<&str>)> {
    v.split(',')
        .map(str::trim_start)
        .filter(|k| !k.is_empty())
        .map(|k| match k.split_once(' ') {
            Some((k, v)) => (k, Some(v.trim()).filter(|v| !v.is_empty())),
            None => (k.trim_end(), None),
        })
        .collect()
}

fn size(kw: &str, v: &str) -> Result<u64, Fail> {
    meerkat_config::ByteSize::parse(v)
        .map(|b| b.bytes())
        .ok_or_else(|| fail(kw, format!("`{v}` is not a size")))
}

/// The options after the fixed ones.
#[derive(Default)]
struct Opts {
    kind: Option<Kind>,
    load: Option<PathBuf>,
    save: Option<PathBuf>,
    state: Option<PathBuf>,
    memcap: Option<u64>,
    hashsize: Option<u32>,
}

fn options(kw: &str, rest: &[(&str, Option<&str>)], can_save: bool) -> Result<Opts, Fail> {
    let mut o = Opts::default();
    let once = |slot: &Option<PathBuf>, k: &str| {
        if slot.is_some() {
            Err(fail(kw, format!("'{k}' can only appear once")))
        } else {
            Ok(())
        }
    };
    for &(k, v) in rest {
        let Some(v) = v else {
            return Err(fail(kw, format!("option `{k}` needs a value")));
        };
        match k {
            "type" => {
                o.kind = Some(Kind::parse(v).ok_or_else(|| fail(kw, format!("bad type {v}")))?)
            }
            "load" => {
                once(&o.load, k)?;
                o.load = Some(PathBuf::from(v));
            }
            "save" if can_save => {
                once(&o.save, k)?;
                o.save = Some(PathBuf::from(v));
            }
            "state" if can_save => {
                once(&o.state, k)?;
                o.state = Some(PathBuf::from(v));
            }
            "memcap" => o.memcap = Some(size(kw, v)?),
            "hashsize" => {
                o.hashsize = Some(
                    u32::try_from(size(kw, v)?)
                        .map_err(|_| fail(kw, format!("hashsize `{v}` too large")))?,
                )
            }
            _ => return Err(fail(kw, format!("unknown option `{k}`"))),
        }
    }
    if o.state.is_some() && (o.load.is_some() || o.save.is_some()) {
        return Err(fail(kw, "'state' can not be mixed with 'load' and 'save'"));
    }
    if o.load.is_some() && o.kind.is_none() && !can_save {
        return Err(fail(kw, "if load is used type must be set as well"));
    }
    Ok(o)
}

impl<'a> Builder<'a> {
    pub(super) fn dataset_option(&mut self, kw: &str, v: Option<&str>) -> Result<bool, Fail> {
        let (name, op, opts) = match kw {
            "dataset" => {
                let v = value_of(kw, v)?;
                let it = items(v);
                let (cmd, name) = match it[..] {
                    [(cmd, None), (name, None), ..] => (cmd, name),
                    _ => return Err(fail(kw, "expects `<command>,<name>[, options]`")),
                };
                let op = match cmd {
                    "set" => DatasetOp::Set,
                    "unset" => DatasetOp::Unset,
                    "isset" => DatasetOp::IsSet,
                    "isnotset" => DatasetOp::IsNotSet,
                    _ => {
                        return Err(fail(
                            kw,
                            format!("dataset action \"{cmd}\" is not supported"),
                        ));
                    }
                };
                (name, op, options(kw, &it[2..], true)?)
            }
            "datarep" => {
                let v = value_of(kw, v)?;
                let it = items(v);
                let (name, cmd, value) = match it[..] {
                    [(name, None), (cmd, None), (value, None), ..] => (name, cmd, value),
                    _ => return Err(fail(kw, "expects `<name>,<op>,<value>[, options]`")),
                };
                let rop = match cmd {
                    ">" => RepOp::Gt,
                    "<" => RepOp::Lt,
                    "==" => RepOp::Eq,
                    _ => {
                        return Err(fail(
                            kw,
                            format!("datarep operation \"{cmd}\" is not supported"),
                        ));
                    }
                };
                let value: u16 = value
                    .parse()
                    .map_err(|_| fail(kw, format!("`{value}` is not a value of 0 to 65535")))?;
                (
                    name,
                    DatasetOp::Rep(rop, value),
                    options(kw, &it[3..], false)?,
                )
            }
            _ => return Ok(false),
        };
        let Cur::Buffer(_) = self.cur else {
            return Err(fail(kw, "datasets are only supported for sticky buffers"));
        };
        let registry = self.ctx.datasets.clone();
        let (load, save) = registry
            .rule_paths(
                opts.load.as_deref(),
                opts.save.as_deref(),
                opts.state.as_deref(),
                &self.rule.file,
            )
            .map_err(|e| fail(kw, e))?;
        let set = registry
            .get(&SetRequest {
                name: name.to_string(),
                kind: opts.kind,
                load,
                save,
                memcap: opts.memcap,
                hashsize: opts.hashsize,
            })
            .map_err(|e| fail(kw, format!("failed to set up dataset '{name}': {e}")))?;
        let c = self.cur;
        self.list_mut(c).datasets.push(DatasetMatch { set, op });
        self.last_payload = Some(c);
        Ok(true)
    }
}
