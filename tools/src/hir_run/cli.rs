//! `hir-run`'s command line.

use anyhow::{Context, Result, bail};
use hir_runtime::cpu::Races;
use hir_tools::args::{MAX_RANKS, MAX_STREAMS, bounded, number, timeout};
use hir_tools::backend::{Backend, Checks};
use hir_tools::launch::{self, Launch, Plan};
use std::path::PathBuf;

pub const USAGE: &str = "\
usage: hir-run [options] prog.mlir

Lowers a fusion or host program to LLVM, JIT-compiles it and runs it on N ranks.

options:
  -n N                  ranks to run (default 1, or WORLD_SIZE for a rank torchrun started;
                        at most 1024)
  --backend cpu|cuda    runtime backend (default cpu)
  --num-streams S       streams in each rank's pool (default 4, at most 1024)
  --p2p none|nccl|cuda  lower collectives along the stream axis to rings (default none)
  --ring-chunks C       split each ring step's transfer and compute into C parts
                        (default 0: host-p2p-pipeline chooses)
  --input argI=FILE     global value of argument I from a .npy file (repeatable)
  --seed K              seed of the random inputs (default 0)
  --output-dir D        write the outputs there as .npy
  --check               compare the outputs with a reference evaluation of the fusion program
                        (turns --poison on)
  --poison, --no-poison fill every fresh buffer (host.alloc, the runtime's temporaries) with NaN
                        instead of zero, so that a missing write shows (default: on with --check)
  --races fatal|warn    what a data race the cpu backend detects does: fail the rank (default),
                        or print a warning once per pair of ops and run on
  --expect D            compare the outputs with those --output-dir wrote to D (another backend's, say)
  --iters K             time K runs after the first
  --trace FILE          write a Chrome/Perfetto trace of the runs
  --print-ir            print the IR after each lowering stage
  --launch threads|processes
                        ranks as threads of this process (default for cpu) or as N child
                        processes of it, one per GPU (default for cuda); with RANK and
                        WORLD_SIZE set (torchrun), hir-run runs that one rank
  --dry-run             ranks in processes: bootstrap, check that every rank runs the same
                        program with the same input shapes, meet at a barrier, run nothing
  --timeout SECONDS     how long ranks in processes wait for each other, and how long a
                        communication may stay pending before the watchdog fails it (default 60,
                        at most a week: 604800)
  -h, --help            this help";

#[derive(Debug)]
pub struct Options {
    pub ranks: usize,
    pub backend: Backend,
    pub num_streams: usize,
    /// `hir-lower`'s `p2p` option: none, nccl or cuda.
    pub p2p: String,
    /// `hir-lower`'s `ring-chunks` option.
    pub ring_chunks: usize,
    /// Argument index and file.
    pub inputs: Vec<(usize, PathBuf)>,
    pub seed: u64,
    pub output_dir: Option<PathBuf>,
    pub check: bool,
    /// `None`: on with `--check`.
    pub poison: Option<bool>,
    pub races: Races,
    pub expect: Option<PathBuf>,
    pub iters: usize,
    pub trace: Option<PathBuf>,
    pub print_ir: bool,
    /// `None`: the backend's default (see [`Plan::launch`]).
    pub launch: Option<Launch>,
    pub dry_run: bool,
    pub timeout: std::time::Duration,
    pub program: PathBuf,
}

impl Options {
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
                poison: self.poison.unwrap_or(self.check),
                races: self.races,
            },
        }
    }
}

/// What the command line asks for.
pub enum Command {
    Run(Box<Options>),
    Help,
}

pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command> {
    let mut args = args.into_iter();
    let mut options = Options {
        ranks: 1,
        backend: Backend::Cpu,
        num_streams: 4,
        p2p: "none".to_owned(),
        ring_chunks: 0,
        inputs: Vec::new(),
        seed: 0,
        output_dir: None,
        check: false,
        poison: None,
        races: Races::Fatal,
        expect: None,
        iters: 0,
        trace: None,
        print_ir: false,
        launch: None,
        dry_run: false,
        timeout: std::time::Duration::from_secs(60),
        program: PathBuf::new(),
    };
    let mut program = None;
    let mut ranks_given = false;
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = || -> Result<String> {
            match &inline {
                Some(value) => Ok(value.clone()),
                None => args.next().with_context(|| format!("{flag} takes a value")),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-n" => {
                options.ranks = bounded("-n", &value()?, MAX_RANKS)?;
                ranks_given = true;
            }
            "--backend" => options.backend = Backend::parse("--backend", &value()?)?,
            "--num-streams" => {
                options.num_streams = bounded("--num-streams", &value()?, MAX_STREAMS)?
            }
            "--p2p" => {
                options.p2p = value()?;
                if !["none", "nccl", "cuda"].contains(&options.p2p.as_str()) {
                    bail!("--p2p takes none, nccl or cuda, not '{}'", options.p2p);
                }
            }
            "--ring-chunks" => options.ring_chunks = number("--ring-chunks", &value()?)?,
            "--input" => {
                let value = value()?;
                let (name, file) = value
                    .split_once('=')
                    .with_context(|| format!("--input takes argI=FILE, not '{value}'"))?;
                let index = name
                    .strip_prefix("arg")
                    .and_then(|index| index.parse().ok())
                    .with_context(|| {
                        format!("--input names an argument as argI (arg0, arg1, ...), not '{name}'")
                    })?;
                options.inputs.push((index, PathBuf::from(file)));
            }
            "--seed" => options.seed = number("--seed", &value()?)?,
            "--output-dir" => options.output_dir = Some(PathBuf::from(value()?)),
            "--check" => options.check = true,
            "--poison" => options.poison = Some(true),
            "--no-poison" => options.poison = Some(false),
            "--races" => {
                options.races = match value()?.as_str() {
                    "fatal" => Races::Fatal,
                    "warn" => Races::Warn,
                    other => bail!("--races takes fatal or warn, not '{other}'"),
                }
            }
            "--expect" => options.expect = Some(PathBuf::from(value()?)),
            "--iters" => options.iters = number("--iters", &value()?)?,
            "--trace" => options.trace = Some(PathBuf::from(value()?)),
            "--print-ir" => options.print_ir = true,
            "--launch" => options.launch = Some(Launch::parse("--launch", &value()?)?),
            "--dry-run" => options.dry_run = true,
            "--timeout" => options.timeout = timeout("--timeout", &value()?)?,
            flag if flag.starts_with('-') && flag != "-" => {
                bail!("unknown option '{flag}'\n{USAGE}")
            }
            _ if program.is_some() => bail!("one program only: '{arg}' comes after the program"),
            _ => program = Some(PathBuf::from(arg)),
        }
    }
    options.program = program.with_context(|| format!("no program given\n{USAGE}"))?;
    // A rank started torchrun style without -n runs in a world of WORLD_SIZE.
    if !ranks_given && let Some(world) = launch::world_size_of_rank() {
        options.ranks = world;
    }
    if options.dry_run && options.launch == Some(Launch::Threads) {
        bail!("--dry-run checks ranks in processes: it does not go with --launch threads");
    }
    Ok(Command::Run(Box::new(options)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options> {
        match parse(args.iter().map(|arg| arg.to_string()))? {
            Command::Run(options) => Ok(*options),
            Command::Help => bail!("help"),
        }
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
    fn poison_follows_check_unless_told() {
        let checks = |args: &[&str]| run(args).unwrap().plan().checks;
        assert!(!checks(&["p.mlir"]).poison);
        assert!(checks(&["--check", "p.mlir"]).poison);
        assert!(checks(&["--poison", "p.mlir"]).poison);
        assert!(!checks(&["--check", "--no-poison", "p.mlir"]).poison);
        assert_eq!(checks(&["p.mlir"]).races, Races::Fatal);
        assert_eq!(checks(&["--races=warn", "p.mlir"]).races, Races::Warn);
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
}
