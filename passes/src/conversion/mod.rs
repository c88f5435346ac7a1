//! Passes that change the level of the IR: `fusion` to `host` and `comm`.

pub mod fusion_to_host;
