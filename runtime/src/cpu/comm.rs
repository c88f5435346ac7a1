//! Communication between the rank threads, through shared memory.
//!
//! Collectives: the ranks of a team meet at the hub (keyed by team and the
//! collective's number on that team), check that they posted the same op,
//! each computes its own result from the others' inputs into a staging buffer,
//! meet again (so nobody's input is overwritten while read: outputs may alias
//! inputs, as NCCL allows), and write their outputs.
//!
//! Point to point: the `k`-th send from `a` to `b` on a team matches the
//! `k`-th receive on `b` from `a` (NCCL's order). Each transfer is a slot both
//! sides post their buffer to; a task posts all of its transfers before
//! waiting for any, which is what makes a coalescing group free of deadlock.
//! With `nccl` whichever side finds the pair complete copies; with `cuda` the
//! sender copies straight into the receiver's buffer, as a CUDA-IPC copy to a
//! mapped peer buffer does, once the receiver's stream has reached its recv.

use super::elements::{copy, load, store, with_capacity};
use crate::core::sync::{Hub, Waiter};
use crate::error::{Error, Result};
use crate::lock;
use crate::memref::View;
use crate::ops::{CollectiveOp, Team};
use hir_abi::{Collective, DType, Entry, ReduceKind, Transport};
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

/// A rank's part of a collective, as brought to the hub.
#[derive(Clone)]
pub(crate) struct Contribution {
    pub rank: usize,
    pub op: CollectiveOp,
}

/// What a rank posted: every field the ranks of a collective must agree on.
pub(crate) fn describe(op: &CollectiveOp) -> String {
    format!(
        "{} of {:?} into {:?} (kind {:?}, root {}, axis {})",
        op.entry(),
        op.input.sizes,
        op.output.sizes,
        op.kind,
        op.root,
        op.axis
    )
}

/// Runs rank `rank`'s part of collective `number` of its team; with
/// `poison` its staging buffer starts as NaN, not zero.
pub(crate) fn collective(
    hub: &Hub<Contribution>,
    done: &Hub<()>,
    waiter: &Waiter,
    rank: usize,
    number: u64,
    op: &CollectiveOp,
    poison: bool,
) -> Result<()> {
    let team = &op.team;
    let me = team.position(rank).expect("posted by a member");
    let contribution = Contribution {
        rank,
        op: op.clone(),
    };
    let all = hub.meet(
        ("collective", team.clone(), number),
        me,
        contribution,
        waiter,
    )?;
    let posted: Vec<(usize, String)> = all
        .iter()
        .map(|part| (part.rank, describe(&part.op)))
        .collect();
    let staged = consistent(team, number, &posted).and_then(|()| stage(op, me, &all, poison));
    done.meet(("collective done", team.clone(), number), me, (), waiter)?;
    write(op, staged?);
    Ok(())
}

/// Writes a rank's staged result into its output.
pub(crate) fn write(op: &CollectiveOp, staged: Staged) {
    match staged {
        Staged::Nothing => {}
        Staged::Values(values) => store(&op.output, &values),
        Staged::Ints(values) => super::ints::store(&op.output, &values),
        Staged::Bytes(mut bytes) => copy(
            &View::contiguous(op.dtype(), bytes.as_mut_ptr(), &op.output.sizes),
            &op.output,
        ),
    }
}

/// Every rank posted the same collective with the same shapes: `posted` is
/// each member's rank and [`describe`] of its op, in team order.
pub(crate) fn consistent(team: &Team, number: u64, posted: &[(usize, String)]) -> Result<()> {
    let (first_rank, first) = &posted[0];
    match posted.iter().find(|(_, other)| other != first) {
        None => Ok(()),
        Some((rank, other)) => Err(Error::Mismatch(format!(
            "collective #{number} of team {team}: rank {rank} posted {other} but rank \
             {first_rank} posted {first}"
        ))),
    }
}

/// A rank's result before it is written.
pub(crate) enum Staged {
    /// This rank's output is not written (a non-root of gather or reduce).
    Nothing,
    /// Row-major values of a reduction of a float type.
    Values(Vec<f32>),
    /// Row-major values of a reduction of an integer type.
    Ints(Vec<i64>),
    /// Row-major elements moved as they are.
    Bytes(Vec<u8>),
}

