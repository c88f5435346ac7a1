//! The ring schedule: at step `i` the rank at position `r` of a ring of `D`
//! works on slice `(r + i) mod D` ([`slice`]) with partner `(D + r - i) mod
//! D` ([`partner`]). The formulas are written once over [`RingArith`]: the
//! pass emits them as `arith` ops ([`Emitted`]), the tests evaluate them on
//! integers and simulate the schedule.

use crate::builders::Builder;
use melior::{
    dialect::arith,
    ir::{Location, Operation, Value},
};

/// The index arithmetic the ring's formulas are written in: emitted as
/// `arith` ops on `index` values by the pass, evaluated on integers by the
/// schedule test, so that both read the same formulas.
pub(super) trait RingArith: Copy {
    /// `arith.addi`.
    fn add(self, other: Self) -> Self;
    /// `arith.subi`; the formulas only subtract where the result is not negative.
    fn sub(self, other: Self) -> Self;
    /// `arith.remui`.
    fn rem(self, other: Self) -> Self;
}

/// The ring step of loop iteration `index`: the index itself, or, with the
/// local step last, `index + 1` (step `size` is step 0 mod `size`).
pub(super) fn ring_step<T: RingArith>(index: T, one: T, local_last: bool) -> T {
    if local_last { index.add(one) } else { index }
}

/// The slice the rank at `position` works on at `step` of a ring of `size`,
/// which is also the position of the slice's owner: `(position + step) mod size`.
pub(super) fn slice<T: RingArith>(position: T, step: T, size: T) -> T {
    position.add(step).rem(size)
}

/// The rank whose slice at `step` is `position`'s own, the one `position`
/// sends its shard to (allgather) or receives its block from
/// (reduce-scatter): `(size + position - step) mod size`, with
/// `step <= size` so that the difference is not negative.
pub(super) fn partner<T: RingArith>(position: T, step: T, size: T) -> T {
    size.add(position).sub(step).rem(size)
}

/// An `index` value the ring formulas are emitted on.
#[derive(Clone, Copy)]
pub(super) struct Emitted<'c, 'a> {
    pub(super) value: Value<'c, 'a>,
    pub(super) cursor: Builder<'c, 'a>,
}

impl<'c, 'a> Emitted<'c, 'a> {
    pub(super) fn binary(
        self,
        other: Self,
        build: fn(Value<'c, '_>, Value<'c, '_>, Location<'c>) -> Operation<'c>,
    ) -> Self {
        let value = self
            .cursor
            .value(build(self.value, other.value, self.cursor.location));
        Self { value, ..self }
    }
}

impl RingArith for Emitted<'_, '_> {
    fn add(self, other: Self) -> Self {
        self.binary(other, arith::addi)
    }

    fn sub(self, other: Self) -> Self {
        self.binary(other, arith::subi)
    }

    fn rem(self, other: Self) -> Self {
        self.binary(other, arith::remui)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formulas on integers, with `arith.subi` on `index` checked not to
    /// go below zero (the pass emits `remui` after it).
    impl RingArith for u64 {
        fn add(self, other: Self) -> Self {
            self + other
        }

        fn sub(self, other: Self) -> Self {
            self.checked_sub(other)
                .expect("the ring formulas never subtract below zero")
        }

        fn rem(self, other: Self) -> Self {
            self % other
        }
    }

    /// A message posted at one step: from which rank to which, and what.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct Message {
        from: u64,
        to: u64,
    }

    /// The sends and receives every rank posts at `step`, sorted, and the
    /// ranks that copy locally; `receive_from` and `send_to` say what a rank
    /// does at a step.
    fn post(
        size: u64,
        step: u64,
        receive_from: fn(u64, u64, u64) -> u64,
        send_to: fn(u64, u64, u64) -> u64,
    ) -> (Vec<Message>, Vec<Message>, Vec<u64>) {
        let (mut sends, mut receives, mut local) = (Vec::new(), Vec::new(), Vec::new());
        for rank in 0..size {
            // The pass's local test, `slice == rank`.
            if slice(rank, step, size) == rank {
                assert_eq!(step % size, 0, "only step 0 (mod size) is local");
                assert_eq!(partner(rank, step, size), rank);
                local.push(rank);
                continue;
            }
            let (from, to) = (receive_from(rank, step, size), send_to(rank, step, size));
            assert!(from < size && to < size && from != rank && to != rank);
            receives.push(Message { from, to: rank });
            sends.push(Message { from: rank, to });
        }
        sends.sort();
        receives.sort();
        (sends, receives, local)
    }

    #[test]
    fn allgather_ring_gathers_every_slice_once() {
        for size in 1..=8 {
            // gathered[rank][slice]: whose shard is there.
            let mut gathered = vec![vec![None; size as usize]; size as usize];
            for step in 0..size {
                // Receive slice `slice` from its owner, send the own shard to the partner.
                let (sends, receives, local) = post(size, step, slice, partner);
                assert_eq!(
                    sends, receives,
                    "size {size}, step {step}: unmatched transfers"
                );
                assert_eq!(local.len() as u64, if step == 0 { size } else { 0 });
                for rank in local {
                    // The copy of the own shard into the step's slice.
                    gathered[rank as usize][slice(rank, step, size) as usize] = Some(rank);
                }
                for Message { from, to } in sends {
                    // `to` stores what arrives in its slice of this step.
                    let into = slice(to, step, size);
                    assert_eq!(into, from, "the slice received is the sender's shard");
                    let slot = &mut gathered[to as usize][into as usize];
                    assert_eq!(
                        *slot, None,
                        "size {size}: rank {to} gets slice {into} twice"
                    );
                    *slot = Some(from);
                }
            }
            for (rank, slices) in gathered.iter().enumerate() {
                let expected: Vec<_> = (0..size).map(Some).collect();
                assert_eq!(slices, &expected, "size {size}: rank {rank}");
            }
        }
    }

    #[test]
    fn reduce_scatter_ring_brings_every_partial_once() {
        for size in 1..=8 {
            // slots[rank][source]: which block of which rank's partials is there.
            let mut slots = vec![vec![None; size as usize]; size as usize];
            // A loop of reduce-scatters runs its local step last (`plan::local_step_last`).
            let local_last = true;
            for index in 0..size {
                let step = ring_step(index, 1, local_last);
                // Receive from the partner into its slot, send block `slice` to its owner.
                let (sends, receives, local) = post(size, step, partner, slice);
                assert_eq!(
                    sends, receives,
                    "size {size}, step {step}: unmatched transfers"
                );
                let last = index == size - 1;
                assert_eq!(local.len() as u64, if last { size } else { 0 });
                for rank in local {
                    // The copy of the step's block into the partner's slot.
                    let slot = partner(rank, step, size) as usize;
                    slots[rank as usize][slot] = Some((rank, slice(rank, step, size)));
                }
                for Message { from, to } in sends {
                    let block = slice(from, step, size);
                    let slot = partner(to, step, size);
                    assert_eq!(slot, from, "the slot is the sender's");
                    let slot = &mut slots[to as usize][slot as usize];
                    assert_eq!(
                        *slot, None,
                        "size {size}: rank {to} gets {from}'s block twice"
                    );
                    *slot = Some((from, block));
                }
            }
            // Slot q of rank r holds rank q's partial of block r: their
            // combination over the slots is block r of the reduce-scatter.
            for (rank, slots) in slots.iter().enumerate() {
                let expected: Vec<_> = (0..size)
                    .map(|source| Some((source, rank as u64)))
                    .collect();
                assert_eq!(slots, &expected, "size {size}: rank {rank}");
            }
        }
    }
}
