//! The cuda backend's attention: cuDNN's fused flash attention where cuDNN
//! is here and takes the problem (`cudnn_attention.rs`), else HIR's own
//! kernels; `HIR_ATTENTION` ([`Path`]) picks.
//!
//! HIR's kernels are `attention.cu` (after `kernels.cu`, for its element
//! types) compiled by NVRTC one entry at a time, on first use per
//! (architecture, entry), and loaded once per context. A bf16/f16 attention
//! whose head dims are equal, one of [`FLASH_DIMS`], with contiguous rows
//! aligned for 16-byte copies runs the tensor-core kernel
//! (`hir_flash_<t>_<d>`); any other, up to [`MAX_ROWS_DIM`], runs the
//! warp-per-row kernel (`hir_attention_rows_<t>`), which takes any strides.

use super::axes::coalesce;
use super::{Check, CudaDevice, State, Stream, nvrtc};
use crate::error::{Error, Result};
use crate::lock;
use crate::memref::View;
use crate::ops::Kernel;
use cudarc::driver::{result as cu, sys};
use hir_abi::DType;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Which implementation runs an attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// cuDNN's fused attention where cuDNN is here and takes the problem,
    /// else HIR's kernels (the default; `HIR_ATTENTION=cudnn`). Why cuDNN
    /// did not run is logged once per reason at debug level (`tracing`).
    Prefer,
    /// HIR's kernels only (`HIR_ATTENTION=flash`).
    Flash,
    /// cuDNN only: an attention it does not run is an error (tests).
    Cudnn,
}

/// The path forced by [`force`] (tests), as `Path as u8 + 1`; 0 for none.
static FORCED: AtomicU8 = AtomicU8::new(0);

/// The path `HIR_ATTENTION` names, read once per process; unset is
/// [`Path::Prefer`].
fn configured() -> Result<Path> {
    static CONFIGURED: OnceLock<std::result::Result<Path, String>> = OnceLock::new();
    CONFIGURED
        .get_or_init(|| match std::env::var("HIR_ATTENTION") {
            Err(std::env::VarError::NotPresent) => Ok(Path::Prefer),
            Ok(value) if value == "cudnn" => Ok(Path::Prefer),
            Ok(value) if value == "flash" => Ok(Path::Flash),
            Ok(value) => Err(format!(
                "HIR_ATTENTION is `{value}`; it takes `cudnn` (the default) or `flash`"
            )),
            Err(error) => Err(format!("HIR_ATTENTION is unreadable: {error}")),
        })
        .clone()
        .map_err(Error::Invalid)
}

/// The path attentions take now.
fn path() -> Result<Path> {
    match FORCED.load(Ordering::Relaxed) {
        1 => Ok(Path::Prefer),
        2 => Ok(Path::Flash),
        3 => Ok(Path::Cudnn),
        _ => configured(),
    }
}

/// While held, every attention of the process takes `path` ([`force`]).
#[cfg(test)]
pub(super) struct Forced {
    _turn: std::sync::MutexGuard<'static, ()>,
}

#[cfg(test)]
impl Drop for Forced {
    fn drop(&mut self) {
        FORCED.store(0, Ordering::Relaxed);
    }
}

/// Makes every attention take `path` until the guard drops, whatever
/// `HIR_ATTENTION` says; one guard at a time (the tests that hold one run
/// one after another).
#[cfg(test)]
pub(super) fn force(path: Path) -> Forced {
    static TURN: Mutex<()> = Mutex::new(());
    let turn = lock(&TURN);
    FORCED.store(path as u8 + 1, Ordering::Relaxed);
    Forced { _turn: turn }
}

/// Must match `HIR_ATT_MAX_BATCH` in `attention.cu`.
const MAX_BATCH: usize = 4;
/// `HIR_BM`, `HIR_BN` and `HIR_THREADS` of `attention.cu`.
const FLASH_ROWS: usize = 128;
const FLASH_KEYS: usize = 64;
const FLASH_THREADS: u32 = 256;
/// The head dims the tensor-core kernel is instantiated for.
const FLASH_DIMS: [usize; 4] = [32, 64, 96, 128];
/// The warp-per-row kernel holds 8 elements of a row per lane.
const MAX_ROWS_DIM: usize = 256;
const ROWS_PER_BLOCK: usize = 4;
/// The largest grid `y` extent; more batch entries take more launches.
const MAX_GRID_Y: usize = 65535;

