//! `hir-bench`'s command line (clap; the bounds and value parsers it shares
//! with `hir-run` are in `hir_tools::args`).

use clap::{Args, Parser, Subcommand};
use hir::passes::{Choice as _, StreamSync};
use hir_abi::DType;
use hir_runtime::{Backend, Checks};
use hir_tools::args::{self, MAX_RANKS, MAX_STREAMS, bounded, choice, named, number, positive};
use hir_tools::blocks::{Attention, Blocks, Qkv};
use hir_tools::launch::{self, Fingerprint, Fnv, Launch, Plan};
use hir_tools::mlp::Mlp;
use hir_tools::programs::{Family, Form, Params, Variant};
use std::path::PathBuf;
use std::time::Duration;

/// The overlap benchmarks: AG+GEMM, GEMM+RS and GEMM+AR, each as the GEMM alone, the collective
/// alone, with no overlap, as a collective pipeline and as P2P rings.
#[derive(Debug, Parser)]
#[command(
    name = "hir-bench",
    version = args::VERSION,
    after_help = "Logging: HIR_LOG=debug (tracing's EnvFilter syntax; default info) on stderr."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a benchmark program (fusion dialect) on stdout
    Emit(Emit),
    /// Build, lower, check and time every (family, shape, variant) on D ranks
    Run(Box<Run>),
    /// The host's cost per iteration of a stream-parallel loop, run directly and as a CUDA graph,
    /// on one rank
    Overhead(Overhead),
    /// A chain of 8 pointwise ops, one kernel per op against one fused kernel, on one rank
    Pointwise(Pointwise),
    /// Print a model program (fusion dialect) on stdout, for hir-run
    Program(Program),
    /// Time each compile stage (parse, import, hir-lower, LLVM lowering, JIT) of stacked
    /// transformer blocks and of every example, in this process
    Startup(Startup),
}

/// `hir-bench program`.
#[derive(Debug, Args)]
pub struct Program {
    #[command(subcommand)]
    pub model: Model,
}

/// The models `hir-bench program` prints.
#[derive(Debug, Subcommand)]
pub enum Model {
    /// N stacked Megatron-LM sequence-parallel transformer blocks (forward)
    Block(Block),
    /// Megatron-LM's tensor- and sequence-parallel MLP alone (examples/tp_mlp.mlir at any size)
    Mlp(MlpSizes),
}

/// `hir-bench program mlp`.
#[derive(Debug, Args)]
pub struct MlpSizes {
    /// T: tokens (split over the devices)
    #[arg(long = "t", value_name = "T", default_value = "256", value_parser = positive)]
    pub t: usize,
    /// H: hidden size
    #[arg(long = "h", value_name = "H", default_value = "256", value_parser = positive)]
    pub h: usize,
    /// F: the MLP's width (split over the devices)
    #[arg(long = "f", value_name = "F", default_value = "1024", value_parser = positive)]
    pub f: usize,
    /// Devices (the mesh is 0..D-1)
    #[arg(short = 'n', visible_short_alias = 'D', value_name = "D", default_value = "2", value_parser = positive)]
    pub devices: usize,
    /// Element type
    #[arg(long, value_name = "T", default_value = "bf16", value_parser = dtype())]
    pub dtype: DType,
    /// Print a training step instead: the MLP with fusion-differentiate's @tp_mlp_forward
    /// (its result and the activations it saves) and @tp_mlp_backward (the gradients of x, w1,
    /// c1 and w2 from the saved activations and dy)
    #[arg(long)]
    pub grad: bool,
}

impl MlpSizes {
    /// The MLP of these sizes.
    pub fn mlp(&self) -> Mlp {
        Mlp {
            t: self.t,
            h: self.h,
            f: self.f,
            devices: self.devices,
            dtype: self.dtype,
        }
    }
}

