//! The C-ABI functions a lowered host program calls, one per [`Entry`], and
//! [`symbols`] for the JIT to register. Each decodes its arguments and calls
//! the calling thread's [`Device`] (see [`crate::device::enter`]).
//!
//! Every buffer argument is checked against the rank's known buffers
//! ([`crate::bounds`]) before any work is enqueued: a view that overruns its
//! buffer, or points into none, fails the call like any other bad argument.
//!
//! No panic crosses this boundary: each call runs under `catch_unwind`, and a
//! failure (error or panic) is recorded as the rank's error in the entry's op;
//! once a rank has failed, its later calls skip their work and return 0 (a
//! null pointer for `alloc`), or, when the launcher runs the program through
//! [`crate::exit::call`], leave the program. Calling an entry on a thread without a device is
//! a launcher bug: the process aborts with a message rather than guess a rank,
//! unless a fallback device is set ([`crate::device::set_fallback`]: the
//! standalone `libhir_runtime.so` sets one).

mod args;
mod heap;

use crate::device::{Device, current};
use crate::error::{Error, Result, panic_message};
use crate::fused::FusedKernel;
use crate::memref::read_i64s;
use crate::ops::{CollectiveOp, Kernel, KernelOp, Transfer};
use args::{Buf, axis_list, backend, fixed, non_negative, permuted, reshaped, team, views};
use hir_abi::fused::Program;
use hir_abi::{Collective, Entry, ReduceKind};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// Every runtime symbol and its address, for `ExecutionEngine::register_symbol`:
/// the entries, and the heap of the program's `memref.alloc` ([`heap`]).
pub fn symbols() -> Vec<(String, *mut ())> {
    let entries = table()
        .into_iter()
        .map(|(name, _, address)| (name, address));
    entries
        .chain(heap::symbols())
        .map(|(name, address)| (name.to_string(), address))
        .collect()
}

/// Runs `body` on the calling thread's device, recording its failure in the
/// rank's error. `skip_failed` skips the body once the rank has failed.
fn call<R>(
    entry: Entry,
    skipped: R,
    skip_failed: bool,
    body: impl FnOnce(&dyn Device) -> Result<R>,
) -> R {
    let mut device = rank_device(entry);
    if device.failed() {
        // Nothing may be held across the jump: it skips this frame.
        drop(device);
        crate::exit::leave_if_possible();
        if skip_failed {
            return skipped;
        }
        device = rank_device(entry);
    }
    let _range = crate::nvtx::range(|| entry.name());
    let error = match catch_unwind(AssertUnwindSafe(|| body(&*device))) {
        Ok(Ok(value)) => return value,
        Ok(Err(error)) => error,
        Err(payload) => Error::Panic(panic_message(&*payload)),
    };
    device.fail(&entry.name(), error);
    skipped
}

/// The calling thread's device; none is a launcher bug, which aborts.
fn rank_device(entry: Entry) -> Arc<dyn Device> {
    current().unwrap_or_else(|| {
        eprintln!(
            "hir runtime: {entry} called on a thread that has no rank; \
             the launcher must run the program inside hir_runtime::device::enter \
             (libhir_runtime.so starts a default world instead)"
        );
        std::process::abort();
    })
}

/// A call that does work (and is skipped on a failed rank).
fn work<R>(entry: Entry, skipped: R, body: impl FnOnce(&dyn Device) -> Result<R>) -> R {
    call(entry, skipped, true, body)
}

/// A query of the rank's state: answered even on a failed rank, so that the
/// program's control flow stays what it would have been.
fn query(entry: Entry, body: impl FnOnce(&dyn Device) -> i64) -> i64 {
    call(entry, 0, false, |device| Ok(body(device)))
}

/// The compute entries: `bufs` are the inputs then the output.
unsafe fn compute(entry: Entry, bufs: &[Buf], axes: Option<Buf>) {
    work(entry, (), |device| {
        let (op, dtype, out_dtype) = match entry {
            Entry::Copy(t) => (KernelOp::Copy, t, t),
            Entry::Unary(op, t) => (KernelOp::Unary(op), t, t),
            Entry::Cast(from, to) => (KernelOp::Cast, from, to),
            Entry::Binary(op, t) => (KernelOp::Binary(op), t, t),
            Entry::Where(t) => (KernelOp::Where, t, t),
            Entry::Reduction(op, t) => (KernelOp::Reduce(op, Vec::new()), t, t),
            Entry::Broadcast(t) => (KernelOp::Broadcast(Vec::new()), t, t),
            Entry::Transpose(t) | Entry::Reshape(t) => (KernelOp::Copy, t, t),
            Entry::Matmul(t) => (KernelOp::Matmul, t, t),
            Entry::MatmulAccumulate(t) => (KernelOp::MatmulAccumulate, t, t),
            Entry::Linear(t) | Entry::LinearBias(t) => (KernelOp::Linear, t, t),
            Entry::MatmulActivation(a, t) => (KernelOp::MatmulActivation(a), t, t),
            Entry::LinearActivation(a, t) | Entry::LinearBiasActivation(a, t) => {
                (KernelOp::LinearActivation(a), t, t)
            }
            Entry::LinearAccumulate(t) => (KernelOp::LinearAccumulate, t, t),
            _ => unreachable!("{entry} is not a compute entry"),
        };
        let op = match (op, axes) {
            (KernelOp::Reduce(op, _), Some(axes)) => {
                KernelOp::Reduce(op, unsafe { axis_list(axes) }?)
            }
            (KernelOp::Broadcast(_), Some(axes)) => {
                KernelOp::Broadcast(unsafe { axis_list(axes) }?)
            }
            (op, _) => op,
        };
        // The inputs are of `dtype`, the output (last) of `out_dtype`.
        let last = bufs.len() - 1;
        let typed = bufs
            .iter()
            .enumerate()
            .map(|(index, &buf)| (buf, if index == last { out_dtype } else { dtype }));
        let mut inputs = unsafe { views(device, typed) }?;
        let output = inputs.pop().expect("compute entries take buffers");
        if let (Entry::Transpose(_), Some(permutation)) = (entry, axes) {
            // A copy from the input viewed with its axes permuted.
            inputs[0] = permuted(&inputs[0], &unsafe { axis_list(permutation) }?)?;
        }
        if let Entry::Reshape(_) = entry {
            // A copy from the input viewed in the output's shape.
            inputs[0] = reshaped(&inputs[0], &output.sizes)?;
        }
        device.compute(Kernel { op, inputs, output })
    })
}

