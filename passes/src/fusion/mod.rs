//! Passes over `fusion` programs.

pub mod verify_sharding;
