//! `hir-run`'s command line (clap; the bounds and value parsers it shares
//! with `hir-bench` are in `hir_tools::args`).

use clap::Parser;
use hir::passes::fusion::differentiate::Saved;
use hir::passes::{
    Allgather, Allreduce, Fuse, LowerOptions, Overlap, P2p, ReduceScatter, StreamSync,
};
use hir::tune::Free;
use hir_runtime::cpu::Races;
use hir_runtime::{Backend, Checks};
use hir_tools::args::{self, MAX_RANKS, MAX_STREAMS, bounded, choice, named, number};
use hir_tools::launch::{self, Launch, Plan};
use std::path::PathBuf;

/// Lowers a fusion or host program to LLVM, JIT-compiles it and runs it on N ranks.
#[derive(Debug, Parser)]
#[command(
    name = "hir-run",
    version = args::VERSION,
    after_help = "Logging: HIR_LOG=debug (tracing's EnvFilter syntax; default info) on stderr."
)]
pub struct Options {
    /// Ranks to run [default: 1, or WORLD_SIZE for a rank torchrun started; at most 1024]
    #[arg(short = 'n', value_name = "N", value_parser = bounded(MAX_RANKS), allow_negative_numbers = true)]
    ranks_given: Option<usize>,
    /// The ranks: `-n`, else WORLD_SIZE for a rank torchrun started, else 1.
    #[arg(skip)]
    pub ranks: usize,
    /// Runtime backend
    #[arg(long, default_value = "cpu", value_parser = named(Backend::ALL, Backend::name))]
    pub backend: Backend,
    /// Streams in each rank's pool (at most 1024)
    #[arg(long, value_name = "S", default_value = "4", value_parser = bounded(MAX_STREAMS), allow_negative_numbers = true)]
    pub num_streams: usize,
    /// Lower collectives along the stream axis to rings of send/recv over NCCL or CUDA IPC
    /// [default: none, or what --variant chooses]
    #[arg(long = "p2p", value_parser = choice::<P2p>())]
    p2p_given: Option<P2p>,
    /// `--p2p`, else `none`.
    #[arg(skip = P2p::None)]
    pub p2p: P2p,
    /// With --p2p none, an allgather along the stream axis runs whole before its loop, or as one
    /// NCCL broadcast rooted at each iteration (hir-lower's allgather option)
    #[arg(long, default_value = "whole", value_parser = choice::<Allgather>())]
    pub allgather: Allgather,
    /// With --p2p none, a reduce-scatter along the stream axis runs whole after its loop, or as
    /// one NCCL reduce rooted at each iteration (hir-lower's reduce-scatter option)
    #[arg(long, default_value = "whole", value_parser = choice::<ReduceScatter>())]
    pub reduce_scatter: ReduceScatter,
    /// With --p2p nccl|cuda, an allreduce after the stream loop that writes its input block by
    /// block runs whole, or as a reduce-scatter ring then an allgather ring (GEMM+AR; hir-lower's
    /// allreduce option)
    #[arg(long, default_value = "whole", value_parser = choice::<Allreduce>())]
    pub allreduce: Allreduce,
    /// With --p2p nccl|cuda, how a ring step's stream waits for the previous step's: for all of
    /// it (step), or, in allgather rings, only for its transfers, guarded at the wrap (comm:
    /// nvFuser's inter_stream_synchronization; hir-lower's ring-sync option)
    #[arg(long, default_value = "step", value_parser = choice::<StreamSync>())]
    pub ring_sync: StreamSync,
    /// Pointwise fusion: a gelu after a GEMM the GEMM's epilogue and each chain of
    /// elementwise ops one fused kernel (elementwise, the default), or one kernel per op
    /// (none); hir-lower's fuse option
    #[arg(long, default_value = "elementwise", value_parser = choice::<Fuse>())]
    pub fuse: Fuse,
    /// In a program without stream axes, each allgather into a GEMM and each GEMM into a
    /// reduce-scatter becomes a pipeline over one chunk per device (auto: rings with --p2p
    /// nccl|cuda, rooted broadcasts and reduces with --p2p none), or runs whole (none);
    /// hir-lower's overlap option [default: auto, or what --variant chooses]
    #[arg(long = "overlap", value_parser = choice::<Overlap>())]
    overlap_given: Option<Overlap>,
    /// `--overlap`, else `auto`.
    #[arg(skip = Overlap::Auto)]
    pub overlap: Overlap,
    /// Which overlap variant runs: on cuda, the fastest of no overlap, rooted pipelines, NCCL
    /// rings and CUDA-IPC rings, timed on the run's own inputs once and then kept beside the
    /// compile cache (auto); the same on any backend (tune); or --overlap and --p2p as given
    /// (given). --p2p and --overlap given on the command line are kept in every variant
    #[arg(long, default_value = "auto", value_parser = choice::<Variant>())]
    pub variant: Variant,
    /// Split each ring step's transfer and compute into C parts (0: host-p2p-pipeline chooses)
    #[arg(long, value_name = "C", default_value = "0", value_parser = args::ir_count, allow_negative_numbers = true)]
    pub ring_chunks: usize,
    /// Global value of argument I from a .npy file (repeatable)
    #[arg(long = "input", value_name = "argI=FILE", value_parser = input)]
    pub inputs: Vec<(usize, PathBuf)>,
    /// Seed of the random inputs
    #[arg(long, value_name = "K", default_value = "0", value_parser = number::<u64>, allow_negative_numbers = true)]
    pub seed: u64,
    /// Write the outputs there as .npy
    #[arg(long, value_name = "D")]
    pub output_dir: Option<PathBuf>,
    /// Compare the outputs with a reference evaluation of the fusion program (turns --poison on)
    #[arg(long)]
    pub check: bool,
    /// Check the program's gradients instead: fusion-differentiate's forward and backward run on
    /// the ranks, each argument's gradient compared along random directions with central
    /// differences of the f64 reference (ranks as threads)
    #[arg(long, conflicts_with_all = ["check", "expect", "output_dir", "dry_run", "iters", "trace", "graph"])]
    pub grad: bool,
    /// With --grad, what the backward reads of a forward set that gathers: the gathered tensor,
    /// saved by the forward (gathered), or the set's input, gathered again (recompute)
    #[arg(long, default_value = "gathered", value_parser = choice::<Saved>())]
    pub saved: Saved,
    /// Fill every fresh buffer (host.alloc, the runtime's temporaries) with NaN instead of zero,
    /// so that a missing write shows [default: on with --check]
    #[arg(long, overrides_with = "no_poison")]
    poison: bool,
    /// Fresh buffers are zero, even with --check
    #[arg(long, overrides_with = "poison")]
    no_poison: bool,
    /// What a data race the cpu backend detects does: fail the rank, or print a warning once per
    /// pair of ops and run on
    #[arg(long, default_value = "fatal", value_parser = named(&[Races::Fatal, Races::Warn], races_name))]
    pub races: Races,
    /// Compare the outputs with those --output-dir wrote to D (another backend's, say)
    #[arg(long, value_name = "D")]
    pub expect: Option<PathBuf>,
    /// Time K runs after the first
    #[arg(long, value_name = "K", default_value = "0", value_parser = number::<usize>, allow_negative_numbers = true)]
    pub iters: usize,
    /// Write a Chrome/Perfetto trace of the runs
    #[arg(long, value_name = "FILE", conflicts_with = "graph")]
    pub trace: Option<PathBuf>,
    /// On cuda, run each rank's whole host program as one CUDA graph: one direct run (which
    /// creates communicators and buffers), then capture, and every run after (the checked one
    /// included) a replay; on cpu, run directly
    #[arg(long)]
    pub graph: bool,
    /// Print the IR after each lowering stage
    #[arg(long)]
    pub print_ir: bool,
    /// Ranks as threads of this process (default for cpu) or as N child processes of it, one per
    /// GPU (default for cuda); with RANK and WORLD_SIZE set (torchrun), hir-run runs that one rank
    #[arg(long, value_enum)]
    pub launch: Option<Launch>,
    /// Ranks in processes: bootstrap, check that every rank runs the same program with the same
    /// input shapes, meet at a barrier, run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// How long ranks wait for each other, and how long a communication may stay pending before
    /// the watchdog fails it (at most a week: 604800)
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = args::timeout, allow_negative_numbers = true)]
    pub timeout: std::time::Duration,
    /// The program: fusion (its entry takes tensors) or host IR (memrefs)
    #[arg(value_name = "prog.mlir")]
    pub program: PathBuf,
}

