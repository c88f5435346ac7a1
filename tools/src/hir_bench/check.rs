//! How `hir-bench run` checks a variant's output: each rank's entries
//! finite and, sampled, against f64 dot products of the inputs; the whole
//! output against the full reference (the GEMM alone's output, or the sum
//! of its partials); the ranks' checks combined into one [`Check`] through
//! the store.

use crate::cli::Run;
use crate::data::{self, Inputs};
use anyhow::{Result, bail};
use hir_abi::DType;
use hir_tools::launch::{Peers, combine};
use hir_tools::programs::Logical;
use hir_tools::tensor::{self, Rng};

/// A variant's output check, over every rank.
pub struct Check {
    /// `max |out - ref| / max |ref|` over the sampled entries, against f64
    /// references computed from the inputs.
    pub sample_error: f64,
    pub samples: usize,
    /// The same over every entry of every rank, against the full reference
    /// (the GEMM alone's output, or the inputs for the collectives alone).
    pub full_error: Option<f64>,
    pub tolerance: f64,
    pub ok: bool,
}

/// The logical output of the GEMM alone, as the reference of its family:
/// the C of the first rank here (ag: every rank computes all of C), or the
/// sum of every rank's partial product (rs, ar), which ranks in processes
/// bring to each other through the store.
pub(crate) fn full_output(
    peers: &Peers,
    dtype: DType,
    output: Logical,
    outputs: &[&[u8]],
) -> Result<Vec<f32>> {
    if output != Logical::Partial {
        return data::load_all(dtype, outputs[0]);
    }
    let size = dtype.size();
    let len = outputs[0].len() / size;
    let mut sum = hir_tools::tensor::reserve(len, &[len])?;
    sum.resize(len, 0.0f32);
    peers.all_ranks_in_pieces("gemm-output", outputs, size, |offset, pieces| {
        for piece in pieces {
            for (index, value) in sum[offset / size..][..piece.len() / size]
                .iter_mut()
                .enumerate()
            {
                *value += data::load(dtype, piece, index);
            }
        }
    })?;
    Ok(sum)
}

/// What a rank's output is checked against.
pub(crate) struct Target<'a> {
    pub(crate) output: Logical,
    /// The output's global shape and its `didx` axis.
    pub(crate) shape: &'a [usize],
    pub(crate) didx: Option<usize>,
    /// The full reference, by global index, where there is one.
    pub(crate) full: Option<&'a (dyn Fn(usize) -> f64 + Sync)>,
}

/// One rank's share of a [`Check`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RankCheck {
    /// Whether every entry is finite.
    pub(crate) finite: bool,
    /// `max |out - ref|` and `max |ref|` over the sampled entries.
    pub(crate) sample_diff: f64,
    pub(crate) sample_scale: f64,
    pub(crate) samples: usize,
    /// The same over every entry, against the full reference (0 without).
    pub(crate) full_diff: f64,
    pub(crate) full_scale: f64,
}

