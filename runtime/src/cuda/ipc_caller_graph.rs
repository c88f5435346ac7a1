//! `cuda` (CUDA-IPC) transfers captured on a caller's stream (a graph HIR
//! does not launch, such as `torch.cuda.graph`'s): no host renumbers the
//! flags before its replays (`ipc_graph.rs` does for HIR's own graphs), so
//! a captured call's flags must be the same in every replay and clear
//! again after it. Each transfer of the call gets its own slot (per peer
//! and direction, at most [`SLOTS`]) in the upper half of the flag arrays,
//! which no direct call uses, and is signalled with [`CallerCapture::SIGNAL`]
//! and put back to 0 once waited for:
//!
//! - the sender waits for `ready` once, and clears it right after, before
//!   its copy and its `done`: the receiver sets `ready` again only in its
//!   next replay, after it saw that `done`;
//! - the receiver's program may wait for `done` several times, so it is
//!   cleared at the call's end, after every stream joined back: the sender
//!   sets it again only after the receiver's next `ready`, in its next
//!   replay.
//!
//! Ranks replay their graphs in the same order (the same graphs, or the
//! same graph), as they run their calls.

use super::ipc_signal::Side;
use super::mailbox::SLOTS;
use crate::error::{Error, Result};
use crate::ops::Team;
use cudarc::driver::sys;
use std::collections::HashMap;

/// The slots of a call being captured on a caller's stream, and the flags
/// to clear at its end.
#[derive(Debug, Default)]
pub(super) struct CallerCapture {
    slots: HashMap<(Team, Side, usize), u64>,
    resets: Vec<sys::CUdeviceptr>,
}

impl CallerCapture {
    /// The value a captured transfer signals with.
    pub const SIGNAL: u32 = 1;

    /// The next slot of the call's transfers with `member` on `team` from
    /// `side`.
    pub fn slot(&mut self, team: &Team, side: Side, member: usize) -> Result<u64> {
        let next = self.slots.entry((team.clone(), side, member)).or_insert(0);
        if *next >= SLOTS as u64 {
            let direction = match side {
                Side::Send => "sends to",
                Side::Recv => "receives from",
            };
            return Err(Error::Invalid(format!(
                "a call captured on a caller's stream {direction} team member {member} on team \
                 {team} more than {SLOTS} times (cuda transfers): each needs a slot of its own \
                 in the captured graph"
            )));
        }
        *next += 1;
        Ok(*next - 1)
    }

    /// `flag` is cleared at the call's end.
    pub fn reset_at_end(&mut self, flag: sys::CUdeviceptr) {
        self.resets.push(flag);
    }

    pub fn resets(self) -> Vec<sys::CUdeviceptr> {
        self.resets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_transfer_of_a_captured_call_has_a_slot_per_peer_and_direction() {
        let team = Team::new(&[0, 1, 2], 3).unwrap();
        let mut capture = CallerCapture::default();
        let slots: Vec<u64> = [
            (Side::Send, 1),
            (Side::Send, 1),
            (Side::Recv, 1),
            (Side::Send, 2),
            (Side::Send, 1),
        ]
        .into_iter()
        .map(|(side, member)| capture.slot(&team, side, member).unwrap())
        .collect();
        assert_eq!(slots, [0, 1, 0, 0, 2]);
        for _ in 3..SLOTS {
            capture.slot(&team, Side::Send, 1).unwrap();
        }
        let error = capture.slot(&team, Side::Send, 1).unwrap_err().to_string();
        assert!(error.contains("more than 64 times"), "{error}");
    }
}