/// The attention entries: `bufs` are `q, k, v[, mask]` then the output,
/// all of the entry's element type; `causal` is nonzero for causal.
unsafe fn attention(entry: Entry, bufs: &[Buf], scale: f64, causal: i64) {
    work(entry, (), |device| {
        let (Entry::Attention(dtype) | Entry::AttentionMask(dtype)) = entry else {
            unreachable!("{entry} is not an attention")
        };
        let typed = bufs.iter().map(|&buf| (buf, dtype));
        // SAFETY: the entry's caller passes valid descriptors.
        let mut inputs = unsafe { views(device, typed) }?;
        let output = inputs.pop().expect("attention entries take buffers");
        device.compute(Kernel {
            op: KernelOp::Attention {
                scale,
                causal: causal != 0,
            },
            inputs,
            output,
        })
    })
}

/// The `host.fused` entries: the program's words, then the buffers, whose
/// element types the program gives.
unsafe fn fused(program: Buf, bufs: &[Buf]) {
    work(Entry::Fused(bufs.len()), (), |device| {
        let words = unsafe { read_i64s(program) }?;
        let decoded = Program::decode(&words).map_err(|error| Error::Invalid(error.to_string()))?;
        if decoded.dtypes.len() != bufs.len() {
            return Err(Error::Invalid(format!(
                "a fused program of {} buffers passed {}",
                decoded.dtypes.len(),
                bufs.len()
            )));
        }
        let typed = bufs.iter().copied().zip(decoded.dtypes.iter().copied());
        let buffers = unsafe { views(device, typed) }?;
        device.fused(FusedKernel {
            program: Arc::new(decoded),
            words: words.into(),
            buffers,
        })
    })
}

/// The entries of no input: `op` writes every element of `output`.
unsafe fn generate(entry: Entry, output: Buf, op: impl FnOnce() -> Result<KernelOp>) {
    work(entry, (), |device| {
        let (Entry::Fill(dtype) | Entry::Iota(dtype)) = entry else {
            unreachable!("{entry} is not a fill or an iota")
        };
        // SAFETY: the entry's caller passes a valid descriptor.
        let [output] = unsafe { fixed(device, [(output, dtype)]) }?;
        device.compute(Kernel {
            op: op()?,
            inputs: Vec::new(),
            output,
        })
    })
}

/// Defines `_mlir_ciface_hir_rt_fused_<n>` for each buffer count and lists
/// them for [`table`].
macro_rules! fused_entries {
    ($($name:ident = $count:literal ($($buffer:ident),+);)*) => {
        $(
            /// # Safety
            /// The arguments point to valid memref descriptors.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name(program: Buf, $($buffer: Buf),+) {
                unsafe { fused(program, &[$($buffer),+]) }
            }
        )*

        fn fused_table() -> Vec<(&'static str, Entry, *mut ())> {
            vec![$((stringify!($name), Entry::Fused($count), $name as *mut ())),*]
        }
    };
}

fused_entries! {
    _mlir_ciface_hir_rt_fused_1 = 1 (b0);
    _mlir_ciface_hir_rt_fused_2 = 2 (b0, b1);
    _mlir_ciface_hir_rt_fused_3 = 3 (b0, b1, b2);
    _mlir_ciface_hir_rt_fused_4 = 4 (b0, b1, b2, b3);
    _mlir_ciface_hir_rt_fused_5 = 5 (b0, b1, b2, b3, b4);
    _mlir_ciface_hir_rt_fused_6 = 6 (b0, b1, b2, b3, b4, b5);
    _mlir_ciface_hir_rt_fused_7 = 7 (b0, b1, b2, b3, b4, b5, b6);
    _mlir_ciface_hir_rt_fused_8 = 8 (b0, b1, b2, b3, b4, b5, b6, b7);
}

