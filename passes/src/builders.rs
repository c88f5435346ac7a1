//! Building the host and comm ops the lowering passes emit, and the buffer
//! types they work on.

use crate::{ir, ops::Op};
use hir_dialects::host;
use melior::{
    Context,
    dialect::scf,
    ir::{
        Attribute, Block, BlockLike, BlockRef, Identifier, Location, Operation, OperationRef,
        Region, RegionLike, Type, TypeLike, Value, ValueLike,
        attribute::{
            DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute,
            StridedLayoutAttribute,
        },
        operation::{OperationBuilder, OperationLike, OperationResult},
        r#type::{DimSize, IntegerType, MemRefType, ShapedTypeLike},
    },
};

/// Where a [`Builder`] inserts: in front of an op, or at the end of a block.
#[derive(Clone, Copy)]
enum At<'c, 'a> {
    Before(OperationRef<'c, 'a>),
    End(BlockRef<'c, 'a>),
}

/// The one way the passes insert ops: in front of an op of a block, or at
/// the end of a block being built (a region's body before it has a
/// terminator). Its typed builders make the host and comm ops the passes
/// emit, each at the location it is given; `location` is a default the
/// caller may read (the anchor's, or the one [`Builder::located`] sets).
#[derive(Clone, Copy)]
pub struct Builder<'c, 'a> {
    pub context: &'c Context,
    pub location: Location<'c>,
    at: At<'c, 'a>,
}

impl<'c, 'a> Builder<'c, 'a> {
    /// Inserts in front of `next`, located at `next` by default.
    pub fn before(context: &'c Context, next: OperationRef<'c, 'a>) -> Self {
        Self {
            context,
            location: next.location(),
            at: At::Before(next),
        }
    }

    /// Inserts right after `op`, located at `op` by default.
    pub fn after(context: &'c Context, op: OperationRef<'c, 'a>) -> Self {
        let at = match op.next_in_block() {
            Some(next) => At::Before(next),
            None => At::End(op.block().expect("ops are inserted in a block")),
        };
        Self {
            context,
            location: op.location(),
            at,
        }
    }

    /// Appends to `block`, located at `location` by default.
    pub fn at_end(context: &'c Context, block: &'a Block<'c>, location: Location<'c>) -> Self {
        // SAFETY: the reference lives no longer than the borrow of `block`.
        let block = unsafe { BlockRef::from_raw(block.to_raw()) };
        Self {
            context,
            location,
            at: At::End(block),
        }
    }

    /// Appends to the block `block` refers to, located at `location` by default.
    pub fn at_end_of(
        context: &'c Context,
        block: BlockRef<'c, 'a>,
        location: Location<'c>,
    ) -> Self {
        Self {
            context,
            location,
            at: At::End(block),
        }
    }

    /// The same place, with `location` as the default location.
    pub fn located(self, location: Location<'c>) -> Self {
        Self { location, ..self }
    }

    /// Inserts `op` and returns it.
    pub fn insert(&self, op: impl Into<Operation<'c>>) -> OperationRef<'c, 'a> {
        match self.at {
            At::Before(next) => next
                .block()
                .expect("ops are inserted in a block")
                .insert_operation_before(next, op.into()),
            At::End(block) => block.append_operation(op.into()),
        }
    }

    /// Inserts `op` and returns its single result.
    pub fn value(&self, op: impl Into<Operation<'c>>) -> Value<'c, 'a> {
        result(self.insert(op))
    }

