//! `convert-host-to-llvm`: every `host` op becomes calls of the runtime's C
//! ABI ([`hir_abi::Entry`]) and upstream memref ops, which the
//! upstream conversions of [`super::LLVM_PIPELINE`] take to the LLVM dialect.
//!
//! - Compute ops call their dtype-suffixed entry with every buffer cast to
//!   an unranked memref (`host.matmul {accumulate}` calls
//!   `hir_rt_matmul_acc_<T>`, `host.linear activation gelu` with a bias
//!   `hir_rt_linear_bias_gelu_<T>`); reduction and broadcast axes are
//!   `memref<*xi64>` constants (`memref.global`); `host.attention` passes
//!   its scale as an `f64` and `causal` as an `i64` after the buffers.
//! - `host.alloc` calls `hir_rt_alloc(site, bytes)`, `site` numbering the
//!   allocations of the module in program order, and builds the memref
//!   descriptor of the pointer it returns (`llvm.insertvalue`s cast back to
//!   the memref type, which `reconcile-unrealized-casts` folds away);
//!   `host.dealloc` passes the buffer's aligned pointer to `hir_rt_dealloc`.
//! - `host.select` is a rank-reducing `memref.subview`.
//! - `!host.stream` values become `i64` handles; `host.rank` and
//!   `host.num_devices` calls cast to `index`.
//! - Public functions with a body, the entry points, get
//!   `llvm.emit_c_interface` so the JIT can call them with descriptors.
//! - `fusion.mesh` declarations, which only fusion types name, are dropped;
//!   any other `fusion` op is an error (lower with `convert-fusion-to-host`
//!   first), and so is a stream that flows through a non-`host` op (a block
//!   argument, a loop result, a call).
//!
//! The pass is two pattern sets applied by melior's walk driver
//! ([`crate::patterns`]), one pattern per op or family (the elementwise,
//! reduction and contraction ops; the families the ABI enumerates, `Unary`,
//! `Binary`, `Reduction`, rooted at the ops its names spell), each changing
//! the IR only through the rewriter: first the stream makers, each replaced
//! by the `i64` handle its call returns, then every other op, whose stream
//! operands are those handles by then. What the patterns share holds no IR
//! ([`runtime_calls::State`]: the symbols added, the next allocation site,
//! whether one failed); the module's symbols are looked up again by name.
//! Then every `host` op is lowered, or the pass fails at the first left
//! (`'host.x' op has no lowering to the runtime`): none is left.
//!
//! ```mlir
//! %g = host.alloc : memref<8xf32>
//! host.neg ins(%a : memref<8xf32>) outs(%g : memref<8xf32>)
//! ```
//! becomes
//! ```mlir
//! %p = call @hir_rt_alloc(%c0_i64, %c32_i64) : (i64, i64) -> !llvm.ptr
//! %d = ... llvm.insertvalue ... : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
//! %g = builtin.unrealized_conversion_cast %d : !llvm.struct<...> to memref<8xf32>
//! %0 = memref.cast %a : memref<8xf32> to memref<*xf32>
//! %1 = memref.cast %g : memref<8xf32> to memref<*xf32>
//! call @hir_rt_neg_f32(%0, %1) : (memref<*xf32>, memref<*xf32>) -> ()
//! ```

use super::handles::{Handles, is_stream};
use super::runtime_calls::{
    self, EMIT_C_INTERFACE, Failure, Result, Runtime, Shared, State, dtype, i64_type,
};
use crate::ops::Op;
use crate::{HirPass, ir, patterns, rewrite};
use hir_abi::{Activation, Binary, Entry, Reduction, Unary};
use hir_dialects::OpKind;
use melior::{
    RewriterBase,
    dialect::{arith, llvm, memref},
    ir::{
        Attribute, Identifier, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{
            DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute, StringAttribute,
        },
        operation::{OperationBuilder, OperationLike},
        r#type::{DimSize, MemRefType, ShapedTypeLike},
    },
};

/// The op the pass runs on: it adds declarations to the module.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "convert-host-to-llvm";

