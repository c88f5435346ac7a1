//! What `convert-host-to-llvm` and `convert-comm-to-llvm` share: the MLIR
//! signature of each runtime entry ([`Entry`], whose names these passes use
//! verbatim), its `func.func` declaration, the calls, and the operands the C
//! ABI wants: unranked buffers, `i64` scalars, `memref<*xi64>` constant
//! lists, and `i64` handles in place of `!host.stream` and `!comm.request`.
//!
//! Both passes are pattern sets: [`add`] roots a pattern at an op and gives
//! its [`Lowering`] a [`Runtime`] that builds the calls before the op through
//! the pattern's rewriter. A pattern's closure outlives any borrow of the
//! module, so what the patterns share ([`State`]) holds no IR: the count and
//! names of the symbols added (each is looked up again in the module by
//! name), the next allocation site, and whether a pattern failed.
//!
//! ```mlir
//! func.func private @hir_rt_neg_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
//! memref.global "private" constant @__hir_team_0_1 : memref<2xi64> = dense<[0, 1]>
//! ```

use crate::diagnostics::emit_error;
use crate::ops::Op;
use crate::{ir, patterns};
use hir_abi::{DType, Entry};
use melior::{
    Context, RewritePatternSet, RewriterBase,
    dialect::{arith, func, memref},
    ir::{
        Attribute, BlockRef, Identifier, Location, Operation, OperationRef, Region, RegionLike,
        Type, TypeLike, Value, ValueLike,
        attribute::{
            DenseElementsAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute,
            IntegerAttribute, StringAttribute, TypeAttribute,
        },
        operation::{OperationBuilder, OperationLike},
        r#type::{FunctionType, IntegerType, MemRefType, RankedTensorType},
    },
};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

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

/// The `axes` list of `op` (a reduction's or a broadcast's).
pub fn axes<'c>(op: &OperationRef<'c, '_>) -> Result<'c, Vec<i64>> {
    let axes = op
        .attribute("axes")
        .ok()
        .and_then(|axes| DenseI64ArrayAttribute::try_from(axes).ok())
        .ok_or_else(|| Failure::new(op.location(), format!("'{}' op has no axes", ir::name(op))))?;
    Ok((0..axes.len())
        .map(|index| axes.element(index).expect("index in range"))
        .collect())
}

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
    let f64 = Type::float64(context);
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
        Binary(_, t)
        | Matmul(t)
        | MatmulAccumulate(t)
        | Linear(t)
        | LinearAccumulate(t)
        | MatmulActivation(_, t)
        | LinearActivation(_, t) => (vec![buf(t); 3], vec![]),
        Where(t) | LinearBias(t) | LinearBiasActivation(_, t) => (vec![buf(t); 4], vec![]),
        Reduction(_, t) | Broadcast(t) | Transpose(t) => (vec![buf(t), buf(t), list], vec![]),
        Fill(t) => (vec![buf(t), f64], vec![]),
        Attention(t) => (vec![buf(t), buf(t), buf(t), buf(t), f64, i64], vec![]),
        AttentionMask(t) => (
            vec![buf(t), buf(t), buf(t), buf(t), buf(t), f64, i64],
            vec![],
        ),
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

/// What a conversion carries from one of its patterns to the next. It holds
/// no IR (a pattern's closure outlives any borrow of the module): the
/// symbols are looked up again in the module by name.
#[derive(Default)]
pub struct State {
    /// How many symbols the patterns added at the top of the module, in
    /// order of first use: the next goes after them.
    added: usize,
    /// The symbols known to be what the patterns need (added or checked
    /// before), which need no second look.
    known: HashSet<String>,
    /// The next allocation site (`host.alloc`'s, in program order).
    site: i64,
    /// Whether a pattern failed (and emitted its error): the others change
    /// nothing after it, and the pass fails.
    failed: bool,
}

/// The state one run of a conversion's patterns shares.
pub type Shared = Rc<RefCell<State>>;

