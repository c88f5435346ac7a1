//! Matmul and linear through cuBLASLt, on strided views.
//!
//! cuBLASLt is column-major; a row-major `R x C` matrix with row stride `ld`
//! and unit column stride is its column-major `C x R` transpose with leading
//! dimension `ld`. So `D = A B` (row-major) runs as `D^T = B^T A^T`: cuBLASLt's
//! "A" is our rhs, its "B" our lhs. A row-major view whose *row* stride is 1 (a
//! transposed view, like `linear`'s weight read as `[K, N]`) is passed with
//! `op = T` instead of being copied. Batch axes become one strided batch
//! (an operand's batch stride 0 where it is shared or broadcast, as
//! torch.matmul broadcasts batch axes: never copied); when lhs rows and output rows
//! continue across the batch, the batch folds into `M` (one bigger GEMM). Only
//! a matrix with no unit stride, an output that is not row-major, or a batch
//! that does not collapse to one stride goes through a contiguous copy.
//!
//! Compute is f32 for every dtype (tf32 off); bias is cuBLASLt's `BIAS`
//! epilogue, and a GELU activation its `GELU_BIAS` (`GELU` without a bias):
//! applied to the f32 product plus bias before the one rounding to the
//! output's type; an accumulating matmul passes `beta = 1`, with the output as
//! cuBLASLt's C as well as its D (C + A B in f32, rounded once). Plans
//! (descriptors, layouts and the heuristic's algorithm) are cached by shape,
//! strides, pointer alignment and epilogue; each stream has its own
//! workspace, since matmuls on different streams run concurrently.

use super::kernels::Kernels;
use super::scratch::Scratch;
use super::{Check, Stream};
use crate::error::{Error, Result};
use crate::memref::View;
use cudarc::cublaslt::{result as lt, sys};
use hir_abi::{Activation, DType};
use std::collections::HashMap;
use std::ffi::c_void;

/// Each stream's workspace.
pub(crate) const WORKSPACE: usize = 32 << 20;

/// A row-major matrix as cuBLASLt reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Operand {
    /// Column-major rows, columns and leading dimension of the stored matrix.
    rows: u64,
    cols: u64,
    ld: i64,
    transposed: bool,
    /// Elements between batch entries (0: shared).
    batch_stride: i64,
    /// Largest power of two (at most 256) dividing the address.
    align: u32,
}

impl Operand {
    /// The row-major `r x c` matrix with strides `(sr, sc)`, if cuBLASLt can
    /// read it in place.
    fn of(ptr: *mut u8, (r, c): (usize, usize), (sr, sc): (usize, usize)) -> Option<Operand> {
        let align = alignment(ptr as usize);
        if sc == 1 || c == 1 {
            let ld = if r == 1 { c } else { sr };
            if ld >= c.max(1) {
                return Some(Operand {
                    rows: c as u64,
                    cols: r as u64,
                    ld: ld as i64,
                    transposed: false,
                    batch_stride: 0,
                    align,
                });
            }
        }
        if sr == 1 || r == 1 {
            let ld = if c == 1 { r } else { sc };
            if ld >= r.max(1) {
                return Some(Operand {
                    rows: r as u64,
                    cols: c as u64,
                    ld: ld as i64,
                    transposed: true,
                    batch_stride: 0,
                    align,
                });
            }
        }
        None
    }
}

fn alignment(address: usize) -> u32 {
    if address == 0 {
        256
    } else {
        (1usize << address.trailing_zeros().min(8)) as u32
    }
}

/// One GEMM call's shape: everything that selects descriptors and algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    dtype: DType,
    a: Operand,
    b: Operand,
    d: Operand,
    batch: i32,
    bias: bool,
    accumulate: bool,
    activation: Option<Activation>,
}

impl Key {
    /// cuBLASLt's epilogue for the bias and activation, if any.
    fn epilogue(&self) -> Option<sys::cublasLtEpilogue_t> {
        use sys::cublasLtEpilogue_t::*;
        match (self.bias, self.activation) {
            (false, None) => None,
            (true, None) => Some(CUBLASLT_EPILOGUE_BIAS),
            (false, Some(Activation::Gelu)) => Some(CUBLASLT_EPILOGUE_GELU),
            (true, Some(Activation::Gelu)) => Some(CUBLASLT_EPILOGUE_GELU_BIAS),
        }
    }
}

/// Cached descriptors and algorithm of one [`Key`].
struct Plan {
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    algo: sys::cublasLtMatmulAlgo_t,
}

/// A rank's cuBLASLt handle and plans.
pub(crate) struct Blas {
    handle: sys::cublasLtHandle_t,
    plans: HashMap<Key, Plan>,
}

// Handles and descriptors are used from the rank's host thread only.
unsafe impl Send for Blas {}

