//! `hir-bench startup`: where a program's compile time goes, stage by stage,
//! measured in this process through the calls `hir-run` makes
//! (`hir::program`'s `parse_source`, `import`, `lower_to_host`,
//! `lower_to_llvm`, then `hir::jit::Engine`): for stacks of 1, 2, 4, ...
//! transformer blocks (`hir_tools::blocks`), whose times should grow
//! linearly with the blocks, and for every example. Nothing runs: the times
//! do not depend on a backend, and hardly on the tensors' sizes (shapes are
//! static), only on the program's ops.

use crate::cli::Startup;
use crate::provenance::Provenance;
use anyhow::{Context as _, Result, bail};
use hir::passes::Choice as _;
use hir_runtime::Backend;
use hir_tools::{jit, program};
use melior::ir::operation::OperationLike;
use melior::ir::{BlockLike, OperationRef, RegionLike};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The stages of a compile, in order, as the table names them.
const STAGES: [&str; 5] = ["parse", "import", "hir-lower", "LLVM", "JIT"];

/// One program's median stage times.
#[derive(Serialize)]
struct Row {
    program: String,
    /// The stacked blocks, for a block program.
    blocks: Option<usize>,
    /// Operations of the program as written (its module's, nested ones included).
    ops: usize,
    parse_ms: f64,
    import_ms: f64,
    hir_lower_ms: f64,
    llvm_ms: f64,
    jit_ms: f64,
    total_ms: f64,
}

impl Row {
    fn stages(&self) -> [f64; 5] {
        [
            self.parse_ms,
            self.import_ms,
            self.hir_lower_ms,
            self.llvm_ms,
            self.jit_ms,
        ]
    }

    /// A block program's time per block, of `time`.
    fn per_block(&self, time: f64) -> Option<f64> {
        self.blocks.map(|blocks| time / blocks as f64)
    }
}

pub fn run(options: &Startup) -> Result<()> {
    let began = Instant::now();
    drop(hir_tools::context());
    let context_ms = began.elapsed().as_secs_f64() * 1e3;
    let sizes = &options.sizes;
    let mut rows = Vec::new();
    for &blocks in &options.blocks {
        let text = sizes.blocks(blocks).generate()?;
        rows.push(measure(
            &format!("block x{blocks}"),
            Some(blocks),
            &text,
            options.repeat,
        )?);
    }
    if !options.no_examples {
        let dir = options
            .examples
            .clone()
            .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples")));
        for path in examples(&dir)? {
            let bytes = program::read(&path)?;
            let text = String::from_utf8(bytes)
                .with_context(|| format!("{} is not UTF-8", path.display()))?;
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            );
            let row = measure(&name, None, &text, options.repeat)
                .with_context(|| format!("compiling {}", path.display()))?;
            rows.push(row);
        }
    }
    let provenance = Provenance::new(Backend::Cpu, sizes.devices, sizes.dtype.mlir());
    print!("{}", table(options, &provenance, context_ms, &rows));
    if let Some(path) = &options.json {
        let json = serde_json::json!({
            "benchmark": "startup",
            "provenance": provenance,
            "s": sizes.s,
            "h": sizes.h,
            "heads": sizes.heads,
            "f": sizes.f,
            "devices": sizes.devices,
            "repeat": options.repeat,
            "context_ms": context_ms,
            "rows": rows,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &options.csv {
        std::fs::write(path, csv(&provenance, &rows))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The `*.mlir` files of `dir`, sorted.
fn examples(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list the examples in {}", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot list the examples in {}", dir.display()))?
            .path();
        if path
            .extension()
            .is_some_and(|extension| extension == "mlir")
            && path.is_file()
        {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        bail!("{} holds no *.mlir example", dir.display());
    }
    paths.sort();
    Ok(paths)
}

/// The median of each stage over `repeat` compiles of `text`, each in a
/// fresh context (as a process starts with one: a context reused would
/// have its types and attributes made already).
fn measure(name: &str, blocks: Option<usize>, text: &str, repeat: usize) -> Result<Row> {
    let mut times: Vec<[f64; 5]> = Vec::with_capacity(repeat);
    let mut ops = 0;
    for _ in 0..repeat {
        let (stages, count) = compile(name, text)?;
        times.push(stages);
        ops = count;
    }
    let median = |stage: usize| {
        let mut values: Vec<f64> = times.iter().map(|time| time[stage]).collect();
        hir_tools::launch::timed::median(&mut values)
    };
    let stages: Vec<f64> = (0..STAGES.len()).map(median).collect();
    Ok(Row {
        program: name.to_owned(),
        blocks,
        ops,
        parse_ms: stages[0],
        import_ms: stages[1],
        hir_lower_ms: stages[2],
        llvm_ms: stages[3],
        jit_ms: stages[4],
        total_ms: stages.iter().sum(),
    })
}

/// One compile of `text` as `hir-run` makes it: each stage's milliseconds,
/// and the operations of the program as written.
fn compile(name: &str, text: &str) -> Result<([f64; 5], usize)> {
    let context = hir_tools::context();
    let mut clock = Instant::now();
    let mut lap = || {
        let now = Instant::now();
        let ms = (now - clock).as_secs_f64() * 1e3;
        clock = now;
        ms
    };
    let mut module = program::parse_source(&context, text, name)?;
    let parse = lap();
    let ops = count_ops(module.as_operation());
    lap();
    program::import(&context, &mut module, false)?;
    let function = program::entry(&module)?;
    let signature = program::signature(&module, &function)?;
    let import = lap();
    if signature.fusion {
        program::lower_to_host(
            &context,
            &mut module,
            &signature,
            &hir::passes::LowerOptions::default(),
            false,
        )?;
    }
    let hir_lower = lap();
    program::lower_to_llvm(&context, &mut module, false)?;
    let llvm = lap();
    let engine = jit::Engine::new(&module, &hir_runtime::symbols())?;
    engine.lookup(&format!("_mlir_ciface_{}", &signature.name[1..]))?;
    let jit = lap();
    Ok(([parse, import, hir_lower, llvm, jit], ops))
}

/// The operations nested in `op`, `op` excluded.
fn count_ops(op: OperationRef) -> usize {
    let mut count = 0;
    for region in 0..op.region_count() {
        let Ok(region) = op.region(region) else {
            continue;
        };
        let mut block = region.first_block();
        while let Some(current) = block {
            let mut next = current.first_operation();
            while let Some(child) = next {
                count += 1 + count_ops(child);
                next = child.next_in_block();
            }
            block = current.next_in_region();
        }
    }
    count
}

/// A number of milliseconds for the table, or `-`.
fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| format!("{value:.2}"))
}