/// The sizes of a stack of transformer blocks.
#[derive(Debug, Args)]
pub struct BlockSizes {
    /// S: tokens (split over the devices)
    #[arg(long = "s", value_name = "S", default_value = "256", value_parser = positive)]
    pub s: usize,
    /// H: hidden size
    #[arg(long = "h", value_name = "H", default_value = "256", value_parser = positive)]
    pub h: usize,
    /// Attention heads (split over the devices), each of H / heads
    #[arg(long, value_name = "A", default_value = "4", value_parser = positive)]
    pub heads: usize,
    /// F: the MLP's width (split over the devices)
    #[arg(long = "f", value_name = "F", default_value = "1024", value_parser = positive)]
    pub f: usize,
    /// Devices (the mesh is 0..D-1)
    #[arg(short = 'n', visible_short_alias = 'D', value_name = "D", default_value = "2", value_parser = positive)]
    pub devices: usize,
    /// Element type
    #[arg(long, value_name = "T", default_value = "bf16", value_parser = dtype())]
    pub dtype: DType,
    /// Attention as one fused op (fusion.attention), or as the unfused chain of matmuls and a
    /// softmax (math)
    #[arg(long, value_name = "A", default_value = "fused", value_parser = choice::<Attention>())]
    pub attention: Attention,
    /// Q, K and V as three GEMMs with a weight each (separate), or one GEMM with Megatron's fused
    /// weight [3H, H], sliced (fused)
    #[arg(long, value_name = "Q", default_value = "separate", value_parser = choice::<Qkv>())]
    pub qkv: Qkv,
}

impl BlockSizes {
    /// `blocks` blocks of these sizes.
    pub fn blocks(&self, blocks: usize) -> Blocks {
        Blocks {
            blocks,
            s: self.s,
            h: self.h,
            heads: self.heads,
            f: self.f,
            devices: self.devices,
            dtype: self.dtype,
            attention: self.attention,
            qkv: self.qkv,
        }
    }
}

/// `hir-bench program block`.
#[derive(Debug, Args)]
pub struct Block {
    /// N: stacked blocks
    #[arg(long, value_name = "N", default_value = "1", value_parser = positive)]
    pub blocks: usize,
    #[command(flatten)]
    pub sizes: BlockSizes,
}

/// `hir-bench startup`.
#[derive(Debug, Args)]
pub struct Startup {
    /// Stacked transformer blocks of each program timed
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = positive, default_values = ["1", "2", "4", "8", "16"])]
    pub blocks: Vec<usize>,
    #[command(flatten)]
    pub sizes: BlockSizes,
    /// The examples timed too: every *.mlir of DIR [default: the repository's examples/]
    #[arg(long, value_name = "DIR")]
    pub examples: Option<PathBuf>,
    /// Time no example
    #[arg(long, conflicts_with = "examples")]
    pub no_examples: bool,
    /// Compiles of each program; each stage's median is reported
    #[arg(long, value_name = "K", default_value = "3", value_parser = positive)]
    pub repeat: usize,
    /// Write the results as JSON
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the results as CSV, one row per program
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// The bf16, f16 or f32 of `--dtype`.
fn dtype() -> impl clap::builder::TypedValueParser<Value = DType> {
    named(&[DType::BF16, DType::F16, DType::F32], DType::mlir)
}

/// `hir-bench emit`.
#[derive(Debug, Args)]
pub struct Emit {
    /// The program
    #[arg(value_name = "PROGRAM", value_parser = named(&Form::ALL, Form::name))]
    pub form: Form,
    /// Devices (the mesh is 0..D-1)
    #[arg(short = 'D', visible_short_alias = 'n', value_name = "D", value_parser = positive)]
    pub devices: usize,
    /// The GEMM's M: C [M, N] = A [M, K] @ B [K, N]
    #[arg(long = "m", value_name = "M", value_parser = positive)]
    pub m: usize,
    /// The GEMM's K
    #[arg(long = "k", value_name = "K", value_parser = positive)]
    pub k: usize,
    /// The GEMM's N
    #[arg(long = "n", value_name = "N", value_parser = positive)]
    pub n: usize,
    /// Stream-axis extent of *-pipeline and ar-nooverlap
    #[arg(long, value_name = "S", default_value = "4", value_parser = positive)]
    pub chunks: usize,
    /// Element type
    #[arg(long, value_name = "T", default_value = "bf16", value_parser = dtype())]
    pub dtype: DType,
}

impl Emit {
    pub fn params(&self) -> Params {
        Params {
            devices: self.devices,
            chunks: self.chunks,
            m: self.m,
            k: self.k,
            n: self.n,
            dtype: self.dtype,
        }
    }
}

