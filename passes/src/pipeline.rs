//! `hir-lower`: the named pipeline from a `fusion` program to the host
//! program, with its options passed through to the passes that take them.

use crate::registry::{PassOptions, PipelineInfo};

pub const HIR_LOWER: PipelineInfo = PipelineInfo {
    argument: "hir-lower",
    description: "Lower a fusion program to the host program every rank runs",
    options: &[],
    build: build_hir_lower,
};

fn build_hir_lower(_options: &PassOptions) -> Result<String, String> {
    let passes = [
        "fusion-propagate-sharding",
        "fusion-verify-sharding",
        "fusion-insert-resharding",
        "func.func(host-insert-dealloc)",
    ];
    Ok(passes.join(","))
}
