//! Where a tool's ranks run: all of them as threads of this process, or
//! (ranks in processes, see [`super::launcher`]) the one rank of this
//! process (on its GPU, or a cpu rank whose collectives go through the
//! store), watched by its watchdog. There the ranks bring what
//! rank 0 reports on to it (or to every rank) through the store: [`Peers`].

use super::{Plan, rank};
use crate::buffer::{Buffer, RankCall};
use crate::ranks;
use anyhow::{Context as _, Result, anyhow};
use hir_runtime::World;
use hir_runtime::bootstrap::ProcessGroup;
use hir_runtime::world::Config;
use std::path::Path;
use std::sync::Arc;

/// The largest response of one exchange of [`Peers::all_ranks_in_pieces`],
/// every rank's piece together: well below what the store takes in one
/// message (1 GiB, `store::MAX_FRAME`).
const PIECES: usize = 256 << 20;

pub struct Session {
    pub runtime: World,
    pub peers: Peers,
}

impl Session {
    /// The runtime of the ranks this process runs: all of `plan.ranks`, or
    /// its one rank of a multi-process run (a cuda world spanning the
    /// processes, under the rank's watchdog).
    pub fn start(plan: &Plan, num_streams: usize, trace: bool) -> Result<Session> {
        let peers = Peers::here();
        let Some(group) = &peers.group else {
            let runtime = ranks::start(
                plan.backend,
                plan.ranks,
                num_streams,
                trace,
                plan.timeout,
                plan.checks,
            )?;
            return Ok(Session { runtime, peers });
        };
        let config = Config {
            trace,
            timeout: plan.timeout,
            checks: plan.checks,
            ..Config::new(plan.backend, group.world_size(), num_streams)
        };
        let runtime = World::process(&config, group.rank(), group.local_rank(), group.store())
            .map_err(|error| anyhow!("cannot start the runtime: {error}"))?;
        if let World::Cuda(world) = &runtime {
            rank::watch(world.watched().remove(0));
        }
        Ok(Session { runtime, peers })
    }

