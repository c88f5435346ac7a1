//! The words of a CUDA-IPC transfer's signalling, shared by the transfers
//! (`ipc.rs`) and the captures that renumber them (`ipc_graph.rs`,
//! `ipc_caller_graph.rs`): which end a rank is, which flag, and the flags a
//! capture signalled with the numbers they took.

use crate::ops::Team;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ops::Range;

/// Which end of a transfer a rank is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Side {
    Send,
    Recv,
}

/// Which of a transfer's two flags: `Ready` (the receiver's buffer is free)
/// or `Done` (the data is there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Flag {
    Ready,
    Done,
}

impl Side {
    /// Whether this side waits on `flag` (in its own array) rather than
    /// writing it (into its peer's).
    pub fn waits_on(self, flag: Flag) -> bool {
        matches!(
            (self, flag),
            (Side::Send, Flag::Ready) | (Side::Recv, Flag::Done)
        )
    }
}

/// One flag of a transfer a capture enqueued, as the capture signalled it.
#[derive(Clone, Debug)]
pub(super) struct Signal {
    pub team: Team,
    pub side: Side,
    pub flag: Flag,
    /// The peer's position on the team.
    pub member: usize,
    pub number: u64,
    pub address: sys::CUdeviceptr,
    pub value: u32,
}

/// The flags of a captured call's transfers, and per pair and direction
/// the numbers they took.
#[derive(Debug, Default)]
pub(super) struct Numbering {
    /// In the order the capture signalled them (`ipc_graph.rs` finds them
    /// in the graph in that order).
    pub(super) signals: Vec<Signal>,
    pub(super) ranges: HashMap<(Team, Side, usize), Range<u64>>,
}

impl Numbering {
    pub fn note(&mut self, signal: Signal) {
        let numbers = signal.number..signal.number + 1;
        let range = self
            .ranges
            .entry((signal.team.clone(), signal.side, signal.member))
            .or_insert(numbers.clone());
        range.start = range.start.min(numbers.start);
        range.end = range.end.max(numbers.end);
        self.signals.push(signal);
    }

    pub fn signals(&self) -> &[Signal] {
        &self.signals
    }

    pub fn ranges(&self) -> impl Iterator<Item = (&(Team, Side, usize), &Range<u64>)> {
        self.ranges.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(side: Side, flag: Flag, member: usize, number: u64) -> Signal {
        Signal {
            team: Team::new(&[0, 1, 2], 3).unwrap(),
            side,
            flag,
            member,
            number,
            address: 0x1000 + number * 4,
            value: number as u32 + 1,
        }
    }

    #[test]
    fn a_numbering_keeps_each_pair_and_directions_numbers() {
        let mut numbering = Numbering::default();
        for number in [7, 5, 6] {
            for flag in [Flag::Ready, Flag::Done] {
                numbering.note(signal(Side::Send, flag, 1, number));
            }
        }
        numbering.note(signal(Side::Recv, Flag::Done, 1, 3));
        numbering.note(signal(Side::Send, Flag::Done, 2, 9));
        let mut ranges: Vec<_> = numbering
            .ranges()
            .map(|((_, side, member), numbers)| (*side, *member, numbers.clone()))
            .collect();
        ranges.sort_by_key(|(side, member, _)| (*side == Side::Recv, *member));
        assert_eq!(
            ranges,
            [
                (Side::Send, 1, 5..8),
                (Side::Send, 2, 9..10),
                (Side::Recv, 1, 3..4)
            ]
        );
        assert_eq!(numbering.signals().len(), 8);
    }
}
