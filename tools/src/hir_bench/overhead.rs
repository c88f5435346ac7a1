//! `hir-bench overhead`: what the host costs per iteration of a
//! stream-parallel loop when the GPU work is small. The program is
//! `out[i] = a[i] + b[i]` over S slices of a `[S, E]` tensor, each slice on
//! the next of the pool streams; each pool stream is forked from the
//! caller's stream once before the loop and joined back once after it. Each
//! S runs directly (every kernel launch, event record and stream wait is a
//! driver call) and as one CUDA graph
//! (one launch per call), on one rank. A call's wall time is from the host's
//! first call until its work is done; per iteration is that over S, per
//! launched op that over the host program's ops that enqueue stream work.
//! Both runs' outputs are compared with `a + b` computed here, bit for bit
//! (one f32 addition each).

use crate::cli::Overhead;
use crate::data;
use crate::provenance::Provenance;
use anyhow::{Context as _, Result, bail};
use hir::dialects::OpKind;
use hir::passes::{LowerOptions, ir};
use hir_abi::DType;
use hir_runtime::world::Graphs;
use hir_runtime::{Backend, Checks, World};
use hir_tools::buffer::{Buffer, Calls, RankCall};
use hir_tools::program;
use hir_tools::ranks::{self, Ranks as _};
use hir_tools::tensor::Rng;
use melior::ir::operation::{OperationLike, OperationResult};
use melior::ir::{BlockLike, OperationRef, RegionLike, Value};
use serde::Serialize;
use std::time::Instant;

/// One S, both ways.
#[derive(Serialize)]
struct Row {
    slices: usize,
    /// Ops per call that enqueue stream work.
    launched_ops: u64,
    direct: Timing,
    graph: Option<Timing>,
}

/// Median wall times of the timed calls, in µs, and the fastest call's
/// per iteration: on a machine whose speed drifts between calls, the
/// host's floor is steadier than the median.
#[derive(Serialize)]
struct Timing {
    per_call_us: f64,
    per_iteration_us: f64,
    per_launched_op_us: f64,
    best_per_iteration_us: f64,
}

impl Timing {
    fn of(mut calls_us: Vec<f64>, slices: usize, launched_ops: u64) -> Timing {
        let per_call_us = hir_tools::launch::timed::median(&mut calls_us);
        // `median` sorted the calls.
        let best_us = calls_us.first().copied().unwrap_or(f64::NAN);
        Timing {
            per_call_us,
            per_iteration_us: per_call_us / slices as f64,
            per_launched_op_us: per_call_us / launched_ops as f64,
            best_per_iteration_us: best_us / slices as f64,
        }
    }
}

/// The benchmark's program at `slices` slices of `elements` floats.
pub fn program(slices: usize, elements: usize) -> String {
    let serial = format!("tensor<{slices}x{elements}xf32, #fusion.dist<@dev, [serial, serial]>>");
    let stream = format!("tensor<{slices}x{elements}xf32, #fusion.dist<@dev, [stream, serial]>>");
    format!(
        "// hir-bench overhead: out[i] = a[i] + b[i] over {slices} stream slices.\n\
         fusion.mesh @dev = [0]\n\
         func.func @overhead(%a: {serial}, %b: {serial}) -> {stream} {{\n  \
         %out = fusion.add %a, %b : {serial}, {serial} -> {stream}\n  \
         return %out : {stream}\n}}\n"
    )
}

/// How many ops one call of the lowered host program `op` runs that enqueue
/// work on a stream (compute, communication, stream syncs), each counted
/// once per iteration of the constant-bound loops around it.
fn launched_ops(op: OperationRef, trips: u64) -> Result<u64> {
    let name = ir::name(&op);
    let enqueues =
        OpKind::of(&op) != OpKind::None || name == "host.sync_stream" || name.starts_with("comm.");
    let inner = if name == "scf.for" {
        trips * trip_count(&op).context("an scf.for of the benchmark has non-constant bounds")?
    } else {
        trips
    };
    let mut count = if enqueues { trips } else { 0 };
    for region in 0..op.region_count() {
        let region = op.region(region)?;
        let mut block = region.first_block();
        while let Some(current) = block {
            let mut next = current.first_operation();
            while let Some(child) = next {
                count += launched_ops(child, inner)?;
                next = child.next_in_block();
            }
            block = current.next_in_region();
        }
    }
    Ok(count)
}

