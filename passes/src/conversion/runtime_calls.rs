//! What `convert-host-to-llvm` and `convert-comm-to-llvm` share: the MLIR
//! signature of each runtime entry ([`Entry`], whose names these passes use
//! verbatim), its `func.func` declaration, the calls, and the operands the C
//! ABI wants: unranked buffers, `i64` scalars, `memref<*xi64>` constant
//! lists, and `i64` handles in place of `!host.stream` and `!comm.request`.
//!
//! ```mlir
//! func.func private @hir_rt_neg_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
//! memref.global "private" constant @__hir_team_0_1 : memref<2xi64> = dense<[0, 1]>
//! ```

use crate::diagnostics::emit_error;
use crate::ir;
use crate::ops::Op;
use hir_abi::{DType, Entry};
use melior::{
    Context,
    dialect::{arith, func, memref},
    ir::{
        Attribute, BlockLike, BlockRef, Identifier, Location, Operation, OperationRef, Region,
        RegionLike, Type, TypeLike, Value, ValueLike,
        attribute::{
            DenseElementsAttribute, FlatSymbolRefAttribute, IntegerAttribute, StringAttribute,
            TypeAttribute,
        },
        operation::{OperationBuilder, OperationLike},
        r#type::{FunctionType, IntegerType, MemRefType, RankedTensorType},
    },
};
use std::collections::HashMap;

/// The attribute that makes `convert-func-to-llvm` emit `_mlir_ciface_*`
/// wrappers taking memref descriptors by pointer.
pub const EMIT_C_INTERFACE: &str = "llvm.emit_c_interface";

/// An error at a location; the pass that hits it emits it and fails.
pub struct Failure<'c> {
    pub location: Location<'c>,
    pub message: String,
}

impl<'c> Failure<'c> {
    pub fn new(location: Location<'c>, message: String) -> Self {
        Self { location, message }
    }

    pub fn emit(&self) {
        emit_error(self.location, &self.message);
    }
}

pub type Result<'c, T> = std::result::Result<T, Failure<'c>>;

/// The element type of buffer `value`, operand of `op`, as the runtime knows it.
pub fn dtype<'c>(op: &OperationRef<'c, '_>, value: Value<'c, '_>) -> Result<'c, DType> {
    let r#type = value.r#type();
    let element = memref_element(r#type).map(|element| element.to_string());
    element
        .as_deref()
        .and_then(DType::from_mlir)
        .ok_or_else(|| {
            Failure::new(
                op.location(),
                format!(
                    "'{}' op has a buffer of type {type} that the runtime does not take",
                    ir::name(op)
                ),
            )
        })
}

fn memref_element(r#type: Type) -> Option<Type> {
    // SAFETY: `r#type` is a valid type; the element getter is only called on a shaped type.
    unsafe {
        let raw = r#type.to_raw();
        mlir_sys::mlirTypeIsAMemRef(raw)
            .then(|| Type::from_raw(mlir_sys::mlirShapedTypeGetElementType(raw)))
    }
}

fn element_type(context: &Context, dtype: DType) -> Type<'_> {
    match dtype {
        DType::F32 => Type::float32(context),
        DType::BF16 => Type::bfloat16(context),
        DType::F16 => Type::float16(context),
        DType::I32 => IntegerType::new(context, 32).into(),
        DType::I64 => IntegerType::new(context, 64).into(),
    }
}

/// `memref<*xelement>`.
pub fn unranked(element: Type) -> Type {
    // SAFETY: a null memory space is the default one.
    unsafe {
        Type::from_raw(mlir_sys::mlirUnrankedMemRefTypeGet(
            element.to_raw(),
            mlir_sys::mlirAttributeGetNull(),
        ))
    }
}

/// `i64`.
pub fn i64_type(context: &Context) -> Type<'_> {
    IntegerType::new(context, 64).into()
}

