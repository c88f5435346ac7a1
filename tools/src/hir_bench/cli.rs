//! `hir-bench`'s command line.

use anyhow::{Context, Result, bail};
use hir_abi::DType;
use hir_tools::args::{MAX_RANKS, MAX_STREAMS, bounded, number, positive, timeout};
use hir_tools::backend::{Backend, Checks};
use hir_tools::launch::{self, Fingerprint, Fnv, Launch, Plan};
use hir_tools::programs::{Family, Form, Params, Variant};
use std::path::PathBuf;
use std::time::Duration;

pub const USAGE: &str = "\
usage: hir-bench emit PROGRAM -D D --m M --k K --n N [--chunks S] [--dtype T]
       hir-bench run [options]

emit: prints a benchmark program (fusion dialect) on stdout. PROGRAM is one of
  ag-gemm ag-allgather ag-pipeline ag-ring
  rs-gemm rs-reduce-scatter rs-pipeline rs-ring
  ar-gemm ar-allreduce ar-pipeline ar-nooverlap
  -D D, -n D            devices (the mesh is 0..D-1)
  --m M --k K --n N     the GEMM: C [M, N] = A [M, K] @ B [K, N]
  --chunks S            stream-axis extent of *-pipeline and ar-nooverlap (default 4)
  --dtype T             bf16 (default), f16 or f32

run: builds, lowers, checks and times every (family, shape, variant) on D ranks.
  --backend cpu|cuda    runtime backend (default cpu: numbers NOT meaningful)
  -n D, -D D            ranks = devices (default 1, or WORLD_SIZE for a rank torchrun started;
                        at most 1024)
  --shapes MxKxN,...    GEMM shapes (default 32768x16384x8192,8192x16384x8192,16384x8192x2048)
  --families F,...      ag, rs, ar (default all)
  --variants V,...      gemm, comm, nooverlap, pipeline, p2p-nccl, p2p-cuda (default all
                        that apply: no P2P ring for ar)
  --dtype T             bf16 (default), f16 or f32
  --chunks S            chunks of the collective pipelines (default: --num-streams)
  --ring-chunks C       parts each P2P ring step's transfer and GEMM are split into
                        (default 0: host-p2p-pipeline chooses)
  --num-streams P       streams in each rank's pool (default 4)
  --lower-streams N     hir-lower's num-streams: pool streams a loop rotates over
                        (default 0: all of the pool)
  --iters K             timed iterations (default 20)
  --warmup W            untimed iterations before them (default 5)
  --seed K              seed of the random inputs (default 0)
  --samples K           output entries per rank checked against an f64 dot product (default 512)
  --json FILE --csv FILE --png FILE
                        write the results as JSON, CSV, and bar charts of TFLOP/s (FILE)
                        and of the ratio to the GEMM alone (FILE's stem + -vs-gemm.png)
  --launch threads|processes
                        ranks as threads of this process (default for cpu) or as D child
                        processes of it, one per GPU (default for cuda); with RANK and
                        WORLD_SIZE set (torchrun), hir-bench runs that one rank
  --dry-run             ranks in processes: bootstrap, check that every rank runs the same
                        benchmark, build, lower and JIT-compile every variant on every rank,
                        check that the ranks lowered the same programs, time nothing
  --timeout SECONDS     how long ranks in processes wait for each other, and how long a
                        communication may stay pending before the watchdog fails it (default 60,
                        at most a week: 604800)
  -h, --help            this help";

/// `hir-bench emit`.
#[derive(Debug)]
pub struct Emit {
    pub form: Form,
    pub params: Params,
}

/// `hir-bench run`.
#[derive(Debug)]
pub struct Run {
    pub backend: Backend,
    pub devices: usize,
    /// `(M, K, N)`.
    pub shapes: Vec<(usize, usize, usize)>,
    pub families: Vec<Family>,
    /// `None`: every variant that applies.
    pub variants: Option<Vec<Variant>>,
    pub dtype: DType,
    pub chunks: usize,
    /// `hir-lower`'s `ring-chunks`: parts of each ring step.
    pub ring_chunks: usize,
    pub num_streams: usize,
    pub lower_streams: usize,
    pub iters: usize,
    pub warmup: usize,
    pub seed: u64,
    pub samples: usize,
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub png: Option<PathBuf>,
    /// `None`: the backend's default (see [`Plan::launch`]).
    pub launch: Option<Launch>,
    pub dry_run: bool,
    pub timeout: Duration,
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
                 dtype={}\0chunks={}\0ring-chunks={}\0num-streams={}\0lower-streams={}\0iters={}\0warmup={}\0\
                 samples={}\0dry-run={}\0",
                self.backend.name(),
                self.devices,
                shapes.join(","),
                names(self.families.iter().map(|family| family.name()).collect()),
                self.dtype.mlir(),
                self.chunks,
                self.ring_chunks,
                self.num_streams,
                self.lower_streams,
                self.iters,
                self.warmup,
                self.samples,
                self.dry_run
            )
            .as_bytes(),
        );
        Fingerprint {
            hash: hash.finish(),
            inputs: format!("seed {}", self.seed),
        }
    }
}

