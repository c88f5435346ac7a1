//! Attention in an imported program: `softmax(Q K^T) V` written with
//! linalg's ops, a matmul of Q and K^T, a `linalg.softmax` of the scores
//! over the keys (their last axis) and a matmul of the probabilities and V,
//! is imported as one `fusion.attention %q, %k, %v scale 1.0` (the scores
//! are not scaled) rather than op by op.
//!
//! The matmuls are `linalg.batch_matmul`s (one batch axis) or 2-D
//! `linalg.matmul`s; K^T is a `linalg.transpose` of K swapping its last two
//! axes, or, in a 2-D `linalg.matmul` of transposed-B maps, K itself. The
//! pattern fuses when the scores, the probabilities and K^T have no other
//! use (no annotation either), both products are into a zero or empty
//! destination, and the distributions annotated on Q, K, V and the output
//! meet `fusion.attention`'s rules (their last two axes not split over
//! devices, their batch axis placed alike); otherwise each op is imported
//! alone. A scaled or masked form (a `linalg.mul` or `linalg.add` between
//! the matmul and the softmax) is imported op by op.
//!
//! ```mlir
//! %kt = linalg.transpose ins(%k : tensor<4x16x8xf32>) outs(%e : tensor<4x8x16xf32>) permutation = [0, 2, 1]
//! %s = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>)
//!                          outs(%z : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
//! %p = linalg.softmax dimension(2) ins(%s : tensor<4x16x16xf32>) outs(%f : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
//! %o = linalg.batch_matmul ins(%p, %v : tensor<4x16x16xf32>, tensor<4x16x8xf32>)
//!                          outs(%y : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
//! ```
//! becomes
//! ```mlir
//! %o = fusion.attention %q, %k, %v scale 1.000000e+00
//!     : tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32> -> tensor<4x16x8xf32>
//! ```

use super::tables::{BATCH_MATMUL_MAPS, MATMUL_MAPS, MATMUL_TRANSPOSED_B_MAPS, Name};
use super::{Destinations, key};
use crate::builders::Builder;
use crate::ir;
use crate::upstream::structured::linalg;
use hir_dialects::dist::{Dist, ParallelType};
use hir_dialects::fusion;
use melior::{
    Context,
    dialect::ods::linalg as linalg_ops,
    ir::{
        Attribute, OperationRef, Type, TypeLike, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, FloatAttribute, IntegerAttribute},
        operation::{OperationLike, OperationResult},
        r#type::{RankedTensorType, ShapedTypeLike},
    },
};
use std::collections::HashMap;

/// The attention a `P V` matmul computes.
pub struct Parts<'c, 'a> {
    q: Value<'c, 'a>,
    k: Value<'c, 'a>,
    v: Value<'c, 'a>,
    /// The pattern's other ops, which go: the transpose of K (if any), the
    /// scores' matmul and the softmax.
    pub fused: Vec<OperationRef<'c, 'a>>,
    /// The scores' matmul, whose destination must be zero.
    scores: OperationRef<'c, 'a>,
}

fn is(op: &OperationRef, name: Name) -> bool {
    op.name().as_string_ref().as_str() == Ok(name())
}

/// Whether `op` has the indexing maps `maps` (absent: linalg's default,
/// `default`).
fn has_maps(op: &OperationRef, maps: &str, default: bool) -> bool {
    let context = op.context();
    // SAFETY: the context outlives this call, the only place it is used.
    let context = unsafe { context.to_ref() };
    match op.attribute("indexing_maps").ok() {
        None => default,
        Some(given) => Attribute::parse(context, maps) == Some(given),
    }
}

/// Whether `op` is a plain product `A @ B` of linalg's matmuls.
fn plain_product(op: &OperationRef) -> bool {
    (is(op, linalg::MatmulOperation::name) && has_maps(op, MATMUL_MAPS, true))
        || (is(op, linalg::BatchMatmulOperation::name) && has_maps(op, BATCH_MATMUL_MAPS, true))
}

/// The op of `name` that makes `value`, if `user` is its only user.
fn sole_producer<'c, 'a>(
    value: Value<'c, 'a>,
    name: Name,
    user: &OperationRef<'c, 'a>,
) -> Option<OperationRef<'c, 'a>> {
    let producer = OperationResult::try_from(value).ok()?.owner();
    let uses = user.operands().filter(|&operand| operand == value).count();
    (is(&producer, name) && ir::users(value) == [*user] && uses == 1).then_some(producer)
}