fn data_type(dtype: DType) -> sys::cudaDataType {
    match dtype {
        DType::F32 => sys::cudaDataType::CUDA_R_32F,
        DType::BF16 => sys::cudaDataType::CUDA_R_16BF,
        DType::F16 => sys::cudaDataType::CUDA_R_16F,
        DType::I32 | DType::I64 => unreachable!("validated: matmul and linear are float only"),
    }
}

unsafe fn set<T>(
    desc: sys::cublasLtMatmulDesc_t,
    attr: sys::cublasLtMatmulDescAttributes_t,
    value: &T,
) -> Result<()> {
    unsafe { lt::set_matmul_desc_attribute(desc, attr, (value as *const T).cast(), size_of::<T>()) }
        .check("setting a cuBLASLt matmul attribute")
}

fn layout(dtype: DType, operand: &Operand, batch: i32) -> Result<sys::cublasLtMatrixLayout_t> {
    let layout = lt::create_matrix_layout(data_type(dtype), operand.rows, operand.cols, operand.ld)
        .check("creating a cuBLASLt layout")?;
    if batch > 1 {
        type A = sys::cublasLtMatrixLayoutAttribute_t;
        // SAFETY: a live layout, attributes of their documented types.
        unsafe {
            lt::set_matrix_layout_attribute(
                layout,
                A::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                (&batch as *const i32).cast(),
                4,
            )
            .check("setting a cuBLASLt batch count")?;
            lt::set_matrix_layout_attribute(
                layout,
                A::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                (&operand.batch_stride as *const i64).cast(),
                8,
            )
            .check("setting a cuBLASLt batch stride")?;
        }
    }
    Ok(layout)
}

impl Plan {
    fn new(handle: sys::cublasLtHandle_t, key: &Key) -> Result<Plan> {
        type D = sys::cublasLtMatmulDescAttributes_t;
        let desc = lt::create_matmul_desc(
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            sys::cudaDataType::CUDA_R_32F,
        )
        .check("creating a cuBLASLt matmul")?;
        let op = |transposed: bool| {
            if transposed {
                cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        // SAFETY: a live descriptor, attributes of their documented types.
        unsafe {
            set(desc, D::CUBLASLT_MATMUL_DESC_TRANSA, &op(key.a.transposed))?;
            set(desc, D::CUBLASLT_MATMUL_DESC_TRANSB, &op(key.b.transposed))?;
            if let Some(epilogue) = key.epilogue() {
                set(desc, D::CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue)?;
            }
        }
        let layouts = [
            layout(key.dtype, &key.a, key.batch)?,
            layout(key.dtype, &key.b, key.batch)?,
            layout(key.dtype, &key.d, key.batch)?,
        ];
        type P = sys::cublasLtMatmulPreferenceAttributes_t;
        let pref = lt::create_matmul_pref().check("creating a cuBLASLt preference")?;
        let workspace = WORKSPACE as u64;
        // SAFETY: a live preference, attributes of their documented types.
        let algo = unsafe {
            let prefs = [
                (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.a.align),
                (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.b.align),
                (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.d.align),
                (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.d.align),
            ];
            let mut result = lt::set_matmul_pref_attribute(
                pref,
                P::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&workspace as *const u64).cast(),
                8,
            );
            for (attr, value) in prefs {
                result = result.and_then(|()| {
                    lt::set_matmul_pref_attribute(pref, attr, (&value as *const u32).cast(), 4)
                });
            }
            let heuristic = result.and_then(|()| {
                lt::get_matmul_algo_heuristic(
                    handle, desc, layouts[0], layouts[1], layouts[2], layouts[2], pref,
                )
            });
            let _ = lt::destroy_matmul_pref(pref);
            heuristic.map(|heuristic| heuristic.algo)
        };
        let plan_layouts = layouts;
        let algo = match algo {
            Ok(algo) => algo,
            Err(error) => {
                // SAFETY: created above, destroyed once.
                unsafe {
                    let _ = lt::destroy_matmul_desc(desc);
                    for layout in plan_layouts {
                        let _ = lt::destroy_matrix_layout(layout);
                    }
                }
                return Err(Error::Cuda(format!(
                    "cuBLASLt has no algorithm for {key:?}: {error}"
                )));
            }
        };
        Ok(Plan {
            desc,
            layouts: plan_layouts,
            algo,
        })
    }
}

/// A GEMM to run: `d = a-side x b-side (+ bias)` in row-major terms, with
/// `lhs [batch, m, k]`, `rhs [batch, k, n]`, `out [batch, m, n]` given as
/// views of rank 3 (batch axis first; an input's possibly of stride 0);
/// `accumulate` adds the product to `out`'s values instead; `activation`
/// applies to each f32 element of the product plus bias before the rounding
/// (never with `accumulate`: no kernel op is both).
pub(crate) struct Gemm<'a> {
    pub lhs: &'a View,
    pub rhs: &'a View,
    pub bias: Option<&'a View>,
    pub out: &'a View,
    pub accumulate: bool,
    pub activation: Option<Activation>,
}

