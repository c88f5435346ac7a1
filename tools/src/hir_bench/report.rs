//! The results as a table (stdout), JSON and CSV, each with its provenance.

use crate::provenance::Provenance;
use crate::results::{Outcome, Row, Setup};
use hir_runtime::Backend;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// How the numbers are made, for the table's header and the JSON.
pub const TIME: &str = "median (and min) over the timed iterations of the slowest rank's time; \
    each iteration: host barrier of all ranks (of the threads, or of the processes through the store), \
    then per rank an NCCL all-reduce of one float on stream 0 (the GPUs start together), \
    a CUDA event on stream 0, the call, \
    a CUDA event on stream 0 (cpu backend: host time until the rank's queues are drained)";
pub const FORMULA: &str = "TFLOP/s per GPU = flops each GPU executes / median time: \
    2*M*N*K for ag (every GPU computes all of C = A @ B), 2*M*N*K/D for rs and ar \
    (every GPU multiplies its K/D slice); vs gemm = the GEMM alone's median time / this median time; \
    busbw (collective alone) = bytes * (D-1)/D / time, 2*(D-1)/D for allreduce, with bytes the \
    gathered A (ag) or one rank's C-sized input (rs, ar), as nccl-tests";

fn shape(row: &Row) -> String {
    format!("{}x{}x{}", row.shape.0, row.shape.1, row.shape.2)
}

/// `value` with `digits` decimals, or in scientific notation where that
/// would show no significant digit (the cpu backend's tiny rates).
fn optional(value: Option<f64>, digits: usize) -> String {
    match value {
        None => "-".to_owned(),
        Some(value) if value != 0.0 && value.abs() < 10f64.powi(-(digits as i32)) => {
            format!("{value:.1e}")
        }
        Some(value) => format!("{value:.digits$}"),
    }
}

pub fn table(setup: &Setup, rows: &[Row]) -> String {
    let run = setup.run;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "hir-bench: backend {}, D={} ranks ({}), {}, {} timed iterations after {} warm-up, \
         S={} chunks, {} pool streams, hir-lower num-streams={} ring-chunks={} (0: chosen by \
         host-p2p-pipeline) ring-sync={}, seed {}{}",
        run.backend.name(),
        run.devices,
        run.plan().launch().name(),
        run.dtype.mlir(),
        run.iters,
        run.warmup,
        run.chunks,
        run.num_streams,
        run.lower_streams,
        run.ring_chunks,
        run.ring_sync,
        run.seed,
        match (run.graph, run.backend) {
            (true, Backend::Cuda) => {
                ", each rank's host program as a CUDA graph (checked and timed as replays)"
            }
            (true, Backend::Cpu) => ", --graph: none on the cpu backend (its runs are direct)",
            (false, _) => "",
        }
    );
    let _ = writeln!(text, "{}", setup.provenance.line());
    let _ = writeln!(text, "time: {TIME}");
    let _ = writeln!(text, "{FORMULA}");
    if run.backend == Backend::Cpu {
        let _ = writeln!(
            text,
            "NOTE: cpu backend: these times are NOT meaningful as performance"
        );
    }
    let _ = writeln!(
        text,
        "{:<6} {:<20} {:<10} {:<18} {:>11} {:>11} {:>9} {:>8} {:>9} {:>9}  check",
        "family",
        "MxKxN",
        "variant",
        "program",
        "median_ms",
        "min_ms",
        "TFLOP/s",
        "vs_gemm",
        "busbw",
        "error"
    );
    for row in rows {
        let _ = write!(
            text,
            "{:<6} {:<20} {:<10} {:<18} ",
            row.family.name(),
            shape(row),
            row.variant.name(),
            row.program
        );
        match &row.outcome {
            Outcome::Skipped(why) => {
                let _ = writeln!(text, "skipped: {why}");
            }
            Outcome::Measured(measure) => {
                let error = measure
                    .check
                    .full_error
                    .unwrap_or(0.0)
                    .max(measure.check.sample_error);
                let _ = writeln!(
                    text,
                    "{:>11.3} {:>11.3} {:>9} {:>8} {:>9} {:>9.2e}  {}",
                    measure.median_ms,
                    measure.min_ms,
                    optional(measure.tflops, 2),
                    optional(measure.ratio, 3),
                    optional(measure.busbw, 1),
                    error,
                    if measure.check.ok { "ok" } else { "MISMATCH" }
                );
            }
        }
    }
    text
}

