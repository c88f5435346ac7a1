//! GPU tests of the fused kernel (`fused.rs`): each program runs fused on
//! this backend, as the chain of unfused kernels it stands for on this
//! backend (one kernel per instruction into a temporary of its element type,
//! a broadcast kernel per broadcast load, a copy or cast per store), and
//! fused on the cpu backend, from the same random inputs (never zeros). The
//! whole allocation behind every buffer is compared, so a write outside an
//! output view is caught too. Without a GPU a test prints why and passes.
//!
//! Against the unfused kernels the fused kernel must match bit for bit: it
//! applies the same functors and rounds each result as their output buffers
//! do. The one difference by design is floating-point contraction: NVRTC's
//! default `--fmad=true` may fuse an f32 product of one instruction and the
//! sum of the next into one FMA (rounded once), which separate launches
//! cannot; an f32 chain where a product (mul, gelu) feeds a sum (add, sub,
//! gelu) is therefore compared within the f32 tolerance, and the count of
//! elements whose bits differ is printed. A 16-bit result is rounded through
//! integer operations, which no contraction crosses. Against the cpu
//! backend, as in `tests.rs`: exact ops bit for bit, the transcendental ones
//! (exp, tanh, gelu, rsqrt) within a per-dtype relative error.

use super::tests::{Buffer, decode, random};
use super::{Config, CudaDevice, World};
use crate::device::Device;
use crate::fused::FusedKernel;
use crate::memref::{Extents, View};
use crate::ops::{Kernel, KernelOp};
use hir_abi::fused::{Instr, Load, Program, Store};
use hir_abi::{Binary, DType, Unary};
use std::sync::Arc;

/// The relative errors of values computed in f32, and of values rounded
/// to bf16 or f16 on the way (where one result one ulp apart weighs most).
pub(super) const F32: f64 = 1e-5;
pub(super) const BF16: f64 = 1e-2;

/// How closely two runs must match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Match {
    Bits,
    /// At most this relative L2 error, over each whole allocation.
    Close(f64),
}

/// Where a program buffer lives: an allocation of `len` elements and the
/// view of it the kernel is passed.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    pub(super) len: usize,
    pub(super) offset: usize,
    pub(super) sizes: Vec<usize>,
    pub(super) strides: Vec<usize>,
}

impl Layout {
    pub(super) fn dense(sizes: &[usize]) -> Layout {
        let strides = View::contiguous(DType::F32, std::ptr::null_mut(), sizes).strides;
        Layout {
            len: sizes.iter().product(),
            offset: 0,
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
        }
    }

    fn view(&self, dtype: DType, base: *mut u8) -> View {
        View {
            dtype,
            ptr: base.wrapping_add(self.offset * dtype.size()),
            sizes: Extents::from_slice(&self.sizes),
            strides: Extents::from_slice(&self.strides),
        }
    }
}

/// A program, the layouts of its buffers, and how the fused run must match
/// the unfused one on this backend and the fused one on the cpu backend.
pub(super) struct Case {
    pub(super) name: &'static str,
    pub(super) program: Program,
    pub(super) layouts: Vec<Layout>,
    pub(super) unfused: Match,
    pub(super) cpu: Match,
}

pub(super) fn load(buffer: usize, broadcast: &[usize]) -> Load {
    Load {
        buffer,
        broadcast: broadcast.to_vec(),
    }
}

/// The initial bytes of every buffer's allocation (outputs too).
fn initial(case: &Case) -> Vec<Vec<u8>> {
    case.layouts
        .iter()
        .zip(&case.program.dtypes)
        .enumerate()
        .map(|(i, (layout, &dtype))| {
            random(
                i as u64 * 104_729 + 17,
                Buffer {
                    dtype,
                    len: layout.len,
                },
            )
        })
        .collect()
}

