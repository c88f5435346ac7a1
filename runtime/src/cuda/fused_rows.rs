//! The cuda backend's kernel for a row program (a `host.fused` op that
//! reduces along the iteration shape's last axis: LayerNorm, RMSNorm,
//! softmax): one thread block per row (grid-striding over rows), generated
//! as CUDA C beside the pointwise entry of `fused.rs` and compiled and
//! cached the same way.
//!
//! The row's code runs in phases, one per reduction and a last one for the
//! stores. In each, the block's threads compute the varying slots the phase
//! needs from the loads; a reduction then combines its threads' partial
//! values by warp shuffles and one shared-memory step, and every thread
//! holds the row's result. Row-level slots are computed once per thread as
//! soon as their operands are known.
//!
//! A row is gone through in one of three ways ([`Way`]), each its own
//! kernel entry so that each gets only the registers it needs (one entry
//! switching between them took the most any needed: 230 registers a
//! thread, one block of 256 threads an SM). Where every varying view is
//! contiguous along the row and 16-byte aligned, and the row a multiple of
//! [`LANES`], each thread moves [`LANES`] elements at a time as 16-byte
//! words; where such a row also fits [`MAX_THREADS`] threads of up to eight
//! words each ([`STEPS`]), `hir_row_regs` runs: a thread's steps are
//! unrolled, the loads that more than one phase reads are read from memory
//! once and kept as raw words in registers, each phase issues all its own
//! loads before it computes, and a load that is the same row for every row
//! (LayerNorm's weight) is read where it is used, from the caches. A
//! LayerNorm thus reads its row once with all of it in flight together.
//! Other rows run `hir_row_loop`, which strides over the row in every phase
//! and reads the loads again (from the caches, for a row of a few tens of
//! KiB), by words or by elements.
//!
//! The parameter is `RowParams { i64 rank, rows, n, sizes[8]; View v[k];
//! }`: the outer axes (merged where contiguous in every view) and their
//! sizes, the row length `n`, and per view (the loads', then the stores')
//! its pointer and strides, the outer axes' then the row's at index `rank`.

use super::axes::coalesce;
use super::kernel_source::{element, expression};
use super::kernels::MAX_RANK;
use crate::error::{Error, Result};
use crate::fused::FusedKernel;
use hir_abi::Reduction;
use hir_abi::fused::{Instr, Program};
use std::fmt::Write;

