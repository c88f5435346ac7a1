//! A rank's communication: collectives and NCCL send/recv posted on the
//! current stream, `cuda` (CUDA-IPC) transfers handed to `ipc.rs`, and the
//! sends and receives a coalescing group collects; each team's
//! communicator, created on its first use.

use super::nccl::{self, Comm, split};
use super::p2p::P2p;
use super::scratch::Scratch;
use super::streams::{Completion, label, new_or_reused_event};
use super::{Check, CudaDevice, State, grouped, ipc};
use crate::device::Request;
use crate::error::Result;
use crate::lock;
use crate::memref::View;
use crate::ops::{CollectiveOp, Team, Transfer};
use cudarc::driver::result as cu;
use hir_abi::{Collective, Entry, Transport};

/// A coalescing group being posted.
pub(super) struct Group {
    pub(super) request: usize,
    pub(super) posts: Vec<P2p>,
    /// `cuda` transfers, posted at the end: receives first.
    pub(super) ipc: Vec<P2p>,
    /// Received into staging: copied to their views, on their streams, once
    /// the group ends.
    pub(super) copies: Vec<(View, View, usize)>,
    pub(super) scratch: Scratch,
}

impl CudaDevice {
    /// The communicator of `team`, created on first use (host-blocking).
    pub(super) fn comm<'s>(&self, state: &'s mut State, team: &Team) -> Result<&'s Comm> {
        if !state.comms.contains_key(team) {
            let position = team.require(self.rank, "rank")?;
            let number = state.exchanges.entry(team.clone()).or_default();
            let comm = Comm::new(team, position, *number, &*self.bootstrap)?;
            *number += 1;
            lock(&self.live).push(comm.cell.clone());
            state.comms.insert(team.clone(), comm);
        }
        Ok(&state.comms[team])
    }

    /// The host side of `cuda` transfers.
    pub(super) fn me(&self) -> ipc::Me<'_> {
        ipc::Me {
            rank: self.rank,
            ctx: self.ctx.cu_ctx(),
            bootstrap: &*self.bootstrap,
        }
    }

    /// Posts a `cuda` send or receive; returns what its request waits for.
    pub(super) fn post_ipc(
        &self,
        state: &mut State,
        p2p: &P2p,
        scratch: &mut Scratch,
    ) -> Result<Completion> {
        let stream = state.streams[p2p.stream];
        let me = self.me();
        if !p2p.send {
            return Ok(Completion::Flag(state.ipc.recv(&me, p2p, stream)?));
        }
        let event = new_or_reused_event(state)?;
        state.ipc.send(&me, p2p, stream, &state.kernels, scratch)?;
        // SAFETY: live event and stream.
        unsafe { cu::event::record(event, stream) }.check("cuEventRecord")?;
        Ok(Completion::Event(event))
    }

    pub(super) fn post_collective(&self, state: &mut State, op: &CollectiveOp) -> Result<()> {
        let stream = state.streams[state.current];
        let n = op.team.len();
        let position = op.team.require(self.rank, "rank")?;
        let root = op.team.position(op.root).unwrap_or(0);
        let dtype = nccl::data_type(op.dtype());
        let red = nccl::red_op(op.kind);
        let cell = self.comm(state, &op.team)?.cell.clone();
        let mut scratch = Scratch::new(state.poison);
        let kernels = &state.kernels;
        let ns = nccl::stream(stream);
        let what = format!("{} on team {}", op.entry(), op.team);
        type Posted =
            std::result::Result<cudarc::nccl::result::NcclStatus, cudarc::nccl::result::NcclError>;
        let call = |post: &dyn Fn(cudarc::nccl::sys::ncclComm_t) -> Posted| {
            cell.with(|comm| nccl::check(post(comm), &what, Some(comm)))
        };
        match op.op {
            Collective::Allgather => {
                let input = scratch.readable(kernels, &op.input, stream)?;
                let whole = split(&op.output, op.axis, n);
                let (target, back) = scratch.writable(&whole, stream)?;
                // SAFETY: device buffers of the validated sizes, live comm.
                call(&|comm| unsafe {
                    cudarc::nccl::result::all_gather(
                        nccl::ptr(input.ptr),
                        nccl::ptr(target.ptr),
                        input.numel(),
                        dtype,
                        comm,
                        ns,
                    )
                })?;
                if back {
                    kernels.copy(&target, &whole, stream)?;
                }
            }
            Collective::ReduceScatter => {
                let input = scratch.readable(kernels, &split(&op.input, op.axis, n), stream)?;
                let (target, back) = scratch.writable(&op.output, stream)?;
                call(&|comm| unsafe {
                    cudarc::nccl::result::reduce_scatter(
                        nccl::ptr(input.ptr),
                        nccl::ptr(target.ptr),
                        target.numel(),
                        dtype,
                        red,
                        comm,
                        ns,
                    )
                })?;
                if back {
                    kernels.copy(&target, &op.output, stream)?;
                }
            }
            Collective::Allreduce | Collective::Broadcast | Collective::Reduce => {
                let reads = op.op != Collective::Broadcast || position == root;
                let writes = op.op != Collective::Reduce || position == root;
                let input = if reads {
                    scratch.readable(kernels, &op.input, stream)?
                } else {
                    op.input.clone()
                };
                let (target, back) = if writes {
                    scratch.writable(&op.output, stream)?
                } else {
                    (op.output.clone(), false)
                };
                let (send, recv, count) = (
                    nccl::ptr(input.ptr),
                    nccl::ptr(target.ptr),
                    op.input.numel(),
                );
                call(&|comm| unsafe {
                    match op.op {
                        Collective::Allreduce => cudarc::nccl::result::all_reduce(
                            send, recv, count, dtype, red, comm, ns,
                        ),
                        Collective::Broadcast => cudarc::nccl::result::broadcast(
                            send,
                            recv,
                            count,
                            dtype,
                            root as i32,
                            comm,
                            ns,
                        ),
                        _ => cudarc::nccl::result::reduce(
                            send,
                            recv,
                            count,
                            dtype,
                            red,
                            root as i32,
                            comm,
                            ns,
                        ),
                    }
                })?;
                if back {
                    kernels.copy(&target, &op.output, stream)?;
                }
            }
            Collective::Gather | Collective::Scatter | Collective::Alltoall => {
                cell.with(|comm| {
                    let parts = grouped::Parts {
                        op,
                        me: position,
                        root,
                        comm,
                        kernels,
                        stream,
                    };
                    parts.post(&mut scratch)
                })?;
            }
        }
        Ok(())
    }

    pub(super) fn transfer(&self, transfer: Transfer, send: bool) -> Result<Request> {
        let Transfer {
            buffer,
            peer,
            team,
            backend,
        } = transfer;
        let peer_rank = peer;
        let entry = if send {
            Entry::Send(buffer.dtype)
        } else {
            Entry::Recv(buffer.dtype)
        };
        let what = format!(
            "{} {} rank {peer} on team {team}",
            label(entry),
            if send { "to" } else { "from" }
        );
        let peer = team.require(peer, "peer")?;
        team.require(self.rank, "rank")?;
        let mut guard = self.state()?;
        let state = &mut *guard;
        if backend == Transport::Cuda {
            let direction = if send { "send to" } else { "recv from" };
            state.ipc.check(&team, peer_rank, &buffer, direction)?;
            let p2p = P2p {
                send,
                data: buffer,
                peer,
                team,
                stream: state.current,
            };
            if let Some(group) = &mut state.group {
                group.ipc.push(p2p);
                return Ok(state.retired + group.request as Request + 1);
            }
            let posting = self.posting(what);
            let completion = Self::traced(
                state,
                || label(entry),
                |state| {
                    let mut scratch = Scratch::new(state.poison);
                    self.post_ipc(state, &p2p, &mut scratch)
                },
            )?;
            let request = Self::issue(state, vec![completion]);
            return Ok(posting.posted(state, request));
        }
        let stream = state.current;
        let raw = state.streams[stream];
        let mut own = Scratch::new(state.poison);
        let scratch = match &mut state.group {
            Some(group) => &mut group.scratch,
            None => &mut own,
        };
        let (data, back) = if send {
            (scratch.readable(&state.kernels, &buffer, raw)?, false)
        } else {
            scratch.writable(&buffer, raw)?
        };
        let p2p = P2p {
            send,
            data,
            peer,
            team,
            stream,
        };
        if let Some(group) = &mut state.group {
            // Posted at end_coalescing, once every communicator exists:
            // creating one inside an NCCL group would defer its set-up.
            if back {
                group.copies.push((p2p.data.clone(), buffer, stream));
            }
            group.posts.push(p2p);
            return Ok(state.retired + group.request as Request + 1);
        }
        let posting = self.posting(what);
        self.comm(state, &p2p.team)?;
        Self::traced(state, || label(entry), |state| Self::post_p2p(state, &p2p))?;
        if back {
            state.kernels.copy(&p2p.data, &buffer, raw)?;
        }
        drop(own);
        let request = Self::record_request(state)?;
        Ok(posting.posted(state, request))
    }

    /// Posts an NCCL send or receive; its team's communicator exists.
    pub(super) fn post_p2p(state: &State, p2p: &P2p) -> Result<()> {
        let stream = nccl::stream(state.streams[p2p.stream]);
        let (dtype, count, peer) = (
            nccl::data_type(p2p.data.dtype),
            p2p.data.numel(),
            p2p.peer as i32,
        );
        let what = format!(
            "{} with team member {} of {}",
            if p2p.send { "ncclSend" } else { "ncclRecv" },
            p2p.peer,
            p2p.team
        );
        state.comms[&p2p.team].with(|comm| {
            // SAFETY: contiguous device buffers of `count` elements, a live
            // communicator and stream.
            let result = unsafe {
                if p2p.send {
                    cudarc::nccl::result::send(
                        nccl::ptr(p2p.data.ptr),
                        count,
                        dtype,
                        peer,
                        comm,
                        stream,
                    )
                } else {
                    cudarc::nccl::result::recv(
                        nccl::ptr(p2p.data.ptr),
                        count,
                        dtype,
                        peer,
                        comm,
                        stream,
                    )
                }
            };
            nccl::check(result, &what, Some(comm))
        })
    }
}