/// The argument and result types of `entry`'s declaration, read off the C
/// signatures documented on [`Entry`] (`buf` is an unranked memref, `ptr`
/// an `!llvm.ptr`, teams and axes `memref<*xi64>`).
pub fn signature(context: &Context, entry: Entry) -> (Vec<Type<'_>>, Vec<Type<'_>>) {
    let i64 = i64_type(context);
    let ptr = melior::dialect::llvm::r#type::pointer(context, 0);
    let buf = |dtype: DType| unranked(element_type(context, dtype));
    let list = unranked(i64);
    use Entry::*;
    match entry {
        GetCurrentStream | Rank | NumDevices | EndCoalescing => (vec![], vec![i64]),
        SetCurrentStream | SyncStream | Wait => (vec![i64], vec![]),
        StreamFromPool => (vec![i64], vec![i64]),
        Alloc => (vec![i64, i64], vec![ptr]),
        Dealloc => (vec![ptr], vec![]),
        StartCoalescing => (vec![], vec![]),
        Copy(t) | Unary(_, t) | Reshape(t) => (vec![buf(t), buf(t)], vec![]),
        Cast(from, to) => (vec![buf(from), buf(to)], vec![]),
        Binary(_, t) | Matmul(t) | MatmulAccumulate(t) | Linear(t) => (vec![buf(t); 3], vec![]),
        Where(t) | LinearBias(t) => (vec![buf(t); 4], vec![]),
        Reduction(_, t) | Broadcast(t) | Transpose(t) => (vec![buf(t), buf(t), list], vec![]),
        Fill(t) => (vec![buf(t), Type::float64(context)], vec![]),
        Iota(t) => (vec![buf(t), i64, i64], vec![]),
        Collective(_, t) => (vec![buf(t), buf(t), i64, i64, i64, list, i64], vec![i64]),
        Send(t) | Recv(t) => (vec![buf(t), i64, list, i64], vec![i64]),
        ShareMemHandle(t) => (vec![buf(t), list], vec![]),
        Barrier => (vec![list, i64], vec![]),
        Fused(buffers) => {
            let mut inputs = vec![list];
            inputs.extend(std::iter::repeat_n(buf(DType::F32), buffers));
            (inputs, vec![])
        }
    }
}

/// Declares runtime entries and constant lists in one module and builds the
/// ops that call them, each inserted before the op being lowered.
pub struct Runtime<'c, 'a> {
    context: &'c Context,
    body: BlockRef<'c, 'a>,
    /// The module's symbols by name, the ones added here included.
    symbols: HashMap<String, OperationRef<'c, 'a>>,
    /// How many ops were added at the top of the module, to keep them in
    /// order of first use.
    added: usize,
}

impl<'c, 'a> Runtime<'c, 'a> {
    pub fn new(context: &'c Context, module: OperationRef<'c, 'a>) -> Option<Self> {
        let body = module.region(0).ok()?.first_block()?;
        let mut symbols = HashMap::new();
        let mut next = body.first_operation();
        while let Some(op) = next {
            if let Some(name) = symbol_name(&op) {
                symbols.insert(name, op);
            }
            next = op.next_in_block();
        }
        Some(Self {
            context,
            body,
            symbols,
            added: 0,
        })
    }

