//! `decoder`: the UDP tunnels the packet decoder opens, and on which ports (Suricata's
//! keys and defaults: `teredo`, `vxlan`, `geneve`, each `enabled: true` with
//! `ports: $TEREDO_PORTS` (3544), `$VXLAN_PORTS` (4789), `$GENEVE_PORTS` (6081); at
//! most 4 ports each; Teredo also takes `any`).

use serde::{Deserialize, Serialize};

use crate::de::{self, yes};
use crate::vars::VarValue;
use crate::{Config, ConfigError};

/// Ports per tunnel protocol at most (Suricata's limit).
pub const MAX_TUNNEL_PORTS: usize = 4;
/// `$VAR` references followed while resolving a port list.
const MAX_VAR_DEPTH: usize = 8;

/// One UDP tunnel decoder (`decoder.vxlan`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct UdpTunnel {
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// Port list as rule text (`4789`, `[8472, 4789]`, `$VXLAN_PORTS`, `any`); absent:
    /// the protocol's `$<NAME>_PORTS` group.
    #[serde(default)]
    pub ports: Option<VarValue>,
}

impl Default for UdpTunnel {
    fn default() -> Self {
        UdpTunnel {
            enabled: true,
            ports: None,
        }
    }
}

/// `decoder`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Decoder {
    #[serde(default)]
    pub teredo: UdpTunnel,
    #[serde(default)]
    pub vxlan: UdpTunnel,
    #[serde(default)]
    pub geneve: UdpTunnel,
}

/// The ports a UDP tunnel is looked for on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TunnelPortList {
    /// The decoder is off.
    Off,
    /// Every port (Teredo only).
    Any,
    Ports(Vec<u16>),
}

/// A UDP tunnel protocol of `decoder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpTunnelKind {
    Teredo,
    Vxlan,
    Geneve,
}

impl UdpTunnelKind {
    fn name(self) -> &'static str {
        match self {
            UdpTunnelKind::Teredo => "teredo",
            UdpTunnelKind::Vxlan => "vxlan",
            UdpTunnelKind::Geneve => "geneve",
        }
    }
    fn group(self) -> &'static str {
        match self {
            UdpTunnelKind::Teredo => "TEREDO_PORTS",
            UdpTunnelKind::Vxlan => "VXLAN_PORTS",
            UdpTunnelKind::Geneve => "GENEVE_PORTS",
        }
    }
}

impl Config {
    /// The ports `kind` is decoded on: `decoder.<kind>.ports` with `$VAR`s resolved from
    /// `vars.port-groups`.
    pub fn tunnel_ports(&self, kind: UdpTunnelKind) -> Result<TunnelPortList, ConfigError> {
        let t = match kind {
            UdpTunnelKind::Teredo => &self.decoder.teredo,
            UdpTunnelKind::Vxlan => &self.decoder.vxlan,
            UdpTunnelKind::Geneve => &self.decoder.geneve,
        };
        if !t.enabled {
            return Ok(TunnelPortList::Off);
        }
        let spec = match &t.ports {
            Some(v) => v.0.clone(),
            None => format!("${}", kind.group()),
        };
        let bad = |why: String| {
            ConfigError::Invalid(format!("decoder.{}.ports `{spec}`: {why}", kind.name()))
        };
        let mut ports = Vec::new();
        let mut any = false;
        self.collect_ports(&spec, 0, &mut ports, &mut any)
            .map_err(bad)?;
        if any {
            if kind != UdpTunnelKind::Teredo {
                return Err(bad("`any` is only allowed for teredo".to_string()));
            }
            return Ok(TunnelPortList::Any);
        }
        ports.sort_unstable();
        ports.dedup();
        if ports.len() > MAX_TUNNEL_PORTS {
            return Err(bad(format!("more than {MAX_TUNNEL_PORTS} ports")));
        }
        if ports.is_empty() {
            return Ok(TunnelPortList::Any);
        }
        Ok(TunnelPortList::Ports(ports))
    }

    fn collect_ports(
        &self,
        spec: &str,
        depth: usize,
        out: &mut Vec<u16>,
        any: &mut bool,
    ) -> Result<(), String> {
        if depth > MAX_VAR_DEPTH {
            return Err("port variables nest too deep".to_string());
        }
        let s = spec.trim();
        let s = s
            .strip_prefix('[')
            .and_then(|x| x.strip_suffix(']'))
            .unwrap_or(s);
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item.eq_ignore_ascii_case("any") {
                *any = true;
            } else if let Some(var) = item.strip_prefix('$') {
                let v = self
                    .vars
                    .port_groups
                    .get(var)
                    .ok_or_else(|| format!("unknown port group `{var}`"))?;
                self.collect_ports(&v.0, depth + 1, out, any)?;
            } else {
                let p = item
                    .parse::<u16>()
                    .map_err(|_| format!("bad port `{item}`"))?;
                out.push(p);
                if out.len() > 64 {
                    return Err("too many ports".to_string());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_suricatas() {
        let c = Config::default();
        assert_eq!(
            c.tunnel_ports(UdpTunnelKind::Vxlan).unwrap(),
            TunnelPortList::Ports(vec![4789])
        );
        assert_eq!(
            c.tunnel_ports(UdpTunnelKind::Geneve).unwrap(),
            TunnelPortList::Ports(vec![6081])
        );
        assert_eq!(
            c.tunnel_ports(UdpTunnelKind::Teredo).unwrap(),
            TunnelPortList::Ports(vec![3544])
        );
    }

    #[test]
    fn lists_vars_any_and_limits() {
        let mut c = Config::default();
        c.decoder.vxlan.ports = Some(VarValue("[8472, $VXLAN_PORTS]".to_string()));
        assert_eq!(
            c.tunnel_ports(UdpTunnelKind::Vxlan).unwrap(),
            TunnelPortList::Ports(vec![4789, 8472])
        );
        c.decoder.teredo.ports = Some(VarValue("any".to_string()));
        assert_eq!(
            c.tunnel_ports(UdpTunnelKind::Teredo).unwrap(),
            TunnelPortList::Any
        );
        c.decoder.geneve.ports = Some(VarValue("[1,2,3,4,5]".to_string()));
        let e = c
            .tunnel_ports(UdpTunnelKind::Geneve)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 4 ports"), "{e}");
        c.decoder.geneve.ports = Some(VarValue("[70000]".to_string()));
        let e = c
            .tunnel_ports(UdpTunnelKind::Geneve)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad port `70000`"), "{e}");
        c.decoder.geneve.enabled = false;
        assert_eq!(
            c.tunnel_ports(UdpTunnelKind::Geneve).unwrap(),
            TunnelPortList::Off
        );
    }
}