    /// Builds and inserts the op `name`.
    pub fn op(
        &self,
        name: &str,
        location: Location<'c>,
        operands: &[Value<'c, '_>],
        attributes: &[(&str, Attribute<'c>)],
        results: &[Type<'c>],
    ) -> OperationRef<'c, 'a> {
        let attributes: Vec<_> = attributes
            .iter()
            .map(|&(name, value)| (Identifier::new(self.context, name), value))
            .collect();
        let op = OperationBuilder::new(name, location)
            .add_operands(operands)
            .add_attributes(&attributes)
            .add_results(results)
            .build()
            .unwrap_or_else(|error| panic!("building '{name}': {error}"));
        self.insert(op)
    }

    /// `arith.constant <value> : index`.
    pub fn index(&self, value: i64, location: Location<'c>) -> Value<'c, 'a> {
        let index = Type::index(self.context);
        result(self.op(
            Op::ArithConstant.name(),
            location,
            &[],
            &[("value", IntegerAttribute::new(index, value).into())],
            &[index],
        ))
    }

    /// `host.select %source[axis][%index]`: the view of `source` at `index` of `axis`.
    pub fn select(
        &self,
        source: Value<'c, '_>,
        axis: usize,
        index: Value<'c, '_>,
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        let r#type = view_type(source.r#type(), axis as i64).expect("buffers have strided layouts");
        self.select_as(source, axis as i64, index, r#type, location)
    }

    /// `host.select %source[axis][%index]` of type `view`.
    pub fn select_as(
        &self,
        source: Value<'c, '_>,
        axis: i64,
        index: Value<'c, '_>,
        view: Type<'c>,
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        result(self.op(
            Op::HostSelect.name(),
            location,
            &[source, index],
            &[("axis", i64_attribute(self.context, axis))],
            &[view],
        ))
    }

    /// `memref.subview` of `view`: part `index` of `count` equal parts along
    /// `axis`, which keeps its place (extent divided by `count`).
    pub fn part(
        &self,
        view: Value<'c, '_>,
        axis: usize,
        index: Value<'c, '_>,
        count: i64,
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        let size = static_shape(view.r#type()).expect("views have static shapes")[axis] / count;
        let offset = self.part_offset(index, size, location);
        self.window(view, axis, offset, size, location)
    }

    /// `memref.expand_shape` of the contiguous `view`: its axis `axis`, of
    /// extent E, as two axes `[parts, E / parts]` (the pre-split layout of
    /// `parts` contiguous parts).
    pub fn presplit(
        &self,
        view: Value<'c, '_>,
        axis: usize,
        parts: i64,
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        let context = self.context;
        let r#type = MemRefType::try_from(view.r#type()).expect("a view is a memref");
        let shape = buffer_shape(view.r#type());
        let mut expanded = shape.clone();
        expanded[axis] = shape[axis] / parts;
        expanded.insert(axis, parts);
        // Axes before `axis` map to themselves, `axis` to two, later ones shift.
        let groups: Vec<String> = (0..shape.len())
            .map(|source| match source.cmp(&axis) {
                std::cmp::Ordering::Less => format!("[{source}]"),
                std::cmp::Ordering::Equal => format!("[{source}, {}]", source + 1),
                std::cmp::Ordering::Greater => format!("[{}]", source + 1),
            })
            .collect();
        let reassociation = Attribute::parse(context, &format!("[{}]", groups.join(", ")))
            .expect("a list of index lists parses");
        let result_type = MemRefType::new(r#type.element(), &expanded, None, r#type.memory_space());
        result(self.op(
            Op::MemrefExpandShape.name(),
            location,
            &[view],
            &[
                ("reassociation", reassociation),
                (
                    "static_output_shape",
                    DenseI64ArrayAttribute::new(context, &expanded).into(),
                ),
            ],
            &[result_type.into()],
        ))
    }

    /// Where part `index` of parts of `size` indices starts: `index * size`.
    pub fn part_offset(
        &self,
        index: Value<'c, '_>,
        size: i64,
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        let size = self.index(size, location);
        result(self.op(
            Op::ArithMuli.name(),
            location,
            &[index, size],
            &[],
            &[Type::index(self.context)],
        ))
    }

    /// `memref.subview` of `view`: indices `[offset, offset + size)` along
    /// `axis`, which keeps its place; whole along the others.
    pub fn window(
        &self,
        view: Value<'c, '_>,
        axis: usize,
        offset: Value<'c, '_>,
        size: i64,
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        let mut sizes = static_shape(view.r#type()).expect("views have static shapes");
        sizes[axis] = size;
        let mut offsets = vec![0; sizes.len()];
        offsets[axis] = MemRefType::dynamic_stride_or_offset();
        let steps = vec![1; sizes.len()];
        self.subview(view, &[offset], &offsets, &sizes, &steps, location)
    }

    /// `memref.subview` of `view` at static `offsets`, `sizes` and `steps`
    /// along every axis (a `fusion.slice`'s box).
    pub fn strided_box(
        &self,
        view: Value<'c, '_>,
        offsets: &[i64],
        sizes: &[i64],
        steps: &[i64],
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        self.subview(view, &[], offsets, sizes, steps, location)
    }

    /// `memref.subview` of `view`: `offsets` (dynamic ones taken from
    /// `dynamic`, in order), `sizes` and `steps` per axis; its layout has
    /// `view`'s strides times the steps, and its offset is static where
    /// `view`'s and every offset are (as the op's verifier infers it).
    fn subview(
        &self,
        view: Value<'c, '_>,
        dynamic: &[Value<'c, '_>],
        offsets: &[i64],
        sizes: &[i64],
        steps: &[i64],
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        let context = self.context;
        let r#type = MemRefType::try_from(view.r#type()).expect("a view is a memref");
        let (base, offset) =
            strides_and_offset(view.r#type()).expect("buffers have strided layouts");
        let strides: Vec<i64> = base
            .iter()
            .zip(steps)
            .map(|(stride, step)| stride * step)
            .collect();
        let dynamic_offset = MemRefType::dynamic_stride_or_offset();
        let offset = if dynamic.is_empty() && offset != dynamic_offset {
            offset
                + offsets
                    .iter()
                    .zip(&base)
                    .map(|(at, stride)| at * stride)
                    .sum::<i64>()
        } else {
            dynamic_offset
        };
        let layout = StridedLayoutAttribute::new(context, offset, &strides);
        let part = MemRefType::new(
            r#type.element(),
            sizes,
            Some(layout.into()),
            r#type.memory_space(),
        );
        let array = |values: &[i64]| -> Attribute<'c> {
            DenseI64ArrayAttribute::new(context, values).into()
        };
        let operands: Vec<Value> = std::iter::once(view)
            .chain(dynamic.iter().copied())
            .collect();
        result(self.op(
            Op::MemrefSubview.name(),
            location,
            &operands,
            &[
                ("static_offsets", array(offsets)),
                ("static_sizes", array(sizes)),
                ("static_strides", array(steps)),
                (
                    "operandSegmentSizes",
                    DenseI32ArrayAttribute::new(context, &[1, dynamic.len() as i32, 0, 0]).into(),
                ),
            ],
            &[part.into()],
        ))
    }

    /// `host.alloc : type`.
    pub fn alloc(&self, r#type: Type<'c>, location: Location<'c>) -> Value<'c, 'a> {
        result(self.op(Op::HostAlloc.name(), location, &[], &[], &[r#type]))
    }

    /// `host.rank : index`.
    pub fn rank(&self, location: Location<'c>) -> Value<'c, 'a> {
        let index = Type::index(self.context);
        result(self.op(Op::HostRank.name(), location, &[], &[], &[index]))
    }

    /// `host.copy ins(%input) outs(%output)`.
    pub fn copy(
        &self,
        input: Value<'c, '_>,
        output: Value<'c, '_>,
        location: Location<'c>,
    ) -> OperationRef<'c, 'a> {
        self.op(Op::HostCopy.name(), location, &[input, output], &[], &[])
    }

    /// `host.get_current_stream`.
    pub fn current_stream(&self, location: Location<'c>) -> Value<'c, 'a> {
        result(self.op(
            Op::HostGetCurrentStream.name(),
            location,
            &[],
            &[],
            &[stream_type(self.context)],
        ))
    }

    /// `host.set_current_stream %stream`.
    pub fn set_current_stream(&self, stream: Value<'c, '_>, location: Location<'c>) {
        self.op(
            Op::HostSetCurrentStream.name(),
            location,
            &[stream],
            &[],
            &[],
        );
    }

    /// `host.sync_stream %stream`: the current stream waits for its work so far.
    pub fn sync_stream(&self, stream: Value<'c, '_>, location: Location<'c>) {
        self.op(Op::HostSyncStream.name(), location, &[stream], &[], &[]);
    }

    /// `comm.wait %request` on the current stream.
    pub fn wait(&self, request: Value<'c, '_>, location: Location<'c>) -> OperationRef<'c, 'a> {
        self.op(Op::CommWait.name(), location, &[request], &[], &[])
    }

    /// `comm.share_mem_handles %buffers team <team>`.
    pub fn share_mem_handles(
        &self,
        buffers: &[Value<'c, '_>],
        team: Attribute<'c>,
        location: Location<'c>,
    ) -> OperationRef<'c, 'a> {
        self.op(
            Op::CommShareMemHandles.name(),
            location,
            buffers,
            &[("team", team)],
            &[],
        )
    }

    /// An empty `host.stream_for` of `iterations` iterations from 0 by 1,
    /// forked from and joined into `caller`: the op, the terminator of its
    /// body (where its ops go) and its index.
    pub fn stream_for(
        &self,
        iterations: i64,
        caller: Value<'c, 'a>,
        location: Location<'c>,
    ) -> (OperationRef<'c, 'a>, OperationRef<'c, 'a>, Value<'c, 'a>) {
        let context = self.context;
        let lower = self.index(0, location);
        let upper = self.index(iterations, location);
        let step = self.index(1, location);
        let body = Block::new(&[
            (Type::index(context), location),
            (stream_type(context), location),
        ]);
        body.append_operation(
            host::YieldOperation::builder(context, location)
                .build()
                .into(),
        );
        let region = Region::new();
        region.append_block(body);
        let stream_for = self.insert(
            host::StreamForOperation::builder(context, location)
                .lower(lower)
                .upper(upper)
                .step(step)
                .caller(caller)
                .body(region)
                .build(),
        );
        let body = stream_for
            .region(0)
            .expect("host.stream_for has a body")
            .first_block()
            .expect("with a block");
        let terminator = body.terminator().expect("ends with host.yield");
        let index: Value = body.argument(0).expect("the iteration's index").into();
        (stream_for, terminator, index)
    }

    /// An empty `scf.for %i = lower to upper step step`.
    pub fn new_loop(
        &self,
        lower: Value<'c, 'a>,
        upper: Value<'c, 'a>,
        step: Value<'c, 'a>,
        location: Location<'c>,
    ) -> Loop<'c, 'a> {
        let block = Block::new(&[(Type::index(self.context), location)]);
        block.append_operation(scf::r#yield(&[], location));
        let region = Region::new();
        region.append_block(block);
        let op = self.insert(scf::r#for(lower, upper, step, region, location));
        let body = op
            .region(0)
            .expect("a loop has a body")
            .first_block()
            .expect("with a block");
        let terminator = body.terminator().expect("ends with a yield");
        Loop {
            index: body.argument(0).expect("the induction variable").into(),
            body: Builder::before(self.context, terminator),
        }
    }

    /// `host.stream_from_pool` for iteration `index`, rotated over `modulus` streams.
    pub fn pool_stream(
        &self,
        index: Value<'c, 'a>,
        modulus: Option<Value<'c, 'a>>,
        location: Location<'c>,
    ) -> Value<'c, 'a> {
        let index = match modulus {
            Some(modulus) => result(self.op(
                Op::ArithRemui.name(),
                location,
                &[index, modulus],
                &[],
                &[Type::index(self.context)],
            )),
            None => index,
        };
        result(self.op(
            Op::HostStreamFromPool.name(),
            location,
            &[index],
            &[],
            &[stream_type(self.context)],
        ))
    }
}

/// The single result of an op.
pub fn result<'c, 'a>(op: OperationRef<'c, 'a>) -> Value<'c, 'a> {
    op.result(0).expect("the op has a result").into()
}

/// An `i64` integer attribute.
pub fn i64_attribute(context: &Context, value: i64) -> Attribute<'_> {
    IntegerAttribute::new(IntegerType::new(context, 64).into(), value).into()
}

/// An `i32` integer attribute (the storage of the comm dialect's enums).
pub fn i32_attribute(context: &Context, value: i64) -> Attribute<'_> {
    IntegerAttribute::new(IntegerType::new(context, 32).into(), value).into()
}

/// A team attribute.
pub fn team<'c>(context: &'c Context, ranks: &[i64]) -> Attribute<'c> {
    DenseI64ArrayAttribute::new(context, ranks).into()
}

/// `!comm.request`.
pub fn request_type(context: &Context) -> Type<'_> {
    // SAFETY: the context is live; the getter only uniques the type.
    unsafe { Type::from_raw(hir_dialects::ffi::hirCommRequestTypeGet(context.to_raw())) }
}

/// `!host.stream`.
pub fn stream_type(context: &Context) -> Type<'_> {
    // SAFETY: as above.
    unsafe { Type::from_raw(hir_dialects::ffi::hirHostStreamTypeGet(context.to_raw())) }
}

/// A buffer of `shape` and `element` with the identity layout.
pub fn buffer_type<'c>(shape: &[i64], element: Type<'c>) -> Type<'c> {
    MemRefType::new(element, shape, None, None).into()
}

/// The axis and size of the chunk the `memref.subview` `op` takes at the
/// loop index `index` (what [`Builder::window`] at [`Builder::part_offset`]
/// builds): indices `[index * size, (index + 1) * size)` of one
/// axis, all of the others.
pub fn chunk_at(op: &OperationRef, index: Value) -> Option<(usize, i64)> {
    let source = static_shape(ir::operand(op, 0)?.r#type())?;
    let shape = static_shape(ir::result(op, 0)?.r#type())?;
    let offset = OperationResult::try_from(ir::operand(op, 1)?).ok()?.owner();
    if op.operand_count() != 2
        || !Op::ArithMuli.is(&offset)
        || ir::operand(&offset, 0) != Some(index)
    {
        return None;
    }
    let size = ir::constant(ir::operand(&offset, 1)?)?;
    let differs: Vec<usize> = (0..source.len().min(shape.len()))
        .filter(|&axis| source[axis] != shape[axis])
        .collect();
    let offsets = DenseI64ArrayAttribute::try_from(op.attribute("static_offsets").ok()?).ok()?;
    let offset_at = |position: usize| offsets.element(position).ok();
    match differs[..] {
        [axis]
            if source.len() == shape.len()
                && shape[axis] == size
                && (0..shape.len()).all(|position| {
                    offset_at(position)
                        == Some(if position == axis {
                            MemRefType::dynamic_stride_or_offset()
                        } else {
                            0
                        })
                }) =>
        {
            Some((axis, size))
        }
        _ => None,
    }
}

/// Whether a memref type is laid out row-major from offset 0, as a
/// `host.alloc` or a function argument is.
pub fn is_contiguous(r#type: Type) -> bool {
    let (Some(shape), Some((strides, offset))) = (static_shape(r#type), strides_and_offset(r#type))
    else {
        return false;
    };
    let row_major = (0..shape.len()).map(|axis| shape[axis + 1..].iter().product::<i64>());
    offset == 0 && strides.into_iter().eq(row_major)
}

/// The static shape of a memref type.
pub fn buffer_shape(r#type: Type) -> Vec<i64> {
    static_shape(r#type).expect("host buffers are memrefs of static shapes")
}

/// The strides of a memref type with a strided layout.
pub fn strides(r#type: Type) -> Option<Vec<i64>> {
    strides_and_offset(r#type).map(|(strides, _)| strides)
}

/// The strides and the offset of a memref type with a strided layout.
pub fn strides_and_offset(r#type: Type) -> Option<(Vec<i64>, i64)> {
    let r#type = MemRefType::try_from(r#type).ok()?;
    let mut strides = vec![0; r#type.rank()];
    let mut offset = 0;
    // SAFETY: `strides` has one element per axis.
    let strided = unsafe {
        mlir_sys::mlirMemRefTypeGetStridesAndOffset(
            r#type.to_raw(),
            strides.as_mut_ptr(),
            &mut offset,
        )
    };
    (strided.value != 0).then_some((strides, offset))
}

/// The shape of a memref type whose extents are all static.
pub fn static_shape(r#type: Type) -> Option<Vec<i64>> {
    let r#type = MemRefType::try_from(r#type).ok()?;
    (0..r#type.rank())
        .map(|axis| match r#type.dim_size(axis).ok()? {
            DimSize::Static(extent) => Some(extent as i64),
            DimSize::Dynamic => None,
        })
        .collect()
}

/// The type `host.select` infers for a view of `source` at one index of
/// `axis` (the op's `InferTypeOpInterface`, through the C API); `None` for
/// an axis out of range or a source with no strided layout.
pub fn view_type(source: Type<'_>, axis: i64) -> Option<Type<'_>> {
    // SAFETY: `source` is live; the call only uniques a type in its context.
    let view = unsafe { hir_dialects::ffi::hirHostSelectViewType(source.to_raw(), axis) };
    // SAFETY: a null result is checked before it becomes a type.
    (!view.ptr.is_null()).then(|| unsafe { Type::from_raw(view) })
}

/// An `scf.for` being built: its index, and a builder in its body (before
/// its terminator).
pub struct Loop<'c, 'a> {
    pub index: Value<'c, 'a>,
    pub body: Builder<'c, 'a>,
}
