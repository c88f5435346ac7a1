//! Passes over host programs (`host` and `comm` on buffers).

pub mod insert_dealloc;
pub mod stream_parallelize;