#[allow(clippy::too_many_arguments)]
unsafe fn collective(
    entry: Entry,
    input: Buf,
    output: Buf,
    kind: i64,
    root: i64,
    axis: i64,
    team_buf: Buf,
    backend_code: i64,
) -> i64 {
    work(entry, 0, |device| {
        let Entry::Collective(op, dtype) = entry else {
            unreachable!("{entry} is not a collective")
        };
        let reducing = matches!(
            op,
            Collective::Allreduce | Collective::ReduceScatter | Collective::Reduce
        );
        let kind = if reducing {
            ReduceKind::from_code(kind)
                .ok_or_else(|| Error::Invalid(format!("unknown reduction kind code {kind}")))?
        } else {
            ReduceKind::Sum
        };
        let [input, output] = unsafe { fixed(device, [(input, dtype), (output, dtype)]) }?;
        device.collective(CollectiveOp {
            op,
            kind,
            root: non_negative(root, "root")?,
            axis: non_negative(axis, "axis")?,
            team: unsafe { team(team_buf, device) }?,
            backend: backend(backend_code)?,
            input,
            output,
        })
    })
}

unsafe fn transfer(entry: Entry, buffer: Buf, peer: i64, team_buf: Buf, backend_code: i64) -> i64 {
    work(entry, 0, |device| {
        let (Entry::Send(dtype) | Entry::Recv(dtype)) = entry else {
            unreachable!("{entry} is not a transfer")
        };
        let [buffer] = unsafe { fixed(device, [(buffer, dtype)]) }?;
        let transfer = Transfer {
            buffer,
            peer: non_negative(peer, "peer")?,
            team: unsafe { team(team_buf, device) }?,
            backend: backend(backend_code)?,
        };
        match entry {
            Entry::Send(_) => device.send(transfer),
            _ => device.recv(transfer),
        }
    })
}