impl RankCheck {
    pub(crate) fn to_bytes(self) -> Vec<u8> {
        combine::to_bytes(&[
            f64::from(u8::from(self.finite)),
            self.sample_diff,
            self.sample_scale,
            self.samples as f64,
            self.full_diff,
            self.full_scale,
        ])
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<RankCheck> {
        match combine::from_bytes(bytes, "a rank's check")?[..] {
            [
                finite,
                sample_diff,
                sample_scale,
                samples,
                full_diff,
                full_scale,
            ] => Ok(RankCheck {
                finite: finite != 0.0,
                sample_diff,
                sample_scale,
                samples: samples as usize,
                full_diff,
                full_scale,
            }),
            ref other => bail!("a rank's check has 6 numbers, not {}", other.len()),
        }
    }
}

impl Check {
    /// The check of every rank's output, from each rank's share.
    pub(crate) fn of(ranks: &[RankCheck], full: bool, dtype: DType) -> Check {
        let finite = ranks.iter().all(|rank| rank.finite);
        let max = |field: fn(&RankCheck) -> f64| ranks.iter().map(field).fold(0.0f64, f64::max);
        let relative = |diff: f64, scale: f64| {
            if finite {
                diff / scale.max(f64::MIN_POSITIVE)
            } else {
                f64::INFINITY
            }
        };
        let sample_error = relative(max(|rank| rank.sample_diff), max(|rank| rank.sample_scale));
        let full_error =
            full.then(|| relative(max(|rank| rank.full_diff), max(|rank| rank.full_scale)));
        let tolerance = tensor::tolerance(dtype);
        Check {
            sample_error,
            samples: ranks.iter().map(|rank| rank.samples).sum(),
            full_error,
            tolerance,
            ok: sample_error <= tolerance && full_error.is_none_or(|error| error <= tolerance),
        }
    }
}

/// Checks rank `rank`'s output `bytes`: every entry finite and against the
/// full reference where there is one, and `--samples` entries (the first,
/// the last, the others drawn from a generator seeded by the seed and the
/// rank) against f64 references computed from the inputs.
pub(crate) fn check_rank(
    run: &Run,
    inputs: &Inputs,
    target: &Target,
    rank: usize,
    bytes: &[u8],
) -> RankCheck {
    let dtype = inputs.params.dtype;
    let len = bytes.len() / dtype.size();
    let global = |local: usize| data::global_index(target.shape, target.didx, rank, local);
    let (mut finite, mut full_diff, mut full_scale) = (true, 0.0f64, 0.0f64);
    for local in 0..len {
        let value = f64::from(data::load(dtype, bytes, local));
        finite &= value.is_finite();
        if let Some(full) = target.full {
            let expected = full(global(local));
            full_diff = full_diff.max((value - expected).abs());
            full_scale = full_scale.max(expected.abs());
        }
    }
    let picks: Vec<usize> = if len <= run.samples {
        (0..len).collect()
    } else {
        let mut rng = Rng::new((run.seed ^ 0x5eed).wrapping_add(rank as u64));
        let mut picks = vec![0, len - 1];
        picks.extend((2..run.samples).map(|_| (rng.next_u64() % len as u64) as usize));
        picks
    };
    let (mut sample_diff, mut sample_scale) = (0.0f64, 0.0f64);
    for &local in &picks {
        let value = f64::from(data::load(dtype, bytes, local));
        let expected = inputs.expected(target.output, global(local));
        sample_diff = sample_diff.max((value - expected).abs());
        sample_scale = sample_scale.max(expected.abs());
    }
    RankCheck {
        finite,
        sample_diff,
        sample_scale,
        samples: picks.len(),
        full_diff,
        full_scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(finite: bool, sample: (f64, f64), full: (f64, f64)) -> RankCheck {
        RankCheck {
            finite,
            sample_diff: sample.0,
            sample_scale: sample.1,
            samples: 4,
            full_diff: full.0,
            full_scale: full.1,
        }
    }

    #[test]
    fn ranks_checks_combine_as_one() {
        let ranks = [
            rank(true, (0.01, 2.0), (0.02, 2.0)),
            rank(true, (0.03, 1.0), (0.01, 4.0)),
        ];
        let travelled: Vec<RankCheck> = ranks
            .iter()
            .map(|check| RankCheck::from_bytes(&check.to_bytes()).unwrap())
            .collect();
        assert_eq!(travelled, ranks);
        // The largest difference over the largest reference, of all ranks.
        let check = Check::of(&ranks, true, DType::BF16);
        assert_eq!((check.sample_error, check.samples), (0.03 / 2.0, 8));
        assert_eq!(check.full_error, Some(0.02 / 4.0));
        assert!(check.ok);
        assert_eq!(Check::of(&ranks, false, DType::BF16).full_error, None);
        // One rank's non-finite entry fails the check.
        let check = Check::of(
            &[ranks[0], rank(false, (0.0, 1.0), (0.0, 1.0))],
            true,
            DType::F32,
        );
        assert_eq!(check.sample_error, f64::INFINITY);
        assert!(!check.ok);
        assert!(RankCheck::from_bytes(&combine::to_bytes(&[1.0])).is_err());
    }
}
