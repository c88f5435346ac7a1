//! The results as a table (stdout), JSON and CSV.

use crate::bench::{Outcome, Row, Setup};
use hir_tools::backend::Backend;
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
         host-p2p-pipeline), seed {}",
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
        run.seed
    );
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

/// A JSON string literal.
fn string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON number, or `null` (JSON has no infinities).
fn number(value: Option<f64>) -> String {
    match value {
        Some(value) if value.is_finite() => format!("{value}"),
        _ => "null".to_owned(),
    }
}

pub fn json(setup: &Setup, rows: &[Row]) -> String {
    let run = setup.run;
    let mut text = String::from("{\n");
    let _ = writeln!(text, "  \"tool\": \"hir-bench\",");
    let _ = writeln!(text, "  \"backend\": {},", string(run.backend.name()));
    let _ = writeln!(text, "  \"meaningful\": {},", run.backend == Backend::Cuda);
    let _ = writeln!(text, "  \"devices\": {},", run.devices);
    let _ = writeln!(
        text,
        "  \"launch\": {},",
        string(run.plan().launch().name())
    );
    let _ = writeln!(text, "  \"dtype\": {},", string(run.dtype.mlir()));
    let _ = writeln!(text, "  \"chunks\": {},", run.chunks);
    let _ = writeln!(text, "  \"ring_chunks\": {},", run.ring_chunks);
    let _ = writeln!(text, "  \"num_streams\": {},", run.num_streams);
    let _ = writeln!(text, "  \"lower_streams\": {},", run.lower_streams);
    let _ = writeln!(text, "  \"iters\": {},", run.iters);
    let _ = writeln!(text, "  \"warmup\": {},", run.warmup);
    let _ = writeln!(text, "  \"seed\": {},", run.seed);
    let _ = writeln!(text, "  \"time\": {},", string(TIME));
    let _ = writeln!(text, "  \"formula\": {},", string(FORMULA));
    text.push_str("  \"results\": [");
    for (index, row) in rows.iter().enumerate() {
        text.push_str(if index == 0 { "\n" } else { ",\n" });
        let _ = write!(
            text,
            "    {{\"family\": {}, \"m\": {}, \"k\": {}, \"n\": {}, \"variant\": {}, \"program\": {}, \"p2p\": {}",
            string(row.family.name()),
            row.shape.0,
            row.shape.1,
            row.shape.2,
            string(row.variant.name()),
            string(row.program),
            string(row.p2p)
        );
        match &row.outcome {
            Outcome::Skipped(why) => {
                let _ = write!(text, ", \"skipped\": {}}}", string(why));
            }
            Outcome::Measured(measure) => {
                let _ = write!(
                    text,
                    ", \"median_ms\": {}, \"min_ms\": {}, \"tflops_per_gpu\": {}, \"vs_gemm\": {}, \
                     \"busbw_gbps\": {}, \"check\": {{\"ok\": {}, \"sample_error\": {}, \"samples\": {}, \
                     \"full_error\": {}, \"tolerance\": {}}}, \"times_ms\": [{}]}}",
                    number(Some(measure.median_ms)),
                    number(Some(measure.min_ms)),
                    number(measure.tflops),
                    number(measure.ratio),
                    number(measure.busbw),
                    measure.check.ok,
                    number(Some(measure.check.sample_error)),
                    measure.check.samples,
                    number(measure.check.full_error),
                    number(Some(measure.check.tolerance)),
                    measure
                        .times
                        .iter()
                        .map(|&time| number(Some(time)))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    text.push_str("\n  ]\n}\n");
    text
}

pub fn csv(rows: &[Row]) -> String {
    let mut text = String::from(
        "family,m,k,n,variant,program,p2p,median_ms,min_ms,tflops_per_gpu,vs_gemm,busbw_gbps,sample_error,full_error,check\n",
    );
    for row in rows {
        let _ = write!(
            text,
            "{},{},{},{},{},{},{},",
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
