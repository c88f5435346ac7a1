//! When attention runs through cuDNN's fused flash attention
//! (`cudnn_sdpa.rs`): [`problem`] says which attentions its graph describes
//! (bf16/f16, `D = Dv` a multiple of 8 up to 128, batch axes that merge into
//! cuDNN's `[b, h]`, unit stride along the head axis, 16-byte aligned rows),
//! and a rank's [`CudnnAttention`] holds its cuDNN handle and a plan per
//! problem, built on first use (building takes tens of milliseconds; a call
//! is one variant pack and `cudnnBackendExecute`). `attention.rs` falls back
//! to HIR's kernels for the rest and for anything cuDNN refuses, each reason
//! logged once at debug level.

use super::Stream;
use super::axes::coalesce;
use super::cudnn::{self, Handle};
use super::cudnn_sdpa::{Key, Plan, Pointers};
use crate::error::{Error, Result};
use crate::memref::View;
use crate::ops::Kernel;
use hir_abi::DType;
use std::collections::{HashMap, HashSet};
use std::ffi::c_void;

/// The largest head dim the graph is built for.
const MAX_HEAD_DIM: usize = 128;

/// `view`'s `[b, h, s, d]` strides, given its coalesced batch strides
/// (`batch` of extents `sizes`): an extent-1 axis gets the stride of a packed
/// layout, so that the strides order the axes as `[b, h, s, d]` do.
fn strides4(view: &View, sizes: &[usize], batch: &[usize]) -> [i64; 4] {
    let rank = view.rank();
    let (rows, row) = (view.sizes[rank - 2], view.strides[rank - 2]);
    let (b, h) = match (sizes, batch) {
        ([], []) => ((rows * row) as i64, (rows * row) as i64),
        ([h], [sh]) => ((*h * *sh) as i64, *sh as i64),
        (_, [sb, sh]) => (*sb as i64, *sh as i64),
        _ => unreachable!("at most two batch axes"),
    };
    [b, h, row as i64, 1]
}

/// The [`Key`] of a validated attention kernel (`q, k, v[, mask]`, `out`),
/// or why cuDNN's graph does not describe it.
pub(super) fn problem(kernel: &Kernel, causal: bool) -> std::result::Result<Key, String> {
    let (q, k, v, out) = (
        &kernel.inputs[0],
        &kernel.inputs[1],
        &kernel.inputs[2],
        &kernel.output,
    );
    let rank = q.rank();
    let (sq, d, sk, dv) = (
        q.sizes[rank - 2],
        q.sizes[rank - 1],
        k.sizes[rank - 2],
        v.sizes[rank - 1],
    );
    let dtype = q.dtype;
    if !matches!(dtype, DType::BF16 | DType::F16) {
        return Err(format!("it takes bf16 and f16, not {}", dtype.mlir()));
    }
    if d != dv || d == 0 || !d.is_multiple_of(8) || d > MAX_HEAD_DIM {
        return Err(format!(
            "head dims {d} and {dv} are not one multiple of 8 up to {MAX_HEAD_DIM}"
        ));
    }
    if sq == 0 || sk == 0 {
        return Err(format!("{sq} queries and {sk} keys"));
    }
    let views = [("q", q), ("k", k), ("v", v), ("out", out)];
    let batch_strides: Vec<Vec<usize>> = views
        .iter()
        .map(|(_, view)| view.strides[..rank - 2].to_vec())
        .collect();
    let (sizes, batch) = coalesce(&q.sizes[..rank - 2], &batch_strides);
    if sizes.len() > 2 {
        return Err(format!(
            "batch axes {:?} merge into {} axes, not cuDNN's two ([b, h])",
            &q.sizes[..rank - 2],
            sizes.len()
        ));
    }
    let aligned = |view: &View, strides: &[usize]| {
        let words = 16 / view.dtype.size();
        view.strides[view.rank() - 1] == 1
            && strides
                .iter()
                .all(|&stride| stride.is_multiple_of(words) && stride != 0)
            && (view.ptr as usize).is_multiple_of(16)
    };
    // Addresses are named by their offset from 16 bytes, so that the
    // reasons logged once each stay few.
    let unaligned = |name: &str, view: &View| {
        format!(
            "{name} (strides {:?}, address 16n + {}) is not rows of unit stride, \
             16-byte aligned and apart, distinct per batch entry",
            view.strides,
            view.ptr as usize % 16
        )
    };
    for ((name, view), batch) in views.iter().zip(&batch) {
        let rows = [view.strides[rank - 2]];
        if !aligned(view, &[&rows[..], batch].concat()) {
            return Err(unaligned(name, view));
        }
    }
    let mask = match kernel.inputs.get(3) {
        Some(mask) if aligned(mask, &mask.strides[..1]) => Some(mask.strides[0] as i64),
        Some(mask) => return Err(unaligned("the mask", mask)),
        None => None,
    };
    let (b, h) = match sizes[..] {
        [] => (1, 1),
        [h] => (1, h),
        [b, h] => (b, h),
        _ => unreachable!("checked above"),
    };
    let strides = [0, 1, 2, 3].map(|i| strides4(views[i].1, &sizes, &batch[i]));
    Ok(Key {
        dtype,
        b: b as i64,
        h: h as i64,
        sq: sq as i64,
        sk: sk as i64,
        d: d as i64,
        strides,
        mask,
        causal,
    })
}

