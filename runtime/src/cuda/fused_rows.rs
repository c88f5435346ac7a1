//! The cuda backend's kernel for a row program (a `host.fused` op that
//! reduces along the iteration shape's last axis: LayerNorm, RMSNorm,
//! softmax): one thread block per row (grid-striding over rows), generated
//! as CUDA C beside the pointwise entry of `fused.rs` and compiled and
//! cached the same way.
//!
//! The row's code runs in phases, one per reduction and a last one for the
//! stores. In each, the block's threads stride over the row computing the
//! varying slots the phase needs, from the loads (read again from global
//! memory, where a row of a few tens of KiB stays cached between phases);
//! a reduction then combines its threads' partial values by warp shuffles
//! and one shared-memory step, and every thread holds the row's result.
//! Row-level slots are computed once per thread as soon as their operands
//! are known. Where every varying view is contiguous along the row and
//! 16-byte aligned, and the row a multiple of [`LANES`], each thread moves
//! [`LANES`] elements at a time as 16-byte words (`p.vec`).
//!
//! The parameter is `RowParams { i64 rank, rows, n, vec, sizes[8]; View
//! v[k]; }`: the outer axes (merged where contiguous in every view) and
//! their sizes, the row length `n`, and per view (the loads', then the
//! stores') its pointer and strides, the outer axes' then the row's at
//! index `rank`.

use super::axes::coalesce;
use super::fused::{element, expression};
use super::kernels::MAX_RANK;
use crate::error::{Error, Result};
use crate::fused::FusedKernel;
use hir_abi::Reduction;
use hir_abi::fused::{Instr, Program};
use std::fmt::Write;

/// Elements a thread moves at a time on the vector path.
pub(crate) const LANES: usize = 8;
/// Threads per row at most.
const MAX_THREADS: usize = 256;
/// Blocks per launch at most: the grid strides over the rest of the rows.
const MAX_BLOCKS: usize = 1 << 16;

/// The `kernels.cu` reduction functor.
fn combiner(op: Reduction) -> &'static str {
    match op {
        Reduction::Sum => "SumOp",
        Reduction::Amax => "AmaxOp",
    }
}

/// The slots `targets` depend on, through slots that vary along the row
/// (row-level slots are values already known in the phase).
fn needed(program: &Program, levels: &[bool], targets: &[usize]) -> Vec<bool> {
    let loads = program.loads.len();
    let mut needed = vec![false; program.slots()];
    let mut stack: Vec<usize> = targets.to_vec();
    while let Some(slot) = stack.pop() {
        if needed[slot] || levels[slot] {
            continue;
        }
        needed[slot] = true;
        if let Some(index) = slot.checked_sub(loads) {
            stack.extend(program.instrs[index].0.operands());
        }
    }
    needed
}

/// CUDA C written line by line at an indent, for one row program.
struct Writer<'p> {
    source: &'p mut String,
    program: &'p Program,
    levels: Vec<bool>,
}

