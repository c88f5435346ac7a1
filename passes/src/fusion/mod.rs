//! Passes over `fusion` programs.

pub(crate) mod axis_map;
pub mod differentiate;
pub mod insert_resharding;
pub(crate) mod mesh;
pub mod propagate_sharding;
pub(crate) mod stream_contraction;
pub mod verify_sharding;
