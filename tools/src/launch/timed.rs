//! Timing a call on every rank, the same for `hir-run` and `hir-bench`:
//! each iteration starts once every rank is there (the ranks of a process
//! meet in [`World::run_timed`], the processes at a barrier before it), and
//! an iteration takes as long as its slowest rank.

use super::{Peers, combine};
use crate::ranks::Ranks as _;
use anyhow::Result;
use hir_runtime::World;
use std::time::Instant;

/// Per timed iteration, the slowest rank's time (ms) of `call` run on every
/// rank, after `warmup` untimed iterations. Collective: every process of
/// the run makes it with the same counts.
pub fn slowest_rank_times(
    runtime: &World,
    peers: &Peers,
    warmup: usize,
    iters: usize,
    call: impl Fn(usize) + Sync,
) -> Result<Vec<f64>> {
    slowest_rank_and_host_times(runtime, peers, warmup, iters, call).map(|(slowest, _)| slowest)
}

/// [`slowest_rank_times`], and this process's host time (ms) of each timed
/// iteration: from the call's start to the end of the synchronization that
/// ends it, its launch overhead included.
pub fn slowest_rank_and_host_times(
    runtime: &World,
    peers: &Peers,
    warmup: usize,
    iters: usize,
    call: impl Fn(usize) + Sync,
) -> Result<(Vec<f64>, Vec<f64>)> {
    for _ in 0..warmup {
        peers.barrier("iteration")?;
        runtime.time_ranks(&call)?;
    }
    let local = runtime.local_ranks().len();
    let mut by_rank = vec![Vec::with_capacity(iters); local];
    let mut host = Vec::with_capacity(iters);
    for _ in 0..iters {
        peers.barrier("iteration")?;
        let start = Instant::now();
        let times = runtime.time_ranks(&call)?;
        host.push(start.elapsed().as_secs_f64() * 1e3);
        for (times, time) in by_rank.iter_mut().zip(times) {
            times.push(time);
        }
    }
    let all = peers.all_ranks(
        "times",
        by_rank
            .iter()
            .map(|times| combine::to_bytes(times))
            .collect(),
    )?;
    let by_rank = all
        .iter()
        .enumerate()
        .map(|(rank, bytes)| combine::from_bytes(bytes, &format!("rank {rank}'s times")))
        .collect::<Result<Vec<_>>>()?;
    Ok((combine::slowest(&by_rank)?, host))
}

/// The median of `times` (sorted in place).
pub fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    let len = times.len();
    if len % 2 == 1 {
        times[len / 2]
    } else {
        (times[len / 2 - 1] + times[len / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