impl State {
    /// Whether a pattern of this run failed.
    pub fn failed(shared: &Shared) -> bool {
        shared.borrow().failed
    }
}

/// How a pattern lowers its op, given the builder of its runtime calls:
/// the value that replaces the op's one result, or none (the op is erased).
pub type Lowering = for<'c, 'a> fn(&Runtime<'c, 'a>) -> Result<'c, Option<Value<'c, 'a>>>;

/// The ops a lowering may create.
fn generated() -> [&'static str; 14] {
    use melior::dialect::ods;
    [
        ods::func::CallOperation::name(),
        Op::FuncFunc.name(),
        Op::MemrefCast.name(),
        ods::memref::GetGlobalOperation::name(),
        Op::MemrefGlobal.name(),
        Op::MemrefSubview.name(),
        ods::memref::DimOperation::name(),
        Op::MemrefExtractAlignedPointer.name(),
        Op::ArithConstant.name(),
        ods::arith::IndexCastOperation::name(),
        ods::llvm::PoisonOperation::name(),
        ods::llvm::InsertValueOperation::name(),
        Op::LlvmIntToPtr.name(),
        Op::UnrealizedConversionCast.name(),
    ]
}

/// Adds to `set` a pattern rooted at the ops named `root` that replaces
/// each by what `lower` builds (or erases it), through the rewriter. An op
/// in the body of a `host.fused` is left: its own pattern lowers the body
/// whole. A failure is emitted at once and recorded in `state`; no pattern
/// matches after it.
pub fn add(
    set: &RewritePatternSet,
    context: &Context,
    state: &Shared,
    root: &str,
    lower: Lowering,
) {
    let state = Rc::clone(state);
    patterns::add(set, context, root, &generated(), move |op, rewriter| {
        let fused_body = op
            .parent_operation()
            .is_some_and(|parent| Op::HostFused.is(&parent));
        if fused_body || State::failed(&state) {
            return false;
        }
        let context = op.context();
        // SAFETY: the context outlives the rewrite, and `context`, which the
        // reference points into, outlives `runtime`.
        let runtime = Runtime {
            context: unsafe { context.to_ref() },
            rewriter,
            op,
            state: &state,
        };
        match lower(&runtime) {
            Ok(Some(value)) => rewriter.replace_op_with_values(op, &[value]),
            Ok(None) => rewriter.erase_op(op),
            Err(failure) => {
                failure.emit();
                state.borrow_mut().failed = true;
                return false;
            }
        }
        true
    });
}

/// The first op nested in `module` of the dialect of `dialect`, which no
/// pattern lowered: an error at it.
pub fn leftover<'c>(module: OperationRef<'c, '_>, dialect: Op) -> Result<'c, ()> {
    match ir::nested(module)
        .into_iter()
        .find(|op| dialect.same_dialect(op))
    {
        Some(op) => Err(Failure::new(
            op.location(),
            format!("'{}' op has no lowering to the runtime", ir::name(&op)),
        )),
        None => Ok(()),
    }
}

/// Builds the runtime calls that lower one op, each inserted before it
/// through the pattern's rewriter, and declares the entries and constant
/// lists they use at the top of the op's module.
pub struct Runtime<'c, 'a> {
    context: &'c Context,
    rewriter: &'a RewriterBase<'c, 'a>,
    op: OperationRef<'c, 'a>,
    state: &'a RefCell<State>,
}