/// Creates the pass (anchored on `builtin.module`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(ConvertHostToLlvm)
}

struct ConvertHostToLlvm;

impl HirPass for ConvertHostToLlvm {
    fn run(&mut self, module: OperationRef) -> bool {
        if let Err(failure) = check(module) {
            failure.emit();
            return false;
        }
        let state = Shared::default();
        // Streams are made before they are used: their makers go first, and
        // each stream's users then take its `i64` handle.
        patterns::walk(module, |context, set| {
            let add =
                |root: Op, lower| runtime_calls::add(set, context, &state, root.name(), lower);
            add(Op::HostGetCurrentStream, get_current_stream);
            add(Op::HostStreamFromPool, stream_from_pool);
        });
        if State::failed(&state) {
            return false;
        }
        patterns::walk(module, |context, set| {
            let add = |root: &str, lower| runtime_calls::add(set, context, &state, root, lower);
            add(Op::HostAlloc.name(), alloc);
            add(Op::HostDealloc.name(), dealloc);
            add(Op::HostSelect.name(), select);
            add(Op::HostFused.name(), fused);
            add(Op::HostSetCurrentStream.name(), use_stream);
            add(Op::HostSyncStream.name(), use_stream);
            add(Op::HostRank.name(), query);
            add(Op::HostNumDevices.name(), query);
            // The compute ops, one pattern per family; the families the ABI
            // enumerates are rooted at the ops its names spell.
            let named = [Op::HostCopy, Op::HostCast, Op::HostWhere].map(|op| op.name().to_owned());
            let unary = Unary::ALL.map(|unary| Op::HostCopy.sibling(unary.name()));
            let binary = Binary::ALL.map(|binary| Op::HostCopy.sibling(binary.name()));
            for root in named.iter().chain(&unary).chain(&binary) {
                add(root, elementwise);
            }
            for reduction in Reduction::ALL {
                add(&Op::HostCopy.sibling(reduction.name()), over_axes);
            }
            add(Op::HostBroadcast.name(), over_axes);
            add(Op::HostTranspose.name(), transpose);
            add(Op::HostReshape.name(), reshape);
            add(Op::HostFill.name(), fill);
            add(Op::HostIota.name(), iota);
            add(Op::HostMatmul.name(), contraction);
            add(Op::HostLinear.name(), contraction);
            add(Op::HostAttention.name(), attention);
            // Only fusion types name meshes.
            patterns::add(set, context, Op::FusionMesh.name(), &[], erase);
            patterns::add(set, context, Op::FuncFunc.name(), &[], mark_entry);
        });
        if State::failed(&state) {
            return false;
        }
        // Every host op is lowered, or the pass fails at it.
        if let Err(failure) = runtime_calls::leftover(module, Op::HostAlloc) {
            failure.emit();
            return false;
        }
        true
    }
}

/// What the pass checks before it changes anything: no fusion op is left
/// but meshes, and streams go straight from the host op that makes them to
/// host ops.
fn check<'c>(module: OperationRef<'c, '_>) -> Result<'c, ()> {
    let fusion = ir::nested(module)
        .into_iter()
        .find(|op| Op::FusionMesh.same_dialect(op) && !Op::FusionMesh.is(op));
    if let Some(op) = fusion {
        return Err(Failure::new(
            op.location(),
            format!(
                "'{}' op is not lowered to host ops; run convert-fusion-to-host before {ARGUMENT}",
                ir::name(&op)
            ),
        ));
    }
    Handles::new(Op::HostAlloc, "'!host.stream'", is_stream).check(module, ARGUMENT)
}

/// Erases `op`, which has no uses.
fn erase<'c>(op: OperationRef<'c, '_>, rewriter: &RewriterBase<'c, '_>) -> bool {
    rewriter.erase_op(op);
    true
}

