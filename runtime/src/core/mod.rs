//! What both backends stand on, and neither owns: `cpu/` and `cuda/` import
//! this module, never each other.
//!
//! - [`sync`]: how the ranks of one process fail and meet: the world's
//!   [`Faults`](sync::Faults), bounded waits ([`Waiter`](sync::Waiter)) and
//!   [`Hub`](sync::Hub), where a team's ranks exchange one value each.

pub(crate) mod sync;