/// Elements a thread moves at a time on the vector path.
pub(crate) const LANES: usize = 8;
/// Threads per row at most, and the entries' launch bound. On an H200, a
/// LayerNorm of `[8192, 8192]` bf16 took 126-131 µs with 256 (four steps),
/// 115-123 µs with 128 (eight steps, but softmax 15% slower) and 163-165
/// µs with 512 (see docs/benchmarks.md).
const MAX_THREADS: usize = 256;
/// The register function's steps a thread may take along a row: a row of
/// up to `MAX_THREADS * LANES * 8` elements is read from memory once.
const STEPS: [usize; 4] = [1, 2, 4, 8];
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
    /// The varying loads more than one phase reads, from memory.
    reread: Vec<bool>,
    /// The varying loads that are the same for every row (LayerNorm's
    /// weight): the register function reads them at each step where they
    /// are used, from the caches, rather than holding registers for them.
    shared: Vec<bool>,
    /// Whether the function being written is `hir_row_regs` (each thread's
    /// `S` steps of the row unrolled, the reread loads kept in registers)
    /// rather than `hir_row_loop` (striding over the row in every phase).
    registers: bool,
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

    /// Load `slot` at the row's element `j` into `target`: as `V` floats,
    /// or, in the register function, as raw words from its row's base.
    fn load_step(&mut self, indent: usize, slot: usize, target: &str) {
        let e = self.view_element(slot);
        let text = match self.registers {
            true => format!("hir_load_words<{e}>(b{slot} + j, {target});"),
            false => format!(
                "hir_load_row<{e}, V>((const {e}::T *)p.v[{slot}].ptr + o[{slot}] + j * p.v[{slot}].strides[p.rank], {target});"
            ),
        };
        self.line(indent, text);
    }

    /// The element type of view `view` (a load's, then a store's).
    fn view_element(&self, view: usize) -> &'static str {
        let loads = self.program.loads.len();
        let buffer = match view.checked_sub(loads) {
            None => self.program.loads[view].buffer,
            Some(store) => self.program.stores[store].buffer,
        };
        element(self.program.dtypes[buffer])
    }

    /// Opens the loop over a thread's steps: strided over the row, or the
    /// register function's `S` steps, unrolled, skipping those past its end.
    fn open_steps(&mut self) {
        if self.registers {
            self.line(1, "#pragma unroll".into());
            self.line(1, "for (int t = 0; t < S; ++t) {".into());
            self.line(2, "int j = (threadIdx.x + t * blockDim.x) * V;".into());
            self.line(2, "if (j >= p.n) break;".into());
        } else {
            self.line(
                1,
                "for (i64 j = threadIdx.x * V; j < p.n; j += blockDim.x * V) {".into(),
            );
        }
    }

    /// Where element `e` of load `slot` is at a step.
    fn loaded(&self, slot: usize) -> String {
        let e = self.view_element(slot);
        match (self.registers, self.shared[slot], self.reread[slot]) {
            (true, true, _) => format!("hir_word_lane<{e}>(l{slot}, e)"),
            (true, false, true) => format!("hir_word_lane<{e}>(c{slot}[t], e)"),
            (true, false, false) => format!("hir_word_lane<{e}>(l{slot}[t], e)"),
            (false, ..) => format!("l{slot}[e]"),
        }
    }

    /// Opens a phase's loop over the row with the varying loads `needed` at
    /// hand. The register function reads every step's words of the loads
    /// only this phase reads before it computes, so that they are all in
    /// flight at once.
    fn open_phase(&mut self, needed: &[bool]) {
        let loads = self.program.loads.len();
        if self.registers {
            let own: Vec<usize> = (0..loads)
                .filter(|&slot| needed[slot] && !self.reread[slot] && !self.shared[slot])
                .collect();
            for &slot in &own {
                let e = self.view_element(slot);
                self.line(1, format!("RowWords<{e}> l{slot}[S];"));
            }
            if !own.is_empty() {
                self.open_steps();
                for &slot in &own {
                    self.load_step(2, slot, &format!("l{slot}[t]"));
                }
                self.line(1, "}".into());
            }
            self.open_steps();
            let shared: Vec<usize> = (0..loads)
                .filter(|&slot| needed[slot] && self.shared[slot])
                .collect();
            for slot in shared {
                let e = self.view_element(slot);
                self.line(2, format!("RowWords<{e}> l{slot};"));
                self.load_step(2, slot, &format!("l{slot}"));
            }
            return;
        }
        self.open_steps();
        for slot in (0..loads).filter(|&slot| needed[slot]) {
            self.line(2, format!("float l{slot}[V];"));
            self.load_step(2, slot, &format!("l{slot}"));
        }
    }

    /// The register function's reread loads, every step read once, as raw
    /// words: `c<slot>[S]`.
    fn cache(&mut self) {
        let reread: Vec<usize> = (0..self.program.loads.len())
            .filter(|&slot| self.reread[slot])
            .collect();
        if reread.is_empty() {
            return;
        }
        for &slot in &reread {
            let e = self.view_element(slot);
            self.line(1, format!("RowWords<{e}> c{slot}[S];"));
        }
        self.open_steps();
        for &slot in &reread {
            self.load_step(2, slot, &format!("c{slot}[t]"));
        }
        self.line(1, "}".into());
    }

    /// Opens the loop over a step's `V` elements and computes the varying
    /// slots `needed` of element `e`.
    fn open_lanes(&mut self, needed: &[bool]) {
        self.line(2, "#pragma unroll".into());
        self.line(2, "for (int e = 0; e < V; ++e) {".into());
        let loads = self.program.loads.len();
        for slot in (0..loads).filter(|&slot| needed[slot]) {
            let loaded = self.loaded(slot);
            self.line(3, format!("float s{slot} = {loaded};"));
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
            let at = match self.registers {
                true => format!("b{view} + j"),
                false => format!(
                    "({e}::T *)p.v[{view}].ptr + o[{view}] + j * p.v[{view}].strides[p.rank]"
                ),
            };
            self.line(2, format!("hir_store_row<{e}, V>({at}, w{view});"));
        }
        self.line(1, "}".into());
    }
}

