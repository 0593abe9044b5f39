//! The datasets that rules name (`dataset`, `datarep`) and the config declares
//! (`datasets:`), by name, with Suricata's rules for where their files are.
//!
//! Each set is a `meerkat_shm::SharedSet`: under a runtime directory a file every
//! worker maps (the first one to need it makes it and loads its file), so that a value
//! one worker `set`s is `isset` in all; without one (`rules check`, tests) a private
//! mapping. The registry of one process maps each set once and hands the same set to
//! every rule that names it; it lives as long as the rule context, so a rule reload
//! keeps the sets and their values, as Suricata does.
//!
//! Paths, as Suricata 8 resolves them:
//! - `load` alone: absolute as given; relative, beside the rule file when it is there,
//!   else in `default-rule-path` when it is there, else as given.
//! - `save` (and `state`, which is load + save of one file): relative to
//!   `default-data-dir`; refused when `datasets.rules.allow-write` is off, and when
//!   absolute or climbing out with `..` unless `datasets.rules.allow-absolute-filenames`.
//! - a set of the config: relative paths in `default-data-dir` (a `load` that is not
//!   there is taken as given).
//!
//! A `state` file that does not exist is made empty (Suricata opens it `a+`); a `load`
//! file that does not exist, or a bad line in either, refuses the rule (naming the file
//! and line).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use meerkat_shm::SharedSet;
use meerkat_shm::dataset::{Kind, Sizing, Spec};

/// Memcap of a set that neither its rule nor the config sizes (bytes).
pub const DEFAULT_MEMCAP: u64 = 16 << 20;
/// Suricata's default hashsize of a set.
pub const DEFAULT_HASHSIZE: u32 = 4096;

/// How a rule (or the config) asks for a set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetRequest {
    pub name: String,
    pub kind: Option<Kind>,
    /// Resolved paths.
    pub load: Option<PathBuf>,
    pub save: Option<PathBuf>,
    pub memcap: Option<u64>,
    pub hashsize: Option<u32>,
}

/// The sets of one process.
#[derive(Debug)]
pub struct Registry {
    runtime: Option<PathBuf>,
    data_dir: PathBuf,
    rule_path: PathBuf,
    conf: meerkat_config::Datasets,
    sets: Mutex<HashMap<String, (Arc<SharedSet>, u32)>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::from_config(&meerkat_config::Config::default())
    }
}

fn climbs(p: &Path) -> bool {
    p.components().any(|c| c == Component::ParentDir)
}

impl Registry {
    pub fn from_config(config: &meerkat_config::Config) -> Registry {
        Registry {
            runtime: config.runtime_dir.clone(),
            data_dir: config.default_data_dir.clone(),
            rule_path: config.default_rule_path.clone(),
            conf: config.datasets.clone(),
            sets: Mutex::new(HashMap::new()),
        }
    }

    /// Whether rules may write sets (`datasets.rules.allow-write`).
    fn check_save(&self, save: &Path) -> Result<PathBuf, String> {
        if !self.conf.allow_write {
            return Err("rules containing save/state datasets have been disabled \
                        (datasets.rules.allow-write)"
                .to_string());
        }
        if !self.conf.allow_absolute_filenames {
            if save.is_absolute() {
                return Err(format!(
                    "absolute paths not allowed: {} (datasets.rules.allow-absolute-filenames)",
                    save.display()
                ));
            }
            if climbs(save) {
                return Err(format!(
                    "directory traversals not allowed: {}",
                    save.display()
                ));
            }
        }
        Ok(if save.is_absolute() {
            save.to_path_buf()
        } else {
            self.data_dir.join(save)
        })
    }

    fn rule_load_path(&self, load: &Path, rule_file: &Path) -> PathBuf {
        if load.is_absolute() {
            return load.to_path_buf();
        }
        let beside = rule_file.parent().unwrap_or(Path::new("")).join(load);
        if beside.exists() {
            return beside;
        }
        let in_rules = self.rule_path.join(load);
        if in_rules.exists() {
            return in_rules;
        }
        load.to_path_buf()
    }

    /// Resolves a rule's `load`/`save`/`state` paths (see the module's documentation).
    pub fn rule_paths(
        &self,
        load: Option<&Path>,
        save: Option<&Path>,
        state: Option<&Path>,
        rule_file: &Path,
    ) -> Result<(Option<PathBuf>, Option<PathBuf>), String> {
        if let Some(state) = state {
            let p = self.check_save(state)?;
            return Ok((Some(p.clone()), Some(p)));
        }
        let save = save.map(|s| self.check_save(s)).transpose()?;
        let load = load.map(|l| self.rule_load_path(l, rule_file));
        Ok((load, save))
    }

