//! `hir-lower`: the named pipeline from a `fusion` program to the host
//! program, and its options as one typed value, [`LowerOptions`].
//!
//! Every road from a program's text to running ranks (`hir-opt
//! --hir-lower{...}`, `hir-run`'s flags, `hir::compile`, Python's keyword
//! arguments) makes a [`LowerOptions`] and lowers with the pipeline it
//! renders, so the same options lower a program the same way on every road.
//! The rules between options live in [`LowerOptions::check`], and only
//! there.

use crate::host::auto_stream::Collectives;
use crate::host::p2p_pipeline::{self, Allreduce, StreamSync};
use crate::options::Choice;
use crate::pass::{NUM_STREAMS, OptionInfo, PassOptions, PipelineInfo};
use hir_abi::Transport;

crate::choice! {
    /// Whether and how stream-sliced collectives along the stream axis
    /// become rings (the `p2p` option).
    pub enum P2p {
        /// No rings: collectives run whole or as the pipelines the
        /// `allgather` and `reduce-scatter` options choose.
        None = "none",
        /// Rings of NCCL send/recv.
        Nccl = "nccl",
        /// Rings of CUDA-IPC copies.
        Cuda = "cuda",
    }
}

impl P2p {
    /// How the rings move data, if there are rings.
    pub fn transport(self) -> Option<Transport> {
        match self {
            P2p::None => None,
            P2p::Nccl => Some(Transport::Nccl),
            P2p::Cuda => Some(Transport::Cuda),
        }
    }
}

crate::choice! {
    /// How an allgather along the stream axis runs without rings.
    pub enum Allgather {
        /// Whole, before its loop.
        Whole = "whole",
        /// One broadcast rooted at each iteration (host-broadcast-pipeline).
        Broadcast = "broadcast",
    }
}

crate::choice! {
    /// How a reduce-scatter along the stream axis runs without rings.
    pub enum ReduceScatter {
        /// Whole, after its loop.
        Whole = "whole",
        /// One reduce rooted at each iteration (host-reduce-pipeline).
        Reduce = "reduce",
    }
}

crate::choice! {
    /// Pointwise fusion.
    pub enum Fuse {
        /// One kernel per op.
        None = "none",
        /// An activation after a GEMM its epilogue (host-fuse-epilogue),
        /// then each chain of elementwise ops one kernel
        /// (host-fuse-elementwise).
        Elementwise = "elementwise",
    }
}

crate::choice! {
    /// Whether HIR overlaps the collectives of a program written without
    /// stream axes (the `overlap` option).
    pub enum Overlap {
        /// Each allgather into a GEMM and each GEMM into a reduce-scatter is
        /// a pipeline over one chunk per device (host-auto-stream): rings
        /// with `p2p=nccl|cuda`, rooted broadcasts and reduces without.
        Auto = "auto",
        /// The collectives run whole, as the program says.
        None = "none",
    }
}

const OVERLAP: OptionInfo = OptionInfo {
    name: "overlap",
    description: "In a program without stream axes, each allgather into a GEMM and each GEMM into a reduce-scatter becomes a pipeline over one chunk per device (auto: rings with p2p=nccl|cuda, rooted broadcasts and reduces with p2p=none) or runs whole (none)",
    default: "auto",
};

const P2P: OptionInfo = OptionInfo {
    name: "p2p",
    description: "Ring pipelines for collectives along the stream axis: none, nccl or cuda",
    default: "none",
};

const RING_CHUNKS: OptionInfo = OptionInfo {
    name: "ring-chunks",
    description: "Parts each ring step's transfer and compute are split into (0: host-p2p-pipeline chooses, 1: whole steps)",
    default: "0",
};

const ALLGATHER: OptionInfo = OptionInfo {
    name: "allgather",
    description: "With p2p=none, an allgather along the stream axis runs whole before its loop (whole) or as one broadcast rooted at each iteration (broadcast)",
    default: "whole",
};

const REDUCE_SCATTER: OptionInfo = OptionInfo {
    name: "reduce-scatter",
    description: "With p2p=none, a reduce-scatter along the stream axis runs whole after its loop (whole) or as one reduce rooted at each iteration (reduce)",
    default: "whole",
};

const ALLREDUCE: OptionInfo = OptionInfo {
    name: "allreduce",
    description: "With p2p=nccl|cuda, an allreduce after the stream loop that writes its input block by block runs whole (whole) or as a reduce-scatter ring then an allgather ring (ring)",
    default: "whole",
};

const RING_SYNC: OptionInfo = OptionInfo {
    name: "ring-sync",
    description: "With p2p=nccl|cuda, how a ring step's stream waits for the previous step's: step (all of it) or comm (allgather rings: only its transfers, guarded at the wrap, as nvFuser's inter_stream_synchronization)",
    default: "step",
};