/// Rank `me`'s result of `op` from every member's contribution, in team
/// order.
pub(crate) fn stage(
    op: &CollectiveOp,
    me: usize,
    all: &[Contribution],
    poison: bool,
) -> Result<Staged> {
    let n = all.len();
    let out = &op.output;
    let root = op.team.position(op.root);
    let reduce = |views: Vec<View>| {
        if out.dtype.is_float() {
            combine(op.kind, views).map(Staged::Values)
        } else {
            super::ints::combine(op.kind, &views).map(Staged::Ints)
        }
    };
    let moved = |pieces: &mut dyn FnMut(&View)| {
        let len = out.numel().checked_mul(out.dtype.size()).ok_or_else(|| {
            Error::Invalid(format!("an output of sizes {:?} overflows", out.sizes))
        })?;
        let mut bytes = with_capacity(len)?;
        bytes.resize(len, if poison { 0xff } else { 0 });
        pieces(&View::contiguous(out.dtype, bytes.as_mut_ptr(), &out.sizes));
        Ok(Staged::Bytes(bytes))
    };
    let axis = op.axis;
    match op.op {
        Collective::Allgather | Collective::Gather => {
            if op.op == Collective::Gather && root != Some(me) {
                return Ok(Staged::Nothing);
            }
            let extent = op.input.sizes[axis];
            moved(&mut |staging| {
                for (i, part) in all.iter().enumerate() {
                    copy(&part.op.input, &staging.slice(axis, i * extent, extent));
                }
            })
        }
        Collective::Allreduce => reduce(all.iter().map(|part| part.op.input.clone()).collect()),
        Collective::Reduce if root == Some(me) => {
            reduce(all.iter().map(|part| part.op.input.clone()).collect())
        }
        Collective::Reduce => Ok(Staged::Nothing),
        Collective::ReduceScatter => {
            let extent = out.sizes[axis];
            reduce(
                all.iter()
                    .map(|part| part.op.input.slice(axis, me * extent, extent))
                    .collect(),
            )
        }
        Collective::Broadcast => {
            moved(&mut |staging| copy(&all[root.expect("validated")].op.input, staging))
        }
        Collective::Scatter => {
            let extent = out.sizes[axis];
            let source = &all[root.expect("validated")].op.input;
            moved(&mut |staging| copy(&source.slice(axis, me * extent, extent), staging))
        }
        Collective::Alltoall => {
            let chunk = out.sizes[axis] / n;
            moved(&mut |staging| {
                for (i, part) in all.iter().enumerate() {
                    copy(
                        &part.op.input.slice(axis, me * chunk, chunk),
                        &staging.slice(axis, i * chunk, chunk),
                    );
                }
            })
        }
    }
}

/// Combines the views elementwise in team order, in f32.
fn combine(kind: ReduceKind, views: Vec<View>) -> Result<Vec<f32>> {
    let n = views.len() as f32;
    let mut parts = views.iter().map(load);
    let mut acc = parts.next().expect("a team is not empty")?;
    for part in parts {
        let part = part?;
        for (a, b) in acc.iter_mut().zip(part) {
            *a = match kind {
                ReduceKind::Sum | ReduceKind::Avg => *a + b,
                ReduceKind::Prod => *a * b,
                ReduceKind::Max => super::kernels::binary(hir_abi::Binary::Max, *a, b),
                ReduceKind::Min => super::kernels::binary(hir_abi::Binary::Min, *a, b),
            };
        }
    }
    if kind == ReduceKind::Avg {
        acc.iter_mut().for_each(|a| *a /= n);
    }
    Ok(acc)
}

/// A byte range `[start, end)` of a rank's memory mapped by a peer.
pub(crate) type Region = (usize, usize);

/// Which transfer: backend, team, sender, receiver and the number of earlier
/// transfers between the two in that direction.
pub(crate) type SlotKey = (Transport, Team, usize, usize, u64);

/// One side of a transfer, as a task posts it.
pub(crate) struct Post {
    pub key: SlotKey,
    pub send: bool,
    pub buffer: View,
    /// For a `cuda` send: the regions the receiver shared with this rank.
    pub mapped: Vec<Region>,
}

#[derive(Default)]
struct Slot {
    send: Option<View>,
    recv: Option<View>,
    copying: bool,
    done: Option<Result<()>>,
    seen: usize,
}

#[derive(Default)]
pub(crate) struct Mailbox {
    slots: Mutex<HashMap<SlotKey, Slot>>,
    changed: Condvar,
}

pub(crate) fn describe_slot(key: &SlotKey) -> String {
    let (backend, team, from, to, number) = key;
    let backend = backend.name();
    format!("{backend} transfer #{number} from rank {from} to rank {to} on team {team}")
}

