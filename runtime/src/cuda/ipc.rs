//! `cuda` (CUDA-IPC) transfers: the sender copies straight into the
//! receiver's buffer, ordered by counters in device memory.
//!
//! `share_mem_handle(buffer, team)` exchanges, through the [`Bootstrap`], the
//! buffer's whole allocation and, on the team's first share, each rank's flag
//! array and mailbox (`mailbox.rs`) for the team; every rank then maps its
//! peers' (see [`Export`]). Shares are cached per (allocation, team): the
//! caching allocator hands a site the same buffer on every call, so a
//! program shares for free after its first run. An allocation is known by
//! the driver's buffer id, not its address: a launcher's argument may be
//! freed and a new one made at the same address, which must be shared (and
//! its peers' old mappings dropped) before it moves data.
//!
//! Transfer `k` from `a` to `b` on a team (the `k`-th of that pair and
//! direction, matched as NCCL does) uses slot `k mod SLOTS` of the pair: in
//! `b`'s mailbox, where `b` leaves its destination, and in two flags signalled
//! by the value `k + 1`: `ready` in `a`'s array (written by `b`: its buffer
//! is free) and `done` in `b`'s (written by `a`: the data is there).
//!
//! - `recv`, on `b`: leaves its destination (a [`Destination`]) for `a` in
//!   its mailbox, in host shared memory (no bootstrap round trip), then, on
//!   the posting stream after its work so far, writes `ready = k + 1` into
//!   `a`'s flag. Its request is the flag wait `done >= k + 1`, which `wait`
//!   puts on the then current stream, as NCCL's receive completes where the
//!   program waits for it.
//! - `send`, on `a`: takes `b`'s destination from `b`'s mailbox (the host
//!   waits until `b`'s host has posted that `recv`), then on the current
//!   stream waits for `ready >= k + 1`, copies (`cuMemcpyAsync`, the copy
//!   engine, when the destination is contiguous; the copy kernel writing
//!   through the mapping otherwise) and writes `done = k + 1` into `b`'s flag.
//!
//! Each transfer has its own slot, so receives posted from different streams
//! may signal in any order; a slot is reused `SLOTS` transfers later with a
//! larger value, and waits compare cyclically, so values may wrap. A mailbox
//! slot is reused only once its sender has taken the previous destination
//! in it: a receiving host more than `SLOTS` transfers ahead of its sender's
//! host waits (bounded by the bootstrap's timeout) rather than overwrite it.

use super::export::{
    Allocation, Export, Mapping, Reach, allocation, buffer_id, holding, ipc_handle, overlap,
    translate,
};
use super::ipc_caller_graph::CallerCapture;
use super::ipc_destination::Destination;
pub(super) use super::ipc_signal::{Flag, Side};
use super::ipc_signal::{Numbering, Signal};
use super::kernels::Kernels;
use super::mailbox::{Mailbox, SLOTS};
use super::p2p::P2p;
use super::scratch::{Scratch, is_contiguous};
use super::{Check, Stream};
use crate::core::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::memref::View;
use crate::ops::Team;
use cudarc::driver::{result as cu, sys};
use hir_abi::Entry;
use std::collections::{HashMap, HashSet};

/// Per team member, how many transfers this rank has posted with it in one
/// direction.
#[derive(Clone, Debug, Default, PartialEq)]
struct Counters(Vec<u64>);

impl Counters {
    fn new(members: usize) -> Counters {
        Counters(vec![0; members])
    }

    /// The number of the next transfer with `member`.
    fn next(&mut self, member: usize) -> u64 {
        let number = self.0[member];
        self.0[member] += 1;
        number
    }
}

/// The flag value that signals transfer `number` (cyclic: it wraps).
fn signal(number: u64) -> u32 {
    (number as u32).wrapping_add(1)
}

