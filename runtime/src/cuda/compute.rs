//! Enqueueing a validated kernel: an NVRTC kernel, or the cuBLASLt GEMMs a
//! matmul or linear is cut into, with the current stream's workspace.

use super::axes::coalesce;
use super::blas::{self, Gemm};
use super::scratch::Scratch;
use super::{Check, CudaDevice, State};
use crate::error::Result;
use crate::memref::View;
use crate::ops::{Kernel, KernelOp, batch_axes_read};
use cudarc::driver::{result as cu, sys};

impl CudaDevice {
    /// Enqueues a validated kernel on the current stream.
    pub(super) fn enqueue_kernel(state: &mut State, kernel: &Kernel) -> Result<()> {
        let stream = state.streams[state.current];
        let Kernel { op, inputs, output } = kernel;
        let kernels = &state.kernels;
        match op {
            KernelOp::Copy => kernels.copy(&inputs[0], output, stream),
            KernelOp::Unary(op) => kernels.unary(*op, &inputs[0], output, stream),
            KernelOp::Cast => kernels.cast(&inputs[0], output, stream),
            KernelOp::Binary(op) => kernels.binary(*op, &inputs[0], &inputs[1], output, stream),
            KernelOp::Where => kernels.select(&inputs[0], &inputs[1], &inputs[2], output, stream),
            KernelOp::Reduce(op, axes) => kernels.reduce(*op, &inputs[0], axes, output, stream),
            KernelOp::Broadcast(axes) => kernels.broadcast(&inputs[0], axes, output, stream),
            KernelOp::Fill(value) => kernels.fill(*value, output, stream),
            KernelOp::Iota { axis, offset } => kernels.iota(*axis, *offset, output, stream),
            KernelOp::Attention { scale, causal } => {
                super::attention::launch(state, kernel, *scale, *causal)
            }
            KernelOp::Matmul
            | KernelOp::MatmulAccumulate
            | KernelOp::MatmulActivation(_)
            | KernelOp::Linear
            | KernelOp::LinearActivation(_)
            | KernelOp::LinearAccumulate => {
                let workspace = Self::workspace(state)?;
                let mut scratch = Scratch::new(state.poison);
                let bias = kernel.inputs.get(2).filter(|_| kernel.op.is_linear());
                for (lhs, rhs, out) in &gemms(kernel) {
                    let gemm = Gemm {
                        lhs,
                        rhs,
                        bias,
                        out,
                        accumulate: matches!(
                            kernel.op,
                            KernelOp::MatmulAccumulate | KernelOp::LinearAccumulate
                        ),
                        activation: kernel.op.activation(),
                    };
                    state
                        .blas
                        .gemm(gemm, stream, workspace, &state.kernels, &mut scratch)?;
                }
                Ok(())
            }
        }
    }

    /// The current stream's workspace for cuBLASLt.
    pub(super) fn workspace(state: &mut State) -> Result<sys::CUdeviceptr> {
        let current = state.current;
        if let Some(workspace) = state.workspaces[current] {
            return Ok(workspace);
        }
        // SAFETY: a plain device allocation, freed when the device drops.
        let workspace =
            unsafe { cu::malloc_sync(blas::WORKSPACE) }.check("allocating a cuBLASLt workspace")?;
        state.workspaces[current] = Some(workspace);
        Ok(workspace)
    }
}