hir::passes::choice! {
    /// How hir-run picks the overlap variant it runs (`--variant`).
    pub enum Variant {
        /// Timed on cuda, where the fastest depends on the GPUs and shapes;
        /// as given on cpu.
        Auto = "auto",
        /// Timed on any backend.
        Tune = "tune",
        /// `--overlap` and `--p2p` as given (or their defaults).
        Given = "given",
    }
}

fn races_name(races: Races) -> &'static str {
    match races {
        Races::Fatal => "fatal",
        Races::Warn => "warn",
    }
}

/// `--input argI=FILE`.
fn input(value: &str) -> Result<(usize, PathBuf), String> {
    let (name, file) = value
        .split_once('=')
        .ok_or_else(|| "takes argI=FILE".to_owned())?;
    let index = name
        .strip_prefix("arg")
        .and_then(|index| index.parse().ok())
        .ok_or_else(|| format!("names an argument as argI (arg0, arg1, ...), not '{name}'"))?;
    Ok((index, PathBuf::from(file)))
}

impl Options {
    /// How the program is lowered: `hir-lower`'s options from the flags of
    /// the same names; the pool's streams are `--num-streams`, which the
    /// stream loops rotate over all of.
    pub fn lower(&self) -> LowerOptions {
        LowerOptions {
            num_streams: 0,
            p2p: self.p2p,
            ring_chunks: self.ring_chunks,
            allgather: self.allgather,
            reduce_scatter: self.reduce_scatter,
            allreduce: self.allreduce,
            ring_sync: self.ring_sync,
            fuse: self.fuse,
            overlap: self.overlap,
        }
    }