/// A plan ready for a call: found by [`CudnnAttention::prepare`], run by
/// [`CudnnAttention::execute`].
pub(super) struct Prepared {
    key: Key,
    /// Bytes of workspace the plan takes; 0 for none.
    pub workspace: usize,
}

/// A rank's cuDNN attention: its handle (made on first use, on the rank's
/// context) and its plans by problem, with the problems cuDNN refused and why.
#[derive(Default)]
pub(crate) struct CudnnAttention {
    handle: Option<std::result::Result<Handle, String>>,
    plans: HashMap<Key, std::result::Result<Plan, String>>,
    /// Reasons for declining logged so far, each logged once.
    logged: HashSet<String>,
}

impl CudnnAttention {
    /// Logs `why` once (at debug level: HIR's kernels run instead) and
    /// returns it as the error.
    fn decline(&mut self, why: String) -> Error {
        if self.logged.insert(why.clone()) {
            tracing::debug!(reason = %why, "attention runs HIR's kernel, not cuDNN");
        }
        Error::Cuda(format!(
            "cuDNN's fused attention does not run this attention: {why}"
        ))
    }

    /// The plan of `kernel` (built on first use; not while `capturing`, when
    /// cuDNN's set-up would break the capture), or why cuDNN does not run it.
    pub fn prepare(&mut self, kernel: &Kernel, causal: bool, capturing: bool) -> Result<Prepared> {
        let version = match cudnn::available() {
            Ok(version) => version,
            Err(why) => return Err(self.decline(why)),
        };
        if version == 9_10_00 || version == 9_10_01 {
            return Err(self.decline(format!(
                "cuDNN {} has known bugs in bf16/f16 attention (fixed in 9.10.2)",
                cudnn::version_string(version)
            )));
        }
        let key = match problem(kernel, causal) {
            Ok(key) => key,
            Err(why) => return Err(self.decline(why)),
        };
        if capturing && !self.plans.contains_key(&key) {
            return Err(self.decline(format!(
                "no plan for {key:?} was built before the capture (run the program once first)"
            )));
        }
        if self.handle.is_none() {
            self.handle = Some(Handle::new().map_err(|error| error.to_string()));
        }
        let handle = match self.handle.as_ref().expect("set above") {
            Ok(handle) => handle,
            Err(why) => {
                let why = why.clone();
                return Err(self.decline(why));
            }
        };
        if !self.plans.contains_key(&key) {
            let plan = Plan::new(handle, &key).map_err(|error| error.to_string());
            self.plans.insert(key.clone(), plan);
        }
        match &self.plans[&key] {
            Ok(plan) => Ok(Prepared {
                workspace: plan.workspace,
                key,
            }),
            Err(why) => {
                let why = format!("{key:?}: {why}");
                Err(self.decline(why))
            }
        }
    }

