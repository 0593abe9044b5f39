//! `--list-keywords[=all|csv|<keyword>]` and `--list-app-layer-protos`, in Suricata's
//! formats. The keywords are Suricata's (so that a rule writer sees the whole language),
//! each marked with whether Meerkat implements it: the rule parser is asked, so the
//! list cannot drift from the code.

use meerkat_detect::rules::{RuleContext, suricata};

/// What `--list-keywords` was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeywordList {
    /// No value: the names of the keywords Meerkat implements.
    Names,
    /// `all`: every Suricata keyword with its support and documentation.
    All,
    /// `csv`: the same as `name;supported;documentation` lines.
    Csv,
    /// One keyword.
    One(String),
}

impl KeywordList {
    pub fn parse(value: Option<&str>) -> KeywordList {
        match value.map(str::trim) {
            None | Some("") => KeywordList::Names,
            Some("all") => KeywordList::All,
            Some("csv") => KeywordList::Csv,
            Some(k) => KeywordList::One(k.to_string()),
        }
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The `--list-keywords` text; `Err` names a keyword Suricata does not have.
pub fn keywords(which: &KeywordList, ctx: &RuleContext) -> Result<String, String> {
    let mut s = String::new();
    match which {
        KeywordList::Names => {
            s.push_str("=====Supported keywords=====\n");
            for (k, _) in suricata::keywords().filter(|(k, _)| suricata::meerkat_supports(k, ctx)) {
                s.push_str(&format!("- {k}\n"));
            }
        }
        KeywordList::All => {
            for (k, doc) in suricata::keywords() {
                s.push_str(&format!(
                    "{k}:\n\tSupported by Meerkat: {}\n\tDocumentation: {doc}\n",
                    yes(suricata::meerkat_supports(k, ctx))
                ));
            }
        }
        KeywordList::Csv => {
            s.push_str("name;supported by meerkat;documentation\n");
            for (k, doc) in suricata::keywords() {
                s.push_str(&format!(
                    "{k};{};{doc};\n",
                    yes(suricata::meerkat_supports(k, ctx))
                ));
            }
        }
        KeywordList::One(name) => {
            let Some((k, doc)) = suricata::keywords().find(|(k, _)| k.eq_ignore_ascii_case(name))
            else {
                return Err(format!("unknown keyword `{name}`"));
            };
            s.push_str(&format!(
                "= {k} =\nSupported by Meerkat: {}\nDocumentation: {doc}\n",
                yes(suricata::meerkat_supports(k, ctx))
            ));
        }
    }
    Ok(s)
}

/// The `--list-app-layer-protos` text: the protocols Meerkat parses.
pub fn app_layer_protos() -> String {
    let mut s = String::from("=========Supported App Layer Protocols=========\n");
    for p in meerkat_app::AppProto::ALL {
        s.push_str(p.name());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let ctx = RuleContext::from_config(&meerkat_config::Config::default()).unwrap();
        let names = keywords(&KeywordList::Names, &ctx).unwrap();
        assert!(
            names.starts_with("=====Supported keywords=====\n- sid\n"),
            "{names}"
        );
        assert!(names.contains("\n- content\n") && !names.contains("\n- lua\n"));
        let csv = keywords(&KeywordList::Csv, &ctx).unwrap();
        assert!(csv.lines().any(|l| l.starts_with("content;yes;https://")));
        let one = keywords(&KeywordList::parse(Some("pcre")), &ctx).unwrap();
        assert!(
            one.starts_with("= pcre =\nSupported by Meerkat: yes\n"),
            "{one}"
        );
        assert!(keywords(&KeywordList::parse(Some("frobnicate")), &ctx).is_err());
        let protos = app_layer_protos();
        assert!(protos.lines().any(|l| l == "http") && protos.lines().any(|l| l == "dns"));
    }
}