    fn config_path(&self, p: &Path, load: bool) -> PathBuf {
        if p.is_absolute() {
            return p.to_path_buf();
        }
        let joined = self.data_dir.join(p);
        if load && !joined.exists() {
            return p.to_path_buf();
        }
        joined
    }

    /// The request for the set the config declares as `name`.
    fn declared(&self, name: &str) -> Option<Result<SetRequest, String>> {
        let def = self.conf.sets.get(name)?;
        let Some(kind) = Kind::parse(&def.kind) else {
            return Some(Err(format!(
                "datasets.{name}.type: `{}` is not string, md5, sha256, ipv4 or ip",
                def.kind
            )));
        };
        let (load, save) = match (&def.state, &def.load) {
            (Some(s), _) => {
                let p = self.config_path(s, false);
                (Some(p.clone()), Some(p))
            }
            (None, Some(l)) => (Some(self.config_path(l, true)), None),
            (None, None) => (None, None),
        };
        Some(Ok(SetRequest {
            name: name.to_string(),
            kind: Some(kind),
            load,
            save,
            memcap: def.memcap.map(|m| m.bytes()),
            hashsize: def.hashsize,
        }))
    }

    /// Makes (or maps) every set the config declares; the problems, one per set.
    pub fn open_declared(&self) -> Vec<String> {
        let names: Vec<String> = self.conf.sets.keys().cloned().collect();
        names
            .iter()
            .filter_map(|n| {
                self.get(&SetRequest {
                    name: n.clone(),
                    ..Default::default()
                })
                .err()
            })
            .collect()
    }

    /// The set `req` names: the one this process has, else the runtime directory's,
    /// else a new one (loaded from its `load` file). A set the config declares takes its
    /// type and files from the config.
    pub fn get(&self, req: &SetRequest) -> Result<Arc<SharedSet>, String> {
        meerkat_shm::dataset::check_name(&req.name).map_err(|e| e.to_string())?;
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((set, _)) = sets.get(&req.name) {
            if let Some(k) = req.kind
                && k != set.kind()
            {
                return Err(format!(
                    "dataset {} already exists with type {}, not {}",
                    req.name,
                    set.kind().name(),
                    k.name()
                ));
            }
            return Ok(set.clone());
        }
        let req = match self.declared(&req.name) {
            Some(declared) => {
                let d = declared?;
                if req.kind.is_some_and(|k| Some(k) != d.kind) {
                    return Err(format!(
                        "dataset {} is declared in the config with another type",
                        req.name
                    ));
                }
                d
            }
            None => req.clone(),
        };
        let kind = req
            .kind
            .ok_or_else(|| format!("dataset {} not defined (give it a type)", req.name))?;
        let hashsize = req
            .hashsize
            .or(self.conf.hashsize)
            .unwrap_or(DEFAULT_HASHSIZE);
        if self.conf.single_hashsize > 0 && hashsize > self.conf.single_hashsize {
            return Err(format!(
                "hashsize {hashsize} in dataset '{}' exceeds configured 'single-hashsize' limit ({})",
                req.name, self.conf.single_hashsize
            ));
        }
        let total: u64 = sets.values().map(|(_, h)| u64::from(*h)).sum();
        if self.conf.total_hashsizes > 0
            && total + u64::from(hashsize) > u64::from(self.conf.total_hashsizes)
        {
            return Err(format!(
                "hashsize {hashsize} in dataset '{}' exceeds configured 'total-hashsizes' limit ({}, in use {total})",
                req.name, self.conf.total_hashsizes
            ));
        }
        let memcap = req
            .memcap
            .filter(|&m| m > 0)
            .or(self.conf.memcap.map(|m| m.bytes()).filter(|&m| m > 0))
            .unwrap_or(DEFAULT_MEMCAP);
        let spec = Spec {
            name: &req.name,
            kind,
            sizing: Sizing::for_kind(kind, memcap),
            save: req.save.as_deref(),
        };
        let init = |set: &SharedSet| -> Result<(), meerkat_shm::dataset::DatasetError> {
            let Some(load) = &req.load else {
                return Ok(());
            };
            // `state`: a file not there yet is made empty, as Suricata does.
            if req.save.as_ref() == Some(load) && !load.exists() {
                std::fs::File::create(load).map_err(|source| {
                    meerkat_shm::dataset::DatasetError::Io {
                        path: load.clone(),
                        source,
                    }
                })?;
            }
            let n = set.load_file(load)?;
            if set.refused() > 0 {
                tracing::warn!(
                    "dataset {}: {} values of {} refused: the set is full (memcap)",
                    req.name,
                    set.refused(),
                    load.display()
                );
            }
            tracing::debug!(
                "dataset {}: {n} values loaded from {}",
                req.name,
                load.display()
            );
            Ok(())
        };
        let set = match &self.runtime {
            Some(dir) => {
                let path = dir.join(meerkat_shm::dataset::file_name(&req.name));
                SharedSet::open_or_create(&path, &spec, init).map(|(s, _)| s)
            }
            None => SharedSet::private(&spec, init),
        }
        .map_err(|e| e.to_string())?;
        let set = Arc::new(set);
        sets.insert(req.name.clone(), (set.clone(), hashsize));
        Ok(set)
    }
}

