//! `host-check-bounds`: checks, as the program runs, that every index of
//! a `memref.load` or `memref.store` is inside its axis.
//!
//! A host program's own loads and stores (of memory from `memref.alloc`,
//! `memref.alloca` or its arguments) are not the runtime's calls, so nothing
//! checked them: an index past the end wrote over other memory, or into
//! unmapped memory (SIGSEGV). Before each such op the pass inserts, per
//! axis, `index <u extent` (unsigned, so a negative index is out too) and a
//! call of the runtime's `hir_rt_index_out_of_bounds(op, axis, index,
//! extent)` when it fails, which fails the rank (`memref.store: index
//! 9223372036854775807 of axis 0 is outside its extent 2147483648`) and
//! leaves its program. HIR's pipeline to LLVM runs it after the verifiers;
//! the programs HIR lowers itself have no such ops (they pass buffers to
//! the runtime, which checks its views), so they pay nothing.
//!
//! ```mlir
//! %bad = arith.cmpi uge, %i, %n : index
//! scf.if %bad {
//!   func.call @hir_rt_index_out_of_bounds(%store, %axis, %i64, %n64) : (i64, i64, i64, i64) -> ()
//! }
//! memref.store %v, %m[%i] : memref<?xi8>
//! ```

use crate::diagnostics::emit_error;
use crate::ops::Op;
use crate::{HirPass, ir, patterns, rewrite};
use melior::{
    RewriterBase,
    dialect::{arith, func, memref, scf},
    ir::{
        Block, BlockLike, Identifier, Location, Operation, OperationRef, Region, RegionLike, Type,
        Value, ValueLike,
        attribute::{FlatSymbolRefAttribute, IntegerAttribute, StringAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::{DimSize, FunctionType, IntegerType, MemRefType, ShapedTypeLike},
    },
};
use std::cell::Cell;
use std::rc::Rc;

/// The op the pass runs on: it declares the runtime's function in it.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "host-check-bounds";

/// The runtime's function a failed check calls (`runtime/src/ffi/heap.rs`).
pub const OUT_OF_BOUNDS: &str = "hir_rt_index_out_of_bounds";

/// The checked ops: each, the code the runtime names it by, and its
/// memref's operand (the indices follow it).
const CHECKED: [(Op, i64, usize); 2] = [(Op::MemrefLoad, 0, 0), (Op::MemrefStore, 1, 1)];

/// Creates the pass (anchored on `builtin.module`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(CheckBounds)
}

struct CheckBounds;

impl HirPass for CheckBounds {
    fn run(&mut self, module: OperationRef) -> bool {
        if let Some(taken) = taken(module) {
            emit_error(
                taken.location(),
                &format!(
                    "'{}' op is named @{OUT_OF_BOUNDS}, the runtime's function that \
                     host-check-bounds calls: rename it",
                    ir::name(&taken)
                ),
            );
            return false;
        }
        let checked = Rc::new(Cell::new(false));
        patterns::walk(module, |context, set| {
            for (root, code, memref) in CHECKED {
                let checked = checked.clone();
                patterns::add(
                    set,
                    context,
                    root.name(),
                    &[Op::ScfIf.name(), Op::ArithCmpi.name()],
                    move |access, rewriter| {
                        let inserted = check(rewriter, access, code, memref);
                        checked.set(checked.get() | inserted);
                        inserted
                    },
                );
            }
        });
        if checked.get() {
            declare(module);
        }
        true
    }
}

/// Inserts, through `rewriter`, the checks of `access`'s indices, which
/// follow its operand `first` (the memref); whether it inserted any.
fn check<'c>(
    rewriter: &RewriterBase<'c, '_>,
    access: OperationRef<'c, '_>,
    code: i64,
    first: usize,
) -> bool {
    let Some(memref) = ir::operand(&access, first) else {
        return false;
    };
    let Ok(r#type) = MemRefType::try_from(memref.r#type()) else {
        return false;
    };
    let rank = r#type.rank();
    if rank == 0 || access.operand_count() != first + 1 + rank {
        return false;
    }
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    rewriter.set_insertion_point_before(access);
    let value = |op: Operation<'c>| -> Value<'c, '_> {
        rewriter.insert(op).result(0).expect("one result").into()
    };
    let location = access.location();
    let index_type = Type::index(context);
    let i64_type: Type = IntegerType::new(context, 64).into();
    let constant = |value_type: Type<'c>, number: i64| {
        value(arith::constant(
            context,
            IntegerAttribute::new(value_type, number).into(),
            location,
        ))
    };
    let mut checked = false;
    for axis in 0..rank {
        let index = ir::operand(&access, first + 1 + axis).expect("counted above");
        let size = match r#type.dim_size(axis) {
            Ok(DimSize::Static(size)) => Some(size),
            _ => None,
        };
        // A constant index inside a static extent needs no check.
        if let (Some(size), Some(constant)) = (size, ir::constant(index))
            && u64::try_from(constant).is_ok_and(|constant| constant < size)
        {
            continue;
        }
        checked = true;
        let extent = match size {
            Some(size) => constant(index_type, size as i64),
            None => {
                let axis_index = constant(index_type, axis as i64);
                value(memref::dim(memref, axis_index, location))
            }
        };
        let outside = value(arith::cmpi(
            context,
            arith::CmpiPredicate::Uge,
            index,
            extent,
            location,
        ));
        let arguments = [
            constant(i64_type, code),
            constant(i64_type, axis as i64),
            value(arith::index_cast(index, i64_type, location)),
            value(arith::index_cast(extent, i64_type, location)),
        ];
        let then = Block::new(&[]);
        then.append_operation(func::call(
            context,
            FlatSymbolRefAttribute::new(context, OUT_OF_BOUNDS),
            &arguments,
            &[],
            location,
        ));
        then.append_operation(scf::r#yield(&[], location));
        let region = Region::new();
        region.append_block(then);
        rewriter.insert(scf::r#if(outside, &[], region, Region::new(), location));
    }
    checked
}

/// The program's own op named [`OUT_OF_BOUNDS`], which the pass declares.
fn taken<'c, 'a>(module: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let body = ir::region(&module, 0)?.first_block()?;
    ir::block_ops(body).find(|op| {
        op.attribute("sym_name")
            .ok()
            .and_then(|name| StringAttribute::try_from(name).ok())
            .is_some_and(|name| name.value() == OUT_OF_BOUNDS)
    })
}

/// `func.func private @hir_rt_index_out_of_bounds(i64, i64, i64, i64)` at
/// the start of `module`, through a rewriter.
fn declare(module: OperationRef) {
    let Some(body) = ir::region(&module, 0).and_then(|region| region.first_block()) else {
        return;
    };
    let rewriter = rewrite::rewriter(module);
    let rewriter = rewriter.as_rewriter_base();
    let context = rewriter.context();
    // SAFETY: the context outlives the rewrite.
    let context = unsafe { context.to_ref() };
    let i64_type: Type = IntegerType::new(context, 64).into();
    let signature = FunctionType::new(context, &[i64_type; 4], &[]);
    rewriter.set_insertion_point_to_start(body);
    rewriter.insert(func::func(
        context,
        StringAttribute::new(context, OUT_OF_BOUNDS),
        TypeAttribute::new(signature.into()),
        Region::new(),
        &[(
            Identifier::new(context, "sym_visibility"),
            StringAttribute::new(context, "private").into(),
        )],
        Location::unknown(context),
    ));
}
