//! Every protocol of the list (`app/src/list.rs`) is complete: it has a flow counter, a
//! config section that turns it on and off, an EVE name (and, when it logs records, an
//! EVE type that eve-log outputs log by default unless its descriptor says not), fuzz
//! targets with seeds and an entry in
//! `fuzz/`, and at least one sticky buffer or keyword that loads in a rule.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use meerkat_detect::app::{self, PROTOCOLS, Registry, Transport};
use meerkat_detect::rules::{self, RuleContext};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[test]
fn every_protocol_has_a_flow_counter() {
    let names = meerkat_detect::worker::counter_names(3);
    for d in PROTOCOLS {
        let want = format!("detect.3.app_{}", d.name);
        assert!(names.contains(&want), "{want} is not a counter");
    }
}

#[test]
fn every_protocol_has_a_config_section_that_turns_it_off() {
    for d in PROTOCOLS {
        // Off by default (Modbus, ENIP, as in Suricata) or on by default.
        let default =
            Registry::from_config(&app::config::resolve(None, &[]).unwrap().config).unwrap();
        assert_eq!(
            default.protocols().any(|p| p.proto == d.proto),
            d.enabled_by_default,
            "{}",
            d.name
        );
        let on = app::config::resolve(
            None,
            &[format!("app-layer.protocols.{}.enabled=yes", d.name)],
        )
        .unwrap()
        .config;
        let off = app::config::resolve(
            None,
            &[format!("app-layer.protocols.{}.enabled=no", d.name)],
        )
        .unwrap_or_else(|e| panic!("app-layer.protocols.{}: {e}", d.name))
        .config;
        let (on, off) = (
            Registry::from_config(&on).unwrap(),
            Registry::from_config(&off).unwrap(),
        );
        assert!(on.protocols().any(|p| p.proto == d.proto), "{}", d.name);
        assert!(!off.protocols().any(|p| p.proto == d.proto), "{}", d.name);
        // Off means not detected: a state is never made for it.
        assert!(off.new_state(d.proto, Transport::Tcp).is_none());
    }
}

#[test]
fn every_protocol_has_an_eve_name_and_its_records_are_logged_by_default() {
    let config = app::config::resolve(None, &[]).unwrap().config;
    for d in PROTOCOLS {
        assert_eq!(d.proto.name(), d.name);
        assert!(!d.name.is_empty());
        if let Some(types_name) = d.eve_types_name() {
            // Logged by default whenever parsed (Modbus, ENIP and DNP3 are parsed
            // only when enabled), under the name `outputs.eve-log.types` gives it.
            assert!(
                config.eve_wants(types_name),
                "EVE type {types_name} is not logged by default"
            );
        }
    }
}

#[test]
fn every_protocol_has_fuzz_targets_with_seeds_and_a_cargo_fuzz_entry() {
    let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap();
    for d in PROTOCOLS {
        assert!(!d.fuzz.is_empty(), "{} has no fuzz target", d.name);
        for t in d.fuzz {
            // The module of `ftp-data` is `ftp_data`.
            let seeds = root()
                .join("app/src")
                .join(d.name.replace('-', "_"))
                .join("seeds")
                .join(t.name);
            let n = std::fs::read_dir(&seeds)
                .unwrap_or_else(|e| panic!("{}: {e}", seeds.display()))
                .count();
            assert!(n > 0, "no seeds in {}", seeds.display());
            let bin = format!("fuzz_targets/{}.rs", t.name);
            assert!(
                manifest.contains(&format!("name = \"{}\"", t.name)) && manifest.contains(&bin),
                "fuzz/Cargo.toml has no [[bin]] for {}",
                t.name
            );
            assert!(root().join("fuzz").join(&bin).exists(), "fuzz/{bin}");
        }
    }
}

#[test]
fn every_protocols_buffers_or_header_load() {
    let ctx = RuleContext::from_config(&meerkat_config::Config::default()).unwrap();
    for d in PROTOCOLS {
        // A protocol Suricata gives no keyword (POP3, IMAP, TFTP) is named by rule
        // headers only.
        if d.buffers.is_empty() && d.keywords.is_empty() && d.inner.is_empty() {
            let text = format!("alert {} any any -> any any (sid:1;)", d.name);
            let l = rules::load_str(&text, &ctx);
            assert!(l.problems.is_empty(), "{text}: {:?}", l.problems);
            assert_eq!(l.rules[0].app_proto, Some(d.proto), "{text}");
        }
        for b in d.buffers {
            let text = format!(
                "alert {} any any -> any any ({}; content:\"x\"; sid:1;)",
                d.name, b.name
            );
            let l = rules::load_str(&text, &ctx);
            assert!(l.problems.is_empty(), "{text}: {:?}", l.problems);
            assert_eq!(l.rules[0].app_proto, Some(d.proto), "{text}");
        }
    }
}