/// `hir-bench run`.
#[derive(Debug, Args)]
pub struct Run {
    /// World backend (cpu: the numbers are NOT meaningful)
    #[arg(long, default_value = "cpu", value_parser = named(Backend::ALL, Backend::name))]
    pub backend: Backend,
    /// Ranks = devices [default: 1, or WORLD_SIZE for a rank torchrun started; at most 1024]
    #[arg(short = 'n', visible_short_alias = 'D', value_name = "D", value_parser = bounded(MAX_RANKS), allow_negative_numbers = true)]
    devices_given: Option<usize>,
    /// `-n`, else WORLD_SIZE for a rank torchrun started, else 1.
    #[arg(skip)]
    pub devices: usize,
    /// GEMM shapes
    #[arg(
        long,
        value_name = "MxKxN,...",
        value_delimiter = ',',
        value_parser = shape,
        default_values = ["32768x16384x8192", "8192x16384x8192", "16384x8192x2048"],
    )]
    pub shapes: Vec<(usize, usize, usize)>,
    /// Families
    #[arg(
        long,
        value_name = "F,...",
        value_delimiter = ',',
        value_parser = named(&Family::ALL, Family::name),
        default_values = ["ag", "rs", "ar"],
    )]
    pub families: Vec<Family>,
    /// Variants [default: all that apply: no P2P ring for ar]
    #[arg(
        long,
        value_name = "V,...",
        value_delimiter = ',',
        value_parser = named(&Variant::ALL, Variant::name),
    )]
    pub variants: Option<Vec<Variant>>,
    /// Element type
    #[arg(long, value_name = "T", default_value = "bf16", value_parser = dtype())]
    pub dtype: DType,
    /// Chunks of the collective pipelines [default: --num-streams]
    #[arg(long = "chunks", value_name = "S", value_parser = positive)]
    chunks_given: Option<usize>,
    /// `--chunks`, else `--num-streams`.
    #[arg(skip)]
    pub chunks: usize,
    /// Parts each P2P ring step's transfer and GEMM are split into (0: host-p2p-pipeline chooses)
    #[arg(long, value_name = "C", default_value = "0", value_parser = args::ir_count, allow_negative_numbers = true)]
    pub ring_chunks: usize,
    /// How a P2P ring step's stream waits for the previous step's: for all of it (step), or, in
    /// allgather rings, only for its transfers, guarded at the wrap (comm: nvFuser's
    /// inter_stream_synchronization; hir-lower's ring-sync, whole steps)
    #[arg(long, default_value = "step", value_parser = choice::<StreamSync>())]
    pub ring_sync: StreamSync,
    /// Streams in each rank's pool (at most 1024)
    #[arg(long, value_name = "P", default_value = "4", value_parser = bounded(MAX_STREAMS), allow_negative_numbers = true)]
    pub num_streams: usize,
    /// hir-lower's num-streams: pool streams a loop rotates over (0: all of the pool)
    #[arg(long, value_name = "N", default_value = "0", value_parser = number::<usize>, allow_negative_numbers = true)]
    pub lower_streams: usize,
    /// Timed iterations
    #[arg(long, value_name = "K", default_value = "20", value_parser = positive, allow_negative_numbers = true)]
    pub iters: usize,
    /// Untimed iterations before them
    #[arg(long, value_name = "W", default_value = "5", value_parser = number::<usize>, allow_negative_numbers = true)]
    pub warmup: usize,
    /// Seed of the random inputs
    #[arg(long, value_name = "K", default_value = "0", value_parser = number::<u64>, allow_negative_numbers = true)]
    pub seed: u64,
    /// Output entries per rank checked against an f64 dot product
    #[arg(long, value_name = "K", default_value = "512", value_parser = positive, allow_negative_numbers = true)]
    pub samples: usize,
    /// On cuda, run every variant as CUDA graphs: one direct run, then the checked run and every
    /// timed one a replay of each rank's captured host program (on cpu, runs are direct)
    #[arg(long)]
    pub graph: bool,
    /// Write the results as JSON
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the results as CSV, one row per variant
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write bar charts of TFLOP/s (FILE) and of the ratio to the GEMM alone (FILE's stem +
    /// -vs-gemm.png)
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Ranks as threads of this process (default for cpu) or as D child processes of it, one per
    /// GPU (default for cuda); with RANK and WORLD_SIZE set (torchrun), hir-bench runs that one rank
    #[arg(long, value_enum)]
    pub launch: Option<Launch>,
    /// Ranks in processes: bootstrap, check that every rank runs the same benchmark, build, lower
    /// and JIT-compile every variant on every rank, check that the ranks lowered the same
    /// programs, time nothing
    #[arg(long)]
    pub dry_run: bool,
    /// How long ranks in processes wait for each other, and how long a communication may stay
    /// pending before the watchdog fails it (at most a week: 604800)
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = args::timeout, allow_negative_numbers = true)]
    pub timeout: Duration,
}