impl Writer<'_> {
    fn line(&mut self, indent: usize, text: String) {
        writeln!(self.source, "{:indent$}{text}", "", indent = 4 * indent)
            .expect("writing to a string");
    }

    /// `float s<slot> = ...;` for instruction `index`, rounded to its type
    /// (a no-op for f32).
    fn instr(&mut self, indent: usize, index: usize) {
        let (instr, dtype) = self.program.instrs[index];
        let slot = self.program.loads.len() + index;
        let text = format!(
            "float s{slot} = hir_round<{}>({});",
            element(dtype),
            expression(instr)
        );
        self.line(indent, text);
    }

    /// The row-level instructions whose operands are `known`, not yet
    /// written (reductions are written by their phase).
    fn known_instrs(&mut self, known: &mut [bool]) {
        let loads = self.program.loads.len();
        for (index, &(instr, _)) in self.program.instrs.iter().enumerate() {
            let slot = loads + index;
            let ready = instr.operands().iter().all(|&operand| known[operand]);
            if self.levels[slot] && !known[slot] && !matches!(instr, Instr::Reduce(..)) && ready {
                self.instr(1, index);
                known[slot] = true;
            }
        }
    }

    /// Opens a phase's loop over the row (`V` elements a thread a step),
    /// loading the varying loads `needed` into `l<slot>[V]`.
    fn open_phase(&mut self, needed: &[bool]) {
        self.line(
            1,
            "for (i64 j = threadIdx.x * V; j < p.n; j += blockDim.x * V) {".into(),
        );
        for (slot, load) in self.program.loads.iter().enumerate() {
            if needed[slot] {
                let e = element(self.program.dtypes[load.buffer]);
                self.line(2, format!("float l{slot}[V];"));
                self.line(2, format!(
                    "hir_load_row<{e}, V>((const {e}::T *)p.v[{slot}].ptr + o[{slot}] + j * p.v[{slot}].strides[p.rank], l{slot});"
                ));
            }
        }
    }

    /// Opens the loop over a step's `V` elements and computes the varying
    /// slots `needed` of element `e`.
    fn open_lanes(&mut self, needed: &[bool]) {
        self.line(2, "#pragma unroll".into());
        self.line(2, "for (int e = 0; e < V; ++e) {".into());
        let loads = self.program.loads.len();
        for slot in (0..loads).filter(|&slot| needed[slot]) {
            self.line(3, format!("float s{slot} = l{slot}[e];"));
        }
        for index in 0..self.program.instrs.len() {
            if needed[loads + index] {
                self.instr(3, index);
            }
        }
    }

    /// The phase of reduction `index`: the varying slots it reads,
    /// combined over the row, then the row-level slots its result makes
    /// known.
    fn reduction(&mut self, index: usize, known: &mut [bool]) {
        let (Instr::Reduce(op, operand), dtype) = self.program.instrs[index] else {
            unreachable!("called on reductions");
        };
        let slot = self.program.loads.len() + index;
        let needed = needed(self.program, &self.levels, &[operand]);
        let combine = combiner(op);
        self.line(1, format!("float a{slot} = {combine}::init<F32>();"));
        self.open_phase(&needed);
        self.open_lanes(&needed);
        self.line(
            3,
            format!("a{slot} = {combine}::combine(a{slot}, s{operand});"),
        );
        self.line(2, "}".into());
        self.line(1, "}".into());
        self.line(
            1,
            format!(
                "float s{slot} = hir_round<{}>(hir_block_reduce<{combine}>(a{slot}, scratch));",
                element(dtype)
            ),
        );
        known[slot] = true;
        self.known_instrs(known);
    }

    /// The last phase: the whole stores, a step's `V` elements as words.
    fn whole_stores(&mut self) {
        let loads = self.program.loads.len();
        // (view, slot, buffer) of each whole store.
        let whole: Vec<(usize, usize, usize)> = self
            .program
            .stores
            .iter()
            .enumerate()
            .filter(|(_, store)| !store.row)
            .map(|(index, store)| (loads + index, store.slot, store.buffer))
            .collect();
        let targets: Vec<usize> = whole.iter().map(|&(_, slot, _)| slot).collect();
        let needed = needed(self.program, &self.levels, &targets);
        self.open_phase(&needed);
        for &(view, _, _) in &whole {
            self.line(2, format!("float w{view}[V];"));
        }
        self.open_lanes(&needed);
        for &(view, slot, _) in &whole {
            self.line(3, format!("w{view}[e] = s{slot};"));
        }
        self.line(2, "}".into());
        for &(view, _, buffer) in &whole {
            let e = element(self.program.dtypes[buffer]);
            self.line(2, format!(
                "hir_store_row<{e}, V>(({e}::T *)p.v[{view}].ptr + o[{view}] + j * p.v[{view}].strides[p.rank], w{view});"
            ));
        }
        self.line(1, "}".into());
    }
}