/// A team's flag array: `ready[i][slot]` for sends to member `i`, then
/// `done[i][slot]` for receives from member `i`.
fn ready(flags: sys::CUdeviceptr, member: usize, number: u64) -> sys::CUdeviceptr {
    flags + 4 * (member * SLOTS + number as usize % SLOTS) as u64
}

/// The bytes of one half of a team's flag array.
fn half(members: usize) -> u64 {
    (2 * members * SLOTS * 4) as u64
}

fn done(flags: sys::CUdeviceptr, members: usize, member: usize, number: u64) -> sys::CUdeviceptr {
    flags + 4 * ((members + member) * SLOTS + number as usize % SLOTS) as u64
}

/// What completes a receive: its `done` flag reaching a value.
#[derive(Clone, Copy, Debug)]
pub(super) struct FlagWait {
    flag: sys::CUdeviceptr,
    value: u32,
}

impl FlagWait {
    /// `stream` waits for the flag.
    pub fn enqueue(self, stream: Stream) -> Result<()> {
        // SAFETY: a live stream; the flag is this rank's device memory,
        // alive while the device lives.
        unsafe { wait_value(stream, self.flag, self.value) }
    }
}

/// A rank's `cuda` transfers on one team.
struct Link {
    position: usize,
    members: usize,
    /// This rank's flags.
    flags: sys::CUdeviceptr,
    /// Each member's flags, as this rank addresses them (0 until shared).
    peers: Vec<sys::CUdeviceptr>,
    sends: Counters,
    recvs: Counters,
    /// Where this rank's receives leave their destinations, and its sends
    /// take theirs.
    mailbox: Mailbox,
}

impl Link {
    /// Where `flag` of transfer `number` with `member` is, as this rank
    /// addresses it from `side`.
    fn flag(&self, side: Side, flag: Flag, member: usize, number: u64) -> sys::CUdeviceptr {
        match (side, flag) {
            (Side::Send, Flag::Ready) => ready(self.flags, member, number),
            (Side::Send, Flag::Done) => {
                done(self.peers[member], self.members, self.position, number)
            }
            (Side::Recv, Flag::Ready) => ready(self.peers[member], self.position, number),
            (Side::Recv, Flag::Done) => done(self.flags, self.members, member, number),
        }
    }

    /// Where `flag` of a caller-captured transfer in `slot` is (the upper
    /// half of the arrays).
    fn captured_flag(&self, side: Side, flag: Flag, member: usize, slot: u64) -> sys::CUdeviceptr {
        self.flag(side, flag, member, slot) + half(self.members)
    }

    fn counters(&mut self, side: Side) -> &mut Counters {
        match side {
            Side::Send => &mut self.sends,
            Side::Recv => &mut self.recvs,
        }
    }

    /// Needs the rank's context current.
    fn new(team: &Team, position: usize) -> Result<Link> {
        let members = team.len();
        let mailbox = Mailbox::create(team, position)?;
        // The lower half for direct calls and HIR's own graphs, the upper
        // for calls captured on a caller's stream (`ipc_graph.rs`).
        let bytes = 2 * half(members) as usize;
        // SAFETY: plain allocations, zeroed before any stream sees them,
        // released in `Ipc::drop`.
        unsafe {
            let flags = cu::malloc_sync(bytes).check("allocating transfer flags")?;
            cu::memset_d8_sync(flags, 0, bytes).check("cuMemsetD8")?;
            Ok(Link {
                position,
                members,
                flags,
                peers: vec![0; members],
                sends: Counters::new(members),
                recvs: Counters::new(members),
                mailbox,
            })
        }
    }
}

