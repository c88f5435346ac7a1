//! The NVRTC-compiled kernels: copy, unary (neg...), cast, binary pointwise, where,
//! fill, iota, sum/amax over axes and broadcast, all on strided views; on the
//! integer types only the ops that take them (`Unary::takes`, `Binary::takes`)
//! and casts to and from every type, computed exactly (wrapping; the cpu
//! backend's `casts` semantics). The source is
//! `kernels.cu` plus one `extern "C"` entry per (op, element type) generated
//! here; it is compiled once per process and architecture, and loaded once
//! per rank's context.
//!
//! Before a launch, axes are simplified ([`coalesce`], `axes.rs`): axes of
//! size 1 are dropped and neighbours that are contiguous in every view are
//! merged, so a contiguous tensor is one axis whatever its rank, and a slice
//! along an outer axis of a contiguous buffer is two.

use super::axes::coalesce;
use super::{Check, Stream};
use crate::error::{Error, Result};
use crate::lock;
use crate::memref::View;
use cudarc::driver::{result as cu, sys};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use hir_abi::{Binary, DType, Reduction, Unary};
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::fmt::Write;
use std::sync::{Arc, Mutex, OnceLock};

/// Must match `HIR_MAX_RANK` in `kernels.cu`.
pub(crate) const MAX_RANK: usize = 8;
const THREADS: u32 = 256;
/// The bytes a thread moves per access on the wide paths.
const WIDE: usize = 16;
/// Outputs from which a reduction over outer axes runs a thread per output
/// however long it is: the threads read neighbouring elements, and there are
/// enough of them to fill the GPU.
const MANY_OUTPUTS: usize = 1 << 16;
/// An outer reduction of fewer words than this splits its reduced axis over
/// a block's threads (`reduce_split`): a thread a word would leave the device
/// mostly idle (an H200 holds 2^18 threads at once).
const SPLIT_BELOW: usize = 1 << 17;
/// The threads of a `reduce_split` block (`HIR_SPLIT_THREADS`).
const SPLIT_THREADS: u32 = 256;

/// `View` of `kernels.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct KView {
    ptr: u64,
    strides: [i64; MAX_RANK],
}

/// `Pointwise` of `kernels.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Pointwise {
    rank: i64,
    numel: i64,
    sizes: [i64; MAX_RANK],
    out: KView,
    a: KView,
    b: KView,
}

/// `Ternary` of `kernels.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Ternary {
    p: Pointwise,
    c: KView,
}

/// `Generate` of `kernels.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Generate {
    p: Pointwise,
    offset: i64,
    value: f32,
}

/// `Random` of `kernels.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Random {
    p: Pointwise,
    offset: i64,
    key: u64,
}

/// `Reduce` of `kernels.cu`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Reduce {
    kept_rank: i64,
    reduced_rank: i64,
    outputs: i64,
    reduced: i64,
    kept_sizes: [i64; MAX_RANK],
    reduced_sizes: [i64; MAX_RANK],
    in_reduced_strides: [i64; MAX_RANK],
    out: KView,
    input: KView,
}

fn element(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "F32",
        DType::BF16 => "BF16",
        DType::F16 => "F16",
        DType::I32 => "I32",
        DType::I64 => "I64",
    }
}

fn word(size: usize) -> &'static str {
    match size {
        2 => "unsigned short",
        4 => "unsigned",
        8 => "u64",
        _ => "Word16",
    }
}

/// The `kernels.cu` functor of an op on `dtype`: `OpNeg` for `neg` on a
/// float type, `IntNeg` on an integer type.
fn op_functor(name: &str, dtype: DType) -> String {
    let float = functor(name);
    if dtype.is_float() {
        float
    } else {
        float.replacen("Op", "Int", 1)
    }
}