impl Writer<'_> {
    /// The function computing one row: `hir_row_loop<V>` or
    /// `hir_row_regs<V, S>` (see [`Writer::registers`]).
    fn row_function(&mut self) {
        let program = self.program;
        let loads = program.loads.len();
        let views = loads + program.stores.len();
        let mut known: Vec<bool> = self.levels[..loads].to_vec();
        known.resize(program.slots(), false);
        let signature = match self.registers {
            true => "template <int S> __device__ void hir_row_regs",
            false => "template <int V> __device__ void hir_row_loop",
        };
        self.line(
            0,
            format!("{signature}(const RowParams &p, i64 row, float *scratch) {{"),
        );
        // Each view's offset of the row's first element.
        self.line(1, format!("i64 o[{views}];"));
        self.line(1, format!("for (int k = 0; k < {views}; ++k) o[k] = 0;"));
        self.line(1, "i64 rest = row;".into());
        self.line(1, "for (i64 d = p.rank - 1; d >= 0; --d) {".into());
        self.line(2, "i64 index = rest;".into());
        self.line(
            2,
            "if (d > 0) { index = rest % p.sizes[d]; rest /= p.sizes[d]; }".into(),
        );
        self.line(
            2,
            format!("for (int k = 0; k < {views}; ++k) o[k] += index * p.v[k].strides[d];"),
        );
        self.line(1, "}".into());
        for (slot, load) in program.loads.iter().enumerate() {
            if known[slot] {
                let e = element(program.dtypes[load.buffer]);
                self.line(
                    1,
                    format!(
                        "float s{slot} = {e}::load((const {e}::T *)p.v[{slot}].ptr + o[{slot}]);"
                    ),
                );
            }
        }
        if self.registers {
            self.line(1, format!("const int V = {LANES};"));
            // The varying views' rows, contiguous (the vector path's rule).
            for view in 0..views {
                let varying = match view.checked_sub(loads) {
                    None => !self.levels[view],
                    Some(store) => !program.stores[store].row,
                };
                if varying {
                    let e = self.view_element(view);
                    let constness = if view < loads { "const " } else { "" };
                    self.line(1, format!(
                        "{constness}{e}::T *b{view} = ({constness}{e}::T *)p.v[{view}].ptr + o[{view}];"
                    ));
                }
            }
            self.cache();
        }
        self.known_instrs(&mut known);
        for (index, &(instr, _)) in program.instrs.iter().enumerate() {
            if matches!(instr, Instr::Reduce(..)) {
                self.reduction(index, &mut known);
            }
        }
        self.whole_stores();
        self.line(1, "if (threadIdx.x == 0) {".into());
        for (index, store) in program
            .stores
            .iter()
            .enumerate()
            .filter(|(_, store)| store.row)
        {
            let view = loads + index;
            let e = element(program.dtypes[store.buffer]);
            self.line(
                2,
                format!(
                    "(({e}::T *)p.v[{view}].ptr)[o[{view}]] = {e}::round(s{});",
                    store.slot
                ),
            );
        }
        self.line(1, "}".into());
        self.line(0, "}".into());
    }
}

/// The varying loads broadcast along every outer axis: the same row for
/// every row.
fn shared(program: &Program, levels: &[bool]) -> Vec<bool> {
    let outer = program.reduced.expect("a row program");
    program
        .loads
        .iter()
        .zip(levels)
        .map(|(load, &level)| !level && (0..outer).all(|axis| load.broadcast.contains(&axis)))
        .collect()
}

/// The varying loads that more than one phase (a reduction's, the
/// stores') reads, other than `shared` ones.
fn reread(program: &Program, levels: &[bool], shared: &[bool]) -> Vec<bool> {
    let mut phases: Vec<Vec<usize>> = program
        .instrs
        .iter()
        .filter_map(|&(instr, _)| match instr {
            Instr::Reduce(_, operand) => Some(vec![operand]),
            _ => None,
        })
        .collect();
    phases.push(
        program
            .stores
            .iter()
            .filter(|store| !store.row)
            .map(|store| store.slot)
            .collect(),
    );
    let mut readers = vec![0usize; program.loads.len()];
    for phase in phases {
        let needed = needed(program, levels, &phase);
        for (slot, count) in readers.iter_mut().enumerate() {
            *count += needed[slot] as usize;
        }
    }
    readers
        .into_iter()
        .zip(shared)
        .map(|(count, &shared)| count > 1 && !shared)
        .collect()
}