fn kernel(case: &Case, bases: &[*mut u8]) -> FusedKernel {
    let program = case.program.clone();
    FusedKernel {
        words: program.encode().into(),
        buffers: case
            .layouts
            .iter()
            .zip(&program.dtypes)
            .zip(bases)
            .map(|((layout, &dtype), &base)| layout.view(dtype, base))
            .collect(),
        program: Arc::new(program),
    }
}

/// Every buffer's allocation after `body` ran on this backend's rank 0 over
/// the case's buffers.
fn on_cuda(
    world: &World,
    case: &Case,
    body: impl Fn(&CudaDevice, &[*mut u8]) + Sync,
) -> Vec<Vec<u8>> {
    let start = initial(case);
    world
        .run(|device| {
            let bases: Vec<*mut u8> = start
                .iter()
                .enumerate()
                .map(|(i, bytes)| {
                    let ptr = device.alloc(5000 + i as i64, bytes.len()).unwrap().as_ptr();
                    device.copy_to_device(ptr, bytes).unwrap();
                    ptr
                })
                .collect();
            body(device, &bases);
            device.synchronize().unwrap();
            bases
                .iter()
                .zip(&start)
                .map(|(&ptr, bytes)| {
                    let mut out = vec![0u8; bytes.len()];
                    device.copy_from_device(ptr, &mut out).unwrap();
                    device.dealloc(ptr).unwrap();
                    out
                })
                .collect()
        })
        .unwrap_or_else(|error| panic!("{}: cuda backend: {error}", case.name))
        .remove(0)
}

/// The same on the cpu backend.
fn on_cpu(case: &Case, body: impl Fn(&dyn Device, &[*mut u8]) + Sync) -> Vec<Vec<u8>> {
    crate::reference::run(1, |device| {
        let mut data = initial(case);
        let bases: Vec<*mut u8> = data.iter_mut().map(|bytes| bytes.as_mut_ptr()).collect();
        body(device, &bases);
        device.synchronize().unwrap();
        data
    })
    .unwrap_or_else(|error| panic!("{}: cpu backend: {error}", case.name))
    .remove(0)
}

fn fused(device: &dyn Device, case: &Case, bases: &[*mut u8]) {
    device
        .fused(kernel(case, bases))
        .unwrap_or_else(|error| panic!("{}: fused: {error}", case.name));
}