/// The kernel source: `kernels.cu` and its entries.
fn source() -> String {
    let mut source = include_str!("kernels.cu").to_string();
    let mut entry = |name: String, body: String, params: &str| {
        writeln!(
            source,
            "extern \"C\" __global__ void {name}({params} p) {{ {body}(p); }}"
        )
        .expect("writing to a string");
    };
    for size in [2, 4, 8, WIDE] {
        entry(
            copy_name(size),
            format!("copy<{}>", word(size)),
            "Pointwise",
        );
    }
    for dtype in DType::ALL {
        let e = element(dtype);
        for op in Unary::ALL.into_iter().filter(|op| op.takes(dtype)) {
            entry(
                unary_name(op, dtype),
                format!("unary<{e}, {e}, {}>", op_functor(op.name(), dtype)),
                "Pointwise",
            );
        }
        // Every cast but an integer type to itself (a copy).
        for to in DType::ALL {
            let t = element(to);
            let functor = match (dtype.is_float(), to.is_float()) {
                (true, true) => "OpCast".to_string(),
                _ if dtype == to => continue,
                (true, false) => format!("OpTo{t}"),
                (false, true) => format!("IntTo{t}"),
                (false, false) => "IntCast".to_string(),
            };
            entry(
                cast_name(dtype, to),
                format!("unary<{e}, {t}, {functor}>"),
                "Pointwise",
            );
        }
        for op in Binary::ALL.into_iter().filter(|op| op.takes(dtype)) {
            let o = op_functor(op.name(), dtype);
            entry(
                binary_name(op, dtype),
                format!("binary<{e}, {o}>"),
                "Pointwise",
            );
            entry(
                format!("{}_wide", binary_name(op, dtype)),
                format!("binary_wide<{e}, {o}>"),
                "Pointwise",
            );
        }
        entry(where_name(dtype), format!("where<{e}>"), "Ternary");
        for generator in ["fill", "iota", "random"] {
            let template = if dtype.is_float() {
                generator.to_string()
            } else {
                format!("{generator}_int")
            };
            let params = if generator == "random" {
                "Random"
            } else {
                "Generate"
            };
            entry(
                generate_name(generator, dtype),
                format!("{template}<{e}>"),
                params,
            );
        }
        for op in Reduction::ALL {
            let o = match (op, dtype.is_float()) {
                (Reduction::Sum, true) => "SumOp",
                (Reduction::Amax, true) => "AmaxOp",
                (Reduction::Sum, false) => "IntSumOp",
                (Reduction::Amax, false) => "IntAmaxOp",
            };
            entry(
                reduce_name(op, dtype),
                format!("reduce<{e}, {o}>"),
                "Reduce",
            );
            entry(
                format!("{}_short", reduce_name(op, dtype)),
                format!("reduce_short<{e}, {o}>"),
                "Reduce",
            );
            entry(
                format!("{}_wide", reduce_name(op, dtype)),
                format!("reduce_wide<{e}, {o}>"),
                "Reduce",
            );
            entry(
                format!("{}_split", reduce_name(op, dtype)),
                format!("reduce_split<{e}, {o}>"),
                "Reduce",
            );
        }
    }
    source
}

fn copy_name(size: usize) -> String {
    format!("hir_copy_{}", size * 8)
}

fn unary_name(op: Unary, dtype: DType) -> String {
    format!("hir_{}_{}", op.name(), dtype.mlir())
}

/// The functor `kernels.cu` defines for an op: `OpNeg` for `neg`.
fn functor(name: &str) -> String {
    let mut chars = name.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase());
    format!(
        "Op{}{}",
        first.into_iter().collect::<String>(),
        chars.as_str()
    )
}

fn cast_name(from: DType, to: DType) -> String {
    format!("hir_cast_{}_{}", from.mlir(), to.mlir())
}

fn binary_name(op: Binary, dtype: DType) -> String {
    format!("hir_{}_{}", op.name(), dtype.mlir())
}

fn where_name(dtype: DType) -> String {
    format!("hir_where_{}", dtype.mlir())
}

/// `hir_fill_f32`, `hir_iota_f32`, ...
fn generate_name(generator: &str, dtype: DType) -> String {
    format!("hir_{generator}_{}", dtype.mlir())
}

fn reduce_name(op: Reduction, dtype: DType) -> String {
    format!("hir_{}_{}", op.name(), dtype.mlir())
}

/// The PTX of [`source`] for `compute_<arch>`, compiled on first use.
fn ptx(arch: i32) -> Result<Arc<CString>> {
    static CACHE: OnceLock<Mutex<HashMap<i32, Arc<CString>>>> = OnceLock::new();
    let mut cache = lock(CACHE.get_or_init(Mutex::default));
    if let Some(ptx) = cache.get(&arch) {
        return Ok(ptx.clone());
    }
    let options = CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{arch}")],
        name: Some("hir_kernels.cu".into()),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(source(), options).map_err(|error| {
        Error::Cuda(format!(
            "NVRTC cannot compile the runtime's kernels: {error}"
        ))
    })?;
    let ptx = Arc::new(CString::new(ptx.to_src()).expect("PTX is text"));
    cache.insert(arch, ptx.clone());
    Ok(ptx)
}

