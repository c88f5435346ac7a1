//! What both backends stand on, and neither owns: `cpu/` and `cuda/` import
//! this module, never each other.
//!
//! - [`sync`]: how the ranks of one process fail and meet: the world's
//!   [`Faults`](sync::Faults), bounded waits ([`Waiter`](sync::Waiter)) and
//!   [`Hub`](sync::Hub), where a team's ranks exchange one value each.
//! - [`bootstrap`]: the [`Bootstrap`](bootstrap::Bootstrap) trait, how the
//!   cuda backend's ranks exchange bytes on the host, and its implementation
//!   for ranks that are threads; the process group (`crate::bootstrap`)
//!   implements it over the store.
//! - [`store`]: the [`KeyValueStore`](store::KeyValueStore) ranks in
//!   processes meet through (HIR's own, or a job's `torch.distributed`
//!   store), and the [`Bootstrap`](bootstrap::Bootstrap) over it.
//! - [`rank_threads`]: a world's run on one thread per rank, for both
//!   backends, and the end of the process when a failed rank's program does
//!   not return; [`rank_pool`]: those threads, kept for the world's life.

pub(crate) mod bootstrap;
pub(crate) mod rank_pool;
pub(crate) mod rank_threads;
pub(crate) mod spin;
pub(crate) mod store;
pub(crate) mod sync;