/// Runs `program` over `bases` as the unfused ops it stands for: a
/// broadcast load into a temporary of its buffer's type, each instruction
/// into a temporary of its own type (an op of one element type, as the host
/// ops are: a case whose program mixes types elsewhere than in a convert is
/// a bug of the case; a constant a fill), each store a copy or a cast. In a row program a
/// row-level slot is a temporary of the rows' shape, broadcast along the
/// row where a varying instruction or a whole store reads it, and a
/// reduction is the unfused reduction over the last axis.
fn unfused(device: &dyn Device, case: &Case, bases: &[*mut u8]) {
    let program = &case.program;
    let fused = kernel(case, bases);
    let shape = fused.shape().to_vec();
    let last = shape.len().saturating_sub(1);
    let levels = program.row_level();
    let temporaries = std::cell::RefCell::new(Vec::new());
    let temporary = |dtype: DType, row: bool| {
        let sizes = if row { &shape[..last] } else { &shape[..] };
        let numel: usize = sizes.iter().product();
        let site = 6000 + temporaries.borrow().len() as i64;
        let ptr = device.alloc(site, numel * dtype.size()).unwrap().as_ptr();
        temporaries.borrow_mut().push(ptr);
        View::contiguous(dtype, ptr, sizes)
    };
    let compute = |op: KernelOp, inputs: Vec<View>, output: View| {
        device
            .compute(Kernel { op, inputs, output })
            .unwrap_or_else(|error| panic!("{}: unfused: {error}", case.name));
    };
    // A row-level slot's view broadcast along the row.
    let whole = |view: &View, row: bool| {
        if !row {
            return view.clone();
        }
        let out = temporary(view.dtype, false);
        compute(
            KernelOp::Broadcast(vec![last]),
            vec![view.clone()],
            out.clone(),
        );
        out
    };
    let mut slots: Vec<View> = Vec::new();
    for (slot, load) in program.loads.iter().enumerate() {
        let input = fused.buffers[load.buffer].clone();
        let row = levels[slot];
        let axes: Vec<usize> = load
            .broadcast
            .iter()
            .copied()
            .filter(|&axis| !row || axis != last)
            .collect();
        if axes.is_empty() {
            slots.push(input);
            continue;
        }
        let out = temporary(input.dtype, row);
        compute(KernelOp::Broadcast(axes), vec![input], out.clone());
        slots.push(out);
    }
    for (index, &(instr, dtype)) in program.instrs.iter().enumerate() {
        let row = levels[program.loads.len() + index];
        let inputs: Vec<View> = instr
            .operands()
            .iter()
            .map(|&s| match row {
                true => slots[s].clone(),
                false => whole(&slots[s], levels[s]),
            })
            .collect();
        let op = match instr {
            Instr::Unary(op, _) => KernelOp::Unary(op),
            Instr::Binary(op, _, _) => KernelOp::Binary(op),
            Instr::Where(..) => KernelOp::Where,
            Instr::Convert(_) if inputs[0].dtype == dtype => KernelOp::Copy,
            Instr::Convert(_) => KernelOp::Cast,
            Instr::Reduce(op, _) => KernelOp::Reduce(op, vec![last]),
            Instr::Constant(bits) => KernelOp::Fill(f64::from_bits(bits)),
        };
        let out = temporary(dtype, row);
        compute(op, inputs, out.clone());
        slots.push(out);
    }
    for store in &program.stores {
        let output = fused.buffers[store.buffer].clone();
        let value = match store.row {
            true => slots[store.slot].clone(),
            false => whole(&slots[store.slot], levels[store.slot]),
        };
        let op = match value.dtype == output.dtype {
            true => KernelOp::Copy,
            false => KernelOp::Cast,
        };
        compute(op, vec![value], output);
    }
    device.synchronize().unwrap();
    for ptr in temporaries.into_inner() {
        device.dealloc(ptr).unwrap();
    }
}

/// Compares every allocation of two runs; returns how many elements differ
/// in their bits.
fn compare(case: &Case, what: &str, how: Match, want: &[Vec<u8>], got: &[Vec<u8>]) -> usize {
    let mut differing = 0;
    for (i, &dtype) in case.program.dtypes.iter().enumerate() {
        let (w, g) = (&want[i], &got[i]);
        let size = dtype.size();
        let bits = w
            .chunks(size)
            .zip(g.chunks(size))
            .filter(|(a, b)| a != b)
            .count();
        differing += bits;
        let Match::Close(tolerance) = how else {
            let first = w.iter().zip(g).position(|(a, b)| a != b);
            assert!(
                first.is_none(),
                "{}: buffer {i} ({dtype:?}) differs from {what} from byte {first:?} ({bits} elements)",
                case.name
            );
            continue;
        };
        let (w, g) = (decode(dtype, w), decode(dtype, g));
        assert!(
            g.iter().all(|x| x.is_finite()),
            "{}: buffer {i} has NaN or inf ({what})",
            case.name
        );
        let diff: f64 = w
            .iter()
            .zip(&g)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        let norm: f64 = w.iter().map(|a| a * a).sum::<f64>().sqrt();
        let error = diff / norm;
        assert!(
            error <= tolerance,
            "{}: buffer {i} ({dtype:?}) relative error {error:e} against {what}",
            case.name
        );
    }
    differing
}