fn table(options: &Startup, provenance: &Provenance, context_ms: f64, rows: &[Row]) -> String {
    let sizes = &options.sizes;
    let mut text = String::new();
    let _ = writeln!(text, "{}", provenance.line());
    let _ = writeln!(
        text,
        "hir-bench startup: compile stages in ms, median of {} compiles each in a fresh context \
         (making a context: {context_ms:.2} ms); blocks at S={} H={} heads={} F={} D={} {}, {} \
         attention, {} qkv; hir-lower with its default options",
        options.repeat,
        sizes.s,
        sizes.h,
        sizes.heads,
        sizes.f,
        sizes.devices,
        sizes.dtype.mlir(),
        sizes.attention.name(),
        sizes.qkv.name()
    );
    let _ = write!(text, "| program | ops |");
    for stage in STAGES {
        let _ = write!(text, " {stage} |");
    }
    let _ = writeln!(text, " total | hir-lower/block | total/block |");
    let _ = writeln!(text, "|---|---|{}---|---|---|", "---|".repeat(STAGES.len()));
    for row in rows {
        let _ = write!(text, "| {} | {} |", row.program, row.ops);
        for time in row.stages() {
            let _ = write!(text, " {time:.2} |");
        }
        let _ = writeln!(
            text,
            " {:.2} | {} | {} |",
            row.total_ms,
            ms(row.per_block(row.hir_lower_ms)),
            ms(row.per_block(row.total_ms))
        );
    }
    // How the time grows with the blocks: linear growth is one slope.
    let blocks: Vec<&Row> = rows.iter().filter(|row| row.blocks.is_some()).collect();
    if let (Some(first), Some(last)) = (blocks.first(), blocks.last())
        && last.blocks > first.blocks
    {
        let added = (last.blocks.unwrap_or(0) - first.blocks.unwrap_or(0)) as f64;
        let _ = writeln!(
            text,
            "from {} to {} blocks, each added block costs {:.2} ms in total, {:.2} ms of it in hir-lower",
            first.blocks.unwrap_or(0),
            last.blocks.unwrap_or(0),
            (last.total_ms - first.total_ms) / added,
            (last.hir_lower_ms - first.hir_lower_ms) / added
        );
    }
    text
}

fn csv(provenance: &Provenance, rows: &[Row]) -> String {
    let mut text = format!(
        "{},program,blocks,ops,parse_ms,import_ms,hir_lower_ms,llvm_ms,jit_ms,total_ms\n",
        Provenance::CSV_HEADER
    );
    let provenance = provenance.csv();
    for row in rows {
        let _ = writeln!(
            text,
            "{provenance},{},{},{},{},{},{},{},{},{}",
            row.program,
            row.blocks
                .map_or(String::new(), |blocks| blocks.to_string()),
            row.ops,
            row.parse_ms,
            row.import_ms,
            row.hir_lower_ms,
            row.llvm_ms,
            row.jit_ms,
            row.total_ms
        );
    }
    text
}
