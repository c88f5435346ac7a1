//! `--variant`: the overlap variant a run uses, chosen by timing each
//! candidate of [`hir::tune::candidates`] on the run's own placed inputs, or
//! read from the choice a run of the same program on the same ranks kept
//! ([`hir::tune::Choices`]). Every rank makes the same choice: rank 0's
//! kept choice, or the fastest by the slowest rank's times, which all ranks
//! gather.

use crate::cli::Options;
use anyhow::{Result, anyhow};
use hir::compile::{Compiled, Report, Source, compile_source};
use hir::passes::{Choice as _, LowerOptions};
use hir::tune::{self, Choices, Free};
use hir_runtime::World;
use hir_tools::buffer::Calls;
use hir_tools::launch::Session;
use hir_tools::launch::timed::{median, slowest_rank_times};

/// Untimed runs of each candidate: the first builds its communicators,
/// CUDA-IPC handles and plans.
const WARMUP: usize = 2;

/// Timed runs of each candidate; the median of the slowest rank's decides.
const ITERS: usize = 5;

/// A candidate must be this much faster (a fraction) than a simpler one to
/// be chosen over it.
const TOLERANCE: f64 = 0.02;

/// The variant the run uses instead of `given` (compiled with the options
/// as given), or none when `given` is the one. The arguments in `calls` are
/// run by every candidate, so the caller puts them back before its own runs.
pub fn choose(
    options: &Options,
    free: Free,
    given: &Compiled,
    session: &Session,
    calls: &Calls,
) -> Result<Option<Compiled>> {
    let source = String::from_utf8_lossy(&hir_tools::program::read(&options.program)?).into_owned();
    let machine = machine(&session.runtime, options);
    let choices = Choices::from_env();
    let key = Choices::key(&source, &given.options, free, &machine);
    let kept = key.as_ref().and_then(|key| choices.load(key));
    // Rank 0's kept choice, if any, is everyone's: the others' caches may
    // not have it yet.
    let mine = kept.as_ref().map_or(String::new(), LowerOptions::render);
    let all = session
        .peers
        .all_ranks("variant", vec![mine.into_bytes()])?;
    let first = String::from_utf8_lossy(&all[0]).into_owned();
    if !first.is_empty() {
        let chosen = LowerOptions::parse(&first).map_err(|error| anyhow!("{error}"))?;
        report(session, &chosen, "kept from an earlier run");
        if chosen == given.options {
            return Ok(None);
        }
        return compile_quietly(options, &chosen).map(Some);
    }
    let candidates = tune::candidates(&given.options, free);
    let mut times = Vec::with_capacity(candidates.len());
    // The given options' program is `given`: none here.
    let mut programs: Vec<Option<Compiled>> = Vec::with_capacity(candidates.len());
    for candidate in &candidates {
        let program = if candidate == &given.options {
            None
        } else {
            Some(compile_quietly(options, candidate)?)
        };
        let entry = program.as_ref().unwrap_or(given).entry;
        // SAFETY: each rank passes its own buffers, laid out as the entry's
        // descriptors; every candidate has the same signature.
        let call = |rank| {
            unsafe { entry.call(calls.arguments(rank)) };
        };
        let mut slowest =
            slowest_rank_times(&session.runtime, &session.peers, WARMUP, ITERS, call)?;
        let time = median(&mut slowest);
        tracing::debug!(variant = %name(candidate), ms = %format!("{time:.3}"), "timed a variant");
        times.push(time);
        programs.push(program);
    }
    let index = tune::fastest(&times, TOLERANCE)
        .ok_or_else(|| anyhow!("no variant of the program ran in a finite time"))?;
    let chosen = &candidates[index];
    if let Some(key) = &key {
        choices.store(key, chosen);
    }
    let timed: Vec<String> = candidates
        .iter()
        .zip(&times)
        .map(|(candidate, time)| format!("{} {time:.3} ms", name(candidate)))
        .collect();
    report(session, chosen, &format!("timed: {}", timed.join(", ")));
    Ok(programs.swap_remove(index))
}

/// What a kept choice depends on beyond the program and its options: the
/// backend, the ranks and streams, and the GPUs.
fn machine(runtime: &World, options: &Options) -> String {
    let gpu = match runtime.backend() {
        hir_runtime::Backend::Cuda => hir_runtime::cuda::versions()
            .map(|versions| versions.gpu)
            .unwrap_or_default(),
        hir_runtime::Backend::Cpu => String::new(),
    };
    format!(
        "{} ranks={} streams={} {gpu}",
        options.backend.name(),
        options.ranks,
        options.num_streams
    )
}

/// A candidate compiled: its diagnostics were printed when the options as
/// given compiled it; the cache makes a second time cheap.
fn compile_quietly(options: &Options, candidate: &LowerOptions) -> Result<Compiled> {
    compile_source(Source::File(&options.program), candidate, Report::default())
        .map_err(|error| anyhow!("the variant {}: {error:#}", name(candidate)))
}

/// A variant's name: the options it varies.
fn name(options: &LowerOptions) -> String {
    format!(
        "overlap={} p2p={}",
        options.overlap.name(),
        options.p2p.name()
    )
}

/// Says which variant runs and why, on rank 0 (and in the debug log).
fn report(session: &Session, chosen: &LowerOptions, why: &str) {
    tracing::debug!(variant = %name(chosen), why, "chose the variant");
    if session.peers.reports() {
        println!("variant: {} ({why})", name(chosen));
    }
}