impl<'c, 'a> Runtime<'c, 'a> {
    pub fn context(&self) -> &'c Context {
        self.context
    }

    /// The op being lowered.
    pub fn op(&self) -> OperationRef<'c, 'a> {
        self.op
    }

    /// Operand `index` of the op, which its verifier guarantees.
    pub fn operand(&self, index: usize) -> Value<'c, 'a> {
        self.op.operand(index).expect("verified operand count")
    }

    /// The next allocation site of the module.
    pub fn next_site(&self) -> i64 {
        let mut state = self.state.borrow_mut();
        state.site += 1;
        state.site - 1
    }

    /// Inserts `new` before the op.
    pub fn insert(&self, new: Operation<'c>) -> OperationRef<'c, 'a> {
        let rewriter: &'a RewriterBase<'c, 'a> = self.rewriter;
        rewriter.set_insertion_point_before(self.op);
        rewriter.insert(new)
    }

    /// Inserts `new` before the op and returns its only result.
    pub fn value(&self, new: Operation<'c>) -> Value<'c, 'a> {
        self.insert(new)
            .result(0)
            .expect("the op has one result")
            .into()
    }

    /// The body of the module the op is in.
    fn module_body(&self) -> BlockRef<'c, 'a> {
        std::iter::successors(self.op.parent_operation(), |op| op.parent_operation())
            .find(|op| Op::BuiltinModule.is(op))
            .and_then(|module| ir::region(&module, 0))
            .and_then(|region| region.first_block())
            .expect("a lowered op is in a module")
    }

    /// Whether the symbol `name` was added or checked before.
    fn known(&self, name: &str) -> bool {
        self.state.borrow().known.contains(name)
    }

    /// The op of the module named `name`, if it defines one.
    fn symbol(&self, name: &str) -> Option<OperationRef<'c, 'a>> {
        ir::block_ops(self.module_body()).find(|op| symbol_name(op).as_deref() == Some(name))
    }

    /// Adds `symbol`, named `name`, after the ones added before.
    fn add_symbol(&self, name: String, symbol: Operation<'c>) {
        let body = self.module_body();
        let mut state = self.state.borrow_mut();
        let rewriter: &'a RewriterBase<'c, 'a> = self.rewriter;
        match state.added.checked_sub(1) {
            Some(last) => rewriter.set_insertion_point_after(
                ir::block_ops(body).nth(last).expect("the added symbols"),
            ),
            None => rewriter.set_insertion_point_to_start(body),
        }
        rewriter.insert(symbol);
        state.added += 1;
        state.known.insert(name);
    }

    /// Declares `entry` unless the module already does; a symbol of that
    /// name that is not this declaration is an error at the op, which needs
    /// it.
    fn declare(&self, entry: Entry) -> Result<'c, ()> {
        let name = entry.name();
        if self.known(&name) {
            return Ok(());
        }
        let (inputs, results) = signature(self.context, entry);
        let r#type = FunctionType::new(self.context, &inputs, &results);
        if let Some(existing) = self.symbol(&name) {
            let same = Op::FuncFunc.is(&existing)
                && existing
                    .attribute("function_type")
                    .ok()
                    .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
                    .is_some_and(|attribute| attribute.value() == r#type.into());
            if same {
                self.state.borrow_mut().known.insert(name);
                return Ok(());
            }
            return Err(Failure::new(
                self.op.location(),
                format!(
                    "'{}' op needs runtime function '@{name}' of type {type}, but the module defines '@{name}' as {}",
                    ir::name(&self.op),
                    describe(&existing)
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

    /// Calls `entry` with `arguments` before the op; its result, if it has one.
    pub fn call(
        &self,
        entry: Entry,
        arguments: &[Value<'c, 'a>],
    ) -> Result<'c, Option<Value<'c, 'a>>> {
        self.declare(entry)?;
        let (_, results) = signature(self.context, entry);
        let call = func::call(
            self.context,
            FlatSymbolRefAttribute::new(self.context, &entry.name()),
            arguments,
            &results,
            self.op.location(),
        );
        let call = self.insert(call);
        Ok(ir::result(&call, 0).map(Into::into))
    }

    /// `buffer` as the unranked memref the runtime takes.
    pub fn buffer(&self, buffer: Value<'c, 'a>) -> Value<'c, 'a> {
        let element = memref_element(buffer.r#type()).expect("HIR buffers are memrefs");
        let cast = OperationBuilder::new(Op::MemrefCast.name(), self.op.location())
            .add_operands(&[buffer])
            .add_results(&[unranked(element)])
            .build()
            .expect("a ranked memref casts to the unranked one");
        self.value(cast)
    }

    /// Every operand of the op as a buffer, in order.
    pub fn buffers(&self) -> Vec<Value<'c, 'a>> {
        self.op
            .operands()
            .map(|operand| self.buffer(operand))
            .collect()
    }

    /// An `i64` constant.
    pub fn constant(&self, value: i64) -> Value<'c, 'a> {
        let attribute = IntegerAttribute::new(i64_type(self.context), value);
        self.value(arith::constant(
            self.context,
            attribute.into(),
            self.op.location(),
        ))
    }

    /// `value` (an `index`) as an `i64`.
    pub fn index_to_i64(&self, value: Value<'c, 'a>) -> Value<'c, 'a> {
        let cast = arith::index_cast(value, i64_type(self.context), self.op.location());
        self.value(cast)
    }

    /// `value` (an `i64`) as an `index`.
    pub fn i64_to_index(&self, value: Value<'c, 'a>) -> Value<'c, 'a> {
        let cast = arith::index_cast(value, Type::index(self.context), self.op.location());
        self.value(cast)
    }

    /// The list `values` as a `memref<*xi64>` read from a private constant
    /// global named `__hir_<kind>_<values>`, shared by every use.
    pub fn list(&self, kind: &str, values: &[i64]) -> Result<'c, Value<'c, 'a>> {
        self.table(kind, &[values.len() as i64], values)
    }

    /// `values`, row-major of `shape`, as a `memref<*xi64>` read from a
    /// private constant global named `__hir_<kind>[_<extents>]_<values>`
    /// (the extents for more than one axis), shared by every use.
    pub fn table(&self, kind: &str, shape: &[i64], values: &[i64]) -> Result<'c, Value<'c, 'a>> {
        let context = self.context;
        let extents = (shape.len() > 1).then(|| {
            shape
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join("x")
        });
        // A negative value is `m<magnitude>`: the name stays a bare identifier.
        let spelled = |&value: &i64| match value < 0 {
            true => format!("m{}", value.unsigned_abs()),
            false => value.to_string(),
        };
        let name = std::iter::once(format!("__hir_{kind}"))
            .chain(extents)
            .chain(values.iter().map(spelled))
            .collect::<Vec<_>>()
            .join("_");
        let i64 = i64_type(context);
        let r#type = MemRefType::new(i64, shape, None, None);
        let dims: Vec<u64> = shape.iter().map(|&extent| extent as u64).collect();
        let tensor = RankedTensorType::new(&dims, i64, None);
        let value: Attribute = DenseElementsAttribute::i64_values(tensor.into(), values).into();
        if !self.known(&name) {
            match self.symbol(&name) {
                Some(existing) => {
                    let same = Op::MemrefGlobal.is(&existing)
                        && existing.attribute("initial_value").ok() == Some(value);
                    if !same {
                        return Err(Failure::new(
                            self.op.location(),
                            format!(
                                "'{}' op needs constant '@{name}' of type {type}, but the module defines '@{name}' as {}",
                                ir::name(&self.op),
                                describe(&existing)
                            ),
                        ));
                    }
                    self.state.borrow_mut().known.insert(name.clone());
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
        }
        let list = self.value(memref::get_global(
            context,
            &name,
            r#type,
            self.op.location(),
        ));
        Ok(self.buffer(list))
    }

    /// `builtin.unrealized_conversion_cast` of `value` to `r#type`.
    pub fn cast(&self, value: Value<'c, 'a>, r#type: Type<'c>) -> Value<'c, 'a> {
        let cast = OperationBuilder::new(Op::UnrealizedConversionCast.name(), self.op.location())
            .add_operands(&[value])
            .add_results(&[r#type])
            .build()
            .expect("a cast of one value to one type is valid");
        self.value(cast)
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