    /// Enqueues `prepared`'s plan for `kernel` on `stream`, with `workspace`
    /// (device memory of at least `prepared.workspace` bytes).
    pub fn execute(
        &mut self,
        prepared: &Prepared,
        kernel: &Kernel,
        scale: f64,
        stream: Stream,
        workspace: u64,
    ) -> Result<()> {
        let pointer = |view: &View| view.ptr.cast::<c_void>();
        let pointers = Pointers {
            q: pointer(&kernel.inputs[0]),
            k: pointer(&kernel.inputs[1]),
            v: pointer(&kernel.inputs[2]),
            out: pointer(&kernel.output),
            mask: kernel.inputs.get(3).map(pointer),
            scale: scale as f32,
            workspace: workspace as *mut c_void,
        };
        let (Some(Ok(handle)), Some(Ok(plan))) =
            (self.handle.as_ref(), self.plans.get(&prepared.key))
        else {
            unreachable!("`prepare` made the handle and the plan");
        };
        let result = handle
            .set_stream(stream)
            .and_then(|()| plan.execute(handle, &prepared.key, pointers));
        if let Err(error) = &result {
            // Not tried again for this problem.
            tracing::warn!(%error, "cuDNN attention failed; HIR's kernel runs instead");
            let failed = format!("its plan failed to run: {error}");
            self.plans.insert(prepared.key.clone(), Err(failed));
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::KernelOp;

    fn kernel(dtype: DType, batch: &[usize], sq: usize, sk: usize, d: usize) -> Kernel {
        // Fake, 16-byte aligned device addresses: `problem` reads no memory.
        let at = |offset: usize| (0x1000_0000usize + offset * 0x100_0000) as *mut u8;
        let shape = |rows: usize| [batch, &[rows, d][..]].concat();
        Kernel {
            op: KernelOp::Attention {
                scale: 0.125,
                causal: true,
            },
            inputs: vec![
                View::contiguous(dtype, at(0), &shape(sq)),
                View::contiguous(dtype, at(1), &shape(sk)),
                View::contiguous(dtype, at(2), &shape(sk)),
            ],
            output: View::contiguous(dtype, at(3), &shape(sq)),
        }
    }

    /// Batch axes map to `[b, h]`; a dense `[B, H, S, D]` keeps its strides.
    #[test]
    fn batch_axes_become_b_and_h() {
        let key = problem(&kernel(DType::BF16, &[2, 3], 200, 300, 64), true).unwrap();
        // A dense [2, 3] merges into one axis: h = 6 under b = 1.
        assert_eq!((key.b, key.h, key.sq, key.sk, key.d), (1, 6, 200, 300, 64));
        assert_eq!(key.strides[0], [6 * 200 * 64, 200 * 64, 64, 1]);
        assert_eq!(key.strides[1], [6 * 300 * 64, 300 * 64, 64, 1]);
        let key = problem(&kernel(DType::F16, &[], 1, 33, 64), false).unwrap();
        assert_eq!((key.b, key.h), (1, 1));
        assert_eq!(key.strides[0], [64, 64, 64, 1]);
    }

    /// Q, K, V sliced from one packed `[s, 3, heads, d]` projection.
    #[test]
    fn interleaved_heads_keep_their_strides() {
        let mut kernel = kernel(DType::BF16, &[4], 160, 160, 128);
        for view in &mut kernel.inputs {
            view.strides = smallvec::smallvec![128, 3 * 4 * 128, 1];
        }
        let key = problem(&kernel, true).unwrap();
        assert_eq!(key.strides[0], [4 * 128, 128, 3 * 4 * 128, 1]);
        assert_eq!(key.strides[3], [4 * 160 * 128, 160 * 128, 128, 1]);
    }

    /// What the graph does not describe falls back, saying why.
    #[test]
    fn problems_cudnn_does_not_take_say_why() {
        let why = |kernel: &Kernel| problem(kernel, false).unwrap_err();
        assert!(why(&kernel(DType::F32, &[2], 64, 64, 64)).contains("not f32"));
        assert!(why(&kernel(DType::BF16, &[2], 64, 64, 80 + 4)).contains("multiple of 8"));
        assert!(why(&kernel(DType::BF16, &[2], 64, 64, 256)).contains("up to 128"));
        assert!(why(&kernel(DType::BF16, &[2], 64, 0, 64)).contains("0 keys"));
        let mut odd = kernel(DType::BF16, &[2], 64, 64, 64);
        odd.inputs[1].ptr = odd.inputs[1].ptr.wrapping_add(2);
        assert!(why(&odd).contains("k (strides"));
        let mut sliced = kernel(DType::BF16, &[2, 3, 4], 64, 64, 64);
        for view in sliced.inputs.iter_mut().chain([&mut sliced.output]) {
            view.strides[1] *= 2;
            view.strides[0] *= 4;
        }
        assert!(why(&sliced).contains("merge into 3 axes"));
    }
}
