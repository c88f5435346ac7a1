//! What `hir-bench run` gave: a row per (family, shape, variant) and its
//! outcome, and the setup a report states. The measuring (`bench.rs`) makes
//! them; the tables, JSON and charts (`report.rs`, `plot.rs`) read them.

use crate::check::Check;
use crate::cli::Run;
use crate::provenance::Provenance;
use hir::passes::P2p;
use hir_tools::programs::{Family, Variant};

/// `(M, K, N)`.
pub type Shape = (usize, usize, usize);

/// What one (family, shape, variant) gave.
pub struct Row {
    pub family: Family,
    pub shape: Shape,
    pub variant: Variant,
    pub program: &'static str,
    pub p2p: P2p,
    pub outcome: Outcome,
}

pub enum Outcome {
    /// Not run, and why.
    Skipped(String),
    Measured(Measure),
}

pub struct Measure {
    /// Per iteration, the slowest rank's time (ms).
    pub times: Vec<f64>,
    pub median_ms: f64,
    pub min_ms: f64,
    /// Per-GPU TFLOP/s at the median time (variants with a GEMM).
    pub tflops: Option<f64>,
    /// The GEMM alone's median time over this one's (variants with a GEMM,
    /// when the GEMM alone ran).
    pub ratio: Option<f64>,
    /// Bus bandwidth in GB/s, as nccl-tests defines it (the collective alone).
    pub busbw: Option<f64>,
    pub check: Check,
}

/// The settings a report states, and what made its numbers.
pub struct Setup<'a> {
    pub run: &'a Run,
    pub provenance: Provenance,
}
