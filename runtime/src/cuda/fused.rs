//! The cuda backend's fused kernel: a `host.fused` op's program generated
//! as CUDA C ([`source`]), compiled by NVRTC, and launched as one
//! grid-stride kernel over the iteration shape. The source is `kernels.cu`
//! (for its element types and op functors, so that each instruction is the
//! very function the unfused kernel applies, and each result is rounded as
//! the unfused op's output buffer rounds it) plus its entry: `hir_fused`,
//! or a row program's entries, one a way through a row (`fused_rows.rs`). A
//! constant is the f32 the fill kernel is passed (as its bits), rounded by
//! the same `E::round`, once per thread before the loop over the elements.
//!
//! Kernels are cached by the program's words: the PTX per process and
//! architecture, the loaded module per context, and each entry's function
//! beside it. A module stays loaded as
//! long as the process (one per distinct program and device).
//!
//! The kernel's parameter is `FusedParams { i64 rank, numel, sizes[8];
//! View v[n]; }`: every field is 8 bytes, so it is passed as `i64` words.
//! The views are the loads' (each at the iteration shape, stride 0 along
//! its broadcast axes), then the stores'; axes that are contiguous in every
//! view are merged first (`kernels::coalesce`).

use super::axes::coalesce;
use super::fused_rows::LANES;
use super::kernel_source::{element, expression};
use super::kernels::MAX_RANK;
use super::{Check, Stream, fused_rows, nvrtc};
use crate::error::{Error, Result};
use crate::fused::FusedKernel;
use crate::lock;
use crate::memref::View;
use cudarc::driver::{result as cu, sys};
use hir_abi::fused::{Instr, Program};
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::fmt::Write;
use std::sync::{Arc, Mutex, OnceLock};

const THREADS: u32 = 256;
/// Blocks per launch at most: the grid strides over the rest.
const MAX_BLOCKS: usize = 8192;

/// The CUDA C of `program`: `kernels.cu` and the `hir_fused` entry, or a
/// row program's entries from `fused_rows.rs`.
pub(crate) fn source(program: &Program) -> String {
    let mut source = include_str!("kernels.cu").to_string();
    source.push_str(
        "template <class E> __device__ float hir_round(float x) {\n    \
         typename E::T t = E::round(x);\n    return E::load(&t);\n}\n",
    );
    if program.reduced.is_some() {
        source.push_str(fused_rows::HELPERS);
        fused_rows::entry(program, &mut source);
        return source;
    }
    let views = program.loads.len() + program.stores.len();
    // `hir_load_row` and `hir_store_row`, for the vector path.
    source.push_str(fused_rows::HELPERS);
    let mut line = |text: String| writeln!(source, "{text}").expect("writing to a string");
    line(format!(
        "struct FusedParams {{ i64 rank; i64 numel; i64 vec; i64 sizes[HIR_MAX_RANK]; View v[{views}]; }};"
    ));
    line("extern \"C\" __global__ void hir_fused(FusedParams p) {".into());
    // Constants are the same at every element: computed once per thread.
    for (index, &(instr, dtype)) in program.instrs.iter().enumerate() {
        if is_constant(instr) {
            let slot = program.loads.len() + index;
            line(format!(
                "    float s{slot} = hir_round<{}>({});",
                element(dtype),
                expression(instr)
            ));
        }
    }
    line("    if (p.vec) {".into());
    elements(program, LANES, &mut line);
    line("    } else {".into());
    elements(program, 1, &mut line);
    line("    }".into());
    line("}".into());
    source
}

fn is_constant(instr: Instr) -> bool {
    matches!(instr, Instr::Constant(_))
}

