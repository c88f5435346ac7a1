//! The NVRTC-compiled kernels: copy, unary (neg...), cast, binary pointwise, where,
//! fill, iota, sum/amax over axes and broadcast, all on strided views; on the
//! integer types only the ops that take them (`Unary::takes`, `Binary::takes`)
//! and casts to and from every type, computed exactly (wrapping; the cpu
//! backend's `casts` semantics). Their source is `kernel_source.rs`'s; the
//! module is loaded once per rank's context, every entry looked up then.
//!
//! Before a launch, axes are simplified ([`coalesce`], `axes.rs`): axes of
//! size 1 are dropped and neighbours that are contiguous in every view are
//! merged, so a contiguous tensor is one axis whatever its rank, and a slice
//! along an outer axis of a contiguous buffer is two.

use super::axes::coalesce;
use super::kernel_source::{Generator, Key, WIDE, Way, ptx};
use super::{Check, Stream};
use crate::error::{Error, Result};
use crate::memref::View;
use cudarc::driver::{result as cu, sys};
use hir_abi::{Binary, Reduction, Unary};
use std::collections::HashMap;
use std::ffi::{CString, c_void};

/// Must match `HIR_MAX_RANK` in `kernels.cu`.
pub(crate) const MAX_RANK: usize = 8;
const THREADS: u32 = 256;
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
    /// Every entry of the module, looked up when it was loaded.
    functions: HashMap<Key, sys::CUfunction>,
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
        // Owned from here, so that a failed lookup unloads it.
        let mut kernels = Kernels {
            module,
            functions: HashMap::new(),
            max_blocks: sms * 16,
        };
        load_functions(module)?;
        for key in Key::all() {
            let name = key.name();
            let c_name = CString::new(name.as_str()).expect("kernel names have no NUL");
            // SAFETY: the module is loaded until `kernels` drops.
            let function = unsafe { cu::module::get_function(module, c_name) }
                .check(&format!("finding kernel {name}"))?;
            kernels.functions.insert(key, function);
        }
        Ok(kernels)
    }

    fn launch<P>(
        &self,
        key: Key,
        blocks: u32,
        threads: u32,
        params: &P,
        stream: Stream,
    ) -> Result<()> {
        self.launch_blocks(key, blocks, (threads, 1), params, stream)
    }

    /// [`Kernels::launch`] with blocks of `block` (x, y) threads.
    fn launch_blocks<P>(
        &self,
        key: Key,
        blocks: u32,
        (x, y): (u32, u32),
        params: &P,
        stream: Stream,
    ) -> Result<()> {
        let function = *self.functions.get(&key).ok_or_else(|| {
            Error::Invalid(format!("the runtime's module has no kernel {}", key.name()))
        })?;
        let mut args = [params as *const P as *mut c_void];
        // SAFETY: `params` is the kernel's one by-value parameter, whose layout
        // it mirrors; cuLaunchKernel copies it before returning.
        unsafe { cu::launch_kernel(function, (blocks, 1, 1), (x, y, 1), 0, stream, &mut args) }
            .check_with(|| format!("launching {}", key.name()))
    }

    /// Launches `key` over `out`'s shape, or `wide` (the same op on
    /// WIDE-byte words) where every view allows it (see `lanes`).
    fn pointwise(
        &self,
        key: Key,
        wide: Option<Key>,
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
        let key = match wide {
            Some(wide) if lanes > 1 => {
                *sizes.last_mut().expect("lanes > 1 has an axis") /= lanes;
                strides.iter_mut().for_each(|view| widen(view, lanes));
                wide
            }
            _ => key,
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
                self.launch(key, blocks, THREADS, &params, stream)
            }
            None => self.launch(key, blocks, THREADS, &params, stream),
        }
    }

    /// Copies `from` into `to` (same element size and shape), bit for bit.
    pub fn copy(&self, from: &View, to: &View, stream: Stream) -> Result<()> {
        let key = Key::Copy(from.dtype.size());
        self.pointwise(key, Some(Key::Copy(WIDE)), to, &[from], stream)
    }

    pub fn unary(&self, op: Unary, input: &View, out: &View, stream: Stream) -> Result<()> {
        let key = Key::Unary(op, input.dtype);
        self.pointwise(key, None, out, &[input], stream)
    }

    pub fn cast(&self, input: &View, out: &View, stream: Stream) -> Result<()> {
        if input.dtype == out.dtype {
            return self.copy(input, out, stream);
        }
        let key = Key::Cast(input.dtype, out.dtype);
        self.pointwise(key, None, out, &[input], stream)
    }

    pub fn binary(
        &self,
        op: Binary,
        lhs: &View,
        rhs: &View,
        out: &View,
        stream: Stream,
    ) -> Result<()> {
        let (key, wide) = (Key::Binary(op, out.dtype), Key::BinaryWide(op, out.dtype));
        self.pointwise(key, Some(wide), out, &[lhs, rhs], stream)
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
        self.pointwise(Key::Where(out.dtype), None, out, &[mask, lhs, rhs], stream)
    }

    /// Every element of `out` is `value`, rounded to its element type (an
    /// integer type's value is integral, passed exactly as the offset).
    pub fn fill(&self, value: f64, out: &View, stream: Stream) -> Result<()> {
        let index = vec![0; out.rank()];
        let key = Key::Generate(Generator::Fill, out.dtype);
        if out.dtype.is_float() {
            self.generate(key, out, &index, 0, value as f32, stream)
        } else {
            self.generate(key, out, &index, value as i64, 0.0, stream)
        }
    }

    /// Every element of `out` is `offset` plus its index along `axis`.
    pub fn iota(&self, axis: usize, offset: i64, out: &View, stream: Stream) -> Result<()> {
        let mut index = vec![0; out.rank()];
        index[axis] = 1;
        let key = Key::Generate(Generator::Iota, out.dtype);
        self.generate(key, out, &index, offset, 0.0, stream)
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
        let key = Key::Generate(Generator::Random, out.dtype);
        self.launch(key, blocks, THREADS, &params, stream)
    }

    /// Launches the `Generate` kernel `key` over `out`'s shape, `index`
    /// the strides of its never-read view `a` (see `kernels.cu`).
    fn generate(
        &self,
        key: Key,
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
        self.launch(key, blocks, THREADS, &params, stream)
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
        let (sizes, strides) = coalesce(&out.sizes, &[&out.strides[..], index]);
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
            &[&out.strides[..], &pick(&kept_axes, &input.strides)[..]],
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
        let way = |way| Key::Reduce(op, out.dtype, way);
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
            return self.launch_blocks(way(Way::Split), blocks, block, wide, stream);
        }
        if reduced < 32 || (contiguous && outputs >= MANY_OUTPUTS) {
            let (chosen, params) = match wide {
                None => (Way::Short, params),
                Some(wide) => (Way::Wide, wide),
            };
            let blocks = (params.outputs as usize)
                .div_ceil(THREADS as usize)
                .min(self.max_blocks as usize) as u32;
            return self.launch(way(chosen), blocks, THREADS, &params, stream);
        }
        let threads = (reduced.div_ceil(32) * 32).clamp(32, THREADS as usize) as u32;
        let blocks = outputs.min(self.max_blocks as usize * 4) as u32;
        self.launch(way(Way::Block), blocks, threads, &params, stream)
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