/// `AttnTensor` of `attention.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Tensor {
    ptr: u64,
    row_stride: i64,
    col_stride: i64,
    batch_strides: [i64; MAX_BATCH],
}

/// `AttnParams` of `attention.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Params {
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    mask: u64,
    mask_row_stride: i64,
    mask_col_stride: i64,
    batch_rank: i64,
    batch_sizes: [i64; MAX_BATCH],
    batch_base: i64,
    sq: i64,
    sk: i64,
    d: i64,
    dv: i64,
    causal: i64,
    scale_log2: f64,
}

/// Which kernel runs an attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Variant {
    Flash(DType, usize),
    Rows(DType),
}

impl Variant {
    fn name(self) -> String {
        match self {
            Variant::Flash(dtype, d) => format!("hir_flash_{}_{d}", dtype.mlir()),
            Variant::Rows(dtype) => format!("hir_attention_rows_{}", dtype.mlir()),
        }
    }

    /// `attention.cu`'s template instance behind the entry.
    fn body(self) -> String {
        match self {
            Variant::Flash(DType::BF16, d) => format!("flash<MmaBF16, {d}>"),
            Variant::Flash(_, d) => format!("flash<MmaF16, {d}>"),
            Variant::Rows(dtype) => format!("attention_rows<{}>", element(dtype)),
        }
    }

    /// Dynamic shared memory: the Q tile and two K and two V tiles, rows
    /// padded by 8 elements.
    fn shared_bytes(self) -> usize {
        match self {
            Variant::Flash(dtype, d) => (FLASH_ROWS + 4 * FLASH_KEYS) * (d + 8) * dtype.size(),
            Variant::Rows(_) => 0,
        }
    }

    fn source(self) -> String {
        format!(
            "{}{}extern \"C\" __global__ void __launch_bounds__({}) {}(AttnParams p) {{ {}(p); }}\n",
            include_str!("kernels.cu"),
            include_str!("attention.cu"),
            self.threads(),
            self.name(),
            self.body()
        )
    }

    fn threads(self) -> u32 {
        match self {
            Variant::Flash(..) => FLASH_THREADS,
            Variant::Rows(_) => 32 * ROWS_PER_BLOCK as u32,
        }
    }
}

fn element(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "F32",
        DType::BF16 => "BF16",
        DType::F16 => "F16",
        DType::I32 | DType::I64 => unreachable!("validated: attention is float only"),
    }
}

/// The PTX of `variant` for `compute_<arch>`, compiled on first use.
fn ptx(variant: Variant, arch: i32) -> Result<Arc<CString>> {
    type Cache = Mutex<HashMap<(i32, Variant), Arc<CString>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    if let Some(ptx) = lock(CACHE.get_or_init(Mutex::default)).get(&(arch, variant)) {
        return Ok(ptx.clone());
    }
    let what = format!("the attention kernel {}", variant.name());
    let ptx = nvrtc::compile(variant.source(), "hir_attention.cu", arch, &what)?;
    lock(CACHE.get_or_init(Mutex::default)).insert((arch, variant), ptx.clone());
    Ok(ptx)
}