unsafe fn share_mem_handle(entry: Entry, buffer: Buf, team_buf: Buf) {
    work(entry, (), |device| {
        let Entry::ShareMemHandle(dtype) = entry else {
            unreachable!("{entry} is not share_mem_handle")
        };
        let [buffer] = unsafe { fixed(device, [(buffer, dtype)]) }?;
        device.share_mem_handle(buffer, unsafe { team(team_buf, device) }?)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_get_current_stream() -> i64 {
    query(Entry::GetCurrentStream, |device| device.current_stream())
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_set_current_stream(stream: i64) {
    work(Entry::SetCurrentStream, (), |device| {
        device.set_current_stream(stream)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_stream_from_pool(index: i64) -> i64 {
    query(Entry::StreamFromPool, |device| {
        device.stream_from_pool(index)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_sync_stream(stream: i64) {
    work(Entry::SyncStream, (), |device| device.sync_stream(stream))
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_rank() -> i64 {
    query(Entry::Rank, |device| device.rank() as i64)
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_num_devices() -> i64 {
    query(Entry::NumDevices, |device| device.num_devices() as i64)
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_alloc(site: i64, bytes: i64) -> *mut c_void {
    work(Entry::Alloc, std::ptr::null_mut(), |device| {
        let bytes = non_negative(bytes, "allocation size")?;
        Ok(device.alloc(site, bytes)?.as_ptr().cast())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_dealloc(ptr: *mut c_void) {
    work(Entry::Dealloc, (), |device| device.dealloc(ptr.cast()))
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_start_coalescing() {
    work(Entry::StartCoalescing, (), |device| {
        device.start_coalescing()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_end_coalescing() -> i64 {
    work(Entry::EndCoalescing, 0, |device| device.end_coalescing())
}

#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_wait(request: i64) {
    work(Entry::Wait, (), |device| device.wait(request))
}

/// # Safety
/// `team` points to a valid `memref<*xi64>` descriptor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _mlir_ciface_hir_rt_barrier(team_buf: Buf, backend_code: i64) {
    work(Entry::Barrier, (), |device| {
        device.barrier(unsafe { team(team_buf, device) }?, backend(backend_code)?)
    })
}

/// Stamps out the entries that take buffers and lists them all, with their
/// function names, for [`symbols`].
macro_rules! entries {
    ($($shape:ident $name:ident = $entry:expr;)*) => {
        $(entries!(@fn $shape $name $entry);)*

        /// `(symbol, entry, address)` of every entry.
        fn table() -> Vec<(&'static str, Entry, *mut ())> {
            let mut table: Vec<(&'static str, Entry, *mut ())> = vec![
                ("hir_rt_get_current_stream", Entry::GetCurrentStream,
                    hir_rt_get_current_stream as *mut ()),
                ("hir_rt_set_current_stream", Entry::SetCurrentStream,
                    hir_rt_set_current_stream as *mut ()),
                ("hir_rt_stream_from_pool", Entry::StreamFromPool,
                    hir_rt_stream_from_pool as *mut ()),
                ("hir_rt_sync_stream", Entry::SyncStream, hir_rt_sync_stream as *mut ()),
                ("hir_rt_rank", Entry::Rank, hir_rt_rank as *mut ()),
                ("hir_rt_num_devices", Entry::NumDevices, hir_rt_num_devices as *mut ()),
                ("hir_rt_alloc", Entry::Alloc, hir_rt_alloc as *mut ()),
                ("hir_rt_dealloc", Entry::Dealloc, hir_rt_dealloc as *mut ()),
                ("hir_rt_start_coalescing", Entry::StartCoalescing,
                    hir_rt_start_coalescing as *mut ()),
                ("hir_rt_end_coalescing", Entry::EndCoalescing, hir_rt_end_coalescing as *mut ()),
                ("hir_rt_wait", Entry::Wait, hir_rt_wait as *mut ()),
                ("_mlir_ciface_hir_rt_barrier", Entry::Barrier,
                    _mlir_ciface_hir_rt_barrier as *mut ()),
            ];
            table.extend([$((stringify!($name), $entry, $name as *mut ())),*]);
            table.extend(fused_table());
            table
        }
    };
    (@fn unary $name:ident $entry:expr) => {
        /// # Safety
        /// The arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(input: Buf, output: Buf) {
            unsafe { compute($entry, &[input, output], None) }
        }
    };
    (@fn binary $name:ident $entry:expr) => {
        /// # Safety
        /// The arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(lhs: Buf, rhs: Buf, output: Buf) {
            unsafe { compute($entry, &[lhs, rhs, output], None) }
        }
    };
    (@fn ternary $name:ident $entry:expr) => {
        /// # Safety
        /// The arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(a: Buf, b: Buf, c: Buf, output: Buf) {
            unsafe { compute($entry, &[a, b, c, output], None) }
        }
    };
    (@fn axes $name:ident $entry:expr) => {
        /// # Safety
        /// The arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(input: Buf, output: Buf, axes: Buf) {
            unsafe { compute($entry, &[input, output], Some(axes)) }
        }
    };
    (@fn fill $name:ident $entry:expr) => {
        /// # Safety
        /// `output` points to a valid memref descriptor.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(output: Buf, value: f64) {
            unsafe { generate($entry, output, || Ok(KernelOp::Fill(value))) }
        }
    };
    (@fn iota $name:ident $entry:expr) => {
        /// # Safety
        /// `output` points to a valid memref descriptor.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(output: Buf, axis: i64, offset: i64) {
            unsafe {
                generate($entry, output, || {
                    let axis = non_negative(axis, "axis")?;
                    Ok(KernelOp::Iota { axis, offset })
                })
            }
        }
    };
    (@fn attention $name:ident $entry:expr) => {
        /// # Safety
        /// The buffer arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            q: Buf,
            k: Buf,
            v: Buf,
            output: Buf,
            scale: f64,
            causal: i64,
        ) {
            unsafe { attention($entry, &[q, k, v, output], scale, causal) }
        }
    };
    (@fn attention_mask $name:ident $entry:expr) => {
        /// # Safety
        /// The buffer arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            q: Buf,
            k: Buf,
            v: Buf,
            mask: Buf,
            output: Buf,
            scale: f64,
            causal: i64,
        ) {
            unsafe { attention($entry, &[q, k, v, mask, output], scale, causal) }
        }
    };
    (@fn collective $name:ident $entry:expr) => {
        /// # Safety
        /// The buffer arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            input: Buf,
            output: Buf,
            kind: i64,
            root: i64,
            axis: i64,
            team: Buf,
            backend: i64,
        ) -> i64 {
            unsafe { collective($entry, input, output, kind, root, axis, team, backend) }
        }
    };
    (@fn transfer $name:ident $entry:expr) => {
        /// # Safety
        /// The buffer arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(buffer: Buf, peer: i64, team: Buf, backend: i64) -> i64 {
            unsafe { transfer($entry, buffer, peer, team, backend) }
        }
    };
    (@fn share $name:ident $entry:expr) => {
        /// # Safety
        /// The arguments point to valid memref descriptors.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(buffer: Buf, team: Buf) {
            unsafe { share_mem_handle($entry, buffer, team) }
        }
    };
}

use hir_abi::Activation;
use hir_abi::Binary::{Add, Div, Max, Min, Mul, Sub};
use hir_abi::Collective::{
    Allgather, Allreduce, Alltoall, Broadcast, Gather, Reduce, ReduceScatter, Scatter,
};
use hir_abi::DType::{BF16, F16, F32, I32, I64};
use hir_abi::Reduction::{Amax, Sum};
use hir_abi::Unary::{Abs, Exp, Gelu, Neg, Relu, Rsqrt, Tanh};

entries! {
    unary _mlir_ciface_hir_rt_copy_f32 = Entry::Copy(F32);
    unary _mlir_ciface_hir_rt_copy_bf16 = Entry::Copy(BF16);
    unary _mlir_ciface_hir_rt_copy_f16 = Entry::Copy(F16);
    unary _mlir_ciface_hir_rt_neg_f32 = Entry::Unary(Neg, F32);
    unary _mlir_ciface_hir_rt_neg_bf16 = Entry::Unary(Neg, BF16);
    unary _mlir_ciface_hir_rt_neg_f16 = Entry::Unary(Neg, F16);
    unary _mlir_ciface_hir_rt_exp_f32 = Entry::Unary(Exp, F32);
    unary _mlir_ciface_hir_rt_exp_bf16 = Entry::Unary(Exp, BF16);
    unary _mlir_ciface_hir_rt_exp_f16 = Entry::Unary(Exp, F16);
    unary _mlir_ciface_hir_rt_tanh_f32 = Entry::Unary(Tanh, F32);
    unary _mlir_ciface_hir_rt_tanh_bf16 = Entry::Unary(Tanh, BF16);
    unary _mlir_ciface_hir_rt_tanh_f16 = Entry::Unary(Tanh, F16);
    unary _mlir_ciface_hir_rt_abs_f32 = Entry::Unary(Abs, F32);
    unary _mlir_ciface_hir_rt_abs_bf16 = Entry::Unary(Abs, BF16);
    unary _mlir_ciface_hir_rt_abs_f16 = Entry::Unary(Abs, F16);
    unary _mlir_ciface_hir_rt_relu_f32 = Entry::Unary(Relu, F32);
    unary _mlir_ciface_hir_rt_relu_bf16 = Entry::Unary(Relu, BF16);
    unary _mlir_ciface_hir_rt_relu_f16 = Entry::Unary(Relu, F16);
    unary _mlir_ciface_hir_rt_gelu_f32 = Entry::Unary(Gelu, F32);
    unary _mlir_ciface_hir_rt_gelu_bf16 = Entry::Unary(Gelu, BF16);
    unary _mlir_ciface_hir_rt_gelu_f16 = Entry::Unary(Gelu, F16);
    unary _mlir_ciface_hir_rt_rsqrt_f32 = Entry::Unary(Rsqrt, F32);
    unary _mlir_ciface_hir_rt_rsqrt_bf16 = Entry::Unary(Rsqrt, BF16);
    unary _mlir_ciface_hir_rt_rsqrt_f16 = Entry::Unary(Rsqrt, F16);
    unary _mlir_ciface_hir_rt_cast_f32_f32 = Entry::Cast(F32, F32);
    unary _mlir_ciface_hir_rt_cast_f32_bf16 = Entry::Cast(F32, BF16);
    unary _mlir_ciface_hir_rt_cast_f32_f16 = Entry::Cast(F32, F16);
    unary _mlir_ciface_hir_rt_cast_bf16_f32 = Entry::Cast(BF16, F32);
    unary _mlir_ciface_hir_rt_cast_bf16_bf16 = Entry::Cast(BF16, BF16);
    unary _mlir_ciface_hir_rt_cast_bf16_f16 = Entry::Cast(BF16, F16);
    unary _mlir_ciface_hir_rt_cast_f16_f32 = Entry::Cast(F16, F32);
    unary _mlir_ciface_hir_rt_cast_f16_bf16 = Entry::Cast(F16, BF16);
    unary _mlir_ciface_hir_rt_cast_f16_f16 = Entry::Cast(F16, F16);
    unary _mlir_ciface_hir_rt_cast_f32_i32 = Entry::Cast(F32, I32);
    unary _mlir_ciface_hir_rt_cast_f32_i64 = Entry::Cast(F32, I64);
    unary _mlir_ciface_hir_rt_cast_bf16_i32 = Entry::Cast(BF16, I32);
    unary _mlir_ciface_hir_rt_cast_bf16_i64 = Entry::Cast(BF16, I64);
    unary _mlir_ciface_hir_rt_cast_f16_i32 = Entry::Cast(F16, I32);
    unary _mlir_ciface_hir_rt_cast_f16_i64 = Entry::Cast(F16, I64);
    unary _mlir_ciface_hir_rt_cast_i32_f32 = Entry::Cast(I32, F32);
    unary _mlir_ciface_hir_rt_cast_i32_bf16 = Entry::Cast(I32, BF16);
    unary _mlir_ciface_hir_rt_cast_i32_f16 = Entry::Cast(I32, F16);
    unary _mlir_ciface_hir_rt_cast_i32_i32 = Entry::Cast(I32, I32);
    unary _mlir_ciface_hir_rt_cast_i32_i64 = Entry::Cast(I32, I64);
    unary _mlir_ciface_hir_rt_cast_i64_f32 = Entry::Cast(I64, F32);
    unary _mlir_ciface_hir_rt_cast_i64_bf16 = Entry::Cast(I64, BF16);
    unary _mlir_ciface_hir_rt_cast_i64_f16 = Entry::Cast(I64, F16);
    unary _mlir_ciface_hir_rt_cast_i64_i32 = Entry::Cast(I64, I32);
    unary _mlir_ciface_hir_rt_cast_i64_i64 = Entry::Cast(I64, I64);
    binary _mlir_ciface_hir_rt_add_f32 = Entry::Binary(Add, F32);
    binary _mlir_ciface_hir_rt_add_bf16 = Entry::Binary(Add, BF16);
    binary _mlir_ciface_hir_rt_add_f16 = Entry::Binary(Add, F16);
    binary _mlir_ciface_hir_rt_sub_f32 = Entry::Binary(Sub, F32);
    binary _mlir_ciface_hir_rt_sub_bf16 = Entry::Binary(Sub, BF16);
    binary _mlir_ciface_hir_rt_sub_f16 = Entry::Binary(Sub, F16);
    binary _mlir_ciface_hir_rt_mul_f32 = Entry::Binary(Mul, F32);
    binary _mlir_ciface_hir_rt_mul_bf16 = Entry::Binary(Mul, BF16);
    binary _mlir_ciface_hir_rt_mul_f16 = Entry::Binary(Mul, F16);
    binary _mlir_ciface_hir_rt_div_f32 = Entry::Binary(Div, F32);
    binary _mlir_ciface_hir_rt_div_bf16 = Entry::Binary(Div, BF16);
    binary _mlir_ciface_hir_rt_div_f16 = Entry::Binary(Div, F16);
    binary _mlir_ciface_hir_rt_max_f32 = Entry::Binary(Max, F32);
    binary _mlir_ciface_hir_rt_max_bf16 = Entry::Binary(Max, BF16);
    binary _mlir_ciface_hir_rt_max_f16 = Entry::Binary(Max, F16);
    binary _mlir_ciface_hir_rt_min_f32 = Entry::Binary(Min, F32);
    binary _mlir_ciface_hir_rt_min_bf16 = Entry::Binary(Min, BF16);
    binary _mlir_ciface_hir_rt_min_f16 = Entry::Binary(Min, F16);
    axes _mlir_ciface_hir_rt_sum_f32 = Entry::Reduction(Sum, F32);
    axes _mlir_ciface_hir_rt_sum_bf16 = Entry::Reduction(Sum, BF16);
    axes _mlir_ciface_hir_rt_sum_f16 = Entry::Reduction(Sum, F16);
    axes _mlir_ciface_hir_rt_amax_f32 = Entry::Reduction(Amax, F32);
    axes _mlir_ciface_hir_rt_amax_bf16 = Entry::Reduction(Amax, BF16);
    axes _mlir_ciface_hir_rt_amax_f16 = Entry::Reduction(Amax, F16);
    axes _mlir_ciface_hir_rt_broadcast_to_f32 = Entry::Broadcast(F32);
    axes _mlir_ciface_hir_rt_broadcast_to_bf16 = Entry::Broadcast(BF16);
    axes _mlir_ciface_hir_rt_broadcast_to_f16 = Entry::Broadcast(F16);
    unary _mlir_ciface_hir_rt_reshape_f32 = Entry::Reshape(F32);
    unary _mlir_ciface_hir_rt_reshape_bf16 = Entry::Reshape(BF16);
    unary _mlir_ciface_hir_rt_reshape_f16 = Entry::Reshape(F16);
    axes _mlir_ciface_hir_rt_transpose_f32 = Entry::Transpose(F32);
    axes _mlir_ciface_hir_rt_transpose_bf16 = Entry::Transpose(BF16);
    axes _mlir_ciface_hir_rt_transpose_f16 = Entry::Transpose(F16);
    fill _mlir_ciface_hir_rt_fill_f32 = Entry::Fill(F32);
    fill _mlir_ciface_hir_rt_fill_bf16 = Entry::Fill(BF16);
    fill _mlir_ciface_hir_rt_fill_f16 = Entry::Fill(F16);
    iota _mlir_ciface_hir_rt_iota_f32 = Entry::Iota(F32);
    iota _mlir_ciface_hir_rt_iota_bf16 = Entry::Iota(BF16);
    iota _mlir_ciface_hir_rt_iota_f16 = Entry::Iota(F16);
    ternary _mlir_ciface_hir_rt_where_f32 = Entry::Where(F32);
    ternary _mlir_ciface_hir_rt_where_bf16 = Entry::Where(BF16);
    ternary _mlir_ciface_hir_rt_where_f16 = Entry::Where(F16);
    binary _mlir_ciface_hir_rt_matmul_f32 = Entry::Matmul(F32);
    binary _mlir_ciface_hir_rt_matmul_bf16 = Entry::Matmul(BF16);
    binary _mlir_ciface_hir_rt_matmul_f16 = Entry::Matmul(F16);
    binary _mlir_ciface_hir_rt_matmul_acc_f32 = Entry::MatmulAccumulate(F32);
    binary _mlir_ciface_hir_rt_matmul_acc_bf16 = Entry::MatmulAccumulate(BF16);
    binary _mlir_ciface_hir_rt_matmul_acc_f16 = Entry::MatmulAccumulate(F16);
    binary _mlir_ciface_hir_rt_linear_f32 = Entry::Linear(F32);
    binary _mlir_ciface_hir_rt_linear_bf16 = Entry::Linear(BF16);
    binary _mlir_ciface_hir_rt_linear_f16 = Entry::Linear(F16);
    binary _mlir_ciface_hir_rt_linear_acc_f32 = Entry::LinearAccumulate(F32);
    binary _mlir_ciface_hir_rt_linear_acc_bf16 = Entry::LinearAccumulate(BF16);
    binary _mlir_ciface_hir_rt_linear_acc_f16 = Entry::LinearAccumulate(F16);
    ternary _mlir_ciface_hir_rt_linear_bias_f32 = Entry::LinearBias(F32);
    ternary _mlir_ciface_hir_rt_linear_bias_bf16 = Entry::LinearBias(BF16);
    ternary _mlir_ciface_hir_rt_linear_bias_f16 = Entry::LinearBias(F16);
    binary _mlir_ciface_hir_rt_matmul_gelu_f32 = Entry::MatmulActivation(Activation::Gelu, F32);
    binary _mlir_ciface_hir_rt_matmul_gelu_bf16 = Entry::MatmulActivation(Activation::Gelu, BF16);
    binary _mlir_ciface_hir_rt_matmul_gelu_f16 = Entry::MatmulActivation(Activation::Gelu, F16);
    binary _mlir_ciface_hir_rt_linear_gelu_f32 = Entry::LinearActivation(Activation::Gelu, F32);
    binary _mlir_ciface_hir_rt_linear_gelu_bf16 = Entry::LinearActivation(Activation::Gelu, BF16);
    binary _mlir_ciface_hir_rt_linear_gelu_f16 = Entry::LinearActivation(Activation::Gelu, F16);
    ternary _mlir_ciface_hir_rt_linear_bias_gelu_f32 = Entry::LinearBiasActivation(Activation::Gelu, F32);
    ternary _mlir_ciface_hir_rt_linear_bias_gelu_bf16 = Entry::LinearBiasActivation(Activation::Gelu, BF16);
    ternary _mlir_ciface_hir_rt_linear_bias_gelu_f16 = Entry::LinearBiasActivation(Activation::Gelu, F16);
    attention _mlir_ciface_hir_rt_attention_f32 = Entry::Attention(F32);
    attention _mlir_ciface_hir_rt_attention_bf16 = Entry::Attention(BF16);
    attention _mlir_ciface_hir_rt_attention_f16 = Entry::Attention(F16);
    attention_mask _mlir_ciface_hir_rt_attention_mask_f32 = Entry::AttentionMask(F32);
    attention_mask _mlir_ciface_hir_rt_attention_mask_bf16 = Entry::AttentionMask(BF16);
    attention_mask _mlir_ciface_hir_rt_attention_mask_f16 = Entry::AttentionMask(F16);
    collective _mlir_ciface_hir_rt_allgather_f32 = Entry::Collective(Allgather, F32);
    collective _mlir_ciface_hir_rt_allgather_bf16 = Entry::Collective(Allgather, BF16);
    collective _mlir_ciface_hir_rt_allgather_f16 = Entry::Collective(Allgather, F16);
    collective _mlir_ciface_hir_rt_allreduce_f32 = Entry::Collective(Allreduce, F32);
    collective _mlir_ciface_hir_rt_allreduce_bf16 = Entry::Collective(Allreduce, BF16);
    collective _mlir_ciface_hir_rt_allreduce_f16 = Entry::Collective(Allreduce, F16);
    collective _mlir_ciface_hir_rt_reduce_scatter_f32 = Entry::Collective(ReduceScatter, F32);
    collective _mlir_ciface_hir_rt_reduce_scatter_bf16 = Entry::Collective(ReduceScatter, BF16);
    collective _mlir_ciface_hir_rt_reduce_scatter_f16 = Entry::Collective(ReduceScatter, F16);
    collective _mlir_ciface_hir_rt_broadcast_f32 = Entry::Collective(Broadcast, F32);
    collective _mlir_ciface_hir_rt_broadcast_bf16 = Entry::Collective(Broadcast, BF16);
    collective _mlir_ciface_hir_rt_broadcast_f16 = Entry::Collective(Broadcast, F16);
    collective _mlir_ciface_hir_rt_reduce_f32 = Entry::Collective(Reduce, F32);
    collective _mlir_ciface_hir_rt_reduce_bf16 = Entry::Collective(Reduce, BF16);
    collective _mlir_ciface_hir_rt_reduce_f16 = Entry::Collective(Reduce, F16);
    collective _mlir_ciface_hir_rt_gather_f32 = Entry::Collective(Gather, F32);
    collective _mlir_ciface_hir_rt_gather_bf16 = Entry::Collective(Gather, BF16);
    collective _mlir_ciface_hir_rt_gather_f16 = Entry::Collective(Gather, F16);
    collective _mlir_ciface_hir_rt_scatter_f32 = Entry::Collective(Scatter, F32);
    collective _mlir_ciface_hir_rt_scatter_bf16 = Entry::Collective(Scatter, BF16);
    collective _mlir_ciface_hir_rt_scatter_f16 = Entry::Collective(Scatter, F16);
    collective _mlir_ciface_hir_rt_alltoall_f32 = Entry::Collective(Alltoall, F32);
    collective _mlir_ciface_hir_rt_alltoall_bf16 = Entry::Collective(Alltoall, BF16);
    collective _mlir_ciface_hir_rt_alltoall_f16 = Entry::Collective(Alltoall, F16);
    transfer _mlir_ciface_hir_rt_send_f32 = Entry::Send(F32);
    transfer _mlir_ciface_hir_rt_send_bf16 = Entry::Send(BF16);
    transfer _mlir_ciface_hir_rt_send_f16 = Entry::Send(F16);
    transfer _mlir_ciface_hir_rt_recv_f32 = Entry::Recv(F32);
    transfer _mlir_ciface_hir_rt_recv_bf16 = Entry::Recv(BF16);
    transfer _mlir_ciface_hir_rt_recv_f16 = Entry::Recv(F16);
    share _mlir_ciface_hir_rt_share_mem_handle_f32 = Entry::ShareMemHandle(F32);
    share _mlir_ciface_hir_rt_share_mem_handle_bf16 = Entry::ShareMemHandle(BF16);
    share _mlir_ciface_hir_rt_share_mem_handle_f16 = Entry::ShareMemHandle(F16);
    unary _mlir_ciface_hir_rt_copy_i32 = Entry::Copy(I32);
    unary _mlir_ciface_hir_rt_neg_i32 = Entry::Unary(Neg, I32);
    unary _mlir_ciface_hir_rt_abs_i32 = Entry::Unary(Abs, I32);
    unary _mlir_ciface_hir_rt_relu_i32 = Entry::Unary(Relu, I32);
    binary _mlir_ciface_hir_rt_add_i32 = Entry::Binary(Add, I32);
    binary _mlir_ciface_hir_rt_sub_i32 = Entry::Binary(Sub, I32);
    binary _mlir_ciface_hir_rt_mul_i32 = Entry::Binary(Mul, I32);
    binary _mlir_ciface_hir_rt_max_i32 = Entry::Binary(Max, I32);
    binary _mlir_ciface_hir_rt_min_i32 = Entry::Binary(Min, I32);
    axes _mlir_ciface_hir_rt_sum_i32 = Entry::Reduction(Sum, I32);
    axes _mlir_ciface_hir_rt_amax_i32 = Entry::Reduction(Amax, I32);
    axes _mlir_ciface_hir_rt_broadcast_to_i32 = Entry::Broadcast(I32);
    unary _mlir_ciface_hir_rt_reshape_i32 = Entry::Reshape(I32);
    axes _mlir_ciface_hir_rt_transpose_i32 = Entry::Transpose(I32);
    fill _mlir_ciface_hir_rt_fill_i32 = Entry::Fill(I32);
    iota _mlir_ciface_hir_rt_iota_i32 = Entry::Iota(I32);
    ternary _mlir_ciface_hir_rt_where_i32 = Entry::Where(I32);
    collective _mlir_ciface_hir_rt_allgather_i32 = Entry::Collective(Allgather, I32);
    collective _mlir_ciface_hir_rt_allreduce_i32 = Entry::Collective(Allreduce, I32);
    collective _mlir_ciface_hir_rt_reduce_scatter_i32 = Entry::Collective(ReduceScatter, I32);
    collective _mlir_ciface_hir_rt_broadcast_i32 = Entry::Collective(Broadcast, I32);
    collective _mlir_ciface_hir_rt_reduce_i32 = Entry::Collective(Reduce, I32);
    collective _mlir_ciface_hir_rt_gather_i32 = Entry::Collective(Gather, I32);
    collective _mlir_ciface_hir_rt_scatter_i32 = Entry::Collective(Scatter, I32);
    collective _mlir_ciface_hir_rt_alltoall_i32 = Entry::Collective(Alltoall, I32);
    transfer _mlir_ciface_hir_rt_send_i32 = Entry::Send(I32);
    transfer _mlir_ciface_hir_rt_recv_i32 = Entry::Recv(I32);
    share _mlir_ciface_hir_rt_share_mem_handle_i32 = Entry::ShareMemHandle(I32);
    unary _mlir_ciface_hir_rt_copy_i64 = Entry::Copy(I64);
    unary _mlir_ciface_hir_rt_neg_i64 = Entry::Unary(Neg, I64);
    unary _mlir_ciface_hir_rt_abs_i64 = Entry::Unary(Abs, I64);
    unary _mlir_ciface_hir_rt_relu_i64 = Entry::Unary(Relu, I64);
    binary _mlir_ciface_hir_rt_add_i64 = Entry::Binary(Add, I64);
    binary _mlir_ciface_hir_rt_sub_i64 = Entry::Binary(Sub, I64);
    binary _mlir_ciface_hir_rt_mul_i64 = Entry::Binary(Mul, I64);
    binary _mlir_ciface_hir_rt_max_i64 = Entry::Binary(Max, I64);
    binary _mlir_ciface_hir_rt_min_i64 = Entry::Binary(Min, I64);
    axes _mlir_ciface_hir_rt_sum_i64 = Entry::Reduction(Sum, I64);
    axes _mlir_ciface_hir_rt_amax_i64 = Entry::Reduction(Amax, I64);
    axes _mlir_ciface_hir_rt_broadcast_to_i64 = Entry::Broadcast(I64);
    unary _mlir_ciface_hir_rt_reshape_i64 = Entry::Reshape(I64);
    axes _mlir_ciface_hir_rt_transpose_i64 = Entry::Transpose(I64);
    fill _mlir_ciface_hir_rt_fill_i64 = Entry::Fill(I64);
    iota _mlir_ciface_hir_rt_iota_i64 = Entry::Iota(I64);
    ternary _mlir_ciface_hir_rt_where_i64 = Entry::Where(I64);
    collective _mlir_ciface_hir_rt_allgather_i64 = Entry::Collective(Allgather, I64);
    collective _mlir_ciface_hir_rt_allreduce_i64 = Entry::Collective(Allreduce, I64);
    collective _mlir_ciface_hir_rt_reduce_scatter_i64 = Entry::Collective(ReduceScatter, I64);
    collective _mlir_ciface_hir_rt_broadcast_i64 = Entry::Collective(Broadcast, I64);
    collective _mlir_ciface_hir_rt_reduce_i64 = Entry::Collective(Reduce, I64);
    collective _mlir_ciface_hir_rt_gather_i64 = Entry::Collective(Gather, I64);
    collective _mlir_ciface_hir_rt_scatter_i64 = Entry::Collective(Scatter, I64);
    collective _mlir_ciface_hir_rt_alltoall_i64 = Entry::Collective(Alltoall, I64);
    transfer _mlir_ciface_hir_rt_send_i64 = Entry::Send(I64);
    transfer _mlir_ciface_hir_rt_recv_i64 = Entry::Recv(I64);
    share _mlir_ciface_hir_rt_share_mem_handle_i64 = Entry::ShareMemHandle(I64);
}

#[cfg(test)]
mod tests;
