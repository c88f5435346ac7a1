//! `hir-lower`: the named pipeline from a `fusion` program to the host
//! program, with its options passed through to the passes that take them.

use crate::registry::{NUM_STREAMS, PassOptions, PipelineInfo};

pub const HIR_LOWER: PipelineInfo = PipelineInfo {
    argument: "hir-lower",
    description: "Lower a fusion program to the host program every rank runs",
    options: &[NUM_STREAMS],
    build: build_hir_lower,
};

fn build_hir_lower(options: &PassOptions) -> Result<String, String> {
    let num_streams = options.count(NUM_STREAMS.name)?;
    let passes = [
        "fusion-propagate-sharding".to_owned(),
        "fusion-verify-sharding".to_owned(),
        "fusion-insert-resharding".to_owned(),
        "convert-fusion-to-host".to_owned(),
        format!("func.func(host-stream-parallelize{{num-streams={num_streams}}})"),
        "func.func(host-insert-dealloc)".to_owned(),
    ];
    Ok(passes.join(","))
}