    /// Gives every rank's buffers (as they are after the run) to rank 0,
    /// which holds only its own otherwise: the other ranks' buffers, empty
    /// here, are made of the bytes they bring (of the same type and shape as
    /// this rank's).
    pub fn share_results(&self, ranks: &mut [RankCall]) -> Result<()> {
        let Some(group) = &self.peers.group else {
            return Ok(());
        };
        let rank = group.rank();
        for index in 0..ranks[rank].buffers.len() {
            let buffer = &ranks[rank].buffers[index];
            let (dtype, shape, mine) =
                (buffer.dtype, buffer.shape.clone(), buffer.bytes().to_vec());
            let all = group
                .all_gather(&format!("result/{index}"), mine)
                .map_err(|error| anyhow!("sharing argument #{index}: {error}"))?;
            for (call, bytes) in ranks.iter_mut().zip(all) {
                match call.buffers.get_mut(index) {
                    Some(buffer) => buffer.bytes_mut().copy_from_slice(&bytes),
                    None => {
                        call.buffers
                            .push(Buffer::try_from_bytes(dtype, shape.clone(), &bytes)?)
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes the trace of every rank to `path` (rank 0 gathers them; each
    /// process's times count from its own start).
    pub fn write_trace(&self, path: &Path) -> Result<()> {
        let written = || format!("cannot write the trace {}", path.display());
        let Some(group) = &self.peers.group else {
            return self.runtime.write_chrome_trace(path).with_context(written);
        };
        let events = self.runtime.chrome_events().with_context(written)?;
        let all = group
            .all_gather("trace", events.join("\n").into_bytes())
            .map_err(|error| anyhow!("gathering the trace: {error}"))?;
        if group.rank() != 0 {
            return Ok(());
        }
        std::fs::write(path, merged_trace(&all)?).with_context(written)
    }
}

/// One Chrome trace file of the ranks' events (each rank's, one JSON object
/// a line), as serde_json writes it: an event that is not JSON is an error,
/// not a file that no viewer opens.
fn merged_trace(ranks: &[Vec<u8>]) -> Result<String> {
    let mut events = Vec::new();
    for (rank, bytes) in ranks.iter().enumerate() {
        for line in String::from_utf8_lossy(bytes).lines() {
            let event: serde_json::Value = serde_json::from_str(line)
                .with_context(|| format!("rank {rank}'s trace event is not JSON: {line}"))?;
            events.push(event);
        }
    }
    let trace = serde_json::json!({"traceEvents": events, "displayTimeUnit": "ms"});
    Ok(format!("{trace}\n"))
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.peers.group.is_some() {
            // The watchdog lets go of the world, which then drops with the session.
            rank::unwatch();
        }
    }
}

/// The ranks of the other processes, as this one reaches them: none when
/// the ranks are threads of this process, else through the store. Every
/// exchange is collective: each rank makes the same ones in the same order.
pub struct Peers {
    group: Option<Arc<ProcessGroup>>,
}

impl Peers {
    /// This process's peers: those of its rank when it runs one rank of a
    /// multi-process run, else none.
    pub fn here() -> Peers {
        Peers {
            group: rank::group(),
        }
    }

    /// The ranks that run here, of `ranks`.
    pub fn local_ranks(&self, ranks: usize) -> Vec<usize> {
        match &self.group {
            Some(group) => vec![group.rank()],
            None => (0..ranks).collect(),
        }
    }

    /// Whether this process prints results and writes files.
    pub fn reports(&self) -> bool {
        self.group.as_ref().is_none_or(|group| group.rank() == 0)
    }

    /// Waits for every rank to get here.
    pub fn barrier(&self, name: &str) -> Result<()> {
        match &self.group {
            Some(group) => group
                .barrier(name)
                .map_err(|error| anyhow!("barrier {name}: {error}")),
            None => Ok(()),
        }
    }

    /// Every rank's bytes in rank order, given those of the ranks that run
    /// here (in [`Peers::local_ranks`] order). Each rank's must be well
    /// below 1 GiB / ranks (see [`Peers::all_ranks_in_pieces`]).
    pub fn all_ranks(&self, name: &str, mut mine: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        let Some(group) = &self.group else {
            return Ok(mine);
        };
        group
            .all_gather(name, mine.remove(0))
            .map_err(|error| anyhow!("gathering {name}: {error}"))
    }

    /// As [`Peers::all_ranks`] for bytes of the same length on every rank,
    /// however large: `visit(offset, pieces)` sees every rank's bytes from
    /// `offset`, in pieces whose length is a multiple of `align`, in order.
    pub fn all_ranks_in_pieces(
        &self,
        name: &str,
        mine: &[&[u8]],
        align: usize,
        visit: impl FnMut(usize, &[&[u8]]),
    ) -> Result<()> {
        let world = self.group.as_ref().map_or(1, |group| group.world_size());
        let piece = (PIECES / world / align * align).max(align);
        self.in_pieces(name, mine, piece, visit)
    }

    fn in_pieces(
        &self,
        name: &str,
        mine: &[&[u8]],
        piece: usize,
        mut visit: impl FnMut(usize, &[&[u8]]),
    ) -> Result<()> {
        let Some(group) = &self.group else {
            visit(0, mine);
            return Ok(());
        };
        let bytes = mine[0];
        let mut offset = 0;
        while offset < bytes.len() {
            let end = (offset + piece).min(bytes.len());
            let all = group
                .all_gather(name, bytes[offset..end].to_vec())
                .map_err(|error| anyhow!("gathering {name}: {error}"))?;
            if let Some((rank, other)) = all
                .iter()
                .enumerate()
                .find(|(_, other)| other.len() != end - offset)
            {
                anyhow::bail!(
                    "gathering {name}: rank {rank} brought {} bytes at offset {offset}, not {}",
                    other.len(),
                    end - offset
                );
            }
            let pieces: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
            visit(offset, &pieces);
            offset = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hir_runtime::bootstrap::{Env, Secret, StoreServer};
    use std::time::Duration;

    /// Runs `body(peers)` on ranks 0..world, each a thread with its own
    /// connection to a store, as ranks in processes would.
    fn ranks<T: Send>(world: usize, body: impl Fn(Peers) -> T + Sync) -> Vec<T> {
        let secret = Secret::generate().unwrap();
        let server = StoreServer::bind("127.0.0.1:0", secret.clone(), world).unwrap();
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..world)
                .map(|rank| {
                    let (body, port, secret) = (&body, server.port(), secret.clone());
                    scope.spawn(move || {
                        let env = Env {
                            rank,
                            world_size: world,
                            local_rank: rank,
                            master_addr: "127.0.0.1".into(),
                            store_port: port,
                            agent_store: true,
                            secret,
                        };
                        let group = ProcessGroup::join(env, Duration::from_secs(20)).unwrap();
                        let peers = Peers {
                            group: Some(Arc::new(group)),
                        };
                        body(peers)
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().unwrap())
                .collect()
        })
    }

    #[test]
    fn merged_trace_is_json_of_every_rank() {
        let ranks = vec![
            br#"{"ph":"M","name":"process_name","pid":0,"args":{"name":"rank 0"}}"#.to_vec(),
            b"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":1.5,\"dur\":2}\n{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":0,\"ts\":4,\"dur\":1}".to_vec(),
        ];
        let text = merged_trace(&ranks).unwrap();
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(trace["displayTimeUnit"], "ms");
        let events = trace["traceEvents"].as_array().unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[2]["name"], "b");
        assert!(text.starts_with(r#"{"traceEvents":["#));
        let error = merged_trace(&[b"{not json".to_vec()]).unwrap_err();
        assert!(format!("{error:#}").contains("rank 0's trace event is not JSON"));
    }

    #[test]
    fn ranks_in_processes_bring_their_bytes_to_each_other() {
        let seen = ranks(3, |peers| {
            assert_eq!(peers.reports(), peers.local_ranks(3) == [0]);
            peers.barrier("start").unwrap();
            let rank = peers.local_ranks(3)[0] as u8;
            let all = peers.all_ranks("one", vec![vec![rank; 2]]).unwrap();
            // 10 bytes in pieces of 4: offsets 0, 4, 8.
            let mine: Vec<u8> = (0..10).map(|index| 10 * rank + index).collect();
            let mut pieces = Vec::new();
            peers
                .in_pieces("big", &[&mine], 4, |offset, all| {
                    pieces.push((offset, all.iter().map(|piece| piece.to_vec()).collect()))
                })
                .unwrap();
            (all, pieces)
        });
        for (all, pieces) in seen {
            assert_eq!(all, vec![vec![0, 0], vec![1, 1], vec![2, 2]]);
            let offsets: Vec<usize> = pieces.iter().map(|(offset, _)| *offset).collect();
            assert_eq!(offsets, [0, 4, 8]);
            let (_, last): &(usize, Vec<Vec<u8>>) = &pieces[2];
            assert_eq!(last, &vec![vec![8, 9], vec![18, 19], vec![28, 29]]);
        }
    }

    #[test]
    fn threads_have_every_rank_here() {
        let peers = Peers { group: None };
        assert_eq!(peers.local_ranks(3), [0, 1, 2]);
        assert!(peers.reports());
        let mine = vec![vec![1], vec![2]];
        assert_eq!(peers.all_ranks("x", mine.clone()).unwrap(), mine);
        let mut visited = 0;
        peers
            .all_ranks_in_pieces("x", &[&[1, 2], &[3, 4]], 2, |offset, pieces| {
                assert_eq!((offset, pieces.len()), (0, 2));
                visited += 1;
            })
            .unwrap();
        assert_eq!(visited, 1);
    }
}