/// A rank's CUDA-IPC state: what it shared and mapped, and its teams' flags.
#[derive(Default)]
pub(super) struct Ipc {
    links: HashMap<Team, Link>,
    /// Per team, this rank's allocations shared with it.
    exported: HashMap<Team, Vec<Allocation>>,
    /// Per peer (global rank), its allocations this rank can write.
    mapped: HashMap<usize, Vec<Mapping>>,
    /// Contexts this rank's has peer access to.
    peer_access: HashSet<u64>,
    /// Peer allocations opened from IPC handles, by (peer, its address).
    opened: HashMap<(usize, u64), sys::CUdeviceptr>,
    /// The waits on this rank's flags posted since the last synchronize.
    armed: Vec<FlagWait>,
    /// While a call is captured, its transfers' flags.
    capture: Option<Numbering>,
    /// While a call is captured on a caller's stream, its transfers' slots.
    caller_capture: Option<CallerCapture>,
}

/// Which rank this is, and how it reaches its peers.
pub(super) struct Me<'a> {
    pub rank: usize,
    pub ctx: sys::CUcontext,
    pub bootstrap: &'a dyn Bootstrap,
}

impl Ipc {
    /// Shares `buffer`'s allocation with `team` (host-blocking, once per
    /// allocation and team); `number` is the team's bootstrap exchange.
    pub fn share(
        &mut self,
        me: &Me,
        team: &Team,
        buffer: &View,
        number: impl FnOnce() -> u64,
    ) -> Result<()> {
        let position = team.require(me.rank, "rank")?;
        let allocation = allocation(buffer)?;
        let exported = self.exported.get(team).map_or(&[][..], Vec::as_slice);
        if exported.contains(&allocation) {
            return Ok(());
        }
        let base = allocation.region.0 as u64;
        if !self.links.contains_key(team) {
            self.links.insert(team.clone(), Link::new(team, position)?);
        }
        let link = &self.links[team];
        let same_process = me.bootstrap.same_process();
        let reach = if same_process {
            Ok(Reach::Context(me.ctx as u64))
        } else {
            ipc_handle(base).and_then(|buffer| {
                Ok(Reach::Handles {
                    buffer,
                    flags: ipc_handle(link.flags)?,
                })
            })
        };
        let exports = reach
            .and_then(|reach| {
                let export = Export {
                    base,
                    size: (allocation.region.1 - allocation.region.0) as u64,
                    id: allocation.id,
                    flags: link.flags,
                    reach,
                    mailbox: link.mailbox.name().unwrap_or_default().to_string(),
                };
                me.bootstrap
                    .all_gather(team, number(), position, export.encode())
            })
            .and_then(|all| {
                all.iter()
                    .map(|bytes| Export::decode(bytes, same_process))
                    .collect::<Result<Vec<_>>>()
            });
        let mailbox = &mut self.links.get_mut(team).unwrap().mailbox;
        if !mailbox.connected() {
            match &exports {
                Ok(exports) => {
                    let names: Vec<&str> = exports.iter().map(|e| e.mailbox.as_str()).collect();
                    mailbox.connect(&names, me.bootstrap)?;
                }
                // Nothing may be left in /dev/shm.
                Err(_) => mailbox.unlink(),
            }
        }
        let mut peers = Vec::with_capacity(team.len());
        for (&peer, export) in team.ranks().iter().zip(&exports?) {
            let remote = export.allocation();
            self.unmap_freed(peer, remote)?;
            let (local, flags) = self.map(me, peer, export)?;
            let mapping = Mapping {
                remote,
                local: local as usize,
            };
            let mappings = self.mapped.entry(peer).or_default();
            if !mappings.contains(&mapping) {
                mappings.push(mapping);
            }
            peers.push(flags);
        }
        self.links.get_mut(team).unwrap().peers = peers;
        let exported = self.exported.entry(team.clone()).or_default();
        exported.retain(|freed| !overlap(freed.region, allocation.region));
        exported.push(allocation);
        Ok(())
    }