/// An integer attribute of `op`, or an integer array's elements.
fn integers(op: &OperationRef, name: &str) -> Option<Vec<i64>> {
    let attribute = op.attribute(name).ok()?;
    if let Ok(integer) = IntegerAttribute::try_from(attribute) {
        return Some(vec![integer.value()]);
    }
    let array = DenseI64ArrayAttribute::try_from(attribute).ok()?;
    Some(
        (0..array.len())
            .map(|index| array.element(index).expect("in range"))
            .collect(),
    )
}

/// The attention `op` computes if it is the `P V` matmul of the pattern.
pub fn parts<'c, 'a>(op: &OperationRef<'c, 'a>) -> Option<Parts<'c, 'a>> {
    if !plain_product(op) || op.result_count() != 1 {
        return None;
    }
    let softmax = sole_producer(ir::operand(op, 0)?, linalg_ops::SoftmaxOperation::name, op)?;
    let probabilities = ir::operand(&softmax, 0)?;
    let rank = crate::fusion::axis_map::shape(probabilities.r#type())?.len() as i64;
    // fusion.attention takes floats (a softmax of integers imports as an error).
    if !RankedTensorType::try_from(probabilities.r#type())
        .ok()?
        .element()
        .is_float()
    {
        return None;
    }
    if integers(&softmax, "dimension")? != [rank - 1] {
        return None;
    }
    let scores = OperationResult::try_from(probabilities).ok()?.owner();
    let product = [
        linalg::MatmulOperation::name,
        linalg::BatchMatmulOperation::name,
    ]
    .into_iter()
    .find(|&name| is(&scores, name))?;
    sole_producer(probabilities, product, &softmax)?;
    let mut fused = Vec::new();
    let k = if is(&scores, linalg::MatmulOperation::name)
        && has_maps(&scores, MATMUL_TRANSPOSED_B_MAPS, false)
    {
        ir::operand(&scores, 1)?
    } else if plain_product(&scores) {
        let transpose = sole_producer(
            ir::operand(&scores, 1)?,
            linalg::TransposeOperation::name,
            &scores,
        )?;
        let mut swap: Vec<i64> = (0..rank).collect();
        swap.swap(rank as usize - 2, rank as usize - 1);
        if integers(&transpose, "permutation")? != swap {
            return None;
        }
        fused.push(transpose);
        ir::operand(&transpose, 0)?
    } else {
        return None;
    };
    fused.extend([scores, softmax]);
    Some(Parts {
        q: ir::operand(&scores, 0)?,
        k,
        v: ir::operand(op, 1)?,
        fused,
        scores,
    })
}

impl<'c, 'a> Parts<'c, 'a> {
    /// Whether the pattern rooted at `op` imports as one op: both products
    /// are into a zero destination, and the distributions annotated on q,
    /// k, v and the output (`dists`, by value) are ones `fusion.attention`
    /// takes.
    pub fn fuses(
        &self,
        op: &OperationRef<'c, 'a>,
        destinations: &Destinations,
        dists: &HashMap<usize, Dist>,
    ) -> bool {
        let into_zero = |product: &OperationRef| {
            product
                .operand(2)
                .is_ok_and(|init| destinations.zero.contains(&key(init)))
        };
        let Ok(output) = op.result(0) else {
            return false;
        };
        let annotated: Vec<&Dist> = [self.q, self.k, self.v, output.into()]
            .into_iter()
            .filter_map(|value| dists.get(&key(value)))
            .collect();
        // Stream places nothing: it compares as serial.
        let placement = |axis: ParallelType| match axis {
            ParallelType::Stream => ParallelType::Serial,
            other => other,
        };
        let inner_serial = annotated.iter().all(|dist| {
            dist.axes[dist.axes.len() - 2..]
                .iter()
                .all(|&axis| axis == ParallelType::Serial)
        });
        let batch_alike = annotated.windows(2).all(|pair| {
            let batch = |dist: &Dist| -> Vec<ParallelType> {
                dist.axes[..dist.axes.len() - 2]
                    .iter()
                    .map(|&axis| placement(axis))
                    .collect()
            };
            batch(pair[0]) == batch(pair[1])
        });
        into_zero(op) && into_zero(&self.scores) && inner_serial && batch_alike
    }
}

/// Builds the `fusion.attention` of the pattern rooted at `op` (planned by
/// [`parts`]) before it, with result type `result`, and returns its value.
pub fn build<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    result: Type<'c>,
) -> Value<'c, 'a> {
    let parts = parts(&op).expect("planned: the op is an attention's P V matmul");
    let scale = FloatAttribute::new(context, Type::float64(context), 1.0);
    Builder::before(context, op).value(
        fusion::AttentionOperation::builder(context, op.location())
            .q(parts.q)
            .k(parts.k)
            .v(parts.v)
            .scale(scale)
            .result(result)
            .build(),
    )
}