/// The `hir_fused` entry of a row program (appended to `source`, which
/// holds `kernels.cu`, `hir_round` and [`HELPERS`]).
pub(crate) fn entry(program: &Program, source: &mut String) {
    let levels = program.row_level();
    let loads = program.loads.len();
    let views = loads + program.stores.len();
    let mut known: Vec<bool> = levels[..loads].to_vec();
    known.resize(program.slots(), false);
    let mut w = Writer {
        source,
        program,
        levels,
    };
    w.line(0, format!(
        "struct RowParams {{ i64 rank; i64 rows; i64 n; i64 vec; i64 sizes[HIR_MAX_RANK]; View v[{views}]; }};"
    ));
    w.line(
        0,
        "template <int V> __device__ void hir_row(const RowParams &p, i64 row, float *scratch) {"
            .into(),
    );
    // Each view's offset of the row's first element.
    w.line(1, format!("i64 o[{views}];"));
    w.line(1, format!("for (int k = 0; k < {views}; ++k) o[k] = 0;"));
    w.line(1, "i64 rest = row;".into());
    w.line(1, "for (i64 d = p.rank - 1; d >= 0; --d) {".into());
    w.line(2, "i64 index = rest;".into());
    w.line(
        2,
        "if (d > 0) { index = rest % p.sizes[d]; rest /= p.sizes[d]; }".into(),
    );
    w.line(
        2,
        format!("for (int k = 0; k < {views}; ++k) o[k] += index * p.v[k].strides[d];"),
    );
    w.line(1, "}".into());
    for (slot, load) in program.loads.iter().enumerate() {
        if known[slot] {
            let e = element(program.dtypes[load.buffer]);
            w.line(
                1,
                format!("float s{slot} = {e}::load((const {e}::T *)p.v[{slot}].ptr + o[{slot}]);"),
            );
        }
    }
    w.known_instrs(&mut known);
    for (index, &(instr, _)) in program.instrs.iter().enumerate() {
        if matches!(instr, Instr::Reduce(..)) {
            w.reduction(index, &mut known);
        }
    }
    w.whole_stores();
    w.line(1, "if (threadIdx.x == 0) {".into());
    for (index, store) in program
        .stores
        .iter()
        .enumerate()
        .filter(|(_, store)| store.row)
    {
        let view = loads + index;
        let e = element(program.dtypes[store.buffer]);
        w.line(
            2,
            format!(
                "(({e}::T *)p.v[{view}].ptr)[o[{view}]] = {e}::round(s{});",
                store.slot
            ),
        );
    }
    w.line(1, "}".into());
    w.line(0, "}".into());
    w.line(
        0,
        "extern \"C\" __global__ void hir_fused(RowParams p) {".into(),
    );
    w.line(1, "__shared__ float scratch[32];".into());
    w.line(
        1,
        "for (i64 row = blockIdx.x; row < p.rows; row += gridDim.x) {".into(),
    );
    w.line(
        2,
        format!("if (p.vec) hir_row<{LANES}>(p, row, scratch); else hir_row<1>(p, row, scratch);"),
    );
    w.line(1, "}".into());
    w.line(0, "}".into());
}

/// How a row program's kernel is launched: its parameter words, and the
/// rows and threads per row.
pub(crate) struct Launch {
    pub params: Vec<i64>,
    pub rows: usize,
    pub threads: usize,
}

/// The launch of a validated row program.
pub(crate) fn launch(kernel: &FusedKernel) -> Result<Launch> {
    let views = kernel.views();
    let levels = kernel.program.row_level();
    let shape = kernel.shape();
    let (&n, outer) = shape
        .split_last()
        .expect("validated: a row program has its row axis");
    let rank = outer.len();
    let outer_strides: Vec<Vec<usize>> = views
        .iter()
        .map(|view| view.strides[..rank].to_vec())
        .collect();
    let (sizes, strides) = coalesce(outer, &outer_strides);
    if sizes.len() >= MAX_RANK {
        return Err(Error::Invalid(format!(
            "a fused row kernel over {} non-mergeable outer axes exceeds the cuda kernels' {}",
            sizes.len(),
            MAX_RANK - 1
        )));
    }
    // The views that vary along the row: the loads' that do, and the whole
    // stores'.
    let loads = kernel.program.loads.len();
    let varying = |index: usize| match index.checked_sub(loads) {
        None => !levels[index],
        Some(store) => !kernel.program.stores[store].row,
    };
    let vec = n.is_multiple_of(LANES)
        && views
            .iter()
            .enumerate()
            .filter(|&(index, _)| varying(index))
            .all(|(index, view)| {
                view.strides[rank] == 1
                    && (view.ptr as usize).is_multiple_of(16)
                    && strides[index]
                        .iter()
                        .all(|&stride| stride.is_multiple_of(LANES))
            });
    let rows: usize = outer.iter().product();
    let mut params = vec![sizes.len() as i64, rows as i64, n as i64, vec as i64];
    params.extend((0..MAX_RANK).map(|axis| sizes.get(axis).map_or(0, |&size| size as i64)));
    for (view, outer) in views.iter().zip(&strides) {
        params.push(view.ptr as i64);
        let mut row_strides = outer.clone();
        row_strides.push(view.strides[rank]);
        params.extend((0..MAX_RANK).map(|axis| row_strides.get(axis).map_or(0, |&s| s as i64)));
    }
    let per_thread = if vec { LANES } else { 1 };
    let threads = n
        .div_ceil(per_thread)
        .next_multiple_of(32)
        .clamp(32, MAX_THREADS);
    Ok(Launch {
        params,
        rows: rows.min(MAX_BLOCKS),
        threads,
    })
}

