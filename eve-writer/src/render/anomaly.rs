//! The `anomaly` record body.

use meerkat_proto::events::Event;

use crate::json::Obj;

pub fn body(o: &mut Obj<'_>, ev: &Event) {
    let Some(a) = &ev.anomaly else { return };
    o.obj("anomaly", |an| {
        // Suricata's order: app_proto, type, event, layer.
        if !a.app_proto.is_empty() {
            an.str("app_proto", &a.app_proto);
        }
        an.str("type", &a.r#type).str("event", &a.event);
        if !a.layer.is_empty() {
            an.str("layer", &a.layer);
        }
    });
}