/// Loads every function of `module` now, not at its first launch. Under
/// CUDA's lazy loading (the default) a first launch loads its function, and
/// that load is ordered after the work in flight in the context, with later
/// work on every stream ordered after it: a first launch in a call enqueued
/// behind a stream that waits for later GPU work (a caller's stream held on
/// a flag) would hold the very work that releases it, and never run.
pub(crate) fn load_functions(module: sys::CUmodule) -> Result<()> {
    let mut count = 0;
    // SAFETY: a loaded module; `functions` holds `count` handles.
    unsafe {
        sys::cuModuleGetFunctionCount(&mut count, module)
            .result()
            .check("counting the kernels of a module")?;
        let mut functions = vec![std::ptr::null_mut(); count as usize];
        sys::cuModuleEnumerateFunctions(functions.as_mut_ptr(), count, module)
            .result()
            .check("listing the kernels of a module")?;
        for function in functions {
            sys::cuFuncLoad(function)
                .result()
                .check("loading a kernel")?;
        }
    }
    Ok(())
}

/// The kernels loaded into one context.
pub(crate) struct Kernels {
    module: sys::CUmodule,
    functions: Mutex<HashMap<String, sys::CUfunction>>,
    /// Blocks per launch at most: the grid strides over the rest.
    max_blocks: u32,
}

// The module and functions are context-wide handles, usable from any thread
// that made the context current.
unsafe impl Send for Kernels {}
unsafe impl Sync for Kernels {}

impl Kernels {
    /// Loads the kernels into the current context, of a device with
    /// compute capability `arch` (e.g. 90) and `sms` multiprocessors.
    pub fn load(arch: i32, sms: u32) -> Result<Kernels> {
        let ptx = ptx(arch)?;
        // SAFETY: NUL-terminated PTX text.
        let module = unsafe { cu::module::load_data(ptx.as_ptr().cast()) }
            .check("loading the runtime's kernels")?;
        load_functions(module)?;
        Ok(Kernels {
            module,
            functions: Mutex::default(),
            max_blocks: sms * 16,
        })
    }

    fn function(&self, name: &str) -> Result<sys::CUfunction> {
        let mut functions = lock(&self.functions);
        if let Some(&function) = functions.get(name) {
            return Ok(function);
        }
        let c_name = CString::new(name).expect("kernel names have no NUL");
        // SAFETY: the module is loaded until `self` drops.
        let function = unsafe { cu::module::get_function(self.module, c_name) }
            .check(&format!("finding kernel {name}"))?;
        functions.insert(name.to_string(), function);
        Ok(function)
    }

    fn launch<P>(
        &self,
        name: &str,
        blocks: u32,
        threads: u32,
        params: &P,
        stream: Stream,
    ) -> Result<()> {
        self.launch_blocks(name, blocks, (threads, 1), params, stream)
    }

    /// [`Kernels::launch`] with blocks of `block` (x, y) threads.
    fn launch_blocks<P>(
        &self,
        name: &str,
        blocks: u32,
        (x, y): (u32, u32),
        params: &P,
        stream: Stream,
    ) -> Result<()> {
        let function = self.function(name)?;
        let mut args = [params as *const P as *mut c_void];
        // SAFETY: `params` is the kernel's one by-value parameter, whose layout
        // it mirrors; cuLaunchKernel copies it before returning.
        unsafe { cu::launch_kernel(function, (blocks, 1, 1), (x, y, 1), 0, stream, &mut args) }
            .check_with(|| format!("launching {name}"))
    }