const FUSE: OptionInfo = OptionInfo {
    name: "fuse",
    description: "Pointwise fusion: elementwise (host-fuse-epilogue: an activation after a GEMM its epilogue, then host-fuse-elementwise: each chain of elementwise ops one kernel; the default) or none (one kernel per op)",
    default: "elementwise",
};

/// `hir-lower`'s options, in the order `--help` lists them.
const OPTIONS: &[OptionInfo] = &[
    NUM_STREAMS,
    P2P,
    RING_CHUNKS,
    ALLGATHER,
    REDUCE_SCATTER,
    ALLREDUCE,
    RING_SYNC,
    FUSE,
    OVERLAP,
];

pub const HIR_LOWER: PipelineInfo = PipelineInfo {
    argument: "hir-lower",
    description: "Lower a fusion program to the host program every rank runs",
    options: OPTIONS,
    build: |options| LowerOptions::from_pass_options(options).map(|options| options.passes()),
};

/// How `hir-lower` lowers a program: each option typed, with the defaults
/// [`OPTIONS`] declares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LowerOptions {
    /// Pool streams a stream loop rotates over; 0 for all the pool has.
    pub num_streams: usize,
    pub p2p: P2p,
    /// Parts each ring step is split into (0: host-p2p-pipeline chooses).
    pub ring_chunks: usize,
    pub allgather: Allgather,
    pub reduce_scatter: ReduceScatter,
    pub allreduce: Allreduce,
    pub ring_sync: StreamSync,
    pub fuse: Fuse,
    pub overlap: Overlap,
}

impl Default for LowerOptions {
    fn default() -> Self {
        LowerOptions {
            num_streams: 0,
            p2p: P2p::None,
            ring_chunks: 0,
            allgather: Allgather::Whole,
            reduce_scatter: ReduceScatter::Whole,
            allreduce: Allreduce::Whole,
            ring_sync: StreamSync::Step,
            fuse: Fuse::Elementwise,
            overlap: Overlap::Auto,
        }
    }
}