/// The entries of a row program (appended to `source`, which holds
/// `kernels.cu`, `hir_round` and [`HELPERS`]): both row functions, and one
/// kernel a [`Way`] (`Way::entry`) calling the row function of that way.
pub(crate) fn entry(program: &Program, source: &mut String) {
    let levels = program.row_level();
    let views = program.loads.len() + program.stores.len();
    let shared = shared(program, &levels);
    let reread = reread(program, &levels, &shared);
    let mut w = Writer {
        source,
        program,
        levels,
        reread,
        shared,
        registers: false,
    };
    w.line(0, format!(
        "struct RowParams {{ i64 rank; i64 rows; i64 n; i64 sizes[HIR_MAX_RANK]; View v[{views}]; }};"
    ));
    w.row_function();
    w.registers = true;
    w.row_function();
    // One entry per way through a row, so that each gets the registers it
    // needs (one kernel holding all of them took the most any needs).
    let calls = [
        (Way::Elements, "hir_row_loop<1>"),
        (Way::Words, "hir_row_loop<8>"),
    ]
    .into_iter()
    .map(|(way, call)| (way, call.to_string()))
    .chain(STEPS.map(|steps| (Way::Registers(steps), format!("hir_row_regs<{steps}>"))));
    for (way, call) in calls {
        let name = way.entry();
        w.line(0, format!(
            "extern \"C\" __global__ void __launch_bounds__({MAX_THREADS}) {name}(RowParams p) {{"
        ));
        w.line(1, "__shared__ float scratch[32];".into());
        w.line(
            1,
            format!("for (i64 row = blockIdx.x; row < p.rows; row += gridDim.x) {call}(p, row, scratch);"),
        );
        w.line(0, "}".into());
    }
}

/// How a row kernel's threads go through a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// Striding over the row an element at a time, in every phase.
    Elements,
    /// Striding over the row [`LANES`] elements (16-byte words) at a time,
    /// in every phase.
    Words,
    /// This many steps of [`LANES`] elements a thread, read once.
    Registers(usize),
}

impl Way {
    /// The kernel's entry for this way.
    pub(crate) fn entry(self) -> &'static str {
        match self {
            Way::Elements => "hir_rows_elements",
            Way::Words => "hir_rows_words",
            Way::Registers(1) => "hir_rows_registers1",
            Way::Registers(2) => "hir_rows_registers2",
            Way::Registers(4) => "hir_rows_registers4",
            Way::Registers(8) => "hir_rows_registers8",
            Way::Registers(steps) => unreachable!("no entry of {steps} steps"),
        }
    }
}

/// How a row program's kernel is launched: its parameter words, and the
/// rows and threads per row.
pub(crate) struct Launch {
    pub way: Way,
    pub params: Vec<i64>,
    pub rows: usize,
    pub threads: usize,
}

/// How a row of `n` elements is gone through, and its threads: the fewest
/// register steps whose threads, a warp's multiple, cover the row's words,
/// when words are read (`vec`); else a stride of at most [`MAX_THREADS`].
fn shape_of_block(n: usize, vec: bool) -> (Way, usize) {
    let per_thread = if vec { LANES } else { 1 };
    let words = n.div_ceil(per_thread);
    let threads = |steps: usize| words.div_ceil(steps).next_multiple_of(32).max(32);
    let registers = STEPS
        .into_iter()
        .find(|&steps| vec && threads(steps) <= MAX_THREADS);
    match (registers, vec) {
        (Some(steps), _) => (Way::Registers(steps), threads(steps)),
        (None, true) => (Way::Words, threads(1).min(MAX_THREADS)),
        (None, false) => (Way::Elements, threads(1).min(MAX_THREADS)),
    }
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
    let (way, threads) = shape_of_block(n, vec);
    let mut params = vec![sizes.len() as i64, rows as i64, n as i64];
    params.extend((0..MAX_RANK).map(|axis| sizes.get(axis).map_or(0, |&size| size as i64)));
    for (view, outer) in views.iter().zip(&strides) {
        params.push(view.ptr as i64);
        let mut row_strides = outer.clone();
        row_strides.push(view.strides[rank]);
        params.extend((0..MAX_RANK).map(|axis| row_strides.get(axis).map_or(0, |&s| s as i64)));
    }
    Ok(Launch {
        way,
        params,
        rows: rows.min(MAX_BLOCKS),
        threads,
    })
}