/// Runs a case fused and unfused on the GPU and fused on the cpu, and
/// compares them.
pub(super) fn check(world: &World, case: &Case) {
    let fused_gpu = on_cuda(world, case, |device, bases| fused(device, case, bases));
    let unfused_gpu = on_cuda(world, case, |device, bases| unfused(device, case, bases));
    let cpu = on_cpu(case, |device, bases| fused(device, case, bases));
    let a = compare(
        case,
        "the unfused kernels",
        case.unfused,
        &unfused_gpu,
        &fused_gpu,
    );
    let b = compare(
        case,
        "the cpu backend's fused run",
        case.cpu,
        &cpu,
        &fused_gpu,
    );
    println!(
        "{}: matches the unfused kernels ({:?}, {a} elements differ in their bits) and the cpu backend ({:?}, {b})",
        case.name, case.unfused, case.cpu
    );
}

/// Exact f32 ops (no product feeds a sum), one output, 2.4M elements: more
/// than one launch's blocks cover, so the grid strides.
fn exact_f32() -> Case {
    use Binary::*;
    let shape = [2304, 1024];
    Case {
        name: "exact f32 chain",
        program: Program {
            reduced: None,
            dtypes: vec![DType::F32; 4],
            loads: vec![load(0, &[]), load(1, &[]), load(2, &[])],
            instrs: vec![
                (Instr::Binary(Max, 0, 1), DType::F32),
                (Instr::Binary(Sub, 3, 2), DType::F32),
                (Instr::Binary(Div, 4, 1), DType::F32),
                (Instr::Unary(Unary::Relu, 5), DType::F32),
                (Instr::Binary(Min, 6, 0), DType::F32),
                (Instr::Unary(Unary::Neg, 7), DType::F32),
                (Instr::Binary(Mul, 8, 2), DType::F32),
                (Instr::Unary(Unary::Abs, 9), DType::F32),
            ],
            stores: vec![Store::whole(3, 10)],
        },
        layouts: vec![Layout::dense(&shape); 4],
        unfused: Match::Bits,
        cpu: Match::Bits,
    }
}

/// bf16 with two broadcast inputs, transcendentals, a where on a computed
/// mask and an intermediate read twice; a bf16 and an f32 output.
fn broadcast_bf16() -> Case {
    let (bf, f) = (DType::BF16, DType::F32);
    Case {
        name: "bf16 broadcasts, two outputs",
        program: Program {
            reduced: None,
            dtypes: vec![bf, bf, bf, bf, f],
            loads: vec![load(0, &[]), load(1, &[0, 1]), load(2, &[0, 2])],
            instrs: vec![
                (Instr::Binary(Binary::Add, 0, 1), bf),
                (Instr::Binary(Binary::Mul, 3, 2), bf),
                (Instr::Unary(Unary::Gelu, 4), bf),
                (Instr::Unary(Unary::Tanh, 5), bf),
                (Instr::Unary(Unary::Exp, 3), bf),
                (Instr::Where(6, 5, 7), bf),
                (Instr::Convert(8), f),
            ],
            stores: vec![Store::whole(3, 8), Store::whole(4, 9)],
        },
        layouts: vec![
            Layout::dense(&[32, 48, 40]),
            Layout::dense(&[40]),
            Layout::dense(&[48]),
            Layout::dense(&[32, 48, 40]),
            Layout::dense(&[32, 48, 40]),
        ],
        unfused: Match::Bits,
        cpu: Match::Close(BF16),
    }
}

/// Casts between f16, f32 and bf16, a transposed input and outputs that are
/// every other element of a wider row: three outputs of three types.
fn strided_casts() -> Case {
    let (h, f, bf) = (DType::F16, DType::F32, DType::BF16);
    let (rows, cols) = (256, 257);
    let transposed = Layout {
        len: rows * cols,
        offset: 0,
        sizes: vec![rows, cols],
        strides: vec![1, rows],
    };
    // Row stride 2 * cols + 6, element stride 2, from element 3.
    let spread = Layout {
        len: rows * (2 * cols + 6),
        offset: 3,
        sizes: vec![rows, cols],
        strides: vec![2 * cols + 6, 2],
    };
    Case {
        name: "f16/f32/bf16 casts, strided views, three outputs",
        program: Program {
            reduced: None,
            dtypes: vec![h, f, h, f, bf],
            loads: vec![load(0, &[]), load(1, &[])],
            instrs: vec![
                (Instr::Convert(0), f),
                (Instr::Binary(Binary::Mul, 2, 1), f),
                (Instr::Unary(Unary::Abs, 3), f),
                (Instr::Unary(Unary::Rsqrt, 4), f),
                (Instr::Convert(5), h),
                (Instr::Unary(Unary::Relu, 6), h),
                (Instr::Convert(5), bf),
            ],
            stores: vec![Store::whole(2, 7), Store::whole(3, 3), Store::whole(4, 8)],
        },
        layouts: vec![
            transposed,
            Layout::dense(&[rows, cols]),
            spread.clone(),
            spread.clone(),
            spread,
        ],
        unfused: Match::Bits,
        cpu: Match::Close(BF16),
    }
}