/// `variant`'s entry loaded into the current context, its shared memory
/// limit raised to what it takes.
fn function(variant: Variant) -> Result<sys::CUfunction> {
    type Cache = Mutex<HashMap<(usize, Variant), usize>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (nvrtc::current_context()?, variant);
    if let Some(&function) = lock(CACHE.get_or_init(Mutex::default)).get(&key) {
        return Ok(function as sys::CUfunction);
    }
    let (major, minor) = nvrtc::current_capability()?;
    if matches!(variant, Variant::Flash(..)) && major < 8 {
        return Err(Error::Cuda(format!(
            "the attention kernel needs compute capability 8.0 or newer, the device has {major}.{minor}"
        )));
    }
    let ptx = ptx(variant, major * 10 + minor)?;
    let function = nvrtc::load(&ptx, &variant.name(), "the attention kernel")?;
    let shared = variant.shared_bytes();
    if shared > 48 * 1024 {
        // SAFETY: a loaded function; the device's opt-in limit is checked by the driver.
        unsafe {
            cu::function::set_function_attribute(
                function,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
        }
        .check("raising the attention kernel's shared memory")?;
    }
    lock(CACHE.get_or_init(Mutex::default)).insert(key, function as usize);
    Ok(function)
}

/// The last two axes' strides and the batch axes' of `view`, coalesced
/// batch strides filled in by [`launch`].
fn tensor(view: &View) -> Tensor {
    let rank = view.sizes.len();
    Tensor {
        ptr: view.ptr as u64,
        row_stride: view.strides[rank - 2] as i64,
        col_stride: view.strides[rank - 1] as i64,
        batch_strides: [0; MAX_BATCH],
    }
}

/// Whether the tensor-core kernel can read `view`: unit column stride, rows
/// and batch entries 16-byte aligned.
fn flash_layout(view: &View, batch_strides: &[usize]) -> bool {
    let rank = view.sizes.len();
    let aligned = 16 / view.dtype.size();
    view.strides[rank - 1] == 1
        && view.strides[rank - 2].is_multiple_of(aligned)
        && batch_strides
            .iter()
            .all(|stride| stride.is_multiple_of(aligned))
        && (view.ptr as usize).is_multiple_of(16)
}

/// Enqueues a validated attention kernel (`q, k, v[, mask]`, then `out`)
/// on the current stream: through cuDNN or HIR's kernels, as [`path`] says.
pub(super) fn launch(state: &mut State, kernel: &Kernel, scale: f64, causal: bool) -> Result<()> {
    let stream = state.streams[state.current];
    if kernel.output.numel() == 0 {
        return Ok(());
    }
    let path = path()?;
    if path != Path::Flash {
        match through_cudnn(state, kernel, scale, causal, stream) {
            Ok(()) => return Ok(()),
            Err(error) if path == Path::Cudnn => return Err(error),
            // Logged once by `cudnn_attention`; HIR's kernel runs instead.
            Err(_) => {}
        }
    }
    launch_kernel(kernel, scale, causal, stream)
}

/// Enqueues `kernel` through cuDNN's fused attention, or says why not.
fn through_cudnn(
    state: &mut State,
    kernel: &Kernel,
    scale: f64,
    causal: bool,
    stream: Stream,
) -> Result<()> {
    let prepared = state.cudnn.prepare(kernel, causal, state.capturing)?;
    let workspace = if prepared.workspace > 0 {
        // The current stream's cuBLASLt workspace: work on one stream is
        // ordered, so cuDNN and cuBLASLt share it.
        CudaDevice::workspace(state)?
    } else {
        0
    };
    state
        .cudnn
        .execute(&prepared, kernel, scale, stream, workspace)
}

/// Enqueues `kernel` on HIR's own attention kernels.
fn launch_kernel(kernel: &Kernel, scale: f64, causal: bool, stream: Stream) -> Result<()> {
    let (q, k, v, out) = (
        &kernel.inputs[0],
        &kernel.inputs[1],
        &kernel.inputs[2],
        &kernel.output,
    );
    let rank = q.sizes.len();
    let (sq, d) = (q.sizes[rank - 2], q.sizes[rank - 1]);
    let (sk, dv) = (k.sizes[rank - 2], v.sizes[rank - 1]);
    let batch: usize = q.sizes[..rank - 2].iter().product();
    if sq == 0 || dv == 0 || batch == 0 {
        return Ok(());
    }
    if d > MAX_ROWS_DIM || dv > MAX_ROWS_DIM {
        return Err(Error::Invalid(format!(
            "attention on the cuda backend takes head dims up to {MAX_ROWS_DIM}, got {d} and {dv}"
        )));
    }
    let views = [q, k, v, out];
    let batch_strides: Vec<Vec<usize>> = views
        .iter()
        .map(|view| view.strides[..rank - 2].to_vec())
        .collect();
    let (batch_sizes, batch_strides) = coalesce(&q.sizes[..rank - 2], &batch_strides);
    if batch_sizes.len() > MAX_BATCH {
        return Err(Error::Invalid(format!(
            "attention on the cuda backend takes at most {MAX_BATCH} non-mergeable batch axes, got {}",
            batch_sizes.len()
        )));
    }
    let dtype = q.dtype;
    let flash = matches!(dtype, DType::BF16 | DType::F16)
        && d == dv
        && FLASH_DIMS.contains(&d)
        && views
            .iter()
            .zip(&batch_strides)
            .all(|(view, strides)| flash_layout(view, strides));
    let variant = if flash {
        Variant::Flash(dtype, d)
    } else {
        Variant::Rows(dtype)
    };
    let mut tensors = views.map(tensor);
    for (tensor, strides) in tensors.iter_mut().zip(&batch_strides) {
        for (slot, &stride) in tensor.batch_strides.iter_mut().zip(strides) {
            *slot = stride as i64;
        }
    }
    let [tq, tk, tv, tout] = tensors;
    let mut params = Params {
        q: tq,
        k: tk,
        v: tv,
        out: tout,
        batch_rank: batch_sizes.len() as i64,
        sq: sq as i64,
        sk: sk as i64,
        d: d as i64,
        dv: dv as i64,
        causal: causal as i64,
        scale_log2: scale * std::f64::consts::LOG2_E,
        ..Params::default()
    };
    for (slot, &size) in params.batch_sizes.iter_mut().zip(&batch_sizes) {
        *slot = size as i64;
    }
    if let Some(mask) = kernel.inputs.get(3) {
        params.mask = mask.ptr as u64;
        params.mask_row_stride = mask.strides[0] as i64;
        params.mask_col_stride = mask.strides[1] as i64;
    }
    let function = function(variant)?;
    let blocks_x = match variant {
        Variant::Flash(..) => sq.div_ceil(FLASH_ROWS),
        Variant::Rows(_) => sq.div_ceil(ROWS_PER_BLOCK),
    } as u32;
    for base in (0..batch).step_by(MAX_GRID_Y) {
        params.batch_base = base as i64;
        let entries = (batch - base).min(MAX_GRID_Y) as u32;
        let mut args = [&mut params as *mut Params as *mut c_void];
        // SAFETY: `params` is the kernel's one by-value parameter, laid out
        // as `AttnParams` (8-byte fields only); cuLaunchKernel copies it
        // before returning.
        unsafe {
            cu::launch_kernel(
                function,
                (blocks_x, entries, 1),
                (variant.threads(), 1, 1),
                variant.shared_bytes() as u32,
                stream,
                &mut args,
            )
        }
        .check("launching the attention kernel")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parameter block is 8-byte words, as `attention.cu` lays it out.
    #[test]
    fn params_are_words() {
        assert_eq!(std::mem::size_of::<Tensor>(), 8 * (3 + MAX_BATCH));
        assert_eq!(
            std::mem::size_of::<Params>(),
            8 * (4 * (3 + MAX_BATCH) + 4 + MAX_BATCH + 7)
        );
    }

    /// Each entry is the instance of its template, with its launch bounds.
    #[test]
    fn entries_name_their_instances() {
        let flash = Variant::Flash(DType::BF16, 128);
        assert!(flash.source().contains(
            "void __launch_bounds__(256) hir_flash_bf16_128(AttnParams p) { flash<MmaBF16, 128>(p); }"
        ));
        assert_eq!(flash.shared_bytes(), (128 + 256) * 136 * 2);
        let rows = Variant::Rows(DType::F32);
        assert!(rows.source().contains(
            "void __launch_bounds__(128) hir_attention_rows_f32(AttnParams p) { attention_rows<F32>(p); }"
        ));
    }

    /// NVRTC compiles every entry (on a machine with NVRTC; elsewhere the
    /// test says why and passes). The GPU tests run them.
    #[test]
    fn every_entry_compiles() {
        // SAFETY: only tries to open the library.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            eprintln!("skipped: no NVRTC");
            return;
        }
        let mut variants: Vec<Variant> = [DType::F32, DType::BF16, DType::F16]
            .into_iter()
            .map(Variant::Rows)
            .collect();
        for dtype in [DType::BF16, DType::F16] {
            variants.extend(FLASH_DIMS.map(|d| Variant::Flash(dtype, d)));
        }
        for variant in variants {
            if let Err(error) = ptx(variant, 90) {
                panic!("{error}");
            }
        }
    }
}