/// The set `name` of the runtime directory `dir`, if it exists and has type `kind`
/// (what the socket's `dataset-*` commands act on).
pub fn find(dir: &Path, name: &str, kind: Kind) -> Option<SharedSet> {
    meerkat_shm::dataset::check_name(name).ok()?;
    let set = SharedSet::open(&dir.join(meerkat_shm::dataset::file_name(name))).ok()?;
    (set.kind() == kind).then_some(set)
}

/// Writes every set of the runtime directory `dir` that has a save path to it (at
/// shutdown, and for `dataset-dump`): (set, path, values written or the error).
pub fn save_all(dir: &Path) -> Vec<(String, PathBuf, std::io::Result<usize>)> {
    meerkat_runtime::dataset_paths(dir)
        .iter()
        .filter_map(|p| SharedSet::open(p).ok())
        .filter_map(|set| {
            let path = set.save_path()?.to_path_buf();
            let r = set.save_to(&path);
            Some((set.name().to_string(), path, r))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(dir: &Path, runtime: Option<&Path>) -> Registry {
        let mut c = meerkat_config::Config {
            default_data_dir: dir.to_path_buf(),
            runtime_dir: runtime.map(Path::to_path_buf),
            ..Default::default()
        };
        c.datasets.sets.insert(
            "conf".to_string(),
            meerkat_config::DatasetDef {
                kind: "md5".to_string(),
                state: Some(PathBuf::from("conf.lst")),
                ..Default::default()
            },
        );
        Registry::from_config(&c)
    }

    #[test]
    fn paths_follow_suricata() {
        let dir = tempfile::tempdir().unwrap();
        let r = registry(dir.path(), None);
        let rules = dir.path().join("r.rules");
        std::fs::write(dir.path().join("beside.lst"), "").unwrap();
        let (l, s) = r
            .rule_paths(Some(Path::new("beside.lst")), None, None, &rules)
            .unwrap();
        assert_eq!(l, Some(dir.path().join("beside.lst")));
        assert_eq!(s, None);
        let (l, s) = r
            .rule_paths(None, None, Some(Path::new("st.lst")), &rules)
            .unwrap();
        assert_eq!((l.clone(), s), (Some(dir.path().join("st.lst")), l));
        assert!(
            r.rule_paths(None, Some(Path::new("/etc/x")), None, &rules)
                .is_err()
        );
        assert!(
            r.rule_paths(None, Some(Path::new("../x")), None, &rules)
                .is_err()
        );
    }

    #[test]
    fn a_set_is_shared_by_name_and_typed() {
        let dir = tempfile::tempdir().unwrap();
        let rt = tempfile::tempdir().unwrap();
        let a = registry(dir.path(), Some(rt.path()));
        let b = registry(dir.path(), Some(rt.path()));
        let req = SetRequest {
            name: "seen".into(),
            kind: Some(Kind::String),
            ..Default::default()
        };
        let sa = a.get(&req).unwrap();
        let sb = b.get(&req).unwrap();
        sa.add(b"x", None);
        assert!(sb.contains(b"x"));
        let wrong = SetRequest {
            kind: Some(Kind::Md5),
            ..req.clone()
        };
        assert!(a.get(&wrong).is_err() && b.get(&wrong).is_err());
        let untyped = SetRequest {
            name: "nope".into(),
            ..Default::default()
        };
        assert!(a.get(&untyped).unwrap_err().contains("not defined"));
        // The config's set: its type and state file (made empty) come from the config.
        assert!(a.open_declared().is_empty());
        assert!(dir.path().join("conf.lst").exists());
        let conf = b
            .get(&SetRequest {
                name: "conf".into(),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(conf.kind(), Kind::Md5);
        assert_eq!(
            conf.save_path(),
            Some(dir.path().join("conf.lst").as_path())
        );
    }
}
