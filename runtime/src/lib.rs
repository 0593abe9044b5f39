//! The names that Meerkat's processes share, in one place.
//!
//! The roles of a sensor (capture, the detect workers, the eve-writer, the supervisor and
//! whatever reads their counters: `meerkat ctl`, the control API, the Prometheus endpoint,
//! the eve-writer's `stats` records) find each other through files in one *runtime
//! directory* and through the names of their counters. This crate owns those names, so
//! that no role spells them on its own:
//!
//! - [`layout`]: the files of the runtime directory (`ring-N`, `counters-ROLE`,
//!   `eve.sock`, `detect-N.sock`, `control.sock`, `eve-writer.state`, `host-state`,
//!   `config.yaml`, `pcap-files`) and where a supervisor makes its private one
//!   (`/dev/shm/meerkat-<pid>`).
//! - [`Role`]: the role names (`capture`, `detect-N`, `eve-writer`).
//! - [`counters`]: the counter schema of each role, typed: the names a role registers
//!   on its page are the names every reader looks up.
//!
//! It knows nothing of the shared-memory layouts themselves (those are `meerkat-shm`'s)
//! and depends on no other crate.

pub mod counters;
pub mod layout;
mod role;

pub use layout::{
    config_path, control_socket_path, counters_path, dataset_paths, eve_socket_path,
    eve_state_path, expectations_path, host_table_path, order_path, pcap_files_path, ring_path,
    worker_socket_path,
};
pub use role::{Role, RoleError};
