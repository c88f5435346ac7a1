//! The cuda backend's fused attention kernel (placeholder while the kernel
//! is written on this branch; never merged as is).

use super::Stream;
use crate::error::{Error, Result};
use crate::ops::Kernel;

/// Enqueues a validated attention kernel (`q, k, v[, mask]`, then `out`) on `stream`.
pub(super) fn launch(kernel: &Kernel, scale: f64, causal: bool, stream: Stream) -> Result<()> {
    let _ = (kernel, scale, causal, stream);
    Err(Error::Cuda("attention is not written yet".into()))
}
