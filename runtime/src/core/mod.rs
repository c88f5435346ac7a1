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
//! - [`supervise`]: waiting for the rank threads of a run, and ending the
//!   process when a failed rank's program does not return.

pub(crate) mod bootstrap;
pub(crate) mod supervise;
pub(crate) mod sync;