    pub fn context(&self) -> &'c Context {
        self.context
    }

    /// Inserts `new` before `at`.
    pub fn insert(&self, at: OperationRef<'c, 'a>, new: Operation<'c>) -> OperationRef<'c, 'a> {
        at.block()
            .expect("a lowered op sits in a block")
            .insert_operation_before(at, new)
    }

    /// Inserts `new` before `at` and returns its only result.
    pub fn value(&self, at: OperationRef<'c, 'a>, new: Operation<'c>) -> Value<'c, 'a> {
        self.insert(at, new)
            .result(0)
            .expect("the op has one result")
            .into()
    }

    fn add_symbol(&mut self, name: String, op: Operation<'c>) {
        let op = self.body.insert_operation(self.added, op);
        self.added += 1;
        self.symbols.insert(name, op);
    }

    /// Declares `entry` unless the module already does; a symbol of that
    /// name that is not this declaration is an error at `at`, the op that
    /// needs it.
    fn declare(&mut self, entry: Entry, at: OperationRef<'c, 'a>) -> Result<'c, ()> {
        let name = entry.name();
        let (inputs, results) = signature(self.context, entry);
        let r#type = FunctionType::new(self.context, &inputs, &results);
        if let Some(existing) = self.symbols.get(&name) {
            let same = Op::FuncFunc.is(existing)
                && existing
                    .attribute("function_type")
                    .ok()
                    .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
                    .is_some_and(|attribute| attribute.value() == r#type.into());
            if same {
                return Ok(());
            }
            return Err(Failure::new(
                at.location(),
                format!(
                    "'{}' op needs runtime function '@{name}' of type {type}, but the module defines '@{name}' as {}",
                    ir::name(&at),
                    describe(existing)
                ),
            ));
        }
        let context = self.context;
        let mut attributes = vec![(
            Identifier::new(context, "sym_visibility"),
            StringAttribute::new(context, "private").into(),
        )];
        if entry.takes_buffers() {
            attributes.push((
                Identifier::new(context, EMIT_C_INTERFACE),
                Attribute::unit(context),
            ));
        }
        let declaration = func::func(
            context,
            StringAttribute::new(context, &name),
            TypeAttribute::new(r#type.into()),
            Region::new(),
            &attributes,
            Location::name(context, &name, Location::unknown(context)),
        );
        self.add_symbol(name, declaration);
        Ok(())
    }

    /// Calls `entry` with `arguments` before `at`; its result, if it has one.
    pub fn call(
        &mut self,
        at: OperationRef<'c, 'a>,
        entry: Entry,
        arguments: &[Value<'c, 'a>],
    ) -> Result<'c, Option<Value<'c, 'a>>> {
        self.declare(entry, at)?;
        let (_, results) = signature(self.context, entry);
        let call = func::call(
            self.context,
            FlatSymbolRefAttribute::new(self.context, &entry.name()),
            arguments,
            &results,
            at.location(),
        );
        let call = self.insert(at, call);
        Ok(call.result(0).ok().map(Into::into))
    }

    /// `buffer` as the unranked memref the runtime takes.
    pub fn buffer(&self, at: OperationRef<'c, 'a>, buffer: Value<'c, 'a>) -> Value<'c, 'a> {
        let element = memref_element(buffer.r#type()).expect("HIR buffers are memrefs");
        let cast = OperationBuilder::new(Op::MemrefCast.name(), at.location())
            .add_operands(&[buffer])
            .add_results(&[unranked(element)])
            .build()
            .expect("a ranked memref casts to the unranked one");
        self.value(at, cast)
    }

    /// An `i64` constant.
    pub fn constant(&self, at: OperationRef<'c, 'a>, value: i64) -> Value<'c, 'a> {
        let attribute = IntegerAttribute::new(i64_type(self.context), value);
        self.value(
            at,
            arith::constant(self.context, attribute.into(), at.location()),
        )
    }

    /// `value` (an `index`) as an `i64`.
    pub fn index_to_i64(&self, at: OperationRef<'c, 'a>, value: Value<'c, 'a>) -> Value<'c, 'a> {
        let cast = arith::index_cast(value, i64_type(self.context), at.location());
        self.value(at, cast)
    }

    /// `value` (an `i64`) as an `index`.
    pub fn i64_to_index(&self, at: OperationRef<'c, 'a>, value: Value<'c, 'a>) -> Value<'c, 'a> {
        let cast = arith::index_cast(value, Type::index(self.context), at.location());
        self.value(at, cast)
    }

    /// The list `values` as a `memref<*xi64>` read from a private constant
    /// global named `__hir_<kind>_<values>`, shared by every use.
    pub fn list(
        &mut self,
        at: OperationRef<'c, 'a>,
        kind: &str,
        values: &[i64],
    ) -> Result<'c, Value<'c, 'a>> {
        self.table(at, kind, &[values.len() as i64], values)
    }

    /// `values`, row-major of `shape`, as a `memref<*xi64>` read from a
    /// private constant global named `__hir_<kind>[_<extents>]_<values>`
    /// (the extents for more than one axis), shared by every use.
    pub fn table(
        &mut self,
        at: OperationRef<'c, 'a>,
        kind: &str,
        shape: &[i64],
        values: &[i64],
    ) -> Result<'c, Value<'c, 'a>> {
        let context = self.context;
        let extents = (shape.len() > 1).then(|| {
            shape
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join("x")
        });
        let name = std::iter::once(format!("__hir_{kind}"))
            .chain(extents)
            .chain(values.iter().map(i64::to_string))
            .collect::<Vec<_>>()
            .join("_");
        let i64 = i64_type(context);
        let r#type = MemRefType::new(i64, shape, None, None);
        let dims: Vec<u64> = shape.iter().map(|&extent| extent as u64).collect();
        let tensor = RankedTensorType::new(&dims, i64, None);
        let value: Attribute = DenseElementsAttribute::i64_values(tensor.into(), values).into();
        match self.symbols.get(&name) {
            Some(existing) => {
                let same = Op::MemrefGlobal.is(existing)
                    && existing.attribute("initial_value").ok() == Some(value);
                if !same {
                    return Err(Failure::new(
                        at.location(),
                        format!(
                            "'{}' op needs constant '@{name}' of type {type}, but the module defines '@{name}' as {}",
                            ir::name(&at),
                            describe(existing)
                        ),
                    ));
                }
            }
            None => {
                let global = memref::global(
                    context,
                    &name,
                    Some("private"),
                    r#type,
                    Some(value),
                    true,
                    None,
                    Location::name(context, &name, Location::unknown(context)),
                );
                self.add_symbol(name.clone(), global);
            }
        }
        let list = self.value(
            at,
            memref::get_global(context, &name, r#type, at.location()),
        );
        Ok(self.buffer(at, list))
    }

    /// `builtin.unrealized_conversion_cast` of `value` to `r#type`.
    pub fn cast(
        &self,
        at: OperationRef<'c, 'a>,
        value: Value<'c, 'a>,
        r#type: Type<'c>,
    ) -> Value<'c, 'a> {
        let cast = OperationBuilder::new(Op::UnrealizedConversionCast.name(), at.location())
            .add_operands(&[value])
            .add_results(&[r#type])
            .build()
            .expect("a cast of one value to one type is valid");
        self.value(at, cast)
    }
}

fn symbol_name(op: &OperationRef) -> Option<String> {
    let attribute = op.attribute("sym_name").ok()?;
    let name = StringAttribute::try_from(attribute).ok()?;
    Some(name.value().to_owned())
}

/// How an error names a symbol defined by `op`.
fn describe(op: &OperationRef) -> String {
    match op
        .attribute("function_type")
        .ok()
        .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
    {
        Some(r#type) => format!("'{}' of type {}", ir::name(op), r#type.value()),
        None => format!("'{}'", op.to_string().trim()),
    }
}

/// Lowers `!host.stream` or `!comm.request` values, which only flow from the
/// op that makes them to ops of the same dialect, to `i64` handles.
pub struct Handles<'c, 'a> {
    /// The dialect whose ops make and take the handles.
    dialect: &'static str,
    /// How diagnostics spell the handle type.
    spelling: &'static str,
    is_handle: fn(Type) -> bool,
    /// Whether handles may flow through `scf.for` iter_args and `scf.if`
    /// results ([`Handles::through_scf`]).
    through_scf: bool,
    /// Each handle value and the `i64` that replaces it.
    lowered: Vec<(Value<'c, 'a>, Value<'c, 'a>)>,
}

impl<'c, 'a> Handles<'c, 'a> {
    pub fn new(dialect: &'static str, spelling: &'static str, is_handle: fn(Type) -> bool) -> Self {
        Self {
            dialect,
            spelling,
            is_handle,
            through_scf: false,
            lowered: Vec::new(),
        }
    }

    /// Lets handles flow through `scf.for` iter_args (block arguments, init
    /// operands, results) and `scf.if` results, their `scf.yield`s included:
    /// [`Handles::carry`] makes those values `i64`s.
    pub fn through_scf(mut self) -> Self {
        self.through_scf = true;
        self
    }

    /// Whether `op` may take or give handles without being of the dialect.
    fn carries(&self, op: &OperationRef) -> bool {
        self.through_scf
            && match Op::of(op) {
                Some(Op::ScfFor | Op::ScfIf) => true,
                Some(Op::ScfYield) => op
                    .parent_operation()
                    .is_some_and(|parent| Op::ScfFor.is(&parent) || Op::ScfIf.is(&parent)),
                _ => false,
            }
    }

    /// Once every maker is lowered: every use of a handle becomes a use of
    /// its `i64` (the makers are left without uses), and the `scf` values
    /// that carry handles (`scf.for` block arguments and results, `scf.if`
    /// results) become `i64`s in place.
    pub fn carry(&self, rewriter: &melior::RewriterBase, module: OperationRef<'c, 'a>) {
        for &(handle, lowered) in &self.lowered {
            rewriter.replace_all_uses_with(handle, lowered);
        }
        let Some(i64) = self.lowered.first().map(|(_, lowered)| lowered.r#type()) else {
            return;
        };
        for op in ir::nested(module)
            .into_iter()
            .filter(|op| Op::ScfFor.is(op) || Op::ScfIf.is(op))
        {
            rewriter.start_op_modification(op);
            for result in op.results() {
                if (self.is_handle)(result.r#type()) {
                    result.set_type(i64);
                }
            }
            for region in op.regions() {
                if let Some(block) = region.first_block() {
                    for index in 0..block.argument_count() {
                        let argument = block.argument(index).expect("index in range");
                        if (self.is_handle)(argument.r#type()) {
                            argument.set_type(i64);
                        }
                    }
                }
            }
            rewriter.finalize_op_modification(op);
        }
    }

    /// Whether `op` makes a handle (its results are replaced once its users
    /// are lowered).
    pub fn makes_handle(&self, op: &OperationRef) -> bool {
        op.results().any(|result| (self.is_handle)(result.r#type()))
    }

    /// Records that `handle` is now `lowered`.
    pub fn record(&mut self, handle: Value<'c, 'a>, lowered: Value<'c, 'a>) {
        self.lowered.push((handle, lowered));
    }

    /// The `i64` that stands for `handle`, lowered before.
    pub fn get(&self, handle: Value<'c, 'a>) -> Value<'c, 'a> {
        self.lowered
            .iter()
            .find(|(value, _)| *value == handle)
            .map(|&(_, lowered)| lowered)
            .expect("handles are checked to come from ops lowered first")
    }

    /// Checks, before anything changes, that every handle in `module` is a
    /// result of an op of the dialect used only by ops of the dialect: not
    /// a block argument, not in a function type, not through another op
    /// (but `scf`'s, [`Handles::through_scf`]).
    pub fn check(&self, module: OperationRef<'c, '_>, pass: &str) -> Result<'c, ()> {
        ir::nested(module)
            .iter()
            .try_for_each(|op| self.check_op(op, pass))
    }

    fn check_op(&self, op: &OperationRef<'c, '_>, pass: &str) -> Result<'c, ()> {
        let name = ir::name(op);
        let fail = |what: String| {
            Err(Failure::new(
                op.location(),
                format!(
                    "'{name}' op {what}; {pass} lowers {} values only from one {} op to others",
                    self.spelling, self.dialect
                ),
            ))
        };
        if let Some(r#type) = op
            .attribute("function_type")
            .ok()
            .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
            .and_then(|attribute| FunctionType::try_from(attribute.value()).ok())
        {
            let inputs = (0..r#type.input_count()).map(|index| r#type.input(index));
            let results = (0..r#type.result_count()).map(|index| r#type.result(index));
            if inputs
                .chain(results)
                .any(|r#type| r#type.is_ok_and(self.is_handle))
            {
                return fail(format!("has a {} in its type", self.spelling));
            }
        }
        for region in op.regions() {
            let mut block = region.first_block();
            while let Some(current) = block {
                for index in 0..current.argument_count() {
                    let argument = current.argument(index).expect("index in range");
                    if (self.is_handle)(argument.r#type())
                        && !(Op::ScfFor.is(op) && self.carries(op))
                    {
                        return fail(format!("has a block argument of type {}", self.spelling));
                    }
                }
                block = current.next_in_region();
            }
        }
        if name.split('.').next() != Some(self.dialect) && !self.carries(op) {
            if op.operands().any(|value| (self.is_handle)(value.r#type())) {
                return fail(format!("takes a {} operand", self.spelling));
            }
            if op.results().any(|value| (self.is_handle)(value.r#type())) {
                return fail(format!("returns a {}", self.spelling));
            }
        }
        Ok(())
    }
}

/// Whether `r#type` is `!host.stream`.
pub fn is_stream(r#type: Type) -> bool {
    // SAFETY: `r#type` is a valid type.
    unsafe { hir_dialects::ffi::hirTypeIsAHostStream(r#type.to_raw()) }
}

/// Whether `r#type` is `!comm.request`.
pub fn is_request(r#type: Type) -> bool {
    // SAFETY: `r#type` is a valid type.
    unsafe { hir_dialects::ffi::hirTypeIsACommRequest(r#type.to_raw()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declarations agree with the ABI on which entries go through the C
    /// interface: exactly those that take a memref.
    #[test]
    fn entries_with_buffers_are_called_through_the_c_interface() {
        let context = Context::new();
        hir_dialects::register_all(&context);
        for entry in Entry::all() {
            let (inputs, _) = signature(&context, entry);
            // SAFETY: the types are valid.
            let takes_memref = inputs
                .iter()
                .any(|input| unsafe { mlir_sys::mlirTypeIsAUnrankedMemRef(input.to_raw()) });
            assert_eq!(takes_memref, entry.takes_buffers(), "{entry}");
        }
    }
}