    /// Launches `name` over `out`'s shape, or `wide` (the same op on
    /// WIDE-byte words) where every view allows it (see `lanes`).
    fn pointwise(
        &self,
        name: &str,
        wide: Option<&str>,
        out: &View,
        inputs: &[&View],
        stream: Stream,
    ) -> Result<()> {
        let numel = out.numel();
        if numel == 0 {
            return Ok(());
        }
        // The output, then the (at most three) inputs, in arrays: a small
        // op's host work is mostly its launch, and allocations added a tenth.
        let input = |index: usize| inputs.get(index).copied().unwrap_or(out);
        let views = [out, input(0), input(1), input(2)];
        let count = inputs.len() + 1;
        let (mut sizes, mut strides) =
            coalesce(&out.sizes, &views.map(|v| &v.strides[..])[..count]);
        let lanes = match wide {
            Some(_) => lanes(
                out.dtype.size(),
                &sizes,
                &strides,
                &[],
                &views.map(|v| v.ptr)[..count],
            ),
            None => 1,
        };
        let name = match wide {
            Some(wide) if lanes > 1 => {
                *sizes.last_mut().expect("lanes > 1 has an axis") /= lanes;
                strides.iter_mut().for_each(|view| widen(view, lanes));
                wide
            }
            _ => name,
        };
        let numel = numel / lanes;
        let mut params = Pointwise {
            rank: sizes.len() as i64,
            numel: numel as i64,
            sizes: fill(&sizes, "pointwise")?,
            out: kview(out.ptr, &strides[0])?,
            ..Default::default()
        };
        params.a = kview(inputs[0].ptr, &strides[1])?;
        if let Some(b) = inputs.get(1) {
            params.b = kview(b.ptr, &strides[2])?;
        }
        let blocks = numel
            .div_ceil(THREADS as usize)
            .min(self.max_blocks as usize) as u32;
        match inputs.get(2) {
            Some(c) => {
                let params = Ternary {
                    p: params,
                    c: kview(c.ptr, &strides[3])?,
                };
                self.launch(name, blocks, THREADS, &params, stream)
            }
            None => self.launch(name, blocks, THREADS, &params, stream),
        }
    }

    /// Copies `from` into `to` (same element size and shape), bit for bit.
    pub fn copy(&self, from: &View, to: &View, stream: Stream) -> Result<()> {
        let name = copy_name(from.dtype.size());
        self.pointwise(&name, Some(&copy_name(WIDE)), to, &[from], stream)
    }

    pub fn unary(&self, op: Unary, input: &View, out: &View, stream: Stream) -> Result<()> {
        self.pointwise(&unary_name(op, input.dtype), None, out, &[input], stream)
    }

    pub fn cast(&self, input: &View, out: &View, stream: Stream) -> Result<()> {
        if input.dtype == out.dtype {
            return self.copy(input, out, stream);
        }
        self.pointwise(
            &cast_name(input.dtype, out.dtype),
            None,
            out,
            &[input],
            stream,
        )
    }

    pub fn binary(
        &self,
        op: Binary,
        lhs: &View,
        rhs: &View,
        out: &View,
        stream: Stream,
    ) -> Result<()> {
        let name = binary_name(op, out.dtype);
        let wide = format!("{name}_wide");
        self.pointwise(&name, Some(&wide), out, &[lhs, rhs], stream)
    }

    /// `out` is `lhs` where `mask` is nonzero, `rhs` elsewhere.
    pub fn select(
        &self,
        mask: &View,
        lhs: &View,
        rhs: &View,
        out: &View,
        stream: Stream,
    ) -> Result<()> {
        self.pointwise(&where_name(out.dtype), None, out, &[mask, lhs, rhs], stream)
    }

    /// Every element of `out` is `value`, rounded to its element type (an
    /// integer type's value is integral, passed exactly as the offset).
    pub fn fill(&self, value: f64, out: &View, stream: Stream) -> Result<()> {
        let index = vec![0; out.rank()];
        let name = generate_name("fill", out.dtype);
        if out.dtype.is_float() {
            self.generate(&name, out, &index, 0, value as f32, stream)
        } else {
            self.generate(&name, out, &index, value as i64, 0.0, stream)
        }
    }

    /// Every element of `out` is `offset` plus its index along `axis`.
    pub fn iota(&self, axis: usize, offset: i64, out: &View, stream: Stream) -> Result<()> {
        let mut index = vec![0; out.rank()];
        index[axis] = 1;
        let name = generate_name("iota", out.dtype);
        self.generate(&name, out, &index, offset, 0.0, stream)
    }

    /// Fills `out` with the random values keyed `key` (`crate::random`) of
    /// the global array `out` is a box of: its elements' global flat
    /// indices are `first` plus their index times `global_strides` (the
    /// global array's row-major strides, one per axis of `out`).
    pub fn random(
        &self,
        key: u64,
        first: usize,
        global_strides: &[usize],
        out: &View,
        stream: Stream,
    ) -> Result<()> {
        let Some((p, blocks)) = self.generated(out, global_strides)? else {
            return Ok(());
        };
        let offset = i64::try_from(first)
            .map_err(|_| Error::Invalid(format!("element {first} is past i64")))?;
        let params = Random { p, offset, key };
        let name = generate_name("random", out.dtype);
        self.launch(&name, blocks, THREADS, &params, stream)
    }

