//! Choosing how a program overlaps its communication by timing it: the
//! variants of `hir-lower` a run may pick from (no overlap, rooted
//! broadcasts and reduces, NCCL rings, CUDA-IPC rings), the rule that picks
//! the fastest, and the choice kept on disk beside the compile cache, so
//! that a later run of the same program on the same ranks and GPUs picks
//! without timing.
//!
//! Measured, not modelled: on 2×H200 the same block is fastest with CUDA-IPC
//! rings while, at D = 4, some GEMM+RS shapes are fastest with no overlap
//! at all (docs/benchmarks.md); a constant model gets one of them wrong.
//! No overlap is always a candidate, so the choice is never slower than it
//! by more than the timing's noise.

use crate::cache::{Build, Cache, Key};
use hir_passes::{LowerOptions, Overlap, P2p};

/// Which of the options a run may vary: those the user did not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Free {
    /// Whether `overlap` may be `none` or `auto`.
    pub overlap: bool,
    /// Whether `p2p` may be any of its values.
    pub p2p: bool,
}

/// The variants to time: `given` with its free options varied, in the
/// order of preference on a tie (the simplest first), each passing
/// [`LowerOptions::check`], none twice. `given` itself is one of them.
pub fn candidates(given: &LowerOptions, free: Free) -> Vec<LowerOptions> {
    let transports: Vec<P2p> = if free.p2p {
        vec![P2p::None, P2p::Nccl, P2p::Cuda]
    } else {
        vec![given.p2p]
    };
    // Without overlap, `p2p` changes only the stream loops a program wrote,
    // which overlap=auto leaves as written too: the transports are varied
    // under overlap=auto alone.
    let mut variants = Vec::new();
    if free.overlap {
        variants.push(LowerOptions {
            overlap: Overlap::None,
            ..given.clone()
        });
    }
    let overlap = if free.overlap {
        Overlap::Auto
    } else {
        given.overlap
    };
    variants.extend(transports.into_iter().map(|p2p| LowerOptions {
        overlap,
        p2p,
        ..given.clone()
    }));
    let mut kept: Vec<LowerOptions> = Vec::new();
    for variant in variants {
        if variant.check().is_ok() && !kept.contains(&variant) {
            kept.push(variant);
        }
    }
    if !kept.contains(given) {
        kept.insert(0, given.clone());
    }
    kept
}

/// The index of the fastest of `times` (ms, one per candidate, in
/// [`candidates`] order): the first one within `tolerance` (a fraction) of
/// the least, so that noise does not trade a simpler variant for a
/// complicated one that is no faster. None when there is no finite time.
pub fn fastest(times: &[f64], tolerance: f64) -> Option<usize> {
    let least = times
        .iter()
        .copied()
        .filter(|time| time.is_finite())
        .fold(f64::INFINITY, f64::min);
    times
        .iter()
        .position(|&time| time.is_finite() && time <= least * (1.0 + tolerance))
}

/// The chosen variants, kept in the compile cache's directory.
pub struct Choices {
    cache: Cache,
}

impl Choices {
    /// In the cache the environment selects (`HIR_CACHE_DIR`, `HIR_CACHE=0`).
    pub fn from_env() -> Choices {
        Choices::in_cache(Cache::from_env())
    }

    pub fn in_cache(cache: Cache) -> Choices {
        Choices { cache }
    }

    /// The key of program `source` run with `given` where `machine` names
    /// what the timing depends on beyond the program: the backend, the ranks
    /// and their GPUs.
    pub fn key(source: &str, given: &LowerOptions, free: Free, machine: &str) -> Option<Key> {
        let build = Build::current().ok()?;
        let what = format!("tune v1\0{}\0{free:?}\0{machine}", given.render());
        Some(Key::new(source, &what, build))
    }

    /// The variant chosen before under `key`, if one is kept and still
    /// parses and passes the options' rules.
    pub fn load(&self, key: &Key) -> Option<LowerOptions> {
        let bytes = self.cache.load(key)?;
        let text = String::from_utf8(bytes).ok()?;
        LowerOptions::parse(&text)
            .ok()
            .filter(|options| options.check().is_ok())
    }

    /// Keeps `chosen` under `key`; a cache that cannot be written is
    /// logged and otherwise ignored: the next run times again.
    pub fn store(&self, key: &Key, chosen: &LowerOptions) {
        if let Err(error) = self.cache.store(key, chosen.render().as_bytes()) {
            tracing::debug!(%error, "the chosen variant is not kept");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hir_passes::Choice as _;

    const ALL: Free = Free {
        overlap: true,
        p2p: true,
    };

    fn names(variants: &[LowerOptions]) -> Vec<String> {
        variants
            .iter()
            .map(|options| format!("{}/{}", options.overlap.name(), options.p2p.name()))
            .collect()
    }

    #[test]
    fn every_free_option_is_varied_and_the_rules_kept() {
        let given = LowerOptions::default();
        assert_eq!(
            names(&candidates(&given, ALL)),
            ["none/none", "auto/none", "auto/nccl", "auto/cuda"]
        );
        // allgather=broadcast needs p2p=none: no ring variant passes.
        let broadcast: LowerOptions = LowerOptions::parse("allgather=broadcast").unwrap();
        assert_eq!(
            names(&candidates(&broadcast, ALL)),
            ["none/none", "auto/none"]
        );
    }

    #[test]
    fn a_given_option_is_kept() {
        let given = LowerOptions::parse("p2p=nccl").unwrap();
        let fixed_p2p = Free { p2p: false, ..ALL };
        assert_eq!(
            names(&candidates(&given, fixed_p2p)),
            ["none/nccl", "auto/nccl"]
        );
        let nothing = Free {
            overlap: false,
            p2p: false,
        };
        assert_eq!(candidates(&given, nothing), vec![given]);
    }

    #[test]
    fn the_fastest_within_the_tolerance_is_the_first() {
        assert_eq!(fastest(&[10.0, 9.0, 8.0], 0.0), Some(2));
        assert_eq!(fastest(&[10.0, 9.0, 8.0], 0.2), Some(1));
        assert_eq!(fastest(&[8.1, 9.0, 8.0], 0.02), Some(0));
        assert_eq!(fastest(&[f64::NAN, 3.0], 0.0), Some(1));
        assert_eq!(fastest(&[f64::INFINITY], 0.0), None);
        assert_eq!(fastest(&[], 0.0), None);
    }

    #[test]
    fn a_choice_is_kept_per_key() {
        let dir = std::env::temp_dir().join(format!("hir-tune-test-{}", std::process::id()));
        let choices = Choices::in_cache(Cache::at(&dir));
        let given = LowerOptions::default();
        let key = Choices::key("program", &given, ALL, "cuda 2 H200").unwrap();
        let other = Choices::key("program", &given, ALL, "cuda 4 H200").unwrap();
        assert_ne!(key, other);
        assert_eq!(choices.load(&key), None);
        let chosen = LowerOptions::parse("p2p=cuda").unwrap();
        choices.store(&key, &chosen);
        assert_eq!(choices.load(&key), Some(chosen));
        assert_eq!(choices.load(&other), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
