//! `--engine-analysis`: what the engine makes of each rule, written to the log
//! directory as Suricata does: `rules.json` (one JSON object per rule: its text, ids,
//! protocol, what it inspects, its fast pattern, its references as links; a rule that
//! did not load: its file, line and the reason) and `rules_analysis.txt` (the same for
//! people, with warnings about rules that will be slow).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use meerkat_detect::rules::{ListRef, Loaded, PayloadSource, Proto, Rule, RuleContext};
use serde_json::json;

/// The files written.
#[derive(Debug)]
pub struct Written {
    pub rules_json: PathBuf,
    pub analysis_txt: PathBuf,
    pub rules: usize,
    pub failed: usize,
}

/// The buffer a rule's fast pattern is searched in.
fn fast_buffer(r: &Rule) -> Option<&'static str> {
    r.fast.as_ref().map(|f| match f.list {
        ListRef::Payload => match (r.proto, r.payload_source) {
            (_, PayloadSource::Packet) => "payload",
            (Proto::Tcp, _) => "reassembled stream",
            _ => "payload",
        },
        ListRef::Buffer(i) => r.buffers.get(i).map_or("?", |b| b.def.name),
    })
}

/// What the rule is evaluated on.
fn kind(r: &Rule) -> &'static str {
    if r.is_app() {
        "app_tx"
    } else if r.payload.is_empty() && r.buffers.is_empty() {
        "pkt"
    } else if r.proto == Proto::Tcp && r.payload_source != PayloadSource::Packet {
        "stream"
    } else {
        "pkt"
    }
}

/// Printable pattern bytes, Suricata style: `abc|0D 0A|`.
fn printable(bytes: &[u8]) -> String {
    let mut s = String::new();
    let mut in_hex = false;
    for &b in bytes {
        let plain = (0x20..0x7f).contains(&b) && b != b'|';
        if plain {
            if in_hex {
                s.push('|');
                in_hex = false;
            }
            s.push(b as char);
        } else {
            if in_hex {
                s.push(' ');
            } else {
                s.push('|');
                in_hex = true;
            }
            let _ = write!(s, "{b:02X}");
        }
    }
    if in_hex {
        s.push('|');
    }
    s
}

fn warnings(r: &Rule) -> Vec<&'static str> {
    let mut w = Vec::new();
    if r.proto == Proto::Tcp
        && !r.is_app()
        && r.flow.established.is_none()
        && r.flow.to_server.is_none()
        && r.header.is_empty()
    {
        w.push("TCP rule without a flow or flags option.");
    }
    if r.fast.is_none() && !r.payload.is_empty() {
        w.push(
            "Rule has no fast pattern: it is evaluated on every packet of its protocol and ports.",
        );
    }
    if r.flow.to_server.is_none() && !r.is_app() {
        w.push("Rule is inspecting both the request and the response.");
    }
    w
}

fn rule_json(r: &Rule, ctx: &RuleContext) -> serde_json::Value {
    let refs: Vec<String> = r
        .references
        .iter()
        .map(|x| {
            ctx.references
                .url(x)
                .unwrap_or_else(|| x.replacen('|', ",", 1))
        })
        .collect();
    let mut v = json!({
        "raw": r.text,
        "id": r.sid,
        "gid": r.gid,
        "rev": r.rev,
        "msg": r.msg,
        "app_proto": r.app_proto.map_or("unknown", |p| p.name()),
        "type": kind(r),
        "file": r.file.display().to_string(),
        "line": r.line,
        "severity": r.severity,
        "buffers": r.buffers.iter().map(|b| b.def.name).collect::<Vec<_>>(),
    });
    if let Some(c) = &r.classtype {
        v["classtype"] = json!(c);
    }
    if !refs.is_empty() {
        v["references"] = json!(refs);
    }
    if let (Some(f), Some(buffer)) = (&r.fast, fast_buffer(r)) {
        v["mpm"] = json!({
            "buffer": buffer,
            "pattern": printable(&f.bytes),
            "length": f.bytes.len(),
            "nocase": f.nocase,
        });
    }
    let w = warnings(r);
    if !w.is_empty() {
        v["warnings"] = json!(w);
    }
    v
}