    /// Launches the `Generate` kernel `name` over `out`'s shape, `index`
    /// the strides of its never-read view `a` (see `kernels.cu`).
    fn generate(
        &self,
        name: &str,
        out: &View,
        index: &[usize],
        offset: i64,
        value: f32,
        stream: Stream,
    ) -> Result<()> {
        let Some((p, blocks)) = self.generated(out, index)? else {
            return Ok(());
        };
        let params = Generate { p, offset, value };
        self.launch(name, blocks, THREADS, &params, stream)
    }

    /// A launch of no input over `out`'s shape (`Generate`, `Random`): its
    /// `Pointwise`, `index` the strides of the never-read view `a` whose
    /// offset at an element the kernel reads, and its grid; none when `out`
    /// is empty.
    fn generated(&self, out: &View, index: &[usize]) -> Result<Option<(Pointwise, u32)>> {
        let numel = out.numel();
        if numel == 0 {
            return Ok(None);
        }
        let (sizes, strides) = coalesce(&out.sizes, &[out.strides.clone(), index.to_vec()]);
        let p = Pointwise {
            rank: sizes.len() as i64,
            numel: numel as i64,
            sizes: fill(&sizes, "generated")?,
            out: kview(out.ptr, &strides[0])?,
            a: kview(std::ptr::null_mut(), &strides[1])?,
            ..Default::default()
        };
        let blocks = numel
            .div_ceil(THREADS as usize)
            .min(self.max_blocks as usize) as u32;
        Ok(Some((p, blocks)))
    }

    /// `out` is `input` repeated along the new output axes `axes`.
    pub fn broadcast(
        &self,
        input: &View,
        axes: &[usize],
        out: &View,
        stream: Stream,
    ) -> Result<()> {
        let mut kept = input.strides.iter();
        let strides = (0..out.rank())
            .map(|axis| {
                if axes.contains(&axis) {
                    0
                } else {
                    *kept.next().expect("validated")
                }
            })
            .collect();
        let spread = View {
            sizes: out.sizes.clone(),
            strides,
            ..input.clone()
        };
        self.copy(&spread, out, stream)
    }

    pub fn reduce(
        &self,
        op: Reduction,
        input: &View,
        axes: &[usize],
        out: &View,
        stream: Stream,
    ) -> Result<()> {
        let outputs = out.numel();
        if outputs == 0 {
            return Ok(());
        }
        let (reduced_axes, kept_axes): (Vec<usize>, Vec<usize>) =
            (0..input.rank()).partition(|axis| axes.contains(axis));
        let pick =
            |axes: &[usize], of: &[usize]| axes.iter().map(|&axis| of[axis]).collect::<Vec<_>>();
        let (kept_sizes, kept_strides) = coalesce(
            &pick(&kept_axes, &input.sizes),
            &[out.strides.clone(), pick(&kept_axes, &input.strides)],
        );
        let (reduced_sizes, reduced_strides) = coalesce(
            &pick(&reduced_axes, &input.sizes),
            &[pick(&reduced_axes, &input.strides)],
        );
        let reduced: usize = reduced_sizes.iter().product();
        let params = Reduce {
            kept_rank: kept_sizes.len() as i64,
            reduced_rank: reduced_sizes.len() as i64,
            outputs: outputs as i64,
            reduced: reduced as i64,
            kept_sizes: fill(&kept_sizes, "kept")?,
            reduced_sizes: fill(&reduced_sizes, "reduced")?,
            in_reduced_strides: fill(&reduced_strides[0], "reduced")?,
            out: kview(out.ptr, &kept_strides[0])?,
            input: kview(input.ptr, &kept_strides[1])?,
        };
        let name = reduce_name(op, out.dtype);
        let contiguous = kept_strides[1].last() == Some(&1);
        let lanes = lanes(
            out.dtype.size(),
            &kept_sizes,
            &kept_strides,
            &reduced_strides[0],
            &[out.ptr, input.ptr],
        );
        // The same reduction on WIDE-byte words of the innermost kept axis.
        let wide = if lanes > 1 {
            let mut sizes = kept_sizes.clone();
            *sizes.last_mut().expect("lanes > 1 has an axis") /= lanes;
            Some(Reduce {
                outputs: (outputs / lanes) as i64,
                kept_sizes: fill(&sizes, "kept")?,
                out: kview(out.ptr, &widen_innermost(&kept_strides[0], lanes))?,
                input: kview(input.ptr, &widen_innermost(&kept_strides[1], lanes))?,
                ..params
            })
        } else {
            None
        };
        let words = outputs / lanes;
        if let Some(wide) = &wide
            && contiguous
            && reduced >= 32
            && words < SPLIT_BELOW
        {
            let (blocks, block) = self.split_blocks(words);
            return self.launch_blocks(&format!("{name}_split"), blocks, block, wide, stream);
        }
        if reduced < 32 || (contiguous && outputs >= MANY_OUTPUTS) {
            let (kernel, params) = match wide {
                None => ("short", params),
                Some(wide) => ("wide", wide),
            };
            let blocks = (params.outputs as usize)
                .div_ceil(THREADS as usize)
                .min(self.max_blocks as usize) as u32;
            return self.launch(
                &format!("{name}_{kernel}"),
                blocks,
                THREADS,
                &params,
                stream,
            );
        }
        let threads = (reduced.div_ceil(32) * 32).clamp(32, THREADS as usize) as u32;
        let blocks = outputs.min(self.max_blocks as usize * 4) as u32;
        self.launch(&name, blocks, threads, &params, stream)
    }
}