    /// Whether the variant is chosen by timing, and which options it may
    /// vary: those not given on the command line.
    pub fn tuning(&self) -> Option<Free> {
        let tunes = match self.variant {
            Variant::Auto => self.backend == Backend::Cuda,
            Variant::Tune => true,
            Variant::Given => false,
        };
        let free = Free {
            overlap: self.overlap_given.is_none(),
            p2p: self.p2p_given.is_none(),
        };
        (tunes && (free.overlap || free.p2p)).then_some(free)
    }

    /// What the launcher needs of these options.
    pub fn plan(&self) -> Plan {
        Plan {
            tool: "hir-run",
            ranks: self.ranks,
            backend: self.backend,
            launch: self.launch,
            dry_run: self.dry_run,
            timeout: self.timeout,
            checks: Checks {
                poison: self.poison || (self.check && !self.no_poison),
                races: self.races,
            },
        }
    }

    /// The options of `args` (the program's name first), with what clap
    /// cannot check itself: the ranks of a rank torchrun started without
    /// `-n`, and that a dry run runs in processes.
    pub fn parse_from(
        args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
    ) -> Result<Options, clap::Error> {
        let mut options = Options::try_parse_from(args)?;
        if let Some(p2p) = options.p2p_given {
            options.p2p = p2p;
        }
        if let Some(overlap) = options.overlap_given {
            options.overlap = overlap;
        }
        // A rank started torchrun style without -n runs in a world of WORLD_SIZE.
        options.ranks = options
            .ranks_given
            .or_else(launch::world_size_of_rank)
            .unwrap_or(1);
        if options.grad && options.plan().launch() == Launch::Processes {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                "--grad runs its ranks as threads of this process: it does not go with --launch processes (with --backend cuda, add --launch threads)\n",
            ));
        }
        if options.dry_run && options.launch == Some(Launch::Threads) {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                "--dry-run checks ranks in processes: it does not go with --launch threads\n",
            ));
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, clap::Error> {
        Options::parse_from(std::iter::once(&"hir-run").chain(args))
    }

    #[test]
    fn parses_every_option() {
        let options = run(&[
            "-n",
            "4",
            "--backend=cpu",
            "--num-streams",
            "2",
            "--input",
            "arg1=b.npy",
            "--seed",
            "7",
            "--output-dir",
            "out",
            "--check",
            "--expect",
            "cpu-out",
            "--iters",
            "3",
            "--trace",
            "t.json",
            "--print-ir",
            "prog.mlir",
        ])
        .unwrap();
        assert_eq!(options.ranks, 4);
        assert_eq!(options.num_streams, 2);
        assert_eq!(options.inputs, vec![(1, PathBuf::from("b.npy"))]);
        assert_eq!(options.seed, 7);
        assert!(options.check && options.print_ir);
        assert_eq!(options.expect, Some(PathBuf::from("cpu-out")));
        assert_eq!(options.iters, 3);
        assert_eq!(options.program, PathBuf::from("prog.mlir"));
    }

    #[test]
    fn rejects_bad_values() {
        assert!(run(&["-n", "0", "p.mlir"]).is_err());
        assert!(run(&["--backend", "tpu", "p.mlir"]).is_err());
        assert!(run(&["--input", "x=f.npy", "p.mlir"]).is_err());
        assert!(run(&["--frobnicate", "p.mlir"]).is_err());
        assert!(run(&["-n", "2"]).is_err());
        assert!(run(&["a.mlir", "b.mlir"]).is_err());
        assert!(run(&["--launch", "mpi", "p.mlir"]).is_err());
        assert!(run(&["--timeout", "0", "p.mlir"]).is_err());
        assert!(run(&["--dry-run", "--launch", "threads", "p.mlir"]).is_err());
        assert!(run(&["--races", "ignore", "p.mlir"]).is_err());
    }

    #[test]
    fn usage_errors_are_claps() {
        use clap::error::ErrorKind;
        let kind = |args: &[&str]| run(args).unwrap_err().kind();
        assert_eq!(kind(&["--version"]), ErrorKind::DisplayVersion);
        assert_eq!(
            kind(&["--num-strems", "2", "p.mlir"]),
            ErrorKind::UnknownArgument
        );
        assert_eq!(kind(&["-n", "0", "p.mlir"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&[]), ErrorKind::MissingRequiredArgument);
        let error = run(&["-n", "2000", "p.mlir"]).unwrap_err().to_string();
        assert!(error.contains("'-n <N>': must be at most 1024"), "{error}");
    }

    #[test]
    fn poison_follows_check_unless_told() {
        let checks = |args: &[&str]| run(args).unwrap().plan().checks;
        assert!(!checks(&["p.mlir"]).poison);
        assert!(checks(&["--check", "p.mlir"]).poison);
        assert!(checks(&["--poison", "p.mlir"]).poison);
        assert!(!checks(&["--check", "--no-poison", "p.mlir"]).poison);
        // The last of --poison and --no-poison wins.
        assert!(checks(&["--no-poison", "--poison", "p.mlir"]).poison);
        assert!(!checks(&["--poison", "--no-poison", "p.mlir"]).poison);
        assert_eq!(checks(&["p.mlir"]).races, Races::Fatal);
        assert_eq!(checks(&["--races=warn", "p.mlir"]).races, Races::Warn);
    }

    #[test]
    fn the_variant_is_timed_on_cuda_with_what_was_not_given() {
        let tuning = |args: &[&str]| run(args).unwrap().tuning();
        assert_eq!(tuning(&["p.mlir"]), None);
        let all = Free {
            overlap: true,
            p2p: true,
        };
        assert_eq!(tuning(&["--backend=cuda", "p.mlir"]), Some(all));
        assert_eq!(tuning(&["--variant=tune", "p.mlir"]), Some(all));
        assert_eq!(tuning(&["--backend=cuda", "--graph", "p.mlir"]), Some(all));
        assert_eq!(
            tuning(&["--backend=cuda", "--p2p=nccl", "p.mlir"]),
            Some(Free { p2p: false, ..all })
        );
        assert_eq!(
            tuning(&["--backend=cuda", "--p2p=none", "--overlap=auto", "p.mlir"]),
            None
        );
        assert_eq!(
            tuning(&["--backend=cuda", "--variant=given", "p.mlir"]),
            None
        );
        let given = run(&["--p2p=cuda", "--overlap=none", "p.mlir"]).unwrap();
        assert_eq!((given.p2p, given.overlap), (P2p::Cuda, Overlap::None));
        let defaults = run(&["p.mlir"]).unwrap();
        assert_eq!((defaults.p2p, defaults.overlap), (P2p::None, Overlap::Auto));
        assert!(run(&["--variant=fastest", "p.mlir"]).is_err());
    }

    #[test]
    fn launch_defaults_to_the_backends() {
        assert_eq!(run(&["p.mlir"]).unwrap().plan().launch(), Launch::Threads);
        assert_eq!(
            run(&["--backend", "cuda", "p.mlir"])
                .unwrap()
                .plan()
                .launch(),
            Launch::Processes
        );
        assert_eq!(
            run(&["--dry-run", "p.mlir"]).unwrap().plan().launch(),
            Launch::Processes
        );
        let options = run(&["--launch=processes", "--timeout", "5", "p.mlir"]).unwrap();
        assert_eq!(options.plan().launch(), Launch::Processes);
        assert_eq!(options.timeout, std::time::Duration::from_secs(5));
    }

    #[test]
    fn grad_runs_its_ranks_as_threads() {
        let options = run(&["--grad", "--saved", "recompute", "p.mlir"]).unwrap();
        assert!(options.grad);
        assert_eq!(options.saved, Saved::Recompute);
        assert_eq!(run(&["--grad", "p.mlir"]).unwrap().saved, Saved::Gathered);
        assert!(
            run(&[
                "--grad",
                "--launch",
                "threads",
                "--backend",
                "cuda",
                "p.mlir"
            ])
            .is_ok()
        );
        for refused in [
            &["--grad", "--backend", "cuda", "p.mlir"][..],
            &["--grad", "--launch", "processes", "p.mlir"],
            &["--grad", "--check", "p.mlir"],
            &["--grad", "--saved", "later", "p.mlir"],
        ] {
            assert!(run(refused).is_err(), "{refused:?}");
        }
    }
}