/// `hir-bench overhead`.
#[derive(Debug, Args)]
pub struct Overhead {
    /// World backend (cpu: the numbers are NOT meaningful, and there is no graph)
    #[arg(long, default_value = "cpu", value_parser = named(Backend::ALL, Backend::name))]
    pub backend: Backend,
    /// Stream-axis extents S (loop iterations per call)
    #[arg(long, value_name = "S,...", value_delimiter = ',', value_parser = positive, default_values = ["256", "1024", "4096"])]
    pub slices: Vec<usize>,
    /// f32 elements per slice
    #[arg(long, value_name = "E", default_value = "1024", value_parser = positive)]
    pub elements: usize,
    /// Streams in the pool (at most 1024)
    #[arg(long, value_name = "P", default_value = "4", value_parser = bounded(MAX_STREAMS), allow_negative_numbers = true)]
    pub num_streams: usize,
    /// Timed calls per S and way (after as many untimed ones)
    #[arg(long, value_name = "K", default_value = "20", value_parser = positive)]
    pub iters: usize,
    /// Seed of the random inputs
    #[arg(long, value_name = "K", default_value = "0", value_parser = number::<u64>, allow_negative_numbers = true)]
    pub seed: u64,
    /// Write the results as JSON
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// How long a stream may stay stuck before the run fails
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = args::timeout, allow_negative_numbers = true)]
    pub timeout: Duration,
}

/// `hir-bench pointwise`.
#[derive(Debug, Args)]
pub struct Pointwise {
    /// World backend (cpu: the numbers are NOT meaningful)
    #[arg(long, default_value = "cpu", value_parser = named(Backend::ALL, Backend::name))]
    pub backend: Backend,
    /// f32 elements of each tensor (the default: 64 MiB)
    #[arg(long, value_name = "N", default_value = "16777216", value_parser = positive)]
    pub elements: usize,
    /// Timed calls per lowering (after as many untimed ones)
    #[arg(long, value_name = "K", default_value = "20", value_parser = positive)]
    pub iters: usize,
    /// Seed of the random inputs
    #[arg(long, value_name = "K", default_value = "0", value_parser = number::<u64>, allow_negative_numbers = true)]
    pub seed: u64,
    /// Write the results as JSON
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// How long a stream may stay stuck before the run fails
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = args::timeout, allow_negative_numbers = true)]
    pub timeout: Duration,
}

/// `MxKxN`.
fn shape(value: &str) -> Result<(usize, usize, usize), String> {
    let extents: Option<Vec<usize>> = value
        .split('x')
        .map(|part| part.parse().ok().filter(|&extent| extent > 0))
        .collect();
    match extents.as_deref() {
        Some(&[m, k, n]) => Ok((m, k, n)),
        _ => Err("takes MxKxN (positive extents, e.g. 8192x16384x8192)".to_owned()),
    }
}

impl Cli {
    /// The command line `args` (the program's name first), with what clap
    /// cannot check itself: the devices of a rank torchrun started without
    /// `-n`, the default chunks, and that a dry run runs in processes.
    pub fn parse_from(
        args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
    ) -> Result<Cli, clap::Error> {
        let mut cli = Cli::try_parse_from(args)?;
        if let Command::Run(run) = &mut cli.command {
            run.chunks = run.chunks_given.unwrap_or(run.num_streams);
            // A rank started torchrun style without -n runs in a world of WORLD_SIZE.
            run.devices = run
                .devices_given
                .or_else(launch::world_size_of_rank)
                .unwrap_or(1);
            if run.dry_run && run.launch == Some(Launch::Threads) {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::ArgumentConflict,
                    "--dry-run checks ranks in processes: it does not go with --launch threads\n",
                ));
            }
        }
        Ok(cli)
    }
}

impl Run {
    /// What the launcher needs of these options.
    pub fn plan(&self) -> Plan {
        Plan {
            tool: "hir-bench",
            ranks: self.devices,
            backend: self.backend,
            launch: self.launch,
            dry_run: self.dry_run,
            timeout: self.timeout,
            checks: Checks::default(),
        }
    }