/// A JSON number, or `null` (JSON has no infinities).
fn number(value: Option<f64>) -> Value {
    value.filter(|value| value.is_finite()).into()
}

pub fn json(setup: &Setup, rows: &[Row]) -> String {
    let run = setup.run;
    let results: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut result = json!({
                "family": row.family.name(),
                "m": row.shape.0,
                "k": row.shape.1,
                "n": row.shape.2,
                "variant": row.variant.name(),
                "program": row.program,
                "p2p": row.p2p.to_string(),
            });
            let fields = match &row.outcome {
                Outcome::Skipped(why) => json!({ "skipped": why }),
                Outcome::Measured(measure) => json!({
                    "median_ms": number(Some(measure.median_ms)),
                    "min_ms": number(Some(measure.min_ms)),
                    "tflops_per_gpu": number(measure.tflops),
                    "vs_gemm": number(measure.ratio),
                    "busbw_gbps": number(measure.busbw),
                    "check": {
                        "ok": measure.check.ok,
                        "sample_error": number(Some(measure.check.sample_error)),
                        "samples": measure.check.samples,
                        "full_error": number(measure.check.full_error),
                        "tolerance": number(Some(measure.check.tolerance)),
                    },
                    "times_ms": measure.times.iter().map(|&time| number(Some(time))).collect::<Vec<_>>(),
                }),
            };
            if let (Some(result), Value::Object(fields)) = (result.as_object_mut(), fields) {
                result.extend(fields);
            }
            result
        })
        .collect();
    let document = json!({
        "tool": "hir-bench",
        "provenance": setup.provenance,
        "meaningful": run.backend == Backend::Cuda,
        "launch": run.plan().launch().name(),
        "chunks": run.chunks,
        "ring_chunks": run.ring_chunks,
        "ring_sync": run.ring_sync.to_string(),
        "graph": run.graph,
        "num_streams": run.num_streams,
        "lower_streams": run.lower_streams,
        "iters": run.iters,
        "warmup": run.warmup,
        "seed": run.seed,
        "time": TIME,
        "formula": FORMULA,
        "results": results,
    });
    let mut text = serde_json::to_string_pretty(&document).expect("JSON values serialize");
    text.push('\n');
    text
}

pub fn csv(setup: &Setup, rows: &[Row]) -> String {
    let mut text = format!(
        "{},family,m,k,n,variant,program,p2p,median_ms,min_ms,tflops_per_gpu,vs_gemm,busbw_gbps,sample_error,full_error,check\n",
        Provenance::CSV_HEADER
    );
    let provenance = setup.provenance.csv();
    for row in rows {
        let _ = write!(
            text,
            "{provenance},{},{},{},{},{},{},{},",
            row.family.name(),
            row.shape.0,
            row.shape.1,
            row.shape.2,
            row.variant.name(),
            row.program,
            row.p2p
        );
        match &row.outcome {
            Outcome::Skipped(_) => text.push_str(",,,,,,,skipped\n"),
            Outcome::Measured(measure) => {
                let field =
                    |value: Option<f64>| value.map_or(String::new(), |value| format!("{value}"));
                let _ = writeln!(
                    text,
                    "{},{},{},{},{},{},{},{}",
                    measure.median_ms,
                    measure.min_ms,
                    field(measure.tflops),
                    field(measure.ratio),
                    field(measure.busbw),
                    measure.check.sample_error,
                    field(measure.check.full_error),
                    if measure.check.ok { "ok" } else { "mismatch" }
                );
            }
        }
    }
    text
}