/// The grid-stride loop over the elements, `per` consecutive ones a thread
/// at a time (each view read and written as 16-byte words when `per` is
/// [`LANES`]): the offsets of the first, the loads, each instruction per
/// element, the stores.
fn elements(program: &Program, per: usize, line: &mut impl FnMut(String)) {
    let views = program.loads.len() + program.stores.len();
    line(format!("        HIR_GRID_STRIDE(g, p.numel / {per}) {{"));
    line(format!("            i64 o[{views}], rest = g * {per};"));
    line(format!(
        "            for (int k = 0; k < {views}; ++k) o[k] = 0;"
    ));
    line("            for (i64 d = p.rank - 1; d >= 0; --d) {".into());
    line("                i64 index = rest;".into());
    line("                if (d > 0) { index = rest % p.sizes[d]; rest /= p.sizes[d]; }".into());
    line(format!(
        "                for (int k = 0; k < {views}; ++k) o[k] += index * p.v[k].strides[d];"
    ));
    line("            }".into());
    for (slot, load) in program.loads.iter().enumerate() {
        let e = element(program.dtypes[load.buffer]);
        line(format!(
            "            float l{slot}[{per}]; hir_load_row<{e}, {per}>((const {e}::T *)p.v[{slot}].ptr + o[{slot}], l{slot});"
        ));
    }
    for index in 0..program.stores.len() {
        line(format!("            float r{index}[{per}];"));
    }
    line("#pragma unroll".into());
    line(format!("            for (int e = 0; e < {per}; ++e) {{"));
    for slot in 0..program.loads.len() {
        line(format!("                float s{slot} = l{slot}[e];"));
    }
    for (index, &(instr, dtype)) in program.instrs.iter().enumerate() {
        if is_constant(instr) {
            continue;
        }
        let slot = program.loads.len() + index;
        line(format!(
            "                float s{slot} = hir_round<{}>({});",
            element(dtype),
            expression(instr)
        ));
    }
    for (index, store) in program.stores.iter().enumerate() {
        line(format!("                r{index}[e] = s{};", store.slot));
    }
    line("            }".into());
    for (index, store) in program.stores.iter().enumerate() {
        let view = program.loads.len() + index;
        let e = element(program.dtypes[store.buffer]);
        line(format!(
            "            hir_store_row<{e}, {per}>(({e}::T *)p.v[{view}].ptr + o[{view}], r{index});"
        ));
    }
    line("        }".into());
}

/// The PTX of `program` for `compute_<arch>`, compiled on first use.
fn ptx(words: &Arc<[i64]>, program: &Program, arch: i32) -> Result<Arc<CString>> {
    type Cache = Mutex<HashMap<(i32, Arc<[i64]>), Arc<CString>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (arch, words.clone());
    if let Some(ptx) = lock(CACHE.get_or_init(Mutex::default)).get(&key) {
        return Ok(ptx.clone());
    }
    let ptx = nvrtc::compile(source(program), "hir_fused.cu", arch, "a fused kernel")?;
    #[cfg(test)]
    lock(&COMPILED).push(words.clone());
    lock(CACHE.get_or_init(Mutex::default)).insert(key, ptx.clone());
    Ok(ptx)
}

/// The programs NVRTC compiled, one entry per compilation, in order.
#[cfg(test)]
static COMPILED: Mutex<Vec<Arc<[i64]>>> = Mutex::new(Vec::new());

/// What [`ptx`] compiled so far: `fused_tests.rs` checks the cache by it.
#[cfg(test)]
pub(super) fn compiled() -> Vec<Arc<[i64]>> {
    lock(&COMPILED).clone()
}