impl Mailbox {
    /// Posts every transfer, then completes them all.
    pub fn transfer(&self, posts: &[Post], waiter: &Waiter) -> Result<()> {
        {
            let mut slots = lock(&self.slots);
            for post in posts {
                let slot = slots.entry(post.key.clone()).or_default();
                let side = if post.send {
                    &mut slot.send
                } else {
                    &mut slot.recv
                };
                *side = Some(post.buffer.clone());
            }
            self.changed.notify_all();
        }
        let mut first_error = None;
        for post in posts {
            if let Err(error) = self.complete(post, waiter) {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn complete(&self, post: &Post, waiter: &Waiter) -> Result<()> {
        let key = &post.key;
        // With `cuda` only the sender copies: it owns the copy engine work.
        let may_copy = key.0 == Transport::Nccl || post.send;
        let slots = waiter.until(
            &self.slots,
            &self.changed,
            |slots| {
                let slot = &slots[key];
                slot.done.is_some()
                    || (may_copy && !slot.copying && slot.send.is_some() && slot.recv.is_some())
            },
            |slots| {
                let slot = &slots[key];
                let (peer, side) = if post.send {
                    (key.3, "recv")
                } else {
                    (key.2, "send")
                };
                if slot.send.is_some() && slot.recv.is_some() {
                    format!("for rank {peer} to finish {}", describe_slot(key))
                } else {
                    format!(
                        "for rank {peer} to post the matching {side} ({})",
                        describe_slot(key)
                    )
                }
            },
            |slots| {
                // Unless a copy is under way (it is waited for below), nobody
                // may use this side's buffer any more.
                let slot = slots.get_mut(key).unwrap();
                if !slot.copying {
                    *if post.send {
                        &mut slot.send
                    } else {
                        &mut slot.recv
                    } = None;
                    if slot.send.is_none() && slot.recv.is_none() {
                        slots.remove(key);
                    }
                }
            },
        );
        let mut slots = match slots {
            Ok(slots) => slots,
            Err(error) => {
                self.finish_copy(key);
                return Err(error);
            }
        };
        let slot = slots.get_mut(key).unwrap();
        if slot.done.is_none() {
            slot.copying = true;
            let (from, to) = (slot.send.clone().unwrap(), slot.recv.clone().unwrap());
            drop(slots);
            let result = move_data(key, &from, &to, &post.mapped);
            slots = lock(&self.slots);
            slots.get_mut(key).unwrap().done = Some(result);
            self.changed.notify_all();
        }
        let slot = slots.get_mut(key).unwrap();
        let result = slot.done.clone().unwrap();
        slot.seen += 1;
        if slot.seen == 2 {
            slots.remove(key);
        }
        result
    }

    /// After giving up on a transfer, waits until a copy the peer is making
    /// from or into this side's buffer is over. Copies are bounded.
    fn finish_copy(&self, key: &SlotKey) {
        let mut slots = lock(&self.slots);
        while slots
            .get(key)
            .is_some_and(|slot| slot.copying && slot.done.is_none())
        {
            slots = self
                .changed
                .wait(slots)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

fn move_data(key: &SlotKey, from: &View, to: &View, mapped: &[Region]) -> Result<()> {
    matching(key, (from.dtype, from.numel()), to)?;
    if key.0 == Transport::Cuda {
        let target = to.footprint();
        let inside = |&(start, end): &Region| start <= target.start && target.end <= end;
        if target.end > target.start && !mapped.iter().any(inside) {
            return Err(Error::Invalid(format!(
                "rank {}'s recv buffer ({} bytes at {:#x}) is not mapped on rank {}: \
                 share it with share_mem_handle first ({})",
                key.3,
                target.end - target.start,
                target.start,
                key.2,
                describe_slot(key)
            )));
        }
    }
    copy(from, to);
    Ok(())
}

/// Whether a send of `sent` (its element type and count) fits the receive
/// into `to`.
pub(crate) fn matching(key: &SlotKey, sent: (DType, usize), to: &View) -> Result<()> {
    if sent == (to.dtype, to.numel()) {
        return Ok(());
    }
    Err(Error::Mismatch(format!(
        "{} of {} elements from rank {} does not match {} of {} elements on rank {} ({})",
        Entry::Send(sent.0),
        sent.1,
        key.2,
        Entry::Recv(to.dtype),
        to.numel(),
        key.3,
        describe_slot(key)
    )))
}