/// Marks a public function with a body as an entry point; false for any
/// other function, or one marked already.
fn mark_entry<'c>(function: OperationRef<'c, '_>, rewriter: &RewriterBase<'c, '_>) -> bool {
    let public = function
        .attribute("sym_visibility")
        .ok()
        .and_then(|attribute| StringAttribute::try_from(attribute).ok())
        .is_none_or(|visibility| visibility.value() == "public");
    let has_body = ir::region(&function, 0).is_some_and(|region| region.first_block().is_some());
    if !public || !has_body || function.has_attribute(EMIT_C_INTERFACE) {
        return false;
    }
    let context = function.context();
    // SAFETY: the context outlives the rewrite.
    let unit = Attribute::unit(unsafe { context.to_ref() });
    rewrite::set_attribute(rewriter, function, EMIT_C_INTERFACE, unit);
    true
}

/// `host.get_current_stream`: `hir_rt_get_current_stream() -> i64`.
fn get_current_stream<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    runtime.call(Entry::GetCurrentStream, &[])
}

/// `host.stream_from_pool %i`: `hir_rt_stream_from_pool(i) -> i64`.
fn stream_from_pool<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let index = runtime.index_to_i64(runtime.operand(0));
    runtime.call(Entry::StreamFromPool, &[index])
}

/// `host.set_current_stream`, `host.sync_stream`: the entry of the op, with
/// the stream's handle (its maker's call, lowered first).
fn use_stream<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let entry = match Op::of(&runtime.op()) {
        Some(Op::HostSetCurrentStream) => Entry::SetCurrentStream,
        _ => Entry::SyncStream,
    };
    runtime.call(entry, &[runtime.operand(0)])?;
    Ok(None)
}

/// `host.rank`, `host.num_devices`: the `i64` the runtime returns, as an `index`.
fn query<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let entry = match Op::of(&runtime.op()) {
        Some(Op::HostRank) => Entry::Rank,
        _ => Entry::NumDevices,
    };
    let value = runtime.call(entry, &[])?.expect("an i64 result");
    Ok(Some(runtime.i64_to_index(value)))
}

/// `host.dealloc`: `hir_rt_dealloc` of the buffer's aligned pointer.
fn dealloc<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let pointer = aligned_pointer(runtime, runtime.operand(0));
    runtime.call(Entry::Dealloc, &[pointer])?;
    Ok(None)
}

/// The error of an op whose kind or name the runtime has no entry for.
fn no_lowering<'c>(op: &OperationRef<'c, '_>) -> Failure<'c> {
    Failure::new(
        op.location(),
        format!("'{}' op has no lowering to the runtime", ir::name(op)),
    )
}

/// The op's mnemonic, e.g. `neg` for `host.neg`: the name of its entry in
/// the ABI's families (`Unary`, `Binary`, `Reduction`).
fn mnemonic(op: &OperationRef) -> String {
    let name = ir::name(op);
    name.split_once('.')
        .map_or(name.as_str(), |(_, mnemonic)| mnemonic)
        .to_owned()
}

/// An elementwise op (its ODS trait): `host.copy`, `cast`, `where` and the
/// ABI's unary and binary ops, called with every buffer.
fn elementwise<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    if OpKind::of(&op) != OpKind::Elementwise {
        return Err(no_lowering(&op));
    }
    let operand = |index| runtime.operand(index);
    let entry = match Op::of(&op) {
        Some(Op::HostCopy) => Entry::Copy(dtype(&op, operand(0))?),
        Some(Op::HostCast) => Entry::Cast(dtype(&op, operand(0))?, dtype(&op, operand(1))?),
        Some(Op::HostWhere) => Entry::Where(dtype(&op, operand(0))?),
        _ => {
            let element = dtype(&op, operand(0))?;
            let mnemonic = mnemonic(&op);
            let unary = Unary::ALL.into_iter().find(|u| u.name() == mnemonic);
            let binary = Binary::ALL.into_iter().find(|b| b.name() == mnemonic);
            match (unary, binary) {
                (Some(unary), _) => Entry::Unary(unary, element),
                (_, Some(binary)) => Entry::Binary(binary, element),
                _ => return Err(no_lowering(&op)),
            }
        }
    };
    runtime.call(entry, &runtime.buffers())?;
    Ok(None)
}