/// Writes the analysis of `loaded` into `dir`.
pub fn write(dir: &Path, loaded: &Loaded, ctx: &RuleContext) -> std::io::Result<Written> {
    let mut json_lines = String::new();
    let mut txt = String::new();
    let _ = writeln!(
        txt,
        "-------------------------------------------------------------------"
    );
    let _ = writeln!(
        txt,
        "Meerkat engine analysis: {} rules loaded, {} not loaded",
        loaded.rules.len(),
        loaded.problems.len()
    );
    let _ = writeln!(
        txt,
        "-------------------------------------------------------------------"
    );
    for r in &loaded.rules {
        json_lines.push_str(&rule_json(r, ctx).to_string());
        json_lines.push('\n');
        let _ = writeln!(txt, "== Sid: {} ==\n{}", r.sid, r.text);
        let what = match kind(r) {
            "app_tx" => format!(
                "Rule inspects {} transactions.",
                r.app_proto.map_or("app-layer", |p| p.name())
            ),
            "stream" => "Rule matches on the reassembled stream (the packet when the session is not tracked).".to_string(),
            _ => "Rule inspects packets.".to_string(),
        };
        let _ = writeln!(txt, "    {what}");
        for b in &r.buffers {
            let _ = writeln!(txt, "    Rule inspects the {} buffer.", b.def.name);
        }
        match (&r.fast, fast_buffer(r)) {
            (Some(f), Some(buffer)) => {
                let _ = writeln!(
                    txt,
                    "    Fast Pattern \"{}\" on \"{buffer}\" buffer{}.",
                    printable(&f.bytes),
                    if f.nocase { " (nocase)" } else { "" }
                );
            }
            _ => {
                let _ = writeln!(txt, "    No fast pattern.");
            }
        }
        for w in warnings(r) {
            let _ = writeln!(txt, "    Warning: {w}");
        }
        txt.push('\n');
    }
    for p in &loaded.problems {
        let entry = json!({
            "file": p.file.display().to_string(),
            "line": p.line,
            "id": p.sid,
            "keyword": p.keyword,
            "error": p.reason,
        });
        json_lines.push_str(&entry.to_string());
        json_lines.push('\n');
        let _ = writeln!(
            txt,
            "== Sid: {} ==\n    FAILURE: {}\n    File: {}.\n    Line: {}.\n",
            p.sid.map_or("UNKNOWN".to_string(), |s| s.to_string()),
            p.reason,
            p.file.display(),
            p.line
        );
    }
    let rules_json = dir.join("rules.json");
    let analysis_txt = dir.join("rules_analysis.txt");
    std::fs::write(&rules_json, json_lines)?;
    std::fs::write(&analysis_txt, txt)?;
    Ok(Written {
        rules_json,
        analysis_txt,
        rules: loaded.rules.len(),
        failed: loaded.problems.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_line_per_rule_and_per_failure() {
        let ctx = RuleContext::from_config(&meerkat_config::Config::default()).unwrap();
        let loaded = meerkat_detect::rules::load_str(
            "alert http any any -> any any (msg:\"x\"; http.uri; content:\"/a|0d 0a|\"; reference:cve,2021-1; sid:1; rev:2;)\n\
             alert tcp any any -> any any (msg:\"y\"; content:\"abc\"; sid:2;)\n\
             alert tcp any any -> any any (msg:\"z\"; frobnicate; sid:3;)\n",
            &ctx,
        );
        let dir = tempfile::tempdir().unwrap();
        let w = write(dir.path(), &loaded, &ctx).unwrap();
        assert_eq!((w.rules, w.failed), (2, 1));
        let text = std::fs::read_to_string(&w.rules_json).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["id"], 1);
        assert_eq!(lines[0]["type"], "app_tx");
        assert_eq!(lines[0]["mpm"]["buffer"], "http.uri");
        assert_eq!(lines[0]["mpm"]["pattern"], "/a|0D 0A|");
        assert_eq!(
            lines[0]["references"][0],
            "https://cve.mitre.org/cgi-bin/cvename.cgi?name=2021-1"
        );
        assert_eq!(lines[1]["type"], "stream");
        assert_eq!(lines[1]["mpm"]["buffer"], "reassembled stream");
        assert_eq!(lines[2]["keyword"], "frobnicate");
        let txt = std::fs::read_to_string(&w.analysis_txt).unwrap();
        assert!(txt.contains("== Sid: 2 ==") && txt.contains("Warning: TCP rule without a flow"));
        assert!(txt.contains("FAILURE: keyword not supported"));
    }
}
