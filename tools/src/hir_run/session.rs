//! Where hir-run's ranks run: all of them as threads of this process, or
//! (ranks in processes, see `launch.rs`) the one rank of this process, on
//! its GPU, watched by its watchdog. There rank 0 reports for all: the other
//! ranks share their results and their trace with it through the store.

use crate::cli::Options;
use crate::rendezvous;
use anyhow::{Context as _, Result, anyhow};
use hir_runtime::bootstrap::ProcessGroup;
use hir_runtime::{cuda, trace};
use hir_tools::backend::Runtime;
use hir_tools::buffer::RankCall;
use std::path::Path;
use std::sync::Arc;

pub struct Session {
    pub runtime: Runtime,
    process: Option<Process>,
}

/// This process's rank of a multi-process run.
struct Process {
    group: Arc<ProcessGroup>,
}

impl Session {
    pub fn start(options: &Options) -> Result<Session> {
        let trace = options.trace.is_some();
        let Some(group) = rendezvous::group() else {
            let runtime =
                Runtime::start(options.backend, options.ranks, options.num_streams, trace)?;
            return Ok(Session {
                runtime,
                process: None,
            });
        };
        let world = group
            .cuda_world(cuda::Config {
                trace,
                timeout: options.timeout,
                ..cuda::Config::new(group.world_size(), options.num_streams)
            })
            .map_err(|error| anyhow!("cannot start the runtime: {error}"))?;
        rendezvous::watch(world.watched().remove(0));
        Ok(Session {
            runtime: Runtime::Cuda(world),
            process: Some(Process { group }),
        })
    }

    /// The ranks that run here, of `ranks`.
    pub fn local_ranks(&self, ranks: usize) -> Vec<usize> {
        match &self.process {
            Some(process) => vec![process.group.rank()],
            None => (0..ranks).collect(),
        }
    }

    /// Whether this process prints results and writes files.
    pub fn reports(&self) -> bool {
        self.process
            .as_ref()
            .is_none_or(|process| process.group.rank() == 0)
    }

    /// Gives every rank's buffers (as they are after the run) to rank 0,
    /// which holds only its own otherwise.
    pub fn share_results(&self, ranks: &mut [RankCall]) -> Result<()> {
        let Some(process) = &self.process else {
            return Ok(());
        };
        let (group, rank) = (&process.group, process.group.rank());
        for index in 0..ranks[rank].buffers.len() {
            let mine = ranks[rank].buffers[index].bytes().to_vec();
            let all = group
                .all_gather(&format!("result/{index}"), mine)
                .map_err(|error| anyhow!("sharing argument #{index}: {error}"))?;
            for (call, bytes) in ranks.iter_mut().zip(all) {
                call.buffers[index].bytes_mut().copy_from_slice(&bytes);
            }
        }
        Ok(())
    }

    /// Writes the trace of every rank to `path` (rank 0 gathers them; each
    /// process's times count from its own start).
    pub fn write_trace(&self, path: &Path) -> Result<()> {
        let written = || format!("cannot write the trace {}", path.display());
        let Some(process) = &self.process else {
            return self.runtime.write_chrome_trace(path).with_context(written);
        };
        let Runtime::Cuda(world) = &self.runtime else {
            unreachable!("ranks in processes run the cuda backend");
        };
        let rank = process.group.rank();
        let events = world.chrome_events().with_context(written)?;
        let all = process
            .group
            .all_gather("trace", events.join("\n").into_bytes())
            .map_err(|error| anyhow!("gathering the trace: {error}"))?;
        if rank != 0 {
            return Ok(());
        }
        let events: Vec<String> = all
            .iter()
            .flat_map(|bytes| {
                String::from_utf8_lossy(bytes)
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        std::fs::write(path, trace::chrome_json(&events)).with_context(written)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.process.is_some() {
            // The watchdog lets go of the world, which then drops with the session.
            rendezvous::unwatch();
        }
    }
}