    /// Drops this rank's mappings of `peer`'s allocations that `allocation`
    /// overlaps: the peer freed them. Every transfer into them completed
    /// before (their receives waited for `done`, which follows the copy), so
    /// their handles close at once.
    fn unmap_freed(&mut self, peer: usize, allocation: Allocation) -> Result<()> {
        let Some(mappings) = self.mapped.get_mut(&peer) else {
            return Ok(());
        };
        let (freed, kept) = mappings.drain(..).partition(|m: &Mapping| {
            m.remote.id != allocation.id && overlap(m.remote.region, allocation.region)
        });
        *mappings = kept;
        for mapping in freed {
            let address = mapping.remote.region.0 as u64;
            if let Some(local) = self.opened.remove(&(peer, address)) {
                // SAFETY: opened in `open`, closed once; nothing in flight
                // reaches it (above).
                unsafe { sys::cuIpcCloseMemHandle(local) }
                    .result()
                    .check(&format!(
                        "closing rank {peer}'s freed memory (cuIpcCloseMemHandle)"
                    ))?;
            }
        }
        Ok(())
    }

    /// Where `peer`'s exported buffer and flags are in this rank's address
    /// space.
    fn map(
        &mut self,
        me: &Me,
        peer: usize,
        export: &Export,
    ) -> Result<(sys::CUdeviceptr, sys::CUdeviceptr)> {
        match &export.reach {
            Reach::Context(ctx) => {
                if *ctx != me.ctx as u64 && self.peer_access.insert(*ctx) {
                    // SAFETY: a live context of this process; ours is current.
                    let result = unsafe { sys::cuCtxEnablePeerAccess(*ctx as sys::CUcontext, 0) };
                    if result != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                        result.result().check(&format!(
                            "enabling peer access to rank {peer}'s GPU (cuCtxEnablePeerAccess)"
                        ))?;
                    }
                }
                Ok((export.base, export.flags))
            }
            Reach::Handles { .. } if peer == me.rank => Ok((export.base, export.flags)),
            Reach::Handles { buffer, flags } => Ok((
                self.open(peer, export.base, buffer)?,
                self.open(peer, export.flags, flags)?,
            )),
        }
    }

    /// Opens `peer`'s allocation at `address` from its IPC handle, once.
    fn open(&mut self, peer: usize, address: u64, handle: &[u8; 64]) -> Result<sys::CUdeviceptr> {
        if let Some(&local) = self.opened.get(&(peer, address)) {
            return Ok(local);
        }
        let handle = sys::CUipcMemHandle {
            reserved: handle.map(|byte| byte as std::ffi::c_char),
        };
        let mut local = 0;
        // SAFETY: a handle another process exported; closed in `drop`.
        unsafe {
            sys::cuIpcOpenMemHandle_v2(
                &mut local,
                handle,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
            )
        }
        .result()
        .check(&format!(
            "opening rank {peer}'s memory (cuIpcOpenMemHandle)"
        ))?;
        self.opened.insert((peer, address), local);
        Ok(local)
    }

    /// Checks that this rank can move `buffer` with `peer` on `team`: both
    /// sides shared something with the team, and this side `buffer`'s
    /// allocation (not one freed at its address).
    pub fn check(&self, team: &Team, peer: usize, buffer: &View, what: &str) -> Result<()> {
        let exported = self.exported.get(team).map_or(&[][..], Vec::as_slice);
        if self
            .links
            .get(team)
            .is_none_or(|link| link.peers.is_empty())
        {
            return Err(Error::Invalid(format!(
                "{what} rank {peer}: no buffer was shared with share_mem_handle on team {team}"
            )));
        }
        let freed = match holding(exported, buffer) {
            Some(shared) if shared.id == buffer_id(buffer.ptr as u64)? => return Ok(()),
            Some(_) => " (an allocation shared at its address was freed since)",
            None => "",
        };
        let footprint = buffer.footprint();
        Err(Error::Invalid(format!(
            "{what} rank {peer}: buffer ({} bytes at {:#x}) was not shared with \
             share_mem_handle on team {team}{freed}",
            footprint.end - footprint.start,
            footprint.start
        )))
    }

    /// Posts receive `p2p` after the work so far on `posting`, its stream;
    /// returns what completes it. `check` passed.
    pub fn recv(&mut self, me: &Me, p2p: &P2p, posting: Stream) -> Result<FlagWait> {
        let P2p {
            data: buffer,
            peer: from,
            team,
            ..
        } = p2p;
        let from = *from;
        let destination = Destination::of(buffer)?.encode();
        let link = self.links.get_mut(team).expect("checked");
        let number = link.recvs.next(from);
        let sender = team.ranks()[from];
        let reused = || {
            format!(
                "for rank {sender} to post the send of cuda transfer #{} from rank {sender} to \
                 rank {} on team {team}, whose mailbox slot transfer #{number} reuses; a rank's \
                 cuda recvs from a peer may run at most {SLOTS} transfers ahead of its sends",
                number - SLOTS as u64,
                me.rank
            )
        };
        link.mailbox
            .post(from, number, &destination, me.bootstrap, reused)?;
        let (ready_flag, done_flag, value) = match &mut self.caller_capture {
            Some(capture) => {
                let slot = capture.slot(team, Side::Recv, from)?;
                let done_flag = link.captured_flag(Side::Recv, Flag::Done, from, slot);
                capture.reset_at_end(done_flag);
                let ready_flag = link.captured_flag(Side::Recv, Flag::Ready, from, slot);
                (ready_flag, done_flag, CallerCapture::SIGNAL)
            }
            None => (
                link.flag(Side::Recv, Flag::Ready, from, number),
                link.flag(Side::Recv, Flag::Done, from, number),
                signal(number),
            ),
        };
        // SAFETY: a live stream; the sender's flag is mapped device memory,
        // alive until the device drops.
        unsafe { write_value(posting, ready_flag, value)? };
        if self.caller_capture.is_none() {
            self.note(team, Side::Recv, from, number);
        }
        Ok(FlagWait {
            flag: done_flag,
            value,
        })
    }

    /// From now on, transfers are captured on a caller's stream.
    pub fn begin_caller_capture(&mut self) {
        self.caller_capture = Some(CallerCapture::default());
    }

    /// Ends a caller's capture: enqueues on `stream` (after every wait of
    /// the call) the resets of the flags its receives waited on.
    pub fn end_caller_capture(&mut self, stream: Stream) -> Result<()> {
        for flag in self
            .caller_capture
            .take()
            .map(CallerCapture::resets)
            .unwrap_or_default()
        {
            // SAFETY: a live stream; the flag is this rank's device memory.
            unsafe { write_value(stream, flag, 0)? };
        }
        Ok(())
    }

    /// Arms the flag this side of transfer `number` waits on or, while a
    /// call is captured, notes both its flags for the replays to renumber
    /// (the captured waits run only in replays, which arm their own).
    fn note(&mut self, team: &Team, side: Side, member: usize, number: u64) {
        let link = &self.links[team];
        let value = signal(number);
        match &mut self.capture {
            Some(numbering) => {
                for flag in [Flag::Ready, Flag::Done] {
                    numbering.note(Signal {
                        team: team.clone(),
                        side,
                        flag,
                        member,
                        number,
                        address: link.flag(side, flag, member, number),
                        value,
                    });
                }
            }
            None => {
                let flag = [Flag::Ready, Flag::Done]
                    .into_iter()
                    .find(|&flag| side.waits_on(flag))
                    .expect("each side waits on one flag");
                self.armed.push(FlagWait {
                    flag: link.flag(side, flag, member, number),
                    value,
                });
            }
        }
    }

    /// From now on, notes the transfers' flags instead of arming them: a
    /// call is being captured.
    pub fn begin_capture(&mut self) {
        self.capture = Some(Numbering::default());
    }

    /// What the captured call's transfers numbered.
    pub fn end_capture(&mut self) -> Numbering {
        self.capture.take().unwrap_or_default()
    }

    /// The flags' addresses and values for one replay of a call captured
    /// with `numbering`, in its signals' order: each transfer takes the
    /// next numbers of its pair and direction, as a direct call's would,
    /// and the waits are armed.
    pub fn renumber(&mut self, numbering: &Numbering) -> Vec<(sys::CUdeviceptr, u32)> {
        let mut offsets = HashMap::new();
        for ((team, side, member), numbers) in numbering.ranges() {
            let link = self
                .links
                .get_mut(team)
                .expect("captured transfers have links");
            let counter = &mut link.counters(*side).0[*member];
            offsets.insert((team, *side, *member), *counter - numbers.start);
            *counter += numbers.end - numbers.start;
        }
        numbering
            .signals()
            .iter()
            .map(|signal| {
                let number = signal.number + offsets[&(&signal.team, signal.side, signal.member)];
                let link = &self.links[&signal.team];
                let renumbered = (
                    link.flag(signal.side, signal.flag, signal.member, number),
                    self::signal(number),
                );
                if signal.side.waits_on(signal.flag) {
                    self.armed.push(FlagWait {
                        flag: renumbered.0,
                        value: renumbered.1,
                    });
                }
                renumbered
            })
            .collect()
    }

    /// Whether a stream may wait on a flag the host has not seen set.
    pub fn armed(&self) -> bool {
        !self.armed.is_empty()
    }

    /// The streams' flag waits are behind them: they all completed.
    pub fn settled(&mut self) {
        self.armed.clear();
    }

    /// Sets every flag this rank's streams may wait on, from the host, so a
    /// rank that gave up on a transfer (its peer never came) gets its
    /// streams back; the data they then see is not the transfer's.
    pub fn release(&mut self) -> Result<()> {
        for wait in self.armed.drain(..) {
            // SAFETY: the flag is this rank's device memory; a synchronous
            // copy from the host is ordered with no stream of the rank.
            unsafe { cu::memcpy_htod_sync(wait.flag, &[wait.value]) }
                .check("releasing a transfer flag")?;
        }
        Ok(())
    }

    /// Posts send `p2p` on `stream`, its stream; `check` passed. The host
    /// waits until the receiver has posted the matching `recv`.
    pub fn send(
        &mut self,
        me: &Me,
        p2p: &P2p,
        stream: Stream,
        kernels: &Kernels,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let P2p {
            data: buffer,
            peer: to,
            team,
            ..
        } = p2p;
        let to = *to;
        let link = self.links.get_mut(team).expect("checked");
        let number = link.sends.next(to);
        let receiver = team.ranks()[to];
        let describe = || {
            format!(
                "cuda transfer #{number} from rank {} to rank {receiver} on team {team}",
                me.rank
            )
        };
        let message = link.mailbox.take(to, number, me.bootstrap, || {
            format!(
                "for rank {receiver} to post the matching recv ({}); a cuda send learns where \
                 to write from its recv, so the recv must be posted first",
                describe()
            )
        })?;
        let Destination(target) = Destination::decode(&message)?;
        let (ready_flag, done_flag, value) = match &mut self.caller_capture {
            Some(capture) => {
                let slot = capture.slot(team, Side::Send, to)?;
                (
                    link.captured_flag(Side::Send, Flag::Ready, to, slot),
                    link.captured_flag(Side::Send, Flag::Done, to, slot),
                    CallerCapture::SIGNAL,
                )
            }
            None => (
                link.flag(Side::Send, Flag::Ready, to, number),
                link.flag(Side::Send, Flag::Done, to, number),
                signal(number),
            ),
        };
        let local = if (target.dtype, target.numel()) != (buffer.dtype, buffer.numel()) {
            Err(Error::Mismatch(format!(
                "{} of {} elements from rank {} does not match {} of {} elements on rank \
                 {receiver} ({})",
                Entry::Send(buffer.dtype),
                buffer.numel(),
                me.rank,
                Entry::Recv(target.dtype),
                target.numel(),
                describe()
            )))
        } else {
            let mappings = self.mapped.get(&receiver).map_or(&[][..], Vec::as_slice);
            translate(mappings, &target).ok_or_else(|| {
                let footprint = target.footprint();
                Error::Invalid(format!(
                    "rank {receiver}'s recv buffer ({} bytes at {:#x}) is not mapped on rank {}: \
                     share it with share_mem_handle first ({})",
                    footprint.end - footprint.start,
                    footprint.start,
                    me.rank,
                    describe()
                ))
            })
        };
        let local = match local {
            Ok(local) => local,
            Err(error) => {
                // Release the receiver, whose stream would wait forever.
                // SAFETY: a live stream; the receiver's flag is mapped.
                unsafe { write_value(stream, done_flag, value)? };
                return Err(error);
            }
        };
        let captured = self.caller_capture.is_some();
        if !captured {
            self.note(team, Side::Send, to, number);
        }
        // SAFETY: live stream; the flags and `local` are mapped device memory
        // that stays allocated while the world lives.
        unsafe {
            wait_value(stream, ready_flag, value)?;
            if captured {
                // Waited for once: put back before the data goes, so that
                // the receiver's next replay finds it clear.
                write_value(stream, ready_flag, 0)?;
            }
            put(kernels, scratch, buffer, &local, stream)?;
            write_value(stream, done_flag, value)
        }
    }
}