impl LowerOptions {
    /// The option names, as `hir-lower{...}`, `hir-run`'s flags and
    /// Python's keywords (with `_` for `-`) spell them.
    pub fn names() -> impl Iterator<Item = &'static str> {
        OPTIONS.iter().map(|option| option.name)
    }

    /// Sets option `name` from its text `value`: the one parser of every
    /// option. The rules between options are [`LowerOptions::check`]'s.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let count = || crate::options::count(name, value, 0);
        match name {
            "num-streams" => self.num_streams = count()?,
            "p2p" => self.p2p = Choice::parse(name, value)?,
            "ring-chunks" => self.ring_chunks = count()?,
            "allgather" => self.allgather = Choice::parse(name, value)?,
            "reduce-scatter" => self.reduce_scatter = Choice::parse(name, value)?,
            "allreduce" => self.allreduce = Choice::parse(name, value)?,
            "ring-sync" => self.ring_sync = Choice::parse(name, value)?,
            "fuse" => self.fuse = Choice::parse(name, value)?,
            "overlap" => self.overlap = Choice::parse(name, value)?,
            _ => {
                let names: Vec<&str> = Self::names().collect();
                return Err(format!(
                    "hir-lower has no option '{name}'; its options are {}",
                    names.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Options from `name=value` pairs separated by spaces, as between the
    /// braces of `hir-lower{...}`; the rest default.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut options = LowerOptions::default();
        for pair in text.split_whitespace() {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("'{pair}' is no name=value option"))?;
            options.set(name, value)?;
        }
        options.check()?;
        Ok(options)
    }

    /// The options a registered pipeline was created with.
    fn from_pass_options(given: &PassOptions) -> Result<Self, String> {
        let mut options = LowerOptions::default();
        for name in Self::names() {
            options.set(name, given.text(name))?;
        }
        options.check()?;
        Ok(options)
    }

    /// The rules of the options: each count in its range, and those between
    /// options.
    pub fn check(&self) -> Result<(), String> {
        for (option, count) in [
            (NUM_STREAMS.name, self.num_streams),
            (RING_CHUNKS.name, self.ring_chunks),
        ] {
            if count > crate::options::MAX_COUNT {
                return Err(format!(
                    "option '{option}' must be an integer from 0 to {}, not '{count}'",
                    crate::options::MAX_COUNT
                ));
            }
        }
        let p2p = self.p2p.name();
        if self.allgather == Allgather::Broadcast && self.p2p != P2p::None {
            return Err(format!(
                "allgather=broadcast is a pipeline without rings; it needs p2p=none, not p2p={p2p}"
            ));
        }
        if self.reduce_scatter == ReduceScatter::Reduce && self.p2p != P2p::None {
            return Err(format!(
                "reduce-scatter=reduce is a pipeline without rings; it needs p2p=none, not p2p={p2p}"
            ));
        }
        if self.allreduce == Allreduce::Ring && self.p2p == P2p::None {
            return Err(
                "allreduce=ring makes rings of point-to-point transfers; it needs p2p=nccl or p2p=cuda, not p2p=none"
                    .to_owned(),
            );
        }
        if self.ring_sync == StreamSync::Comm && self.p2p == P2p::None {
            return Err(
                "ring-sync=comm synchronizes the steps of rings; it needs p2p=nccl or p2p=cuda, not p2p=none"
                    .to_owned(),
            );
        }
        p2p_pipeline::check_chunks(
            self.ring_sync,
            self.ring_chunks,
            RING_SYNC.name,
            RING_CHUNKS.name,
        )
    }

    /// Every option as `name=value`, space-separated: what goes between the
    /// braces of `hir-lower{...}`, and what [`LowerOptions::parse`] reads.
    pub fn render(&self) -> String {
        format!(
            "num-streams={} p2p={} ring-chunks={} allgather={} reduce-scatter={} allreduce={} ring-sync={} fuse={} overlap={}",
            self.num_streams,
            self.p2p.name(),
            self.ring_chunks,
            self.allgather.name(),
            self.reduce_scatter.name(),
            self.allreduce.name(),
            self.ring_sync.name(),
            self.fuse.name(),
            self.overlap.name()
        )
    }

    /// The pipeline these options make: `hir-lower{...}` with every option.
    pub fn pipeline(&self) -> String {
        format!("hir-lower{{{}}}", self.render())
    }

    /// The passes `hir-lower` runs with these options, as a textual pipeline.
    fn passes(&self) -> String {
        let mut passes = vec![
            "fusion-propagate-sharding".to_owned(),
            "fusion-verify-sharding".to_owned(),
            "fusion-insert-resharding".to_owned(),
            "convert-fusion-to-host".to_owned(),
        ];
        if self.fuse == Fuse::Elementwise {
            // Before host-auto-stream cuts a GEMM into chunks in a loop and
            // leaves its activation after the loop, which no epilogue can
            // take then; the run after the pipelines takes the activations
            // of the stream axes' loops.
            passes.push("func.func(host-fuse-epilogue)".to_owned());
        }
        if self.overlap == Overlap::Auto {
            // Before the loops are fused and rotated over the streams, as
            // those convert-fusion-to-host makes for stream axes.
            let collectives = match self.p2p {
                P2p::None => Collectives::Rooted,
                P2p::Nccl | P2p::Cuda => Collectives::Rings,
            };
            passes.push(format!(
                "func.func(host-auto-stream{{collectives={}}})",
                collectives.name()
            ));
        }
        passes.extend([
            format!(
                "func.func(host-stream-parallelize{{num-streams={}}})",
                self.num_streams
            ),
            // The natural-shape chunks of a gathered buffer in the pre-split
            // form the pipelines recognise.
            "func.func(host-presplit-chunks)".to_owned(),
        ]);
        if self.allgather == Allgather::Broadcast {
            passes.push("func.func(host-broadcast-pipeline)".to_owned());
        }
        if self.reduce_scatter == ReduceScatter::Reduce {
            passes.push("func.func(host-reduce-pipeline)".to_owned());
        }
        if let Some(transport) = self.p2p.transport() {
            passes.push(format!(
                "func.func(host-p2p-pipeline{{backend={} chunks={} allreduce={} stream-sync={}}})",
                transport.name(),
                self.ring_chunks,
                self.allreduce.name(),
                self.ring_sync.name()
            ));
        }
        if self.fuse == Fuse::Elementwise {
            // After the pipelines, which rewrite the stream loops around the
            // chains, and before the deallocs, so that the allocations fusion
            // makes temporaries go. Epilogues first: an activation a GEMM
            // takes is no kernel at all, and would otherwise join a chain.
            passes.push("func.func(host-fuse-epilogue)".to_owned());
            passes.push("func.func(host-fuse-elementwise)".to_owned());
        }
        // After the pipelines, which slice and move the GEMMs that read a
        // transposed copy, and before the deallocs, which keep a view's
        // source alive until its last read.
        passes.push("func.func(host-fold-transpose)".to_owned());
        // After every pass that fuses loops or their ops, whose temporaries
        // are gone by then, and before the deallocs, which free each private
        // buffer in its iteration.
        passes.push("func.func(host-privatize-buffers)".to_owned());
        passes.push("func.func(host-insert-dealloc)".to_owned());
        // Last: the passes above work on host.stream_for, whose fork and join
        // are its semantics.
        passes.push("func.func(host-lower-stream-for)".to_owned());
        passes.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_defaults_are_the_default_value() {
        let declared = LowerOptions::from_pass_options(&PassOptions::defaults(OPTIONS)).unwrap();
        assert_eq!(declared, LowerOptions::default());
    }

    #[test]
    fn every_option_parses_and_renders_back() {
        let text = "num-streams=2 p2p=cuda ring-chunks=3 allgather=whole reduce-scatter=whole allreduce=ring ring-sync=step fuse=elementwise overlap=none";
        let options = LowerOptions::parse(text).unwrap();
        assert_eq!(options.num_streams, 2);
        assert_eq!(options.p2p, P2p::Cuda);
        assert_eq!(options.ring_chunks, 3);
        assert_eq!(options.allreduce, Allreduce::Ring);
        assert_eq!(options.fuse, Fuse::Elementwise);
        assert_eq!(options.overlap, Overlap::None);
        assert_eq!(options.render(), text);
        assert_eq!(LowerOptions::parse(&options.render()).unwrap(), options);
        let broadcast = LowerOptions::parse("allgather=broadcast reduce-scatter=reduce").unwrap();
        assert_eq!(broadcast.allgather, Allgather::Broadcast);
        assert_eq!(broadcast.reduce_scatter, ReduceScatter::Reduce);
        let comm = LowerOptions::parse("p2p=nccl ring-sync=comm ring-chunks=1").unwrap();
        assert_eq!(comm.ring_sync, StreamSync::Comm);
        assert_eq!(comm.p2p.transport(), Some(Transport::Nccl));
    }

    #[test]
    fn bad_values_and_names_are_errors() {
        let error = |text| LowerOptions::parse(text).unwrap_err();
        assert_eq!(
            error("p2p=ucx"),
            "option 'p2p' must be one of none|nccl|cuda, not 'ucx'"
        );
        assert_eq!(
            error("ring-chunks=-1"),
            "option 'ring-chunks' must be an integer from 0 to 9223372036854775807, not '-1'"
        );
        // Past i64 (what the IR holds), a count is an error, not a wrap.
        assert_eq!(
            error("ring-chunks=9223372036854775808"),
            "option 'ring-chunks' must be an integer from 0 to 9223372036854775807, \
             not '9223372036854775808'"
        );
        let typed = LowerOptions {
            ring_chunks: 1 << 63,
            p2p: P2p::Cuda,
            ..LowerOptions::default()
        };
        assert_eq!(
            typed.check().unwrap_err(),
            "option 'ring-chunks' must be an integer from 0 to 9223372036854775807, \
             not '9223372036854775808'"
        );
        assert!(error("rings=2").starts_with("hir-lower has no option 'rings'"));
        assert_eq!(error("p2p"), "'p2p' is no name=value option");
    }

    #[test]
    fn rules_between_options() {
        let error = |text| LowerOptions::parse(text).unwrap_err();
        assert!(error("p2p=nccl allgather=broadcast").contains("needs p2p=none, not p2p=nccl"));
        assert!(error("p2p=cuda reduce-scatter=reduce").contains("needs p2p=none, not p2p=cuda"));
        assert!(error("allreduce=ring").contains("needs p2p=nccl or p2p=cuda"));
        assert!(error("ring-sync=comm").contains("needs p2p=nccl or p2p=cuda"));
        assert_eq!(
            error("p2p=nccl ring-sync=comm ring-chunks=2"),
            "ring-sync=comm runs whole ring steps; it needs ring-chunks=0 or ring-chunks=1, not ring-chunks=2"
        );
    }

    #[test]
    fn passes_follow_the_options() {
        let passes = |text| LowerOptions::parse(text).unwrap().passes();
        let plain = passes("fuse=none");
        assert!(plain.starts_with("fusion-propagate-sharding,"));
        assert!(plain.ends_with("func.func(host-insert-dealloc),func.func(host-lower-stream-for)"));
        assert!(
            !plain.contains("p2p-pipeline")
                && !plain.contains("fuse-elementwise")
                && !plain.contains("fuse-epilogue")
        );
        assert!(
            passes("p2p=cuda ring-chunks=2 allreduce=ring").contains(
                "host-p2p-pipeline{backend=cuda chunks=2 allreduce=ring stream-sync=step}"
            )
        );
        assert!(passes("allgather=broadcast").contains("host-broadcast-pipeline"));
        assert!(passes("reduce-scatter=reduce").contains("host-reduce-pipeline"));
        assert!(
            passes("").contains("func.func(host-fuse-epilogue),func.func(host-fuse-elementwise),")
        );
        assert!(passes("num-streams=3").contains("host-stream-parallelize{num-streams=3}"));
        // Overlap by default: rooted pipelines without rings, rings with them.
        assert!(passes("").contains("host-auto-stream{collectives=rooted}"));
        assert!(passes("p2p=nccl").contains("host-auto-stream{collectives=rings}"));
        assert!(!passes("overlap=none").contains("host-auto-stream"));
    }
}
