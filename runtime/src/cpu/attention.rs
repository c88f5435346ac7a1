//! The cpu backend's fused attention: the reference of the cuda kernel's
//! algorithm, FlashAttention-2's blocked online softmax, step for step.
//!
//! Each query row walks the keys in blocks of [`KEY_BLOCK`], keeping a
//! running max `m`, a running sum `l` and an f32 accumulator of `Dv`
//! values. Per block: the scores `s = q k^T scale (+ mask)` in f32, the new
//! max, `acc` and `l` rescaled by `exp(m_old - m_new)`, `p = exp(s - m_new)`;
//! `l` sums the f32 `p`, while `p` is rounded to the input element type
//! before it multiplies `v` (the GPU's second MMA takes bf16/f16 `p`). The
//! output is `acc / l`, rounded once when stored. With `causal`, the blocks
//! wholly above the diagonal are skipped, and the keys above it in the
//! diagonal block score -inf.
//!
//! The views are read into contiguous f32 as by every cpu kernel
//! (`super::elements::load`, which follows their strides); like the cpu
//! matmul, the kernel runs on its stream's thread.

use super::elements::{filled, load, round};
use crate::error::Result;
use crate::ops::Kernel;
use hir_abi::DType;

/// Keys per block: the cuda kernel's key tile (FlashAttention-2's `kBlockN`).
pub(super) const KEY_BLOCK: usize = 64;

/// The extents of one batch entry's problem.
#[derive(Clone, Copy)]
struct Extents {
    sq: usize,
    sk: usize,
    d: usize,
    dv: usize,
}

/// One batch entry's contiguous operands, and what every row shares.
struct Problem<'a> {
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    /// `[Sq, Sk]`, shared by every batch entry.
    mask: Option<&'a [f32]>,
    extents: Extents,
    scale: f32,
    causal: bool,
    /// The inputs' element type, to which `p` is rounded.
    dtype: DType,
}

/// The output's values (row-major `[B.., Sq, Dv]`) of a validated attention
/// kernel, in f32: `store` rounds them to the output's type.
pub(super) fn run(kernel: &Kernel, scale: f64, causal: bool) -> Result<Vec<f32>> {
    let (q, k, v) = (&kernel.inputs[0], &kernel.inputs[1], &kernel.inputs[2]);
    let rank = q.rank();
    let extents = Extents {
        sq: q.sizes[rank - 2],
        sk: k.sizes[rank - 2],
        d: q.sizes[rank - 1],
        dv: v.sizes[rank - 1],
    };
    let Extents { sq, sk, d, dv } = extents;
    let batch: usize = q.sizes[..rank - 2].iter().product();
    let (q_values, k_values, v_values) = (load(q)?, load(k)?, load(v)?);
    let mask = kernel.inputs.get(3).map(load).transpose()?;
    let mut out = filled(batch * sq * dv, 0f32)?;
    let mut scratch = Scratch {
        scores: filled(KEY_BLOCK, 0f32)?,
        acc: filled(dv, 0f32)?,
    };
    for b in 0..batch {
        let problem = Problem {
            q: &q_values[b * sq * d..][..sq * d],
            k: &k_values[b * sk * d..][..sk * d],
            v: &v_values[b * sk * dv..][..sk * dv],
            mask: mask.as_deref(),
            extents,
            scale: scale as f32,
            causal,
            dtype: q.dtype,
        };
        for (i, row) in out[b * sq * dv..][..sq * dv]
            .chunks_exact_mut(dv.max(1))
            .enumerate()
        {
            problem.row(i, row, &mut scratch);
        }
    }
    Ok(out)
}

/// A row's working memory, reused from row to row.
struct Scratch {
    /// One block's scores.
    scores: Vec<f32>,
    /// The running `sum p v`.
    acc: Vec<f32>,
}

impl Problem<'_> {
    /// Query row `i`'s output into `out` (`Dv` values).
    fn row(&self, i: usize, out: &mut [f32], scratch: &mut Scratch) {
        let Extents { sk, d, dv, .. } = self.extents;
        let query = &self.q[i * d..][..d];
        let acc = &mut scratch.acc;
        acc.fill(0.0);
        let (mut m, mut l) = (f32::NEG_INFINITY, 0f32);
        // Past the block holding key `i`, every key is hidden from row `i`.
        let end = if self.causal { sk.min(i + 1) } else { sk };
        for start in (0..end).step_by(KEY_BLOCK) {
            let keys = start..sk.min(start + KEY_BLOCK);
            let scores = &mut scratch.scores[..keys.len()];
            for (score, j) in scores.iter_mut().zip(keys.clone()) {
                *score = if self.causal && j > i {
                    f32::NEG_INFINITY
                } else {
                    let dot: f32 = query
                        .iter()
                        .zip(&self.k[j * d..][..d])
                        .map(|(x, y)| x * y)
                        .sum();
                    let bias = self.mask.map_or(0.0, |mask| mask[i * sk + j]);
                    dot * self.scale + bias
                };
            }
            let m_new = scores.iter().fold(m, |max, &score| max.max(score));
            // While every score so far is -inf, subtract 0 rather than -inf
            // (FlashAttention's `Check_inf`): p is 0, never NaN.
            let base = if m_new == f32::NEG_INFINITY {
                0.0
            } else {
                m_new
            };
            let rescale = (m - base).exp();
            l *= rescale;
            acc.iter_mut().for_each(|a| *a *= rescale);
            for (&score, j) in scores.iter().zip(keys) {
                let p = (score - base).exp();
                l += p;
                let p = round(self.dtype, p);
                for (a, &x) in acc.iter_mut().zip(&self.v[j * dv..][..dv]) {
                    *a += p * x;
                }
            }
            m = m_new;
        }
        // A row that sees no key has l = 0: zeros, not 0 / 0.
        for (o, &a) in out.iter_mut().zip(acc.iter()) {
            *o = if l == 0.0 { 0.0 } else { a / l };
        }
    }
}