pub enum Command {
    Emit(Emit),
    Run(Box<Run>),
    Help,
}

pub const DEFAULT_SHAPES: [(usize, usize, usize); 3] = [
    (32768, 16384, 8192),
    (8192, 16384, 8192),
    (16384, 8192, 2048),
];

fn dtype(value: &str) -> Result<DType> {
    DType::from_mlir(value)
        .with_context(|| format!("--dtype takes bf16, f16 or f32, not '{value}'"))
}

/// `MxKxN`.
fn shape(value: &str) -> Result<(usize, usize, usize)> {
    let parts: Vec<&str> = value.split('x').collect();
    let extents: Option<Vec<usize>> = parts
        .iter()
        .map(|part| part.parse().ok().filter(|&extent| extent > 0))
        .collect();
    match extents.as_deref() {
        Some(&[m, k, n]) => Ok((m, k, n)),
        _ => bail!("--shapes takes MxKxN (positive extents, e.g. 8192x16384x8192), not '{value}'"),
    }
}

fn list<T>(
    flag: &str,
    value: &str,
    parse: impl Fn(&str) -> Option<T>,
    names: &str,
) -> Result<Vec<T>> {
    value
        .split(',')
        .map(|item| parse(item).with_context(|| format!("{flag} takes {names}, not '{item}'")))
        .collect()
}

/// Splits `--flag=value` and pairs each flag with its value.
struct Args<I: Iterator<Item = String>> {
    args: I,
}

impl<I: Iterator<Item = String>> Args<I> {
    /// The next flag and, for `--flag=value`, its inline value.
    fn next_flag(&mut self) -> Option<(String, Option<String>)> {
        let arg = self.args.next()?;
        Some(match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg, None),
        })
    }

    fn value(&mut self, flag: &str, inline: Option<String>) -> Result<String> {
        match inline {
            Some(value) => Ok(value),
            None => self
                .args
                .next()
                .with_context(|| format!("{flag} takes a value")),
        }
    }
}

pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command> {
    let mut args = Args {
        args: args.into_iter(),
    };
    let Some((command, _)) = args.next_flag() else {
        bail!("no command given\n{USAGE}");
    };
    match command.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "emit" => parse_emit(args),
        "run" => parse_run(args),
        other => bail!("unknown command '{other}': emit or run\n{USAGE}"),
    }
}

fn parse_emit(mut args: Args<impl Iterator<Item = String>>) -> Result<Command> {
    let mut form = None;
    let (mut devices, mut m, mut k, mut n) = (None, None, None, None);
    let mut chunks = 4;
    let mut element = DType::BF16;
    while let Some((flag, inline)) = args.next_flag() {
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-D" | "-n" => devices = Some(positive(&flag, &args.value(&flag, inline)?)?),
            "--m" => m = Some(positive("--m", &args.value(&flag, inline)?)?),
            "--k" => k = Some(positive("--k", &args.value(&flag, inline)?)?),
            "--n" => n = Some(positive("--n", &args.value(&flag, inline)?)?),
            "--chunks" => chunks = positive("--chunks", &args.value(&flag, inline)?)?,
            "--dtype" => element = dtype(&args.value(&flag, inline)?)?,
            flag if flag.starts_with('-') => bail!("unknown option '{flag}' of emit\n{USAGE}"),
            name if form.is_some() => bail!("emit takes one program: '{name}' comes after it"),
            name => {
                form = Some(Form::parse(name).with_context(|| {
                    format!(
                        "unknown program '{name}': one of {}",
                        Form::ALL.map(Form::name).join(", ")
                    )
                })?)
            }
        }
    }
    let missing = |what: &str| format!("emit needs {what}\n{USAGE}");
    Ok(Command::Emit(Emit {
        form: form.with_context(|| missing("a program"))?,
        params: Params {
            devices: devices.with_context(|| missing("-D"))?,
            chunks,
            m: m.with_context(|| missing("--m"))?,
            k: k.with_context(|| missing("--k"))?,
            n: n.with_context(|| missing("--n"))?,
            dtype: element,
        },
    }))
}