/// A reduction or broadcast (its ODS trait): the buffers and the op's
/// `axes` as a constant list.
fn over_axes<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let element = dtype(&op, runtime.operand(0))?;
    let entry = match OpKind::of(&op) {
        OpKind::Broadcast => Entry::Broadcast(element),
        OpKind::Reduction => {
            let mnemonic = mnemonic(&op);
            match Reduction::ALL.into_iter().find(|r| r.name() == mnemonic) {
                Some(reduction) => Entry::Reduction(reduction, element),
                None => return Err(no_lowering(&op)),
            }
        }
        _ => return Err(no_lowering(&op)),
    };
    let axes = runtime_calls::axes(&op)?;
    let mut arguments = runtime.buffers();
    arguments.push(runtime.list("axes", &axes)?);
    runtime.call(entry, &arguments)?;
    Ok(None)
}

/// `host.transpose`: the buffers and the permutation as a constant list.
fn transpose<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let entry = Entry::Transpose(dtype(&op, runtime.operand(0))?);
    let permutation =
        DenseI64ArrayAttribute::try_from(op.attribute("permutation").expect("verified"))
            .expect("verified");
    let permutation: Vec<i64> = (0..permutation.len())
        .map(|index| permutation.element(index).expect("index in range"))
        .collect();
    let mut arguments = runtime.buffers();
    arguments.push(runtime.list("permutation", &permutation)?);
    runtime.call(entry, &arguments)?;
    Ok(None)
}

/// `host.reshape`: the buffers.
fn reshape<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let entry = Entry::Reshape(dtype(&runtime.op(), runtime.operand(0))?);
    runtime.call(entry, &runtime.buffers())?;
    Ok(None)
}

/// `host.fill`: the buffer and the `f64` value.
fn fill<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let entry = Entry::Fill(dtype(&op, runtime.operand(0))?);
    let value = op.attribute("value").expect("verified");
    let value = runtime.value(arith::constant(runtime.context(), value, op.location()));
    let arguments = [runtime.buffer(runtime.operand(0)), value];
    runtime.call(entry, &arguments)?;
    Ok(None)
}

/// `host.iota`: the buffer, the axis and the offset, as `i64`s.
fn iota<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let entry = Entry::Iota(dtype(&op, runtime.operand(1))?);
    let axis = IntegerAttribute::try_from(op.attribute("axis").expect("verified"))
        .expect("verified")
        .value();
    let arguments = [
        runtime.buffer(runtime.operand(1)),
        runtime.constant(axis),
        runtime.index_to_i64(runtime.operand(0)),
    ];
    runtime.call(entry, &arguments)?;
    Ok(None)
}

/// A contraction (its ODS trait): `host.matmul` and `host.linear` (with or
/// without a bias; `{accumulate}` calls either's accumulating entry); with
/// an `activation`, the entry of that epilogue.
fn contraction<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    if OpKind::of(&op) != OpKind::Contraction {
        return Err(no_lowering(&op));
    }
    let element = dtype(&op, runtime.operand(0))?;
    let activation = match ir::integer_attribute(&op, "activation") {
        None => None,
        Some(code) => Some(Activation::from_code(code).ok_or_else(|| {
            Failure::new(
                op.location(),
                format!("'{}' op has an unknown activation {code}", ir::name(&op)),
            )
        })?),
    };
    let bias = op.operand_count() == 4;
    let entry = match (Op::of(&op), activation) {
        (Some(Op::HostMatmul), None) if op.has_attribute("accumulate") => {
            Entry::MatmulAccumulate(element)
        }
        (Some(Op::HostMatmul), None) => Entry::Matmul(element),
        (Some(Op::HostMatmul), Some(activation)) => Entry::MatmulActivation(activation, element),
        (Some(Op::HostLinear), None) if op.has_attribute("accumulate") => {
            Entry::LinearAccumulate(element)
        }
        (Some(Op::HostLinear), None) if bias => Entry::LinearBias(element),
        (Some(Op::HostLinear), None) => Entry::Linear(element),
        (Some(Op::HostLinear), Some(activation)) if bias => {
            Entry::LinearBiasActivation(activation, element)
        }
        (Some(Op::HostLinear), Some(activation)) => Entry::LinearActivation(activation, element),
        _ => return Err(no_lowering(&op)),
    };
    runtime.call(entry, &runtime.buffers())?;
    Ok(None)
}

