//! `convert-host-to-llvm`: every `host` op becomes calls of the runtime's C
//! ABI ([`hir_abi::Entry`]) and upstream memref ops, which the
//! upstream conversions of [`super::LLVM_PIPELINE`] take to the LLVM dialect.
//!
//! - Compute ops call their dtype-suffixed entry with every buffer cast to
//!   an unranked memref (`host.matmul {accumulate}` calls
//!   `hir_rt_matmul_acc_<T>`); reduction and broadcast axes are
//!   `memref<*xi64>` constants (`memref.global`).
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
//! Every `host` op is lowered or the pass fails at it: none is left.
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

use super::runtime_calls::{
    EMIT_C_INTERFACE, Failure, Handles, Result, Runtime, dtype, i64_type, is_stream,
};
use crate::HirPass;
use crate::ir;
use crate::ops::Op;
use hir_abi::{Binary, Entry, Reduction, Unary};
use hir_dialects::OpKind;
use melior::{
    Context, IrRewriter,
    dialect::{arith, llvm, memref},
    ir::{
        Attribute, Identifier, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{
            DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute, StringAttribute,
        },
        operation::{OperationBuilder, OperationLike, OperationMutLike},
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
        let context = module.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        if let Err(failure) = convert(context, module) {
            failure.emit();
            return false;
        }
        true
    }
}

fn convert<'c, 'a>(context: &'c Context, module: OperationRef<'c, 'a>) -> Result<'c, ()> {
    let mut ops = Vec::new();
    let mut meshes = Vec::new();
    let mut fusion = None;
    let mut functions = Vec::new();
    for op in ir::nested(module) {
        let name = ir::name(&op);
        if Op::FusionMesh.is(&op) {
            meshes.push(op);
        } else if name.starts_with("fusion.") {
            fusion.get_or_insert(op);
        } else if name.starts_with("host.") && !in_fused_body(op) {
            ops.push(op);
        } else if Op::FuncFunc.is(&op) {
            functions.push(op);
        }
    }
    if let Some(op) = fusion {
        return Err(Failure::new(
            op.location(),
            format!(
                "'{}' op is not lowered to host ops; run convert-fusion-to-host before {ARGUMENT}",
                ir::name(&op)
            ),
        ));
    }
    let mut streams = Handles::new("host", "'!host.stream'", is_stream);
    streams.check(module, ARGUMENT)?;

    let Some(mut runtime) = Runtime::new(context, module) else {
        return Ok(());
    };
    // Streams are made before they are used: lower their makers first.
    let (makers, others): (Vec<_>, Vec<_>) =
        ops.into_iter().partition(|op| streams.makes_handle(op));
    let rewriter = IrRewriter::new(context);
    let rewriter = rewriter.as_rewriter_base();
    let mut site = 0;
    for &op in &makers {
        let stream = lower(&mut runtime, &streams, op, &mut site)?.expect("a stream maker");
        streams.record(op.result(0).expect("one result").into(), stream);
    }
    for op in others {
        match lower(&mut runtime, &streams, op, &mut site)? {
            Some(value) => rewriter.replace_op_with_values(op, &[value]),
            None => rewriter.erase_op(op),
        }
    }
    for op in makers.into_iter().chain(meshes) {
        rewriter.erase_op(op);
    }
    for function in functions {
        mark_entry(context, function);
    }
    Ok(())
}

/// Marks a public function with a body as an entry point.
fn mark_entry<'c>(context: &'c Context, function: OperationRef<'c, '_>) {
    let public = function
        .attribute("sym_visibility")
        .ok()
        .and_then(|attribute| StringAttribute::try_from(attribute).ok())
        .is_none_or(|visibility| visibility.value() == "public");
    let has_body = function
        .region(0)
        .is_ok_and(|region| region.first_block().is_some());
    if public && has_body {
        // SAFETY: the pass holds the module exclusively.
        let mut function =
            unsafe { melior::ir::operation::OperationRefMut::from_raw(function.to_raw()) };
        function.set_discardable_attribute(EMIT_C_INTERFACE, Attribute::unit(context));
    }
}