/// The trip count of an `scf.for` whose bounds and step are constants, or
/// index arithmetic of constants (host-lower-stream-for bounds its fork and
/// join loops by `min(upper, lower + streams * step)`).
fn trip_count(op: &OperationRef) -> Option<u64> {
    let operand = |index: usize| ir::operand(op, index).and_then(constant);
    let (lower, upper, step) = (operand(0)?, operand(1)?, operand(2)?);
    (step > 0).then(|| ((upper - lower).max(0) as u64).div_ceil(step as u64))
}

/// The value of `value` where it is an `arith.constant` ([`ir::constant`]),
/// or the sum, product or signed minimum of such values.
fn constant(value: Value) -> Option<i64> {
    if let Some(value) = ir::constant(value) {
        return Some(value);
    }
    let defining = OperationResult::try_from(value).ok()?.owner();
    let operand = |index| ir::operand(&defining, index).and_then(constant);
    let (a, b) = (operand(0)?, operand(1)?);
    match ir::name(&defining).as_str() {
        "arith.addi" => a.checked_add(b),
        "arith.muli" => a.checked_mul(b),
        "arith.minsi" => Some(a.min(b)),
        _ => None,
    }
}

/// Random f32 values `[-1, 1)` as bytes.
/// `len` random f32 in [-1, 1), as bytes; memory that cannot be had is an
/// error.
fn random_bytes(rng: &mut Rng, len: usize) -> Result<Vec<u8>> {
    let mut bytes = data::nans(DType::F32, len)?;
    for value in bytes.chunks_exact_mut(4) {
        value.copy_from_slice(&((rng.unit() * 2.0 - 1.0) as f32).to_le_bytes());
    }
    Ok(bytes)
}