/// The device functions every row entry uses (appended once before it).
pub(crate) const HELPERS: &str = r#"
// `acc` combined over the block by `Op`, in every thread.
template <class Op> __device__ float hir_block_reduce(float acc, float *scratch) {
    for (int shift = 16; shift > 0; shift /= 2)
        acc = Op::combine(acc, __shfl_xor_sync(0xffffffffu, acc, shift));
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    __syncthreads();
    if (lane == 0) scratch[warp] = acc;
    __syncthreads();
    acc = lane < warps ? scratch[lane] : Op::template init<F32>();
    for (int shift = 16; shift > 0; shift /= 2)
        acc = Op::combine(acc, __shfl_xor_sync(0xffffffffu, acc, shift));
    return acc;
}
// V consecutive elements at `p` as f32: one element, or 16-byte words
// (`p` 16-byte aligned).
template <class E, int V> __device__ void hir_load_row(const typename E::T *p, float *out) {
    typedef typename E::T T;
    if (V == 1) { out[0] = E::load(p); return; }
    const int per = sizeof(Word16) / sizeof(T);
#pragma unroll
    for (int w = 0; w < V / per; ++w) {
        Lanes<T> x;
        x.word = ((const Word16 *)p)[w];
#pragma unroll
        for (int l = 0; l < per; ++l) out[w * per + l] = E::load(&x.e[l]);
    }
}
template <class E, int V> __device__ void hir_store_row(typename E::T *p, const float *in) {
    typedef typename E::T T;
    if (V == 1) { p[0] = E::round(in[0]); return; }
    const int per = sizeof(Word16) / sizeof(T);
#pragma unroll
    for (int w = 0; w < V / per; ++w) {
        Lanes<T> y;
#pragma unroll
        for (int l = 0; l < per; ++l) y.e[l] = E::round(in[w * per + l]);
        ((Word16 *)p)[w] = y.word;
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use hir_abi::fused::{Load, Store};
    use hir_abi::{Binary, DType};

    /// The generated row entry (checked without a GPU; the GPU tests in
    /// `fused_rows_tests.rs` compile and run it): the row-level load once
    /// per row, a reduction phase combining over the block, and the
    /// instructions reading its result after it.
    #[test]
    fn the_row_entry_reduces_then_stores() {
        let f = DType::F32;
        let program = Program {
            reduced: Some(1),
            dtypes: vec![f, f, DType::BF16],
            loads: vec![
                Load {
                    buffer: 0,
                    broadcast: vec![],
                },
                Load {
                    buffer: 1,
                    broadcast: vec![1],
                },
            ],
            instrs: vec![
                (Instr::Reduce(Reduction::Sum, 0), f),
                (Instr::Binary(Binary::Mul, 2, 1), f),
                (Instr::Binary(Binary::Sub, 0, 3), DType::BF16),
            ],
            stores: vec![Store::whole(2, 4)],
        };
        let mut source = String::new();
        entry(&program, &mut source);
        let position = |text: &str| {
            source
                .find(text)
                .unwrap_or_else(|| panic!("no '{text}' in\n{source}"))
        };
        let row_load = position("float s1 = F32::load((const F32::T *)p.v[1].ptr + o[1]);");
        let partial = position("a2 = SumOp::combine(a2, s0);");
        let reduced = position("float s2 = hir_round<F32>(hir_block_reduce<SumOp>(a2, scratch));");
        let mean = position("float s3 = hir_round<F32>(OpMul::apply(s2, s1));");
        let store = position("hir_store_row<BF16, V>((BF16::T *)p.v[2].ptr");
        assert!(row_load < partial && partial < reduced && reduced < mean && mean < store);
        // A constant is row-level: computed once per row, before the phases.
        let mut scaled = program.clone();
        scaled.instrs[1] = (Instr::constant(0.125), f);
        let mut source = String::new();
        entry(&scaled, &mut source);
        let constant = source
            .find("    float s3 = hir_round<F32>(__uint_as_float(0x3e000000u));")
            .unwrap_or_else(|| panic!("no constant in\n{source}"));
        assert!(constant < source.find("a2 = SumOp::combine").expect("a phase"));
        assert_eq!(source.matches("float s3 =").count(), 1);
        assert!(source.contains("float s4 = hir_round<BF16>(OpSub::apply(s0, s3));"));
        assert!(
            source.contains(
                "if (p.vec) hir_row<8>(p, row, scratch); else hir_row<1>(p, row, scratch);"
            )
        );
    }
}