/// Eight buffers (the most a fused op takes), each input broadcast along
/// other axes of a rank-3 shape, exact ops, two outputs.
fn eight_buffers() -> Case {
    use Binary::*;
    let f = DType::F32;
    let shape = [16, 24, 32];
    Case {
        name: "eight buffers, broadcasts along every axis",
        program: Program {
            reduced: None,
            dtypes: vec![f; 8],
            loads: vec![
                load(0, &[]),
                load(1, &[0]),
                load(2, &[1]),
                load(3, &[2]),
                load(4, &[0, 1]),
                load(5, &[1, 2]),
            ],
            instrs: vec![
                (Instr::Binary(Max, 0, 1), f),
                (Instr::Binary(Min, 6, 2), f),
                (Instr::Binary(Sub, 7, 3), f),
                (Instr::Binary(Div, 8, 4), f),
                (Instr::Where(5, 9, 0), f),
                (Instr::Unary(Unary::Neg, 10), f),
                (Instr::Unary(Unary::Abs, 8), f),
            ],
            stores: vec![Store::whole(6, 11), Store::whole(7, 12)],
        },
        layouts: vec![
            Layout::dense(&shape),
            Layout::dense(&[24, 32]),
            Layout::dense(&[16, 32]),
            Layout::dense(&[16, 24]),
            Layout::dense(&[32]),
            Layout::dense(&[16]),
            Layout::dense(&shape),
            Layout::dense(&shape),
        ],
        unfused: Match::Bits,
        cpu: Match::Bits,
    }
}

/// Two buffers, both non-contiguous: a transposed input, an output of every
/// third element.
fn two_buffers() -> Case {
    let f = DType::F32;
    Case {
        name: "two buffers, transposed input, strided output",
        program: Program {
            reduced: None,
            dtypes: vec![f, f],
            loads: vec![load(0, &[])],
            instrs: vec![
                (Instr::Unary(Unary::Relu, 0), f),
                (Instr::Unary(Unary::Neg, 1), f),
            ],
            stores: vec![Store::whole(1, 2)],
        },
        layouts: vec![
            Layout {
                len: 100 * 60,
                offset: 0,
                sizes: vec![100, 60],
                strides: vec![1, 100],
            },
            Layout {
                len: 100 * 180,
                offset: 1,
                sizes: vec![100, 60],
                strides: vec![180, 3],
            },
        ],
        unfused: Match::Bits,
        cpu: Match::Bits,
    }
}

/// The f32 chain of the pointwise benchmark, `a * b + c` then exp, tanh,
/// neg, sub, mul: a product feeds a sum, which NVRTC may contract into an
/// FMA (see the module's documentation), so within the f32 tolerance.
fn multiply_add_f32() -> Case {
    let f = DType::F32;
    let shape = [96, 1000];
    Case {
        name: "f32 a * b + c chain",
        program: Program {
            reduced: None,
            dtypes: vec![f; 4],
            loads: vec![load(0, &[]), load(1, &[]), load(2, &[])],
            instrs: vec![
                (Instr::Binary(Binary::Mul, 0, 1), f),
                (Instr::Binary(Binary::Add, 3, 2), f),
                (Instr::Unary(Unary::Neg, 4), f),
                (Instr::Unary(Unary::Exp, 5), f),
                (Instr::Unary(Unary::Tanh, 6), f),
                (Instr::Binary(Binary::Sub, 7, 0), f),
                (Instr::Binary(Binary::Mul, 8, 2), f),
                (Instr::Unary(Unary::Gelu, 9), f),
            ],
            stores: vec![Store::whole(3, 10)],
        },
        layouts: vec![Layout::dense(&shape); 4],
        unfused: Match::Close(F32),
        cpu: Match::Close(F32),
    }
}