/// Entry `entry` of `program`'s kernel (`hir_fused`, or a row program's
/// [`fused_rows::Way`]) loaded into the current context, its module once.
fn function(words: &Arc<[i64]>, program: &Program, entry: &'static str) -> Result<sys::CUfunction> {
    type Functions = Mutex<HashMap<(usize, Arc<[i64]>, &'static str), usize>>;
    type Modules = Mutex<HashMap<(usize, Arc<[i64]>), usize>>;
    static FUNCTIONS: OnceLock<Functions> = OnceLock::new();
    static MODULES: OnceLock<Modules> = OnceLock::new();
    let context = nvrtc::current_context()?;
    let key = (context, words.clone(), entry);
    if let Some(&function) = lock(FUNCTIONS.get_or_init(Mutex::default)).get(&key) {
        return Ok(function as sys::CUfunction);
    }
    let modules = MODULES.get_or_init(Mutex::default);
    let loaded = lock(modules).get(&(context, words.clone())).copied();
    let module = match loaded {
        Some(module) => module as sys::CUmodule,
        None => {
            let (major, minor) = nvrtc::current_capability()?;
            let ptx = ptx(words, program, major * 10 + minor)?;
            let module = nvrtc::load_module(&ptx, "the fused kernel")?;
            lock(modules).insert((context, words.clone()), module as usize);
            module
        }
    };
    let function = nvrtc::function(module, entry, "the fused kernel")?;
    lock(FUNCTIONS.get_or_init(Mutex::default)).insert(key, function as usize);
    Ok(function)
}

/// The kernel's parameter words: rank, numel, whether the vector path
/// runs, sizes, then each view's pointer and strides, over the merged axes
/// of `views`.
pub(crate) fn params(views: &[View]) -> Result<Vec<i64>> {
    let shape = &views[0].sizes;
    let strides: Vec<Vec<usize>> = views.iter().map(|view| view.strides.to_vec()).collect();
    let (sizes, strides) = coalesce(shape, &strides);
    if sizes.len() > MAX_RANK {
        return Err(Error::Invalid(format!(
            "a fused kernel over {} non-mergeable axes exceeds the cuda kernels' {MAX_RANK}",
            sizes.len()
        )));
    }
    let numel: usize = shape.iter().product();
    // The vector path: every view contiguous along the innermost merged
    // axis, of a multiple of LANES elements, from 16-byte aligned words
    // (pointers aligned, outer strides whole words).
    let vec = sizes.last().is_some_and(|&n| n.is_multiple_of(LANES))
        && views.iter().zip(&strides).all(|(view, strides)| {
            let (&inner, outer) = strides.split_last().expect("a merged axis");
            inner == 1
                && (view.ptr as usize).is_multiple_of(16)
                && outer.iter().all(|&stride| stride.is_multiple_of(LANES))
        });
    let mut words = vec![sizes.len() as i64, numel as i64, vec as i64];
    words.extend((0..MAX_RANK).map(|axis| sizes.get(axis).map_or(0, |&size| size as i64)));
    for (view, strides) in views.iter().zip(&strides) {
        words.push(view.ptr as i64);
        words.extend((0..MAX_RANK).map(|axis| strides.get(axis).map_or(0, |&s| s as i64)));
    }
    Ok(words)
}

/// Enqueues a validated fused kernel on `stream`.
pub(crate) fn launch(kernel: &FusedKernel, stream: Stream) -> Result<()> {
    let program = &kernel.program;
    let shape = kernel.shape();
    let numel: usize = shape.iter().product();
    let (mut params, blocks, threads, entry) = if program.reduced.is_some() {
        let rows: usize = shape[..shape.len() - 1].iter().product();
        if rows == 0 {
            return Ok(());
        }
        let launch = fused_rows::launch(kernel)?;
        (
            launch.params,
            launch.rows,
            launch.threads as u32,
            launch.way.entry(),
        )
    } else {
        if numel == 0 {
            return Ok(());
        }
        let params = params(&kernel.views())?;
        let per = if params[2] != 0 { LANES } else { 1 };
        let blocks = (numel / per).div_ceil(THREADS as usize).min(MAX_BLOCKS);
        (params, blocks, THREADS, "hir_fused")
    };
    let function = function(&kernel.words, program, entry)?;
    let blocks = blocks as u32;
    let mut args = [params.as_mut_ptr() as *mut c_void];
    // SAFETY: `params` is the kernel's one by-value parameter, whose layout
    // (8-byte fields only) its words mirror; cuLaunchKernel copies it before
    // returning.
    unsafe {
        cu::launch_kernel(
            function,
            (blocks, 1, 1),
            (threads, 1, 1),
            0,
            stream,
            &mut args,
        )
    }
    .check("launching a fused kernel")
}

#[cfg(test)]
mod tests {
    use super::*;
    use hir_abi::fused::{Load, Store};
    use hir_abi::{Binary, DType, Unary};

    /// The generated entry: loads through the element type's struct, each
    /// instruction the unfused kernel's functor rounded to its type, stores
    /// rounded to the output's (checked without a GPU; the GPU tests in
    /// `fused_tests.rs` compile and run it).
    #[test]
    fn the_source_applies_the_unfused_functors() {
        let program = Program {
            reduced: None,
            dtypes: vec![DType::BF16, DType::F32, DType::BF16],
            loads: vec![
                Load {
                    buffer: 0,
                    broadcast: vec![],
                },
                Load {
                    buffer: 1,
                    broadcast: vec![0],
                },
            ],
            instrs: vec![
                (Instr::Binary(Binary::Add, 0, 1), DType::F32),
                (Instr::Unary(Unary::Gelu, 2), DType::BF16),
                (Instr::Where(0, 3, 1), DType::BF16),
            ],
            stores: vec![Store::whole(2, 4)],
        };
        let source = source(&program);
        for expected in [
            "View v[3]; };",
            "float l0[8]; hir_load_row<BF16, 8>((const BF16::T *)p.v[0].ptr + o[0], l0);",
            "float l1[1]; hir_load_row<F32, 1>((const F32::T *)p.v[1].ptr + o[1], l1);",
            "float s0 = l0[e];",
            "float s2 = hir_round<F32>(OpAdd::apply(s0, s1));",
            "float s3 = hir_round<BF16>(OpGelu::apply(s2));",
            "float s4 = hir_round<BF16>((s0 != 0.0f ? s3 : s1));",
            "r0[e] = s4;",
            "hir_store_row<BF16, 8>((BF16::T *)p.v[2].ptr + o[2], r0);",
        ] {
            assert!(source.contains(expected), "no '{expected}' in\n{source}");
        }
    }

    /// A constant is the f32 the fill kernel is passed, as its exact bits,
    /// rounded by `hir_round` as the fill rounds it, once per thread before
    /// the loop over the elements.
    #[test]
    fn constants_are_exact_and_computed_before_the_loop() {
        let program = Program {
            reduced: None,
            dtypes: vec![DType::BF16, DType::BF16],
            loads: vec![Load {
                buffer: 0,
                broadcast: vec![],
            }],
            instrs: vec![
                (Instr::Unary(Unary::Tanh, 0), DType::BF16),
                (Instr::constant(0.7978845608028654), DType::BF16),
                (Instr::Binary(Binary::Mul, 1, 2), DType::BF16),
            ],
            stores: vec![Store::whole(1, 3)],
        };
        let source = source(&program);
        let bits = 0.7978845608028654f64 as f32;
        let constant = format!(
            "    float s2 = hir_round<BF16>(__uint_as_float({:#010x}u));",
            bits.to_bits()
        );
        assert_eq!(
            constant,
            "    float s2 = hir_round<BF16>(__uint_as_float(0x3f4c422au));"
        );
        let entry = &source[source.find("void hir_fused").expect("the entry")..];
        let position = |text: &str| {
            entry
                .find(text)
                .unwrap_or_else(|| panic!("no '{text}' in\n{entry}"))
        };
        let product = "float s3 = hir_round<BF16>(OpMul::apply(s1, s2));";
        assert!(position(&constant) < position("HIR_GRID_STRIDE"));
        assert!(position("HIR_GRID_STRIDE") < position(product));
        assert_eq!(entry.matches("float s2 =").count(), 1);
    }

    /// Contiguous views merge into one axis; a broadcast view keeps stride 0.
    #[test]
    fn params_merge_contiguous_axes() {
        let view = |strides: Vec<usize>| View {
            dtype: DType::F32,
            ptr: 4096 as *mut u8,
            sizes: smallvec::smallvec![4, 8],
            strides: strides.into(),
        };
        let words = params(&[view(vec![8, 1]), view(vec![8, 1])]).unwrap();
        // One axis of 32, read as 16-byte words.
        assert_eq!(&words[..4], &[1, 32, 1, 32]);
        assert_eq!(words.len(), 3 + MAX_RANK + 2 * (1 + MAX_RANK));
        let words = params(&[view(vec![8, 1]), view(vec![0, 1])]).unwrap();
        assert_eq!(&words[..5], &[2, 32, 1, 4, 8]);
        // The broadcast view's strides: 0 along the first axis.
        assert_eq!(&words[3 + MAX_RANK + 1 + MAX_RANK + 1..][..2], &[0, 1]);
        // A column of a [4, 8] buffer and a misaligned pointer: elements.
        let column = View {
            sizes: smallvec::smallvec![4, 1],
            ..view(vec![8, 1])
        };
        assert_eq!(params(&[column.clone(), column]).unwrap()[2], 0);
        let misaligned = View {
            ptr: 4100 as *mut u8,
            ..view(vec![8, 1])
        };
        assert_eq!(params(&[misaligned, view(vec![8, 1])]).unwrap()[2], 0);
    }
}