/// Lowers one host op (inserting before it) and returns the value that
/// replaces its result, if it has one.
fn lower<'c, 'a>(
    runtime: &mut Runtime<'c, 'a>,
    streams: &Handles<'c, 'a>,
    op: OperationRef<'c, 'a>,
    site: &mut i64,
) -> Result<'c, Option<Value<'c, 'a>>> {
    let name = ir::name(&op);
    let operand = |index: usize| op.operand(index).expect("verified operand count");
    let buffers = |runtime: &Runtime<'c, 'a>| -> Vec<Value<'c, 'a>> {
        op.operands()
            .map(|operand| runtime.buffer(op, operand))
            .collect()
    };
    let mnemonic = name.strip_prefix("host.").unwrap_or_default();
    let no_lowering = || {
        Failure::new(
            op.location(),
            format!("'{name}' op has no lowering to the runtime"),
        )
    };
    // Compute ops are lowered by their kind (their ODS traits); which runtime
    // entry of that kind an op calls is the C ABI's, keyed by the op.
    let kind = OpKind::of(&op);
    let entry = match (kind, Op::of(&op)) {
        (_, Some(Op::HostAlloc)) => return alloc(runtime, op, site).map(Some),
        (_, Some(Op::HostDealloc)) => {
            let pointer = aligned_pointer(runtime, op, operand(0));
            runtime.call(op, Entry::Dealloc, &[pointer])?;
            return Ok(None);
        }
        (_, Some(Op::HostSelect)) => return Ok(Some(select(runtime, op))),
        (_, Some(Op::HostFused)) => {
            fused(runtime, op)?;
            return Ok(None);
        }
        (_, Some(Op::HostGetCurrentStream)) => {
            return runtime.call(op, Entry::GetCurrentStream, &[]);
        }
        (_, Some(Op::HostStreamFromPool)) => {
            let index = runtime.index_to_i64(op, operand(0));
            return runtime.call(op, Entry::StreamFromPool, &[index]);
        }
        (_, Some(which @ (Op::HostSetCurrentStream | Op::HostSyncStream))) => {
            let entry = match which {
                Op::HostSetCurrentStream => Entry::SetCurrentStream,
                _ => Entry::SyncStream,
            };
            runtime.call(op, entry, &[streams.get(operand(0))])?;
            return Ok(None);
        }
        (_, Some(which @ (Op::HostRank | Op::HostNumDevices))) => {
            let entry = match which {
                Op::HostRank => Entry::Rank,
                _ => Entry::NumDevices,
            };
            let value = runtime.call(op, entry, &[])?.expect("an i64 result");
            return Ok(Some(runtime.i64_to_index(op, value)));
        }
        (OpKind::Elementwise, Some(Op::HostCopy)) => Entry::Copy(dtype(&op, operand(0))?),
        (OpKind::Elementwise, Some(Op::HostCast)) => {
            Entry::Cast(dtype(&op, operand(0))?, dtype(&op, operand(1))?)
        }
        (OpKind::Elementwise, Some(Op::HostWhere)) => Entry::Where(dtype(&op, operand(0))?),
        (OpKind::Elementwise, _) => {
            let element = dtype(&op, operand(0))?;
            let unary = Unary::ALL.into_iter().find(|u| u.name() == mnemonic);
            let binary = Binary::ALL.into_iter().find(|b| b.name() == mnemonic);
            match (unary, binary) {
                (Some(unary), _) => Entry::Unary(unary, element),
                (_, Some(binary)) => Entry::Binary(binary, element),
                _ => return Err(no_lowering()),
            }
        }
        (OpKind::Reduction | OpKind::Broadcast, _) => {
            let element = dtype(&op, operand(0))?;
            let entry = if kind == OpKind::Broadcast {
                Entry::Broadcast(element)
            } else {
                match Reduction::ALL.into_iter().find(|r| r.name() == mnemonic) {
                    Some(reduction) => Entry::Reduction(reduction, element),
                    None => return Err(no_lowering()),
                }
            };
            let axes = op
                .attribute("axes")
                .ok()
                .and_then(|axes| DenseI64ArrayAttribute::try_from(axes).ok())
                .ok_or_else(|| Failure::new(op.location(), format!("'{name}' op has no axes")))?;
            let axes: Vec<i64> = (0..axes.len())
                .map(|index| axes.element(index).expect("index in range"))
                .collect();
            let mut arguments = buffers(runtime);
            arguments.push(runtime.list(op, "axes", &axes)?);
            runtime.call(op, entry, &arguments)?;
            return Ok(None);
        }
        (_, Some(Op::HostTranspose)) => {
            let entry = Entry::Transpose(dtype(&op, operand(0))?);
            let permutation =
                DenseI64ArrayAttribute::try_from(op.attribute("permutation").expect("verified"))
                    .expect("verified");
            let permutation: Vec<i64> = (0..permutation.len())
                .map(|index| permutation.element(index).expect("index in range"))
                .collect();
            let mut arguments = buffers(runtime);
            arguments.push(runtime.list(op, "permutation", &permutation)?);
            runtime.call(op, entry, &arguments)?;
            return Ok(None);
        }
        (_, Some(Op::HostReshape)) => Entry::Reshape(dtype(&op, operand(0))?),
        (_, Some(Op::HostFill)) => {
            let entry = Entry::Fill(dtype(&op, operand(0))?);
            let value = op.attribute("value").expect("verified");
            let value = runtime.value(op, arith::constant(runtime.context(), value, op.location()));
            let arguments = [runtime.buffer(op, operand(0)), value];
            runtime.call(op, entry, &arguments)?;
            return Ok(None);
        }
        (_, Some(Op::HostIota)) => {
            let entry = Entry::Iota(dtype(&op, operand(1))?);
            let axis = IntegerAttribute::try_from(op.attribute("axis").expect("verified"))
                .expect("verified")
                .value();
            let arguments = [
                runtime.buffer(op, operand(1)),
                runtime.constant(op, axis),
                runtime.index_to_i64(op, operand(0)),
            ];
            runtime.call(op, entry, &arguments)?;
            return Ok(None);
        }
        (OpKind::Contraction, Some(Op::HostMatmul)) if op.has_attribute("accumulate") => {
            Entry::MatmulAccumulate(dtype(&op, operand(0))?)
        }
        (OpKind::Contraction, Some(Op::HostMatmul)) => Entry::Matmul(dtype(&op, operand(0))?),
        (OpKind::Contraction, Some(Op::HostLinear)) if op.operand_count() == 4 => {
            Entry::LinearBias(dtype(&op, operand(0))?)
        }
        (OpKind::Contraction, Some(Op::HostLinear)) => Entry::Linear(dtype(&op, operand(0))?),
        _ => return Err(no_lowering()),
    };
    runtime.call(op, entry, &buffers(runtime))?;
    Ok(None)
}

