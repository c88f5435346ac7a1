//! `hir-lower`: the named pipeline from a `fusion` program to the host
//! program, with its options passed through to the passes that take them.

use crate::registry::{NUM_STREAMS, OptionInfo, PassOptions, PipelineInfo};

/// Whether and how stream-sliced collectives along the stream axis become rings.
const P2P: OptionInfo = OptionInfo {
    name: "p2p",
    description: "Ring pipelines for collectives along the stream axis: none, nccl or cuda",
    default: "none",
};

/// Parts each ring step is split into (host-p2p-pipeline's `chunks`).
const RING_CHUNKS: OptionInfo = OptionInfo {
    name: "ring-chunks",
    description: "Parts each ring step's transfer and compute are split into (0: host-p2p-pipeline chooses, 1: whole steps)",
    default: "0",
};

/// How an allgather along the stream axis runs without rings.
const ALLGATHER: OptionInfo = OptionInfo {
    name: "allgather",
    description: "With p2p=none, an allgather along the stream axis runs whole before its loop (whole) or as one broadcast rooted at each iteration (broadcast)",
    default: "whole",
};

/// How a reduce-scatter along the stream axis runs without rings.
const REDUCE_SCATTER: OptionInfo = OptionInfo {
    name: "reduce-scatter",
    description: "With p2p=none, a reduce-scatter along the stream axis runs whole after its loop (whole) or as one reduce rooted at each iteration (reduce)",
    default: "whole",
};

/// Whether GEMM+AR's allreduce becomes rings (host-p2p-pipeline's `allreduce`).
const ALLREDUCE: OptionInfo = OptionInfo {
    name: "allreduce",
    description: "With p2p=nccl|cuda, an allreduce after the stream loop that writes its input block by block runs whole (whole) or as a reduce-scatter ring then an allgather ring (ring)",
    default: "whole",
};

/// How a ring step's stream waits for the previous step's
/// (host-p2p-pipeline's `stream-sync`).
const RING_SYNC: OptionInfo = OptionInfo {
    name: "ring-sync",
    description: "With p2p=nccl|cuda, how a ring step's stream waits for the previous step's: step (all of it) or comm (allgather rings: only its transfers, guarded at the wrap, as nvFuser's inter_stream_synchronization)",
    default: "step",
};

/// Whether chains of elementwise ops become one fused kernel.
const FUSE: OptionInfo = OptionInfo {
    name: "fuse",
    description: "Pointwise fusion: none (one kernel per op) or elementwise (host-fuse-elementwise: each chain of elementwise ops one kernel)",
    default: "none",
};

pub const HIR_LOWER: PipelineInfo = PipelineInfo {
    argument: "hir-lower",
    description: "Lower a fusion program to the host program every rank runs",
    options: &[
        NUM_STREAMS,
        P2P,
        RING_CHUNKS,
        ALLGATHER,
        REDUCE_SCATTER,
        ALLREDUCE,
        RING_SYNC,
        FUSE,
    ],
    build: build_hir_lower,
};

fn build_hir_lower(options: &PassOptions) -> Result<String, String> {
    let num_streams = options.count(NUM_STREAMS.name)?;
    let p2p = options.choice(P2P.name, &["none", "nccl", "cuda"])?;
    let chunks = options.count(RING_CHUNKS.name)?;
    let allgather = options.choice(ALLGATHER.name, &["whole", "broadcast"])?;
    let reduce_scatter = options.choice(REDUCE_SCATTER.name, &["whole", "reduce"])?;
    let fuse = options.choice(FUSE.name, &["none", "elementwise"])?;
    let allreduce = options.choice(ALLREDUCE.name, &["whole", "ring"])?;
    let ring_sync = options.choice(RING_SYNC.name, &["step", "comm"])?;
    if allgather == "broadcast" && p2p != "none" {
        return Err(format!(
            "allgather=broadcast is a pipeline without rings; it needs p2p=none, not p2p={p2p}"
        ));
    }
    if reduce_scatter == "reduce" && p2p != "none" {
        return Err(format!(
            "reduce-scatter=reduce is a pipeline without rings; it needs p2p=none, not p2p={p2p}"
        ));
    }
    if allreduce == "ring" && p2p == "none" {
        return Err(
            "allreduce=ring makes rings of point-to-point transfers; it needs p2p=nccl or p2p=cuda, not p2p=none"
                .to_owned(),
        );
    }
    if ring_sync == "comm" && p2p == "none" {
        return Err(
            "ring-sync=comm synchronizes the steps of rings; it needs p2p=nccl or p2p=cuda, not p2p=none"
                .to_owned(),
        );
    }
    let mut passes = vec![
        "fusion-propagate-sharding".to_owned(),
        "fusion-verify-sharding".to_owned(),
        "fusion-insert-resharding".to_owned(),
        "convert-fusion-to-host".to_owned(),
        format!("func.func(host-stream-parallelize{{num-streams={num_streams}}})"),
        // The natural-shape chunks of a gathered buffer in the pre-split
        // form the pipelines recognise.
        "func.func(host-presplit-chunks)".to_owned(),
    ];
    if allgather == "broadcast" {
        passes.push("func.func(host-broadcast-pipeline)".to_owned());
    }
    if reduce_scatter == "reduce" {
        passes.push("func.func(host-reduce-pipeline)".to_owned());
    }
    if p2p != "none" {
        passes.push(format!(
            "func.func(host-p2p-pipeline{{backend={p2p} chunks={chunks} allreduce={allreduce} stream-sync={ring_sync}}})"
        ));
    }
    if fuse == "elementwise" {
        // After the pipelines, which rewrite the stream loops around the
        // chains, and before the deallocs, so that the allocations fusion
        // makes temporaries go.
        passes.push("func.func(host-fuse-elementwise)".to_owned());
    }
    passes.push("func.func(host-insert-dealloc)".to_owned());
    // Last: the passes above work on host.stream_for, whose fork and join
    // are its semantics.
    passes.push("func.func(host-lower-stream-for)".to_owned());
    Ok(passes.join(","))
}
