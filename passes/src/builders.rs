//! Building the host and comm ops the lowering passes emit, and the buffer
//! types they work on.

use crate::ir;
use melior::{
    Context,
    dialect::scf,
    ir::{
        Attribute, Block, BlockLike, Identifier, Location, Operation, OperationRef, Region,
        RegionLike, Type, TypeLike, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, IntegerAttribute},
        operation::{OperationBuilder, OperationLike, OperationMutLike},
        r#type::{DimSize, IntegerType, MemRefType, ShapedTypeLike},
    },
};

/// The discardable attribute naming the stream axis of the buffer an op
/// writes (see the host dialect's `kStreamAxisAttrName`).
pub const STREAM_AXIS: &str = "host.stream_axis";

/// Builds ops in front of an op (blocks end with terminators, so "before
/// an op" covers every insertion the passes make).
pub struct Builder<'c, 'a> {
    pub context: &'c Context,
    next: OperationRef<'c, 'a>,
}

impl<'c, 'a> Builder<'c, 'a> {
    pub fn before(context: &'c Context, next: OperationRef<'c, 'a>) -> Self {
        Self { context, next }
    }

    /// Inserts `op` and returns it.
    pub fn insert(&self, op: Operation<'c>) -> OperationRef<'c, 'a> {
        self.next
            .block()
            .expect("ops are inserted in a block")
            .insert_operation_before(self.next, op)
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
            "arith.constant",
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
        let r#type = select_type(self.context, source.r#type(), axis);
        result(self.op(
            "host.select",
            location,
            &[source, index],
            &[("axis", i64_attribute(self.context, axis as i64))],
            &[r#type],
        ))
    }

    /// `host.alloc : type`.
    pub fn alloc(&self, r#type: Type<'c>, location: Location<'c>) -> Value<'c, 'a> {
        result(self.op("host.alloc", location, &[], &[], &[r#type]))
    }

    /// `comm.wait %request`.
    pub fn wait(&self, request: Value<'c, '_>, location: Location<'c>) -> OperationRef<'c, 'a> {
        self.op("comm.wait", location, &[request], &[], &[])
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

/// Marks `op` as writing a buffer whose `axis` is stream-parallel.
pub fn set_stream_axis(context: &Context, op: OperationRef, axis: usize) {
    ir::mutable(op).set_discardable_attribute(STREAM_AXIS, i64_attribute(context, axis as i64));
}

/// The stream axis set on `op`, if any.
pub fn stream_axis(op: &OperationRef) -> Option<usize> {
    let attribute = op.discardable_attribute(STREAM_AXIS).ok()?;
    IntegerAttribute::try_from(attribute)
        .ok()
        .map(|axis| axis.value() as usize)
}

/// A buffer of `shape` and `element` with the identity layout.
pub fn buffer_type<'c>(shape: &[i64], element: Type<'c>) -> Type<'c> {
    MemRefType::new(element, shape, None, None).into()
}

/// The static shape of a memref type.
pub fn buffer_shape(r#type: Type) -> Vec<i64> {
    let memref = MemRefType::try_from(r#type).expect("a buffer");
    (0..memref.rank())
        .map(|axis| match memref.dim_size(axis).expect("in range") {
            DimSize::Static(extent) => extent as i64,
            DimSize::Dynamic => panic!("host buffers have static shapes"),
        })
        .collect()
}

/// The type of `host.select` of a `source` buffer along `axis`: the axis
/// dropped, the source's strides kept, a dynamic offset.
pub fn select_type<'c>(context: &'c Context, source: Type<'c>, axis: usize) -> Type<'c> {
    let memref = MemRefType::try_from(source).expect("a buffer");
    let mut shape = buffer_shape(source);
    let mut strides = vec![0; shape.len()];
    let mut offset = 0;
    // SAFETY: `strides` has one slot per axis of `source`.
    let strided = unsafe {
        mlir_sys::mlirMemRefTypeGetStridesAndOffset(
            source.to_raw(),
            strides.as_mut_ptr(),
            &mut offset,
        )
    };
    assert!(strided.value != 0, "buffers have strided layouts");
    shape.remove(axis);
    strides.remove(axis);
    // SAFETY: the context is live and the arrays outlive the calls.
    unsafe {
        let layout = mlir_sys::mlirStridedLayoutAttrGet(
            context.to_raw(),
            mlir_sys::mlirShapedTypeGetDynamicStrideOrOffset(),
            strides.len() as isize,
            strides.as_ptr(),
        );
        Type::from_raw(mlir_sys::mlirMemRefTypeGet(
            memref.element().to_raw(),
            shape.len() as isize,
            shape.as_ptr(),
            layout,
            mlir_sys::mlirMemRefTypeGetMemorySpace(source.to_raw()),
        ))
    }
}

/// An `scf.for` being built: its index, a builder in its body, and the
/// body's terminator.
pub struct Loop<'c, 'a> {
    pub index: Value<'c, 'a>,
    pub body: Builder<'c, 'a>,
    pub terminator: OperationRef<'c, 'a>,
}

/// An empty `scf.for %i = lower to upper step step`.
pub fn new_loop<'c, 'a>(
    context: &'c Context,
    builder: &Builder<'c, 'a>,
    lower: Value<'c, 'a>,
    upper: Value<'c, 'a>,
    step: Value<'c, 'a>,
    location: Location<'c>,
) -> Loop<'c, 'a> {
    let block = Block::new(&[(Type::index(context), location)]);
    block.append_operation(scf::r#yield(&[], location));
    let region = Region::new();
    region.append_block(block);
    let op = builder.insert(scf::r#for(lower, upper, step, region, location));
    let body = op
        .region(0)
        .expect("a loop has a body")
        .first_block()
        .expect("with a block");
    let terminator = body.terminator().expect("ends with a yield");
    Loop {
        index: body.argument(0).expect("the induction variable").into(),
        body: Builder::before(context, terminator),
        terminator,
    }
}

/// `host.stream_from_pool` for iteration `index`, rotated over `modulus` streams.
pub fn pool_stream<'c, 'a>(
    context: &'c Context,
    builder: &Builder<'c, 'a>,
    index: Value<'c, 'a>,
    modulus: Option<Value<'c, 'a>>,
    location: Location<'c>,
) -> Value<'c, 'a> {
    let index = match modulus {
        Some(modulus) => result(builder.op(
            "arith.remui",
            location,
            &[index, modulus],
            &[],
            &[Type::index(context)],
        )),
        None => index,
    };
    result(builder.op(
        "host.stream_from_pool",
        location,
        &[index],
        &[],
        &[stream_type(context)],
    ))
}
