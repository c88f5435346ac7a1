//! How the ranks of a cpu world reach each other: as threads of one
//! process, through shared memory (`comm.rs`: hubs and a mailbox), or, one
//! rank per process, through the job's key-value store
//! ([`KeyValueStore`]: HIR's own, or a `torch.distributed` store).
//!
//! Between processes every byte goes through the store: a collective is an
//! all-gather of each member's op and input (each then computes its own
//! result with `comm.rs`'s code, so both ways give the same bits), a send
//! is a key the receiver reads and deletes, a barrier an empty all-gather.
//! That is slow (two store round trips per collective, the data copied
//! through the store's process) but exact: it is for tests, CI and jobs
//! whose ranks only need the cpu backend's reference results.

use super::comm::{self, Contribution, Mailbox, Post, Region, describe, describe_slot, matching};
use super::elements::{copy, with_capacity};
use crate::core::bootstrap::Bootstrap;
use crate::core::store::{KeyValueStore, StoreBootstrap};
use crate::core::sync::{Hub, Waiter};
use crate::error::{Error, Result};
use crate::memref::View;
use crate::ops::{CollectiveOp, Team};
use hir_abi::{Collective, DType};
use std::sync::Arc;
use std::time::Duration;

pub(crate) enum Links {
    /// Every rank is a thread of this process.
    Threads(Threads),
    /// This process holds one rank; the others are reached through a store.
    Processes(Processes),
}

#[derive(Default)]
pub(crate) struct Threads {
    collectives: Hub<Contribution>,
    /// The second meeting of a collective, after every rank has read.
    done: Hub<()>,
    barriers: Hub<()>,
    shares: Hub<Region>,
    mailbox: Mailbox,
}

pub(crate) struct Processes {
    store: Arc<dyn KeyValueStore>,
    collectives: StoreBootstrap,
    barriers: StoreBootstrap,
    shares: StoreBootstrap,
    timeout: Duration,
}

impl Links {
    pub fn threads() -> Links {
        Links::Threads(Threads::default())
    }

    /// Links of a rank whose peers are processes meeting at `store`; every
    /// wait on them is bounded by `timeout`.
    pub fn processes(store: Arc<dyn KeyValueStore>, timeout: Duration) -> Links {
        let bootstrap = |prefix| StoreBootstrap::new(store.clone(), prefix, timeout);
        Links::Processes(Processes {
            collectives: bootstrap("cpu/collective"),
            barriers: bootstrap("cpu/barrier"),
            shares: bootstrap("cpu/share"),
            store,
            timeout,
        })
    }

    /// The store of a rank whose peers are processes.
    pub fn store(&self) -> Option<&Arc<dyn KeyValueStore>> {
        match self {
            Links::Threads(_) => None,
            Links::Processes(processes) => Some(&processes.store),
        }
    }

    /// Runs rank `rank`'s part of collective `number` of its team; with
    /// `poison` its staging buffer starts as NaN, not zero.
    pub fn collective(
        &self,
        waiter: &Waiter,
        rank: usize,
        number: u64,
        op: &CollectiveOp,
        poison: bool,
    ) -> Result<()> {
        match self {
            Links::Threads(threads) => comm::collective(
                &threads.collectives,
                &threads.done,
                waiter,
                rank,
                number,
                op,
                poison,
            ),
            Links::Processes(processes) => processes.collective(rank, number, op, poison),
        }
    }

    /// Posts every transfer, then completes them all.
    pub fn transfer(&self, posts: &[Post], waiter: &Waiter) -> Result<()> {
        match self {
            Links::Threads(threads) => threads.mailbox.transfer(posts, waiter),
            Links::Processes(processes) => processes.transfer(posts),
        }
    }

    /// Team member `position` brings `region` to the team's `number`-th
    /// handle exchange; every member's region, in team order.
    pub fn share(
        &self,
        waiter: &Waiter,
        team: &Team,
        number: u64,
        position: usize,
        region: Region,
    ) -> Result<Vec<Region>> {
        match self {
            Links::Threads(threads) => {
                let key = ("share_mem_handle", team.clone(), number);
                Ok(threads.shares.meet(key, position, region, waiter)?.to_vec())
            }
            Links::Processes(processes) => {
                let mut bytes = (region.0 as u64).to_le_bytes().to_vec();
                bytes.extend((region.1 as u64).to_le_bytes());
                let all = processes.shares.all_gather(team, number, position, bytes)?;
                all.iter().map(|bytes| decode_region(bytes)).collect()
            }
        }
    }

    /// Team member `position` waits at the team's `number`-th barrier.
    pub fn barrier(
        &self,
        waiter: &Waiter,
        team: &Team,
        number: u64,
        position: usize,
    ) -> Result<()> {
        match self {
            Links::Threads(threads) => {
                let key = ("barrier", team.clone(), number);
                threads.barriers.meet(key, position, (), waiter).map(drop)
            }
            Links::Processes(processes) => processes
                .barriers
                .all_gather(team, number, position, Vec::new())
                .map(drop),
        }
    }
}

fn decode_region(bytes: &[u8]) -> Result<Region> {
    let words: Option<[u64; 2]> = (bytes.len() == 16).then(|| {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        [word(0), word(8)]
    });
    let [start, end] = words.ok_or_else(|| {
        Error::Mismatch(format!(
            "a peer's shared region is {} bytes, not 16",
            bytes.len()
        ))
    })?;
    Ok((start as usize, end as usize))
}

