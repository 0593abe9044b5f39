//! Shared-memory building blocks between Meerkat's processes.
//!
//! - [`spsc`]: the packet ring from capture to one detect worker. One producer, one
//!   consumer, in a file under a directory that both processes (or containers) can map,
//!   normally `/dev/shm/meerkat-<id>/ring-<n>`. Variable-length records aligned to 8 bytes;
//!   both sides publish their position once per batch, so there is no syscall, allocation or
//!   lock per packet. The consumer publishes its position only after it has processed a
//!   batch, so a new consumer that replaces a dead one resumes where it stopped (at worst a
//!   batch is seen twice).
//! - [`counters`]: a page of named `u64` counters that one process updates and any other
//!   process (the supervisor, the control API) reads without talking to it.
//!
//! The layouts are versioned contracts: see the constants in each module.

mod futex;

pub mod counters;
pub mod spsc;
pub mod table;

pub use counters::{CounterPage, CounterReader, CounterRef};
pub use spsc::{
    Consumer, PacketMeta, Producer, Record, RingError, RingStatus, WaitOutcome, create, status,
};
pub use table::SharedTable;