/// The backward of a tanh gelu in bf16, its five constants instructions
/// (as `host-fuse-elementwise` absorbs the fills of
/// `fusion-differentiate`'s output): `dy * d gelu(x) / dx`. Rounded by
/// integer operations, so bit for bit against the fills and kernels.
fn gelu_backward_constants() -> Case {
    use Binary::*;
    let bf = DType::BF16;
    let constant = |value: f64| (Instr::constant(value), bf);
    Case {
        name: "tanh gelu backward, bf16, five constants",
        program: Program {
            reduced: None,
            dtypes: vec![bf; 3],
            loads: vec![load(0, &[]), load(1, &[])],
            instrs: vec![
                constant(0.5),                       // 2
                constant(1.0),                       // 3
                constant(0.7978845608028654),        // 4: sqrt(2 / pi)
                constant(0.044715),                  // 5
                (Instr::Binary(Mul, 0, 0), bf),      // 6: x^2
                (Instr::Binary(Mul, 6, 0), bf),      // 7: x^3
                (Instr::Binary(Mul, 5, 7), bf),      // 8
                (Instr::Binary(Add, 8, 0), bf),      // 9
                (Instr::Binary(Mul, 4, 9), bf),      // 10
                (Instr::Unary(Unary::Tanh, 10), bf), // 11: t
                (Instr::Binary(Add, 3, 11), bf),     // 12
                (Instr::Binary(Mul, 2, 12), bf),     // 13: (1 + t) / 2
                (Instr::Binary(Mul, 11, 11), bf),    // 14
                (Instr::Binary(Sub, 3, 14), bf),     // 15: 1 - t^2
                constant(0.134145),                  // 16: 3 * 0.044715
                (Instr::Binary(Mul, 16, 6), bf),     // 17
                (Instr::Binary(Add, 3, 17), bf),     // 18
                (Instr::Binary(Mul, 4, 18), bf),     // 19: du / dx
                (Instr::Binary(Mul, 2, 0), bf),      // 20
                (Instr::Binary(Mul, 20, 15), bf),    // 21
                (Instr::Binary(Mul, 21, 19), bf),    // 22
                (Instr::Binary(Add, 13, 22), bf),    // 23
                (Instr::Binary(Mul, 1, 23), bf),     // 24
            ],
            stores: vec![Store::whole(2, 24)],
        },
        layouts: vec![Layout::dense(&[512, 384]); 3],
        unfused: Match::Bits,
        cpu: Match::Close(BF16),
    }
}

/// f16 constants selected by a mask and one stored as it is (as a fill
/// would write it): 65519 rounds to f16's largest, 65504, and -0.0 keeps
/// its sign; the output a strided view.
fn stored_constants_f16() -> Case {
    let h = DType::F16;
    Case {
        name: "f16 constants, selected and stored",
        program: Program {
            reduced: None,
            dtypes: vec![h; 3],
            loads: vec![load(0, &[])],
            instrs: vec![
                (Instr::constant(65519.0), h),
                (Instr::constant(-0.0), h),
                (Instr::Binary(Binary::Max, 0, 2), h),
                (Instr::Where(3, 1, 0), h),
            ],
            stores: vec![Store::whole(1, 4), Store::whole(2, 1)],
        },
        layouts: vec![
            Layout::dense(&[64, 100]),
            Layout {
                len: 64 * 203,
                offset: 1,
                sizes: vec![64, 100],
                strides: vec![203, 2],
            },
            Layout::dense(&[64, 100]),
        ],
        unfused: Match::Bits,
        cpu: Match::Bits,
    }
}

