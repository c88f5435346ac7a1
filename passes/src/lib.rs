//! HIR's passes, written in Rust on melior, one pass a file, grouped by stage
//! (`fusion/`, `host/`, `conversion/`). [`register_all`] makes each
//! nameable in textual pipelines and on `hir-opt`'s command line.

/// `melior::pass::create_external` with a type id of its own for each call
/// site (MLIR tells passes apart by it): each expansion has its own static.
macro_rules! external_pass {
    ($pass:expr, $($rest:expr),+ $(,)?) => {{
        #[repr(align(8))]
        struct PassId;
        static PASS_ID: PassId = PassId;
        melior::pass::create_external(
            $pass,
            melior::ir::r#type::TypeId::create(&PASS_ID),
            $($rest),+
        )
    }};
}

mod builders;
pub mod conversion;
mod diagnostics;
pub mod fusion;
pub mod host;
pub mod ir;
mod pipeline;
mod registry;

pub use registry::{
    OptionInfo, PASSES, PIPELINES, PassInfo, PassOptions, PipelineInfo, register_all,
};