/// The device functions every row entry uses (appended once before it).
pub(crate) const HELPERS: &str = include_str!("rows.cu");

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
        // Once in each of the two row functions.
        assert_eq!(source.matches("float s3 =").count(), 2);
        assert!(source.contains("float s4 = hir_round<BF16>(OpSub::apply(s0, s3));"));
        for (way, call) in [
            (Way::Elements, "hir_row_loop<1>"),
            (Way::Words, "hir_row_loop<8>"),
            (Way::Registers(4), "hir_row_regs<4>"),
        ] {
            let entry = format!(
                "void __launch_bounds__(256) {}(RowParams p) {{",
                way.entry()
            );
            let at = source
                .find(&entry)
                .unwrap_or_else(|| panic!("no {entry} in\n{source}"));
            assert!(source[at..].contains(&format!("{call}(p, row, scratch);")));
        }
    }

    /// The register function reads a load that two phases read once, into
    /// registers; a load only the stores read, every step before
    /// computing; and a load the same for every row, at each step, from
    /// the caches.
    #[test]
    fn the_register_function_reads_each_word_once() {
        let f = DType::F32;
        let load = |buffer: usize, broadcast: Vec<usize>| Load { buffer, broadcast };
        let program = Program {
            reduced: Some(1),
            dtypes: vec![f, f, f, f],
            loads: vec![load(0, vec![]), load(1, vec![0]), load(2, vec![])],
            instrs: vec![
                (Instr::Reduce(Reduction::Sum, 0), f), // 3
                (Instr::Binary(Binary::Sub, 0, 3), f), // 4
                (Instr::Binary(Binary::Mul, 4, 1), f), // 5
                (Instr::Binary(Binary::Add, 5, 2), f), // 6
            ],
            stores: vec![Store::whole(3, 6)],
        };
        let mut source = String::new();
        entry(&program, &mut source);
        let registers = &source[source.find("hir_row_regs").expect("the register function")..];
        assert!(registers.contains("const F32::T *b0 = (const F32::T *)p.v[0].ptr + o[0];"));
        assert!(registers.contains("F32::T *b3 = (F32::T *)p.v[3].ptr + o[3];"));
        let read = |text: &str| registers.matches(text).count();
        assert_eq!(read("hir_load_words<F32>(b0 + j, c0[t]);"), 1);
        assert!(registers.contains("RowWords<F32> c0[S];"));
        assert!(registers.contains("float s0 = hir_word_lane<F32>(c0[t], e);"));
        let own = registers
            .find("RowWords<F32> l2[S];")
            .expect("the stores' own load");
        let first = registers
            .find("float s2 = hir_word_lane<F32>(l2[t], e);")
            .expect("read from its registers");
        assert!(own < first);
        assert_eq!(read("hir_load_words<F32>(b1 + j, l1);"), 1);
        assert!(registers.contains("float s1 = hir_word_lane<F32>(l1, e);"));
        assert!(!registers.contains("c1[") && !registers.contains("c2["));
        assert!(registers.contains("hir_store_row<F32, V>(b3 + j, w3);"));
        assert_eq!(shape_of_block(8192, true), (Way::Registers(4), 256));
        assert_eq!(shape_of_block(4096, true), (Way::Registers(2), 256));
        assert_eq!(shape_of_block(1000, true), (Way::Registers(1), 128));
        assert_eq!(shape_of_block(40_000, true), (Way::Words, 256));
        assert_eq!(shape_of_block(77, false), (Way::Elements, 96));
    }
}