/// `host.attention`: `hir_rt_attention_<T>` (`hir_rt_attention_mask_<T>`
/// with a mask) of the buffers, the scale as an `f64` and causal as an
/// `i64` (1 or 0).
fn attention<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let element = dtype(&op, runtime.operand(0))?;
    // q, k, v, the mask, the output.
    let entry = match op.operand_count() {
        5 => Entry::AttentionMask(element),
        _ => Entry::Attention(element),
    };
    let mut arguments = runtime.buffers();
    let scale = op.attribute("scale").expect("verified");
    arguments.push(runtime.value(arith::constant(runtime.context(), scale, op.location())));
    arguments.push(runtime.constant(i64::from(op.has_attribute("causal"))));
    runtime.call(entry, &arguments)?;
    Ok(None)
}

/// `hir_rt_fused_<n>(program, buffers...)`: the body serialized into its
/// program's words (a `memref<*xi64>` constant), the buffers as the
/// `memref<*xf32>` the entry declares (an unrealized cast of the unranked
/// descriptor, which is the same for every element type). The body's ops
/// go with the op.
fn fused<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let op = runtime.op();
    let program = super::fused_program::program(op)?;
    let count = op.operand_count();
    if count > hir_abi::fused::MAX_BUFFERS {
        return Err(Failure::new(
            op.location(),
            format!(
                "'host.fused' op has {count} buffers; the runtime takes at most {}",
                hir_abi::fused::MAX_BUFFERS
            ),
        ));
    }
    let mut arguments = vec![runtime.list("fused", &program.encode())?];
    let nominal = runtime_calls::unranked(Type::float32(runtime.context()));
    for unranked in runtime.buffers() {
        arguments.push(match unranked.r#type() == nominal {
            true => unranked,
            false => runtime.cast(unranked, nominal),
        });
    }
    runtime.call(Entry::Fused(count), &arguments)?;
    Ok(None)
}