/// The rank-3 GEMMs (`[batch, m, k] x [batch, k, n] -> [batch, m, n]`) of a
/// validated matmul or linear: batch axes that collapse into one stride
/// become the GEMM's batch (folded into `m` when rows continue across it and
/// the rhs is shared); the others are looped over. An operand's batch axis
/// of extent 1 (or one it lacks) has stride 0 there: cuBLASLt reads the same
/// matrix for every entry.
pub(super) fn gemms(kernel: &Kernel) -> Vec<(View, View, View)> {
    let (lhs, out) = (&kernel.inputs[0], &kernel.output);
    // As row-major [batch.., m, k] x [batch.. or none, k, n].
    let (mut lhs, rhs, mut out) = match kernel.op {
        KernelOp::Linear | KernelOp::LinearActivation(_) | KernelOp::LinearAccumulate => {
            let weight = &kernel.inputs[1];
            let transposed = View {
                sizes: smallvec::smallvec![weight.sizes[1], weight.sizes[0]],
                strides: smallvec::smallvec![weight.strides[1], weight.strides[0]],
                ..weight.clone()
            };
            // [B.., K] as [B.., 1, K]: rows fold below.
            let mut lhs = lhs.clone();
            let mut out = out.clone();
            let k = lhs.rank() - 1;
            lhs.sizes.insert(k, 1);
            lhs.strides.insert(k, 0);
            let n = out.rank() - 1;
            out.sizes.insert(n, 1);
            out.strides.insert(n, 0);
            (lhs, transposed, out)
        }
        _ if lhs.rank() == 1 => {
            let mut lhs = lhs.clone();
            lhs.sizes.insert(0, 1);
            lhs.strides.insert(0, 0);
            let mut out = out.clone();
            out.sizes.insert(0, 1);
            out.strides.insert(0, 0);
            (lhs, kernel.inputs[1].clone(), out)
        }
        _ => (lhs.clone(), kernel.inputs[1].clone(), out.clone()),
    };
    // The output's batch axes, and each operand's stride along them: its own
    // (aligned from the right), or 0 where it lacks or broadcasts the axis
    // (torch.matmul's broadcasting: a broadcast matrix is read again, never
    // copied).
    let batch = out.sizes[..out.rank() - 2].to_vec();
    let batch_rank = batch.len();
    let aligned = |view: &View| -> Vec<usize> {
        batch_axes_read(&view.sizes[..view.rank() - 2], &batch)
            .into_iter()
            .map(|axis| axis.map_or(0, |axis| view.strides[axis]))
            .collect()
    };
    let (lhs_batch, rhs_batch) = (aligned(&lhs), aligned(&rhs));
    let out_batch = out.strides[..batch_rank].to_vec();
    let lhs_rows = lhs.rank() - 2;
    // Fold batch axes into m where the rhs is one matrix for every entry and
    // lhs and out rows continue across them.
    let shared = (0..batch_rank).all(|axis| rhs_batch[axis] == 0 || batch[axis] == 1);
    let lhs_whole = (0..batch_rank).all(|axis| lhs_batch[axis] != 0 || batch[axis] == 1);
    if shared && lhs_whole {
        let (sizes, strides) = coalesce(
            &[&batch[..], &[lhs.sizes[lhs_rows]]].concat(),
            &[
                [&lhs_batch[..], &[lhs.strides[lhs_rows]]].concat(),
                [&out_batch[..], &[out.strides[batch_rank]]].concat(),
            ],
        );
        if sizes.len() <= 1 {
            let rows = sizes.first().copied().unwrap_or(1);
            let (ls, os) = (
                strides[0].first().copied().unwrap_or(0),
                strides[1].first().copied().unwrap_or(0),
            );
            lhs = View {
                sizes: smallvec::smallvec![1, rows, lhs.sizes[lhs_rows + 1]],
                strides: smallvec::smallvec![0, ls, lhs.strides[lhs_rows + 1]],
                ..lhs
            };
            out = View {
                sizes: smallvec::smallvec![1, rows, out.sizes[batch_rank + 1]],
                strides: smallvec::smallvec![0, os, out.strides[batch_rank + 1]],
                ..out
            };
            let matrix = rhs.rank() - 2;
            let rhs = View {
                sizes: [&[1][..], &rhs.sizes[matrix..]].concat().into(),
                strides: [&[0][..], &rhs.strides[matrix..]].concat().into(),
                ..rhs
            };
            return vec![(lhs, rhs, out)];
        }
    }
    let (sizes, strides) = coalesce(&batch, &[lhs_batch, rhs_batch, out_batch]);
    let matrix = |view: &View, offset: usize| {
        (
            view.sizes[offset..].to_vec(),
            view.strides[offset..].to_vec(),
        )
    };
    let (lm, rm, om) = (
        matrix(&lhs, lhs_rows),
        matrix(&rhs, rhs.rank() - 2),
        matrix(&out, batch_rank),
    );
    // The innermost collapsed batch axis is the GEMM's; the others loop.
    let (inner, outer) = match sizes.split_last() {
        Some((&inner, outer)) => (inner, outer.to_vec()),
        None => (1, Vec::new()),
    };
    let inner_strides: Vec<usize> = strides
        .iter()
        .map(|s| s.last().copied().unwrap_or(0))
        .collect();
    let outer_count: usize = outer.iter().product();
    let mut gemms = Vec::with_capacity(outer_count);
    for index in 0..outer_count {
        let mut rest = index;
        let mut offsets = [0usize; 3];
        for axis in (0..outer.len()).rev() {
            let i = rest % outer[axis];
            rest /= outer[axis];
            for (offset, view) in offsets.iter_mut().zip(&strides) {
                *offset += i * view[axis];
            }
        }
        let at = |view: &View,
                  (sizes, strides): &(Vec<usize>, Vec<usize>),
                  offset: usize,
                  batch_stride: usize| View {
            ptr: view.ptr.wrapping_add(offset * view.dtype.size()),
            sizes: [&[inner][..], sizes].concat().into(),
            strides: [&[batch_stride][..], strides].concat().into(),
            dtype: view.dtype,
        };
        gemms.push((
            at(&lhs, &lm, offsets[0], inner_strides[0]),
            at(&rhs, &rm, offsets[1], inner_strides[1]),
            at(&out, &om, offsets[2], inner_strides[2]),
        ));
    }
    gemms
}
