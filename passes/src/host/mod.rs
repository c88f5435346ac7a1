//! Passes over host programs (`host` and `comm` on buffers).

pub mod auto_stream;
pub mod broadcast_pipeline;
pub mod check_bounds;
pub mod fold_transpose;
pub mod fuse_elementwise;
pub mod fuse_epilogue;
pub mod insert_dealloc;
pub mod lower_stream_for;
pub mod p2p_pipeline;
pub mod presplit_chunks;
pub mod privatize_buffers;
pub mod reduce_pipeline;
pub mod stream_parallelize;
pub mod verify_deallocs;
pub mod verify_loops;
