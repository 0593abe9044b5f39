//! `vars`: the address and port groups that rules use as `$NAME` (`$HOME_NET`,
//! `$HTTP_PORTS`). The defaults are those of Suricata's default suricata.yaml; a config
//! file's groups are merged over them, so a file that sets only `HOME_NET` keeps the rest.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

/// Default `vars.address-groups`, as in Suricata's default suricata.yaml.
fn default_address_groups() -> BTreeMap<String, VarValue> {
    [
        ("HOME_NET", "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"),
        ("EXTERNAL_NET", "!$HOME_NET"),
        ("HTTP_SERVERS", "$HOME_NET"),
        ("SMTP_SERVERS", "$HOME_NET"),
        ("SQL_SERVERS", "$HOME_NET"),
        ("DNS_SERVERS", "$HOME_NET"),
        ("TELNET_SERVERS", "$HOME_NET"),
        ("AIM_SERVERS", "$EXTERNAL_NET"),
        ("DC_SERVERS", "$HOME_NET"),
        ("DNP3_SERVER", "$HOME_NET"),
        ("DNP3_CLIENT", "$HOME_NET"),
        ("MODBUS_CLIENT", "$HOME_NET"),
        ("MODBUS_SERVER", "$HOME_NET"),
        ("ENIP_CLIENT", "$HOME_NET"),
        ("ENIP_SERVER", "$HOME_NET"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), VarValue(v.to_string())))
    .collect()
}

/// Default `vars.port-groups`, as in Suricata's default suricata.yaml.
fn default_port_groups() -> BTreeMap<String, VarValue> {
    [
        ("HTTP_PORTS", "80"),
        ("SHELLCODE_PORTS", "!80"),
        ("ORACLE_PORTS", "1521"),
        ("SSH_PORTS", "22"),
        ("DNP3_PORTS", "20000"),
        ("MODBUS_PORTS", "502"),
        ("FILE_DATA_PORTS", "[$HTTP_PORTS,110,143]"),
        ("FTP_PORTS", "21"),
        ("GENEVE_PORTS", "6081"),
        ("VXLAN_PORTS", "4789"),
        ("TEREDO_PORTS", "3544"),
        ("SIP_PORTS", "[5060, 5061]"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), VarValue(v.to_string())))
    .collect()
}

/// A variable's value as rule text (`[10.0.0.0/8,!10.1.0.0/16]`, `$HOME_NET`, `80`).
/// Also read from a YAML number or list, which some config files use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct VarValue(pub String);

impl<'de> Deserialize<'de> for VarValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        fn text(v: &Value) -> Option<String> {
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Sequence(items) => {
                    let parts: Option<Vec<String>> = items.iter().map(text).collect();
                    Some(format!("[{}]", parts?.join(",")))
                }
                _ => None,
            }
        }
        text(&v)
            .map(VarValue)
            .ok_or_else(|| serde::de::Error::custom("a variable must be a string, number or list"))
    }
}

/// `vars`: address and port groups used by rules as `$NAME`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Vars {
    #[serde(default = "default_address_groups")]
    pub address_groups: BTreeMap<String, VarValue>,
    #[serde(default = "default_port_groups")]
    pub port_groups: BTreeMap<String, VarValue>,
}

impl Default for Vars {
    fn default() -> Self {
        Vars {
            address_groups: default_address_groups(),
            port_groups: default_port_groups(),
        }
    }
}
