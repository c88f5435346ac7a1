//! Gather, scatter and all-to-all, which NCCL does not have: grouped
//! point-to-point sends and receives (`ncclGroupStart`, one `ncclSend` or
//! `ncclRecv` per peer, `ncclGroupEnd`), as PyTorch posts them. A rank's own
//! part is a local copy.
//!
//! Both sides work on contiguous `[parts, ..]` layouts of the concatenated
//! buffer (the axis split as for allgather, parts outermost), staged when the
//! view is not one already. An output that overlaps the input is always
//! staged, so outputs may alias inputs, as on the cpu backend.

use super::Stream;
use super::kernels::Kernels;
use super::nccl::{self, split};
use super::scratch::Scratch;
use crate::error::Result;
use crate::memref::View;
use crate::ops::CollectiveOp;
use cudarc::nccl::{result as calls, sys};
use hir_abi::Collective;

/// One rank's part of a validated gather, scatter or all-to-all.
pub(super) struct Parts<'a> {
    pub op: &'a CollectiveOp,
    /// Team positions.
    pub me: usize,
    pub root: usize,
    pub comm: sys::ncclComm_t,
    pub kernels: &'a Kernels,
    pub stream: Stream,
}

/// Part `index` of a contiguous `[parts, ..]` buffer.
fn part(whole: &View, index: usize) -> View {
    let extent: usize = whole.sizes[1..].iter().product();
    View::contiguous(
        whole.dtype,
        whole.ptr.wrapping_add(index * extent * whole.dtype.size()),
        &whole.sizes[1..],
    )
}

fn overlap(a: &View, b: &View) -> bool {
    let (a, b) = (a.footprint(), b.footprint());
    a.start < b.end && b.start < a.end
}

impl Parts<'_> {
    pub fn post(&self, scratch: &mut Scratch) -> Result<()> {
        let Parts {
            op,
            me,
            root,
            kernels,
            stream,
            ..
        } = *self;
        let n = op.team.len();
        let outputs = split(&op.output, op.axis, n);
        match op.op {
            Collective::Gather => {
                let input = scratch.readable(kernels, &op.input, stream)?;
                if me != root {
                    return self.group(&[(root, &input)], &[]);
                }
                let (target, back) = self.target(scratch, &outputs)?;
                // Before the receives, which may land where the input was.
                kernels.copy(&input, &part(&target, me), stream)?;
                let parts: Vec<View> = (0..n).map(|i| part(&target, i)).collect();
                let recvs: Vec<(usize, &View)> = (0..n)
                    .filter(|&i| i != me)
                    .map(|i| (i, &parts[i]))
                    .collect();
                self.group(&[], &recvs)?;
                if back {
                    kernels.copy(&target, &outputs, stream)?;
                }
            }
            Collective::Scatter => {
                let (target, back) = self.target(scratch, &op.output)?;
                if me == root {
                    let source =
                        scratch.readable(kernels, &split(&op.input, op.axis, n), stream)?;
                    let parts: Vec<View> = (0..n).map(|i| part(&source, i)).collect();
                    let sends: Vec<(usize, &View)> = (0..n)
                        .filter(|&i| i != me)
                        .map(|i| (i, &parts[i]))
                        .collect();
                    self.group(&sends, &[])?;
                    // After the sends, which read where the output may be.
                    kernels.copy(&parts[me], &target, stream)?;
                } else {
                    self.group(&[], &[(root, &target)])?;
                }
                if back {
                    kernels.copy(&target, &op.output, stream)?;
                }
            }
            Collective::Alltoall => {
                let source = scratch.readable(kernels, &split(&op.input, op.axis, n), stream)?;
                let (target, back) = self.target(scratch, &outputs)?;
                let sources: Vec<View> = (0..n).map(|i| part(&source, i)).collect();
                let targets: Vec<View> = (0..n).map(|i| part(&target, i)).collect();
                let peers = || (0..n).filter(|&i| i != me);
                let sends: Vec<(usize, &View)> = peers().map(|i| (i, &sources[i])).collect();
                let recvs: Vec<(usize, &View)> = peers().map(|i| (i, &targets[i])).collect();
                self.group(&sends, &recvs)?;
                kernels.copy(&sources[me], &targets[me], stream)?;
                if back {
                    kernels.copy(&target, &outputs, stream)?;
                }
            }
            _ => unreachable!("only gather, scatter and all-to-all are grouped"),
        }
        Ok(())
    }

    /// Where to write `view` contiguously (staged when it is not contiguous
    /// or overlaps the input), and whether to copy it back.
    fn target(&self, scratch: &mut Scratch, view: &View) -> Result<(View, bool)> {
        if overlap(&self.op.output, &self.op.input) {
            Ok((scratch.contiguous(view, self.stream)?, true))
        } else {
            scratch.writable(view, self.stream)
        }
    }

    /// Posts the sends and receives (to and from team positions) as one
    /// NCCL group.
    fn group(&self, sends: &[(usize, &View)], recvs: &[(usize, &View)]) -> Result<()> {
        let dtype = nccl::data_type(self.op.dtype());
        let stream = nccl::stream(self.stream);
        let what = format!("{} on team {}", self.op.entry(), self.op.team);
        nccl::check(calls::group_start(), "ncclGroupStart", None)?;
        // SAFETY: contiguous device buffers of `numel` elements, a live
        // communicator and stream.
        let posted = sends
            .iter()
            .map(|&(peer, view)| unsafe {
                calls::send(
                    nccl::ptr(view.ptr),
                    view.numel(),
                    dtype,
                    peer as i32,
                    self.comm,
                    stream,
                )
            })
            .chain(recvs.iter().map(|&(peer, view)| unsafe {
                calls::recv(
                    nccl::ptr(view.ptr),
                    view.numel(),
                    dtype,
                    peer as i32,
                    self.comm,
                    stream,
                )
            }))
            .try_for_each(|result| nccl::check(result, &what, Some(self.comm)));
        // Closed even when a post failed, so NCCL's state stays sane.
        nccl::check(calls::group_end(), "ncclGroupEnd", None)?;
        posted
    }
}