fn memref_type<'c>(value: Value<'c, '_>) -> MemRefType<'c> {
    MemRefType::try_from(value.r#type()).expect("host buffers are ranked memrefs")
}

/// `hir_rt_alloc(site, bytes)` and the descriptor of the buffer it returns.
fn alloc<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let context = runtime.context();
    let op = runtime.op();
    let result: Value = op.result(0).expect("one result").into();
    let r#type = memref_type(result);
    let element = dtype(&op, result)?;
    let shape = (0..r#type.rank())
        .map(|axis| match r#type.dim_size(axis) {
            Ok(DimSize::Static(extent)) => Ok(extent as i64),
            _ => Err(Failure::new(
                op.location(),
                format!("'host.alloc' op buffer of type {type} has a dynamic shape"),
            )),
        })
        .collect::<Result<Vec<i64>>>()?;
    let bytes = shape
        .iter()
        .try_fold(element.size() as i64, |bytes, &extent| {
            bytes.checked_mul(extent)
        })
        .ok_or_else(|| {
            Failure::new(
                op.location(),
                format!(
                    "'host.alloc' op buffer of type {} has more bytes than an i64 holds",
                    r#type
                ),
            )
        })?;
    let arguments = [
        runtime.constant(runtime.next_site()),
        runtime.constant(bytes),
    ];
    let pointer = runtime
        .call(Entry::Alloc, &arguments)?
        .expect("alloc returns a pointer");

    // { allocated, aligned, offset, sizes[rank], strides[rank] }, row-major.
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    let i64 = i64_type(context);
    let mut fields = vec![pointer.r#type(), pointer.r#type(), i64];
    if !shape.is_empty() {
        let array = llvm::r#type::array(i64, shape.len() as u32);
        fields.extend([array, array]);
    }
    let descriptor_type = llvm::r#type::r#struct(context, &fields, false);
    let mut descriptor = runtime.value(llvm::poison(descriptor_type, op.location()));
    let offset = runtime.constant(0);
    let mut insert = |position: &[i64], value: Value<'c, 'a>| {
        let position = DenseI64ArrayAttribute::new(context, position);
        let insert = llvm::insert_value(context, descriptor, position, value, op.location());
        descriptor = runtime.value(insert);
    };
    insert(&[0], pointer);
    insert(&[1], pointer);
    insert(&[2], offset);
    for (axis, (&extent, &stride)) in shape.iter().zip(&strides).enumerate() {
        insert(&[3, axis as i64], runtime.constant(extent));
        insert(&[4, axis as i64], runtime.constant(stride));
    }
    Ok(Some(runtime.cast(descriptor, r#type.into())))
}

/// The aligned pointer of `buffer` as an `!llvm.ptr`.
fn aligned_pointer<'c, 'a>(runtime: &Runtime<'c, 'a>, buffer: Value<'c, 'a>) -> Value<'c, 'a> {
    let context = runtime.context();
    let op = runtime.op();
    let extract = OperationBuilder::new(Op::MemrefExtractAlignedPointer.name(), op.location())
        .add_operands(&[buffer])
        .add_results(&[Type::index(context)])
        .build()
        .expect("a memref's aligned pointer is an index");
    let address = runtime.value(extract);
    let address = runtime.index_to_i64(address);
    let pointer = OperationBuilder::new(Op::LlvmIntToPtr.name(), op.location())
        .add_operands(&[address])
        .add_results(&[llvm::r#type::pointer(context, 0)])
        .build()
        .expect("an i64 converts to a pointer");
    runtime.value(pointer)
}

/// MLIR's marker of a dynamic size or offset in static lists (`ShapedType::kDynamic`).
const DYNAMIC: i64 = i64::MIN;

/// `host.select %source[axis][%index]` as a rank-reducing `memref.subview`
/// of extent 1 at `%index` along `axis`.
fn select<'c, 'a>(runtime: &Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>> {
    let context = runtime.context();
    let op = runtime.op();
    let source = op.operand(0).expect("a source");
    let index = op.operand(1).expect("an index");
    let axis = op
        .attribute("axis")
        .ok()
        .and_then(|axis| IntegerAttribute::try_from(axis).ok())
        .expect("a verified select has an axis")
        .value() as usize;
    let r#type = memref_type(source);
    let rank = r#type.rank();
    let mut dynamic_sizes = Vec::new();
    let mut sizes = Vec::with_capacity(rank);
    for dim in 0..rank {
        match r#type.dim_size(dim).expect("dim in range") {
            _ if dim == axis => sizes.push(1),
            DimSize::Static(extent) => sizes.push(extent as i64),
            DimSize::Dynamic => {
                // Read the extent off the source.
                let dim = runtime.value(arith::constant(
                    context,
                    IntegerAttribute::new(Type::index(context), dim as i64).into(),
                    op.location(),
                ));
                dynamic_sizes.push(runtime.value(memref::dim(source, dim, op.location())));
                sizes.push(DYNAMIC);
            }
        }
    }
    let mut offsets = vec![0; rank];
    offsets[axis] = DYNAMIC;
    let segments = [1, 1, dynamic_sizes.len() as i32, 0];
    let subview = OperationBuilder::new(Op::MemrefSubview.name(), op.location())
        .add_operands(&[source, index])
        .add_operands(&dynamic_sizes)
        .add_results(&[op.result(0).expect("one result").r#type()])
        .add_attributes(&[
            (
                Identifier::new(context, "operandSegmentSizes"),
                DenseI32ArrayAttribute::new(context, &segments).into(),
            ),
            (
                Identifier::new(context, "static_offsets"),
                DenseI64ArrayAttribute::new(context, &offsets).into(),
            ),
            (
                Identifier::new(context, "static_sizes"),
                DenseI64ArrayAttribute::new(context, &sizes).into(),
            ),
            (
                Identifier::new(context, "static_strides"),
                DenseI64ArrayAttribute::new(context, &vec![1; rank]).into(),
            ),
        ])
        .build()
        .expect("a select's view is a valid subview");
    Ok(Some(runtime.value(subview)))
}