    /// What every rank in processes must agree on: a hash of every option
    /// that changes what is built, run and exchanged (all but the seed,
    /// which the inputs name, and the output files, which rank 0 writes).
    pub fn fingerprint(&self) -> Fingerprint {
        let names = |names: Vec<&str>| names.join(",");
        let shapes = self
            .shapes
            .iter()
            .map(|(m, k, n)| format!("{m}x{k}x{n}"))
            .collect::<Vec<_>>();
        let variants = match &self.variants {
            Some(variants) => names(variants.iter().map(|variant| variant.name()).collect()),
            None => "all".to_owned(),
        };
        let mut hash = Fnv::default();
        hash.write(
            format!(
                "hir-bench run\0backend={}\0devices={}\0shapes={}\0families={}\0variants={variants}\0\
                 dtype={}\0chunks={}\0ring-chunks={}\0ring-sync={}\0num-streams={}\0lower-streams={}\0iters={}\0warmup={}\0\
                 samples={}\0dry-run={}\0graph={}\0",
                self.backend.name(),
                self.devices,
                shapes.join(","),
                names(self.families.iter().map(|family| family.name()).collect()),
                self.dtype.mlir(),
                self.chunks,
                self.ring_chunks,
                self.ring_sync.name(),
                self.num_streams,
                self.lower_streams,
                self.iters,
                self.warmup,
                self.samples,
                self.dry_run,
                self.graph
            )
            .as_bytes(),
        );
        Fingerprint {
            hash: hash.finish(),
            inputs: format!("seed {}", self.seed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Command, clap::Error> {
        Cli::parse_from(std::iter::once(&"hir-bench").chain(args)).map(|cli| cli.command)
    }

    #[test]
    fn parses_emit() {
        let Command::Emit(emit) = parse_args(&[
            "emit", "ag-ring", "-D", "4", "--m=64", "--k", "32", "--n", "16", "--dtype", "f32",
        ])
        .unwrap() else {
            panic!("not emit");
        };
        assert_eq!(emit.form, Form::AgRing);
        let params = &emit.params();
        assert_eq!(
            (params.devices, params.m, params.k, params.n),
            (4, 64, 32, 16)
        );
        assert_eq!((params.chunks, params.dtype), (4, DType::F32));
        assert!(parse_args(&["emit", "ag-ring", "--m", "4", "--k", "4", "--n", "4"]).is_err());
        assert!(parse_args(&["emit", "ag-nope", "-D", "2"]).is_err());
    }

    #[test]
    fn parses_program_block_and_startup() {
        let Command::Program(program) = parse_args(&[
            "program", "block", "--blocks", "3", "--s", "16", "--h", "32", "--heads", "4", "--f",
            "64", "-n", "4", "--dtype", "f32",
        ])
        .unwrap() else {
            panic!("not program");
        };
        let Model::Block(block) = program.model else {
            panic!("not block");
        };
        let blocks = block.sizes.blocks(block.blocks);
        assert_eq!(
            (
                blocks.blocks,
                blocks.s,
                blocks.h,
                blocks.heads,
                blocks.f,
                blocks.devices
            ),
            (3, 16, 32, 4, 64, 4)
        );
        assert_eq!(blocks.dtype, DType::F32);
        assert_eq!(blocks.attention, Attention::Fused);
        let Command::Program(program) =
            parse_args(&["program", "block", "--attention", "math"]).unwrap()
        else {
            panic!("not program");
        };
        let Model::Block(block) = program.model else {
            panic!("not block");
        };
        assert_eq!(block.sizes.attention, Attention::Math);
        assert_eq!(block.sizes.qkv, Qkv::Separate);
        assert!(parse_args(&["program", "block", "--attention", "flash"]).is_err());
        let Command::Program(program) =
            parse_args(&["program", "block", "--qkv", "fused"]).unwrap()
        else {
            panic!("not program");
        };
        let Model::Block(block) = program.model else {
            panic!("not block");
        };
        assert_eq!(block.sizes.qkv, Qkv::Fused);
        assert!(parse_args(&["program", "block", "--qkv", "packed"]).is_err());
        let Command::Startup(startup) = parse_args(&["startup"]).unwrap() else {
            panic!("not startup");
        };
        assert_eq!(startup.blocks, [1, 2, 4, 8, 16]);
        assert_eq!((startup.repeat, startup.sizes.devices), (3, 2));
        let Command::Startup(startup) =
            parse_args(&["startup", "--blocks", "1,2", "--no-examples"]).unwrap()
        else {
            panic!("not startup");
        };
        assert_eq!(startup.blocks, [1, 2]);
        assert!(startup.no_examples);
        assert!(parse_args(&["startup", "--blocks", "0"]).is_err());
        assert!(parse_args(&["startup", "--no-examples", "--examples", "x"]).is_err());
        assert!(parse_args(&["program", "block", "--heads", "0"]).is_err());
        let Command::Program(program) = parse_args(&[
            "program", "mlp", "--t", "64", "--h", "32", "--f", "128", "-n", "4", "--dtype", "f32",
        ])
        .unwrap() else {
            panic!("not program");
        };
        let Model::Mlp(sizes) = program.model else {
            panic!("not mlp");
        };
        let mlp = sizes.mlp();
        assert_eq!((mlp.t, mlp.h, mlp.f, mlp.devices), (64, 32, 128, 4));
        assert_eq!(mlp.dtype, DType::F32);
        assert!(parse_args(&["program", "mlp", "--t", "0"]).is_err());
    }

    #[test]
    fn parses_run() {
        let Command::Run(run) = parse_args(&[
            "run",
            "--backend",
            "cuda",
            "-n",
            "2",
            "--shapes",
            "64x32x16,8x8x8",
            "--families",
            "ag,ar",
            "--variants=gemm,p2p-cuda",
            "--num-streams",
            "3",
            "--iters",
            "30",
            "--png",
            "out.png",
        ])
        .unwrap() else {
            panic!("not run");
        };
        assert_eq!(run.backend, Backend::Cuda);
        assert_eq!(run.shapes, vec![(64, 32, 16), (8, 8, 8)]);
        assert_eq!(run.families, vec![Family::Ag, Family::Ar]);
        assert_eq!(run.variants, Some(vec![Variant::Gemm, Variant::P2pCuda]));
        assert_eq!((run.chunks, run.num_streams, run.iters), (3, 3, 30));
        assert_eq!(run.plan().launch(), Launch::Processes);
        assert_eq!(run.fingerprint().inputs, "seed 0");
        assert!(parse_args(&["run", "--shapes", "64x32"]).is_err());
        assert!(parse_args(&["run", "--families", "ag,xx"]).is_err());
        assert!(parse_args(&["frob"]).is_err());
    }

    fn run_of(args: &[&str]) -> Run {
        let mut all = vec!["run"];
        all.extend(args);
        match parse_args(&all).unwrap() {
            Command::Run(run) => *run,
            _ => panic!("not run"),
        }
    }

    #[test]
    fn devices_take_either_short_flag() {
        assert_eq!(run_of(&["-D", "3"]).devices, 3);
        assert_eq!(run_of(&["-n", "3"]).devices, 3);
        assert_eq!(run_of(&[]).devices, 1);
        assert_eq!(run_of(&["--num-streams", "3"]).chunks, 3);
        assert_eq!(run_of(&["--chunks", "2"]).chunks, 2);
        assert!(parse_args(&["run", "-n", "0"]).is_err());
        assert!(parse_args(&["run", "--dtype", "f64"]).is_err());
        assert!(parse_args(&[]).is_err());
    }

    #[test]
    fn parses_launch() {
        let run = run_of(&["--dry-run", "--timeout=5", "-n", "2"]);
        assert!(run.dry_run);
        assert_eq!(run.timeout, Duration::from_secs(5));
        assert_eq!(run.plan().launch(), Launch::Processes);
        assert_eq!(run_of(&[]).plan().launch(), Launch::Threads);
        let threads = run_of(&["--backend", "cuda", "--launch", "threads"]);
        assert_eq!(threads.plan().launch(), Launch::Threads);
        assert!(parse_args(&["run", "--dry-run", "--launch", "threads"]).is_err());
        assert!(parse_args(&["run", "--launch", "mpi"]).is_err());
        assert!(parse_args(&["run", "--timeout", "0"]).is_err());
    }

    #[test]
    fn ranks_agree_on_what_changes_the_run() {
        let base = run_of(&["-n", "2"]).fingerprint();
        assert_eq!(run_of(&["-n", "2", "--json", "a.json"]).fingerprint(), base);
        assert_ne!(
            run_of(&["-n", "2", "--iters", "3"]).fingerprint().hash,
            base.hash
        );
        assert_ne!(
            run_of(&["-n", "2", "--shapes", "8x8x8"]).fingerprint().hash,
            base.hash
        );
        let seeded = run_of(&["-n", "2", "--seed", "3"]).fingerprint();
        assert_eq!((seeded.hash, seeded.inputs.as_str()), (base.hash, "seed 3"));
    }
}
