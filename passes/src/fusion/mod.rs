//! Passes over `fusion` programs.

pub(crate) mod axis_map;
pub mod insert_resharding;
pub mod propagate_sharding;
pub mod verify_sharding;