/// The elements of `view`, row-major, as bytes.
fn contiguous_bytes(view: &View) -> Result<Vec<u8>> {
    let len = view
        .numel()
        .checked_mul(view.dtype.size())
        .ok_or_else(|| Error::Invalid(format!("a view of sizes {:?} overflows", view.sizes)))?;
    let mut bytes = with_capacity(len)?;
    bytes.resize(len, 0);
    copy(
        view,
        &View::contiguous(view.dtype, bytes.as_mut_ptr(), &view.sizes),
    );
    Ok(bytes)
}

/// Whether team member `position` brings its input to `op`: a broadcast's
/// or scatter's is only the root's to read.
fn sends_input(op: &CollectiveOp, position: usize) -> bool {
    let root = op.rooted().then(|| op.team.position(op.root)).flatten();
    !matches!(op.op, Collective::Broadcast | Collective::Scatter) || root == Some(position)
}

/// A message of `data`, then `header` and its length (`u32`, little-endian)
/// last, so that the data starts where the message's allocation does.
fn message(mut data: Vec<u8>, header: &str) -> Vec<u8> {
    data.extend(header.as_bytes());
    data.extend((header.len() as u32).to_le_bytes());
    data
}

/// A message's data and header, or what is wrong with it.
fn parse(message: &[u8]) -> Result<(&[u8], &str)> {
    let bad = |what: &str| Error::Mismatch(format!("a peer's message {what}"));
    let (rest, length) = message
        .split_last_chunk::<4>()
        .ok_or_else(|| bad("is shorter than its header's length"))?;
    let length = u32::from_le_bytes(*length) as usize;
    let split = rest
        .len()
        .checked_sub(length)
        .ok_or_else(|| bad("is shorter than its header"))?;
    let header =
        std::str::from_utf8(&rest[split..]).map_err(|_| bad("has a header that is not UTF-8"))?;
    Ok((&rest[..split], header))
}

impl Processes {
    fn collective(&self, rank: usize, number: u64, op: &CollectiveOp, poison: bool) -> Result<()> {
        let team = &op.team;
        let me = team.position(rank).expect("posted by a member");
        let data = if sends_input(op, me) {
            contiguous_bytes(&op.input)?
        } else {
            Vec::new()
        };
        let all = self
            .collectives
            .all_gather(team, number, me, message(data, &describe(op)))?;
        let parsed = all
            .iter()
            .map(|message| parse(message))
            .collect::<Result<Vec<_>>>()?;
        let posted: Vec<(usize, String)> = team
            .ranks()
            .iter()
            .zip(&parsed)
            .map(|(&rank, (_, header))| (rank, header.to_string()))
            .collect();
        comm::consistent(team, number, &posted)?;
        // Every member posted this op: the same sizes and type as this rank's.
        let length = op.input.numel() * op.input.dtype.size();
        let contributions = team
            .ranks()
            .iter()
            .zip(&parsed)
            .enumerate()
            .map(|(position, (&rank, (data, _)))| {
                let mut op = op.clone();
                if !sends_input(&op, position) {
                    // Not read: `stage` reads a broadcast's or scatter's root only.
                    return Ok(Contribution { rank, op });
                }
                if data.len() != length {
                    return Err(Error::Mismatch(format!(
                        "rank {rank} brought {} bytes to collective #{number} of team {team}, \
                         whose input is {length} bytes",
                        data.len()
                    )));
                }
                op.input =
                    View::contiguous(op.input.dtype, data.as_ptr().cast_mut(), &op.input.sizes);
                Ok(Contribution { rank, op })
            })
            .collect::<Result<Vec<_>>>()?;
        let staged = comm::stage(op, me, &contributions, poison)?;
        comm::write(op, staged);
        Ok(())
    }

    /// Sends first (a key each), then receives (a blocking get each): a
    /// coalesced group of both cannot deadlock.
    fn transfer(&self, posts: &[Post]) -> Result<()> {
        let key = |post: &Post| {
            let (backend, team, from, to, number) = &post.key;
            format!("cpu/p2p/{}/{team}/{from}/{to}/{number}", backend.name())
        };
        for post in posts.iter().filter(|post| post.send) {
            let header = format!("{} {}", post.buffer.dtype.mlir(), post.buffer.numel());
            self.store.set(
                &key(post),
                &message(contiguous_bytes(&post.buffer)?, &header),
            )?;
        }
        for post in posts.iter().filter(|post| !post.send) {
            let name = key(post);
            let got = self
                .store
                .get(std::slice::from_ref(&name), self.timeout)
                .map_err(|error| match error {
                    Error::Timeout { after, .. } => Error::Timeout {
                        after,
                        waiting: format!(
                            "for rank {} to post the matching send ({})",
                            post.key.2,
                            describe_slot(&post.key)
                        ),
                    },
                    error => error,
                })?;
            let (data, header) = parse(&got[0])?;
            let sent = header
                .split_once(' ')
                .and_then(|(dtype, numel)| Some((DType::from_mlir(dtype)?, numel.parse().ok()?)))
                .ok_or_else(|| {
                    Error::Mismatch(format!(
                        "a send's header '{header}' is not a type and a count"
                    ))
                })?;
            matching(&post.key, sent, &post.buffer)?;
            if data.len() != post.buffer.numel() * post.buffer.dtype.size() {
                return Err(Error::Mismatch(format!(
                    "{} bytes came for {}",
                    data.len(),
                    describe_slot(&post.key)
                )));
            }
            let from = View::contiguous(sent.0, data.as_ptr().cast_mut(), &post.buffer.sizes);
            copy(&from, &post.buffer);
            self.store.delete(&[name])?;
        }
        Ok(())
    }
}