fn parse_run(mut args: Args<impl Iterator<Item = String>>) -> Result<Command> {
    let mut run = Run {
        backend: Backend::Cpu,
        devices: 1,
        shapes: DEFAULT_SHAPES.to_vec(),
        families: Family::ALL.to_vec(),
        variants: None,
        dtype: DType::BF16,
        chunks: 0,
        ring_chunks: 0,
        num_streams: 4,
        lower_streams: 0,
        iters: 20,
        warmup: 5,
        seed: 0,
        samples: 512,
        json: None,
        csv: None,
        png: None,
        launch: None,
        dry_run: false,
        timeout: Duration::from_secs(60),
    };
    let mut chunks = None;
    let mut devices = None;
    while let Some((flag, inline)) = args.next_flag() {
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--dry-run" => {
                run.dry_run = true;
                continue;
            }
            _ => {}
        }
        let value = args.value(&flag, inline)?;
        match flag.as_str() {
            "--backend" => run.backend = Backend::parse("--backend", &value)?,
            "-n" | "-D" => devices = Some(bounded(&flag, &value, MAX_RANKS)?),
            "--shapes" => run.shapes = value.split(',').map(shape).collect::<Result<_>>()?,
            "--families" => {
                run.families = list(&flag, &value, Family::parse, "a list of ag, rs, ar")?
            }
            "--variants" => {
                run.variants = Some(list(
                    &flag,
                    &value,
                    Variant::parse,
                    "a list of gemm, comm, nooverlap, pipeline, p2p-nccl, p2p-cuda",
                )?)
            }
            "--dtype" => run.dtype = dtype(&value)?,
            "--chunks" => chunks = Some(positive(&flag, &value)?),
            "--ring-chunks" => run.ring_chunks = number(&flag, &value)?,
            "--num-streams" => run.num_streams = bounded(&flag, &value, MAX_STREAMS)?,
            "--lower-streams" => run.lower_streams = number(&flag, &value)?,
            "--iters" => run.iters = positive(&flag, &value)?,
            "--warmup" => run.warmup = number(&flag, &value)?,
            "--seed" => run.seed = number(&flag, &value)?,
            "--samples" => run.samples = positive(&flag, &value)?,
            "--json" => run.json = Some(PathBuf::from(value)),
            "--csv" => run.csv = Some(PathBuf::from(value)),
            "--png" => run.png = Some(PathBuf::from(value)),
            "--launch" => run.launch = Some(Launch::parse(&flag, &value)?),
            "--timeout" => run.timeout = timeout(&flag, &value)?,
            other => bail!("unknown option '{other}' of run\n{USAGE}"),
        }
    }
    run.chunks = chunks.unwrap_or(run.num_streams);
    // A rank started torchrun style without -n runs in a world of WORLD_SIZE.
    run.devices = devices.or_else(launch::world_size_of_rank).unwrap_or(1);
    if run.dry_run && run.launch == Some(Launch::Threads) {
        bail!("--dry-run checks ranks in processes: it does not go with --launch threads");
    }
    Ok(Command::Run(Box::new(run)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Command> {
        parse(args.iter().map(|arg| arg.to_string()))
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
        let params = &emit.params;
        assert_eq!(
            (params.devices, params.m, params.k, params.n),
            (4, 64, 32, 16)
        );
        assert_eq!((params.chunks, params.dtype), (4, DType::F32));
        assert!(parse_args(&["emit", "ag-ring", "--m", "4", "--k", "4", "--n", "4"]).is_err());
        assert!(parse_args(&["emit", "ag-nope", "-D", "2"]).is_err());
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