impl Blas {
    pub fn new() -> Result<Blas> {
        Ok(Blas {
            handle: lt::create_handle().check("creating a cuBLASLt handle")?,
            plans: HashMap::new(),
        })
    }

    /// Runs a rank-3 [`Gemm`] on `stream`, with `workspace` of [`WORKSPACE`]
    /// bytes; `scratch` makes contiguous copies where a layout needs them.
    pub fn gemm(
        &mut self,
        gemm: Gemm,
        stream: Stream,
        workspace: u64,
        kernels: &Kernels,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let Gemm {
            lhs,
            rhs,
            bias,
            out,
            accumulate,
            activation,
        } = gemm;
        let (batch, m, n) = (lhs.sizes[0], lhs.sizes[1], out.sizes[2]);
        if batch * m * n == 0 {
            return Ok(());
        }
        let matrix = |view: &View| {
            Operand::of(
                view.ptr,
                (view.sizes[1], view.sizes[2]),
                (view.strides[1], view.strides[2]),
            )
        };
        // Inputs cuBLASLt cannot read in place are copied (a broadcast one,
        // of batch stride 0, as its one matrix, read again by every entry);
        // an output it cannot write is computed contiguously and copied back.
        let staged = |view: &View, scratch: &mut Scratch| -> Result<View> {
            if matrix(view).is_some() {
                return Ok(view.clone());
            }
            if view.strides[0] == 0 {
                let one = View {
                    sizes: smallvec::smallvec![1, view.sizes[1], view.sizes[2]],
                    ..view.clone()
                };
                let copy = scratch.contiguous_copy(kernels, &one, stream)?;
                return Ok(View {
                    sizes: view.sizes.clone(),
                    strides: smallvec::smallvec![0, copy.strides[1], copy.strides[2]],
                    ..copy
                });
            }
            scratch.contiguous_copy(kernels, view, stream)
        };
        let lhs = staged(lhs, scratch)?;
        let rhs = staged(rhs, scratch)?;
        let out_direct = matrix(out).is_some_and(|operand| !operand.transposed);
        let target = if out_direct {
            out.clone()
        } else if accumulate {
            // The staged output is also what the product is added to.
            scratch.contiguous_copy(kernels, out, stream)?
        } else {
            scratch.contiguous(out, stream)?
        };
        let bias = match bias {
            Some(bias) if bias.strides[0] == 1 || bias.sizes[0] == 1 => Some(bias.clone()),
            Some(bias) => Some(scratch.contiguous_copy(kernels, bias, stream)?),
            None => None,
        };
        let mut a = matrix(&rhs).expect("staged");
        let mut b = matrix(&lhs).expect("staged");
        let mut d = matrix(&target).expect("staged");
        let batched = batch > 1;
        if batched {
            a.batch_stride = rhs.strides[0] as i64;
            b.batch_stride = lhs.strides[0] as i64;
            d.batch_stride = target.strides[0] as i64;
        }
        let key = Key {
            dtype: out.dtype,
            a,
            b,
            d,
            batch: i32::try_from(batch).map_err(|_| {
                Error::Invalid(format!("a batch of {batch} is too large for cuBLASLt"))
            })?,
            bias: bias.is_some(),
            accumulate,
            activation,
        };
        if !self.plans.contains_key(&key) {
            let plan = Plan::new(self.handle, &key)?;
            self.plans.insert(key, plan);
        }
        let plan = &self.plans[&key];
        let (alpha, beta) = (1f32, if accumulate { 1f32 } else { 0f32 });
        // SAFETY: the plan's descriptors are live; the views are device memory
        // the program passed, valid for the shapes checked by validate.
        unsafe {
            if let Some(bias) = &bias {
                let pointer = bias.ptr as *const c_void;
                set(
                    plan.desc,
                    sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                    &pointer,
                )?;
            }
            lt::matmul(
                self.handle,
                plan.desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                rhs.ptr as *const c_void,
                plan.layouts[0],
                lhs.ptr as *const c_void,
                plan.layouts[1],
                target.ptr as *const c_void,
                plan.layouts[2],
                target.ptr as *mut c_void,
                plan.layouts[2],
                &plan.algo,
                workspace as *mut c_void,
                WORKSPACE,
                stream.cast(),
            )
            .check("cublasLtMatmul")?;
        }
        if !out_direct {
            kernels.copy(&target, out, stream)?;
        }
        Ok(())
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: created by this struct, destroyed once, after the owner
        // synchronized the device.
        unsafe {
            for plan in self.plans.values() {
                let _ = lt::destroy_matmul_desc(plan.desc);
                for &layout in &plan.layouts {
                    let _ = lt::destroy_matrix_layout(layout);
                }
            }
            let _ = lt::destroy_handle(self.handle);
        }
    }
}