/// Whether `op` is in the body of a `host.fused` op, which is lowered whole.
fn in_fused_body(op: OperationRef) -> bool {
    op.parent_operation()
        .is_some_and(|parent| Op::HostFused.is(&parent))
}

/// `hir_rt_fused_<n>(program, buffers...)`: the body serialized into its
/// program's words (a `memref<*xi64>` constant), the buffers as the
/// `memref<*xf32>` the entry declares (an unrealized cast of the unranked
/// descriptor, which is the same for every element type).
fn fused<'c, 'a>(runtime: &mut Runtime<'c, 'a>, op: OperationRef<'c, 'a>) -> Result<'c, ()> {
    let program = super::fused_program::program(op)?;
    let mut arguments = vec![runtime.list(op, "fused", &program.encode())?];
    let nominal = super::runtime_calls::unranked(Type::float32(runtime.context()));
    for buffer in op.operands() {
        let unranked = runtime.buffer(op, buffer);
        arguments.push(match unranked.r#type() == nominal {
            true => unranked,
            false => runtime.cast(op, unranked, nominal),
        });
    }
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
    runtime.call(op, Entry::Fused(count), &arguments)?;
    Ok(())
}

fn memref_type<'c>(value: Value<'c, '_>) -> MemRefType<'c> {
    MemRefType::try_from(value.r#type()).expect("host buffers are ranked memrefs")
}

/// `hir_rt_alloc(site, bytes)` and the descriptor of the buffer it returns.
fn alloc<'c, 'a>(
    runtime: &mut Runtime<'c, 'a>,
    op: OperationRef<'c, 'a>,
    site: &mut i64,
) -> Result<'c, Value<'c, 'a>> {
    let context = runtime.context();
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
    let arguments = [runtime.constant(op, *site), runtime.constant(op, bytes)];
    *site += 1;
    let pointer = runtime
        .call(op, Entry::Alloc, &arguments)?
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
    let mut descriptor = runtime.value(op, llvm::poison(descriptor_type, op.location()));
    let offset = runtime.constant(op, 0);
    let mut insert = |position: &[i64], value: Value<'c, 'a>| {
        let position = DenseI64ArrayAttribute::new(context, position);
        let insert = llvm::insert_value(context, descriptor, position, value, op.location());
        descriptor = runtime.value(op, insert);
    };
    insert(&[0], pointer);
    insert(&[1], pointer);
    insert(&[2], offset);
    for (axis, (&extent, &stride)) in shape.iter().zip(&strides).enumerate() {
        insert(&[3, axis as i64], runtime.constant(op, extent));
        insert(&[4, axis as i64], runtime.constant(op, stride));
    }
    Ok(runtime.cast(op, descriptor, r#type.into()))
}

/// The aligned pointer of `buffer` as an `!llvm.ptr`.
fn aligned_pointer<'c, 'a>(
    runtime: &Runtime<'c, 'a>,
    op: OperationRef<'c, 'a>,
    buffer: Value<'c, 'a>,
) -> Value<'c, 'a> {
    let context = runtime.context();
    let extract = OperationBuilder::new(Op::MemrefExtractAlignedPointer.name(), op.location())
        .add_operands(&[buffer])
        .add_results(&[Type::index(context)])
        .build()
        .expect("a memref's aligned pointer is an index");
    let address = runtime.value(op, extract);
    let address = runtime.index_to_i64(op, address);
    let pointer = OperationBuilder::new(Op::LlvmIntToPtr.name(), op.location())
        .add_operands(&[address])
        .add_results(&[llvm::r#type::pointer(context, 0)])
        .build()
        .expect("an i64 converts to a pointer");
    runtime.value(op, pointer)
}

/// MLIR's marker of a dynamic size or offset in static lists (`ShapedType::kDynamic`).
const DYNAMIC: i64 = i64::MIN;

/// `host.select %source[axis][%index]` as a rank-reducing `memref.subview`
/// of extent 1 at `%index` along `axis`.
fn select<'c, 'a>(runtime: &Runtime<'c, 'a>, op: OperationRef<'c, 'a>) -> Value<'c, 'a> {
    let context = runtime.context();
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
                let dim = runtime.value(
                    op,
                    arith::constant(
                        context,
                        IntegerAttribute::new(Type::index(context), dim as i64).into(),
                        op.location(),
                    ),
                );
                dynamic_sizes.push(runtime.value(op, memref::dim(source, dim, op.location())));
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
    runtime.value(op, subview)
}