fn cases() -> [Case; 8] {
    [
        gelu_backward_constants(),
        stored_constants_f16(),
        exact_f32(),
        broadcast_bf16(),
        strided_casts(),
        eight_buffers(),
        two_buffers(),
        multiply_add_f32(),
    ]
}

/// The cases themselves, without a GPU: each is a valid fused kernel whose
/// unfused chain the kernels accept, and on the cpu backend (which contracts
/// nothing) the two runs agree bit for bit.
#[test]
fn the_cases_run_fused_and_unfused_alike_on_the_cpu_backend() {
    for case in cases() {
        let fused = on_cpu(&case, |device, bases| fused(device, &case, bases));
        let unfused = on_cpu(&case, |device, bases| unfused(device, &case, bases));
        compare(
            &case,
            "the cpu backend's unfused run",
            Match::Bits,
            &unfused,
            &fused,
        );
        let start = initial(&case);
        for store in &case.program.stores {
            let buffer = store.buffer;
            assert_ne!(
                fused[buffer], start[buffer],
                "{}: output {buffer} unwritten",
                case.name
            );
        }
    }
}

#[test]
fn fused_kernels_match_the_unfused_kernels_and_the_cpu_backend() {
    let Some(world) = super::tests::world(1, false) else {
        return;
    };
    for case in cases() {
        check(&world, &case);
    }
}

/// The programs NVRTC compiled while `body` ran, of those in `programs`.
fn compiled_during(programs: &[&Program], body: impl FnOnce()) -> Vec<usize> {
    let count = |program: &Program| {
        let words = program.encode();
        super::fused::compiled()
            .iter()
            .filter(|compiled| compiled[..] == words[..])
            .count()
    };
    let before: Vec<usize> = programs.iter().map(|program| count(program)).collect();
    body();
    programs
        .iter()
        .zip(before)
        .map(|(program, before)| count(program) - before)
        .collect()
}

/// The NVRTC cache: one compilation per distinct program and architecture
/// in a process, whatever the buffers, the calls or the contexts. (The
/// programs are this test's own: no other test compiles them.)
#[test]
fn each_distinct_program_is_compiled_once() {
    let Some(world) = super::tests::world(1, false) else {
        return;
    };
    let (h, f, bf) = (DType::F16, DType::F32, DType::BF16);
    let casts = |first: DType, second: DType| Case {
        name: "casts",
        program: Program {
            reduced: None,
            dtypes: vec![h, f],
            loads: vec![load(0, &[])],
            instrs: vec![
                (Instr::Convert(0), first),
                (Instr::Convert(1), second),
                (Instr::Convert(2), f),
            ],
            stores: vec![Store::whole(1, 3)],
        },
        layouts: vec![Layout::dense(&[8, 9]); 2],
        unfused: Match::Bits,
        cpu: Match::Bits,
    };
    let (one, other) = (casts(bf, h), casts(h, bf));
    let mut wider = casts(bf, h);
    wider.layouts = vec![Layout::dense(&[3, 5, 7]); 2];
    let run = |world: &World, case: &Case| {
        on_cuda(world, case, |device, bases| fused(device, case, bases))
    };
    let counts = compiled_during(&[&one.program, &other.program], || {
        let first = run(&world, &one);
        assert_eq!(first, run(&world, &one), "a cached kernel computes alike");
        run(&world, &wider);
        run(&world, &other);
        // Another world (a context of its own, or the primary one again)
        // finds the PTX cached: no compilation.
        let again = World::new(Config::new(1, 2)).unwrap();
        assert_eq!(first, run(&again, &one));
    });
    assert_eq!(counts, [1, 1], "compilations of each program");
    println!("two programs, five calls, two worlds: compiled once each");
}