impl Kernels {
    /// The grid and block of a `reduce_split` over `words` outputs: as many
    /// words a block (2 to 32, a power of two) as still give every
    /// multiprocessor two blocks, the rest of its threads groups.
    fn split_blocks(&self, words: usize) -> (u32, (u32, u32)) {
        let sms = (self.max_blocks / 16) as usize;
        let mut columns = 32;
        while columns > 2 && words.div_ceil(columns) < 2 * sms {
            columns /= 2;
        }
        let blocks = words.div_ceil(columns) as u32;
        (blocks, (columns as u32, SPLIT_THREADS / columns as u32))
    }
}

impl Drop for Kernels {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`, unloaded once; the owner made the context
        // current and synchronized it.
        let _ = unsafe { cu::module::unload(self.module) };
    }
}

fn fill(values: &[usize], what: &str) -> Result<[i64; MAX_RANK]> {
    if values.len() > MAX_RANK {
        return Err(Error::Invalid(format!(
            "a {what} shape of {} non-mergeable axes exceeds the cuda kernels' {MAX_RANK}",
            values.len()
        )));
    }
    let mut array = [0; MAX_RANK];
    for (slot, &value) in array.iter_mut().zip(values) {
        *slot = value as i64;
    }
    Ok(array)
}

fn kview(ptr: *mut u8, strides: &[usize]) -> Result<KView> {
    Ok(KView {
        ptr: ptr as u64,
        strides: fill(strides, "strided")?,
    })
}

/// How many elements of `size` bytes a thread moves as one WIDE-byte word:
/// WIDE / size when the innermost of `sizes` is a multiple of that, every
/// view steps over it contiguously, every other stride (the views' outer
/// ones and `steps`) is a whole number of words and every pointer is
/// WIDE-byte aligned; otherwise 1.
fn lanes(
    size: usize,
    sizes: &[usize],
    strides: &[Vec<usize>],
    steps: &[usize],
    ptrs: &[*mut u8],
) -> usize {
    let lanes = WIDE / size;
    let whole = |stride: &usize| stride.is_multiple_of(lanes);
    let fits = sizes.last().is_some_and(whole)
        && strides.iter().all(|strides| {
            strides
                .split_last()
                .is_some_and(|(&last, outer)| last == 1 && outer.iter().all(whole))
        })
        && steps.iter().all(whole)
        && ptrs.iter().all(|&ptr| (ptr as usize).is_multiple_of(WIDE));
    if fits { lanes } else { 1 }
}

/// Strides in elements as strides in words of `lanes` elements.
fn widen(strides: &mut [usize], lanes: usize) {
    let (_, outer) = strides.split_last_mut().expect("one stride per axis");
    outer.iter_mut().for_each(|stride| *stride /= lanes);
}

/// Strides in elements with the innermost axis counted in words of `lanes`
/// elements (the wide reduction indexes elements).
fn widen_innermost(strides: &[usize], lanes: usize) -> Vec<usize> {
    let mut strides = strides.to_vec();
    *strides.last_mut().expect("one stride per axis") *= lanes;
    strides
}

#[cfg(test)]
#[path = "kernels_tests.rs"]
mod tests;
