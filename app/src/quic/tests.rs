use super::*;
use crate::ParseOutput;

#[test]
fn every_raised_event_is_listed() {
    let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "quic");
    assert_eq!(n, 4);
}