pub fn run(options: &Overhead) -> Result<()> {
    let runtime = ranks::start(
        options.backend,
        1,
        options.num_streams,
        false,
        options.timeout,
        Checks::default(),
    )?;
    let provenance = Provenance::new(options.backend, 1, "f32");
    println!("{}", provenance.line());
    println!(
        "hir-bench overhead: out[i] = a[i] + b[i], {} f32 per slice, {} pool streams, {} backend, {} timed calls (median; best: the fastest)",
        options.elements,
        options.num_streams,
        options.backend.name(),
        options.iters
    );
    println!(
        "| S | ops/call | direct µs/iter | direct µs/op | direct best µs/iter | graph µs/iter | graph µs/op |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for &slices in &options.slices {
        let row = bench(options, &runtime, slices)?;
        let graph = |pick: fn(&Timing) -> f64| {
            row.graph.as_ref().map_or("n/a (cpu)".to_owned(), |timing| {
                format!("{:.3}", pick(timing))
            })
        };
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {} | {} |",
            slices,
            row.launched_ops,
            row.direct.per_iteration_us,
            row.direct.per_launched_op_us,
            row.direct.best_per_iteration_us,
            graph(|timing| timing.per_iteration_us),
            graph(|timing| timing.per_launched_op_us),
        );
        rows.push(row);
    }
    if let Some(path) = &options.json {
        let json = serde_json::json!({
            "benchmark": "overhead",
            "provenance": provenance,
            "elements": options.elements,
            "num_streams": options.num_streams,
            "iters": options.iters,
            "rows": rows,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn bench(options: &Overhead, runtime: &World, slices: usize) -> Result<Row> {
    let context = hir_tools::context();
    let mut module =
        program::parse_source(&context, &program(slices, options.elements), "overhead")?;
    let function = program::entry(&module)?;
    let signature = program::signature(&module, &function)?;
    program::lower_to_host(
        &context,
        &mut module,
        &signature,
        &LowerOptions {
            num_streams: options.num_streams,
            ..LowerOptions::default()
        },
        false,
    )?;
    let launched_ops = launched_ops(module.as_operation(), 1)?;
    program::lower_to_llvm(&context, &mut module, false)?;
    let engine = hir_tools::jit::Engine::new(&module, &hir_runtime::symbols())?;
    let packed = engine.lookup("_mlir_ciface_overhead")?;

    let len = slices
        .checked_mul(options.elements)
        .context("--elements times the slices overflows 64-bit sizes")?;
    let mut rng = Rng::new(options.seed);
    let (a, b) = (random_bytes(&mut rng, len)?, random_bytes(&mut rng, len)?);
    let nans = data::nans(DType::F32, len)?;
    let shape = vec![slices, options.elements];
    let mut call = RankCall::new(vec![
        Buffer::try_from_bytes(DType::F32, shape.clone(), &a)?,
        Buffer::try_from_bytes(DType::F32, shape.clone(), &b)?,
        Buffer::try_from_bytes(DType::F32, shape, &nans)?,
    ]);
    for buffer in &mut call.buffers {
        runtime.place(0, buffer)?;
    }
    call.pack();
    let calls = Calls::new(std::slice::from_ref(&call));
    // SAFETY: rank 0's buffers, laid out as the entry's descriptors.
    let direct = |_rank| {
        unsafe { packed.call(calls.arguments(0)) };
    };
    let graphs = Graphs::new(1);
    let graphed = runtime.graphed_ranks(&graphs, direct);

    runtime.run_ranks(direct)?;
    check(runtime, &mut call, &a, &b, "direct")?;
    let direct_us = time(runtime, options.iters, &direct)?;
    let graph = if options.backend == Backend::Cuda {
        runtime.upload(0, &mut call.buffers[2], &nans)?;
        runtime.run_ranks(&graphed)?;
        check(runtime, &mut call, &a, &b, "graph")?;
        Some(Timing::of(
            time(runtime, options.iters, &graphed)?,
            slices,
            launched_ops,
        ))
    } else {
        None
    };
    Ok(Row {
        slices,
        launched_ops,
        direct: Timing::of(direct_us, slices, launched_ops),
        graph,
    })
}

/// Wall times in µs of `iters` calls after as many untimed ones.
fn time(runtime: &World, iters: usize, body: &(impl Fn(usize) + Sync)) -> Result<Vec<f64>> {
    for _ in 0..iters {
        runtime.run_ranks(body)?;
    }
    (0..iters)
        .map(|_| {
            let start = Instant::now();
            runtime.run_ranks(body)?;
            Ok(start.elapsed().as_secs_f64() * 1e6)
        })
        .collect()
}

/// The output must be `a + b` in f32, bit for bit.
fn check(runtime: &World, call: &mut RankCall, a: &[u8], b: &[u8], how: &str) -> Result<()> {
    runtime.fetch(0, &mut call.buffers[2])?;
    let floats = |bytes: &[u8]| data::load_all(DType::F32, bytes);
    let (a, b, out) = (floats(a)?, floats(b)?, floats(call.buffers[2].bytes())?);
    let wrong = (0..out.len())
        .filter(|&i| (a[i] + b[i]).to_bits() != out[i].to_bits())
        .count();
    if wrong > 0 {
        bail!(
            "the {how} run's output differs from a + b at {wrong} of {} entries",
            out.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_ops_that_enqueue_work_per_iteration() {
        let context = hir_tools::context();
        let text = program(8, 16);
        let mut module = program::parse_source(&context, &text, "overhead").unwrap();
        let function = program::entry(&module).unwrap();
        let signature = program::signature(&module, &function).unwrap();
        program::lower_to_host(
            &context,
            &mut module,
            &signature,
            &LowerOptions {
                num_streams: 4,
                ..LowerOptions::default()
            },
            false,
        )
        .unwrap();
        // Per slice the add; per pool stream used, the fork's sync and the
        // join's, once each (host-lower-stream-for bounds both loops).
        assert_eq!(launched_ops(module.as_operation(), 1).unwrap(), 8 + 2 * 4);
    }
}