impl Drop for Ipc {
    /// Runs with the rank's context current, after its streams finished.
    fn drop(&mut self) {
        // SAFETY: every handle was created or opened here, released once.
        unsafe {
            for link in self.links.values() {
                let _ = cu::free_sync(link.flags);
            }
            for &local in self.opened.values() {
                let _ = sys::cuIpcCloseMemHandle(local);
            }
        }
    }
}

/// # Safety
/// `stream` is live and `flag` device memory this context can write.
unsafe fn write_value(stream: Stream, flag: sys::CUdeviceptr, value: u32) -> Result<()> {
    let flags = sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
    // SAFETY: the caller's contract. The default write is preceded by a
    // memory fence, so the data copied before it is visible first.
    unsafe { sys::cuStreamWriteValue32_v2(stream, flag, value, flags) }
        .result()
        .check("cuStreamWriteValue32")
}

/// # Safety
/// As [`write_value`].
unsafe fn wait_value(stream: Stream, flag: sys::CUdeviceptr, value: u32) -> Result<()> {
    let flags = sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32;
    // SAFETY: the caller's contract.
    unsafe { sys::cuStreamWaitValue32_v2(stream, flag, value, flags) }
        .result()
        .check("cuStreamWaitValue32")
}

/// Copies `from` into the peer's `to` (mapped here) on `stream`, element by
/// element in row-major order.
fn put(
    kernels: &Kernels,
    scratch: &mut Scratch,
    from: &View,
    to: &View,
    stream: Stream,
) -> Result<()> {
    let bytes = to.numel() * to.dtype.size();
    if bytes == 0 {
        return Ok(());
    }
    if is_contiguous(to) {
        let from = scratch.readable(kernels, from, stream)?;
        // SAFETY: both ranges are device memory of `bytes` bytes reachable
        // from this context (unified addressing).
        return unsafe { sys::cuMemcpyAsync(to.ptr as u64, from.ptr as u64, bytes, stream) }
            .result()
            .check("cuMemcpyAsync to a peer");
    }
    if from.sizes == to.sizes {
        return kernels.copy(from, to, stream);
    }
    let from = scratch.readable(kernels, from, stream)?;
    kernels.copy(
        &View::contiguous(from.dtype, from.ptr, &to.sizes),
        to,
        stream,
    )
}

#[cfg(test)]
#[path = "ipc_tests.rs"]
mod tests;
