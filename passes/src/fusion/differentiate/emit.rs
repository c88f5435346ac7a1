//! The ops the backward is made of: typed tensors, one builder per fusion op
//! the rules emit, and the two conversions a gradient goes through (to its
//! primal's type, and the gathers a contraction needs).

use crate::builders::{Builder, i64_attribute};
use crate::ops::Op;
use hir_dialects::{
    OpKind,
    dist::{Dist, ParallelType},
};
use melior::{
    Context,
    ir::{
        Attribute, Location, Type, TypeLike, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, FloatAttribute},
        operation::OperationResult,
        r#type::{RankedTensorType, ShapedTypeLike},
    },
};
use std::collections::HashMap;

/// A fusion tensor type, taken apart.
#[derive(Clone, Debug)]
pub(super) struct Tensor<'c> {
    pub shape: Vec<i64>,
    pub element: Type<'c>,
    /// `None` for an undistributed tensor.
    pub dist: Option<Dist>,
}

impl<'c> Tensor<'c> {
    pub fn of(r#type: Type<'c>) -> Self {
        let tensor = RankedTensorType::try_from(r#type).expect("fusion values are tensors");
        Self {
            shape: super::super::axis_map::shape(r#type).expect("fusion tensors are static"),
            element: tensor.element(),
            dist: Dist::of_type(r#type),
        }
    }

    pub fn is_tensor(r#type: Type) -> bool {
        RankedTensorType::try_from(r#type).is_ok()
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn to_type(&self, context: &'c Context) -> Type<'c> {
        let shape: Vec<u64> = self.shape.iter().map(|&extent| extent as u64).collect();
        let encoding = self.dist.as_ref().map(|dist| dist.to_attribute(context));
        RankedTensorType::new(&shape, self.element, encoding).into()
    }

    /// The tensor of axes `axes` of this one, in that order, each with its
    /// extent and parallel type.
    pub fn pick(&self, axes: &[usize]) -> Self {
        Self {
            shape: axes.iter().map(|&axis| self.shape[axis]).collect(),
            element: self.element,
            dist: self.dist.as_ref().map(|dist| {
                let picked: Vec<ParallelType> = axes.iter().map(|&axis| dist.axes[axis]).collect();
                Dist {
                    mesh: dist.mesh.clone(),
                    stream_chunks: dist
                        .stream_chunks
                        .filter(|_| picked.contains(&ParallelType::Stream)),
                    axes: picked,
                }
            }),
        }
    }

    /// The parallel type of `axis`, `serial` where undistributed.
    pub fn placement(&self, axis: usize) -> ParallelType {
        self.dist
            .as_ref()
            .map_or(ParallelType::Serial, |dist| match dist.axes[axis] {
                ParallelType::Stream => ParallelType::Serial,
                other => other,
            })
    }

    /// This tensor with `axes` made `serial`: gathered there.
    pub fn gathered(&self, axes: &[usize]) -> Self {
        let mut gathered = self.clone();
        if let Some(dist) = &mut gathered.dist {
            for &axis in axes {
                dist.axes[axis] = ParallelType::Serial;
            }
        }
        gathered
    }

    /// This tensor's shape and distribution with `element` as element type.
    pub fn with_element(&self, element: Type<'c>) -> Self {
        Self {
            element,
            ..self.clone()
        }
    }
}

/// Where rules build the backward: a builder at the end of its body, and
/// the constants and gathers made so far, made once each.
pub(super) struct Emit<'c, 'a> {
    pub context: &'c Context,
    builder: Builder<'c, 'a>,
    fills: HashMap<(usize, u64), Value<'c, 'a>>,
    gathers: HashMap<(usize, usize), Value<'c, 'a>>,
}

/// A map key for a value or a type: MLIR uniques types, and values are
/// their storage.
pub(super) fn key<T>(pointer: *const T) -> usize {
    pointer as usize
}

impl<'c, 'a> Emit<'c, 'a> {
    pub fn new(context: &'c Context, builder: Builder<'c, 'a>) -> Self {
        Self {
            context,
            builder,
            fills: HashMap::new(),
            gathers: HashMap::new(),
        }
    }

    /// Locates the ops built from now on at `location` (the forward op's).
    pub fn locate(&mut self, location: Location<'c>) {
        self.builder = self.builder.located(location);
    }

    pub fn location(&self) -> Location<'c> {
        self.builder.location
    }

    /// Builds `op` of `operands` and `attributes` with one result of `result`.
    pub fn op(
        &self,
        op: Op,
        operands: &[Value<'c, 'a>],
        attributes: &[(&str, Attribute<'c>)],
        result: Type<'c>,
    ) -> Value<'c, 'a> {
        let built = self.builder.op(
            op.name(),
            self.builder.location,
            operands,
            attributes,
            &[result],
        );
        crate::builders::result(built)
    }

    /// An elementwise op over `operands` with a result of `result`.
    pub fn pointwise(&self, op: Op, operands: &[Value<'c, 'a>], result: Type<'c>) -> Value<'c, 'a> {
        self.op(op, operands, &[], result)
    }

    /// A unary elementwise op whose result has its input's type.
    pub fn unary(&self, op: Op, input: Value<'c, 'a>) -> Value<'c, 'a> {
        self.pointwise(op, &[input], input.r#type())
    }

    /// A binary elementwise op whose result has its left operand's type.
    pub fn binary(&self, op: Op, lhs: Value<'c, 'a>, rhs: Value<'c, 'a>) -> Value<'c, 'a> {
        self.pointwise(op, &[lhs, rhs], lhs.r#type())
    }

    /// `fusion.where %mask, %lhs, %rhs` of `lhs`'s type.
    pub fn select(
        &self,
        mask: Value<'c, 'a>,
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
    ) -> Value<'c, 'a> {
        self.pointwise(Op::FusionWhere, &[mask, lhs, rhs], lhs.r#type())
    }

    /// `fusion.fill value` of type `r#type`, one per type and value.
    pub fn fill(&mut self, value: f64, r#type: Type<'c>) -> Value<'c, 'a> {
        let entry = (key(r#type.to_raw().ptr), value.to_bits());
        if let Some(&fill) = self.fills.get(&entry) {
            return fill;
        }
        let attribute = FloatAttribute::new(self.context, Type::float64(self.context), value);
        let fill = self.op(Op::FusionFill, &[], &[("value", attribute.into())], r#type);
        self.fills.insert(entry, fill);
        fill
    }

    /// `fusion.fill value` of the type of `like`.
    pub fn constant(&mut self, value: f64, like: Value<'c, 'a>) -> Value<'c, 'a> {
        self.fill(value, like.r#type())
    }

    /// `r#type` with f32 elements, if its elements are a narrower float
    /// (bf16, f16): the type a multi-step derivative is computed in.
    pub fn widened(&self, r#type: Type<'c>) -> Option<Type<'c>> {
        let tensor = Tensor::of(r#type);
        let narrow = [Type::bfloat16(self.context), Type::float16(self.context)];
        narrow.contains(&tensor.element).then(|| {
            tensor
                .with_element(Type::float32(self.context))
                .to_type(self.context)
        })
    }

    /// `fusion.iota axis` of type `r#type`.
    pub fn iota(&self, axis: usize, r#type: Type<'c>) -> Value<'c, 'a> {
        let axis = i64_attribute(self.context, axis as i64);
        self.op(Op::FusionIota, &[], &[("axis", axis)], r#type)
    }

    fn axes(&self, axes: &[usize]) -> Attribute<'c> {
        let axes: Vec<i64> = axes.iter().map(|&axis| axis as i64).collect();
        DenseI64ArrayAttribute::new(self.context, &axes).into()
    }

    /// `fusion.sum` of `input` over `axes`, of type `r#type`: one axis at a
    /// time where several are split over devices (a sum crosses one mesh
    /// axis at a time).
    pub fn sum(&self, input: Value<'c, 'a>, axes: &[usize], r#type: Type<'c>) -> Value<'c, 'a> {
        let tensor = Tensor::of(input.r#type());
        let split = axes
            .iter()
            .filter(|&&axis| tensor.placement(axis).is_device())
            .count();
        let mut sorted = axes.to_vec();
        sorted.sort_unstable();
        let Some((&last, rest)) = sorted.split_last().filter(|_| split > 1) else {
            return self.op(
                Op::FusionSum,
                &[input],
                &[("axes", self.axes(axes))],
                r#type,
            );
        };
        let kept: Vec<usize> = (0..tensor.rank()).filter(|&axis| axis != last).collect();
        let partial = tensor.pick(&kept).to_type(self.context);
        let partial = self.op(
            Op::FusionSum,
            &[input],
            &[("axes", self.axes(&[last]))],
            partial,
        );
        // The axes before `last` keep their positions.
        self.sum(partial, rest, r#type)
    }

    /// `fusion.amax` of `input` over `axes`, of type `r#type`.
    pub fn amax(&self, input: Value<'c, 'a>, axes: &[usize], r#type: Type<'c>) -> Value<'c, 'a> {
        let axes = self.axes(axes);
        self.op(Op::FusionAmax, &[input], &[("axes", axes)], r#type)
    }

    /// `fusion.broadcast` of `input` along new axes `axes`, of type `r#type`.
    pub fn broadcast(
        &self,
        input: Value<'c, 'a>,
        axes: &[usize],
        r#type: Type<'c>,
    ) -> Value<'c, 'a> {
        let axes = self.axes(axes);
        self.op(Op::FusionBroadcast, &[input], &[("axes", axes)], r#type)
    }

    /// `fusion.transpose` of `input`: result axis `i` is input axis
    /// `permutation[i]`, with its extent and parallel type.
    pub fn transpose(&self, input: Value<'c, 'a>, permutation: &[usize]) -> Value<'c, 'a> {
        let result = Tensor::of(input.r#type()).pick(permutation);
        let permutation = self.axes(permutation);
        self.op(
            Op::FusionTranspose,
            &[input],
            &[("permutation", permutation)],
            result.to_type(self.context),
        )
    }

    /// The value of `value` as type `r#type`, which differs at most in its
    /// distribution: `value` itself, or a `fusion.set` to it. A contraction
    /// or reduction the rules just built (nothing uses it yet) on the same
    /// mesh is given `r#type` as its result instead, so that it reduces
    /// straight into that placement: a GEMM and a reduce-scatter, not an
    /// allreduce and a slice.
    pub fn convert(&self, value: Value<'c, 'a>, r#type: Type<'c>) -> Value<'c, 'a> {
        if value.r#type() == r#type {
            return value;
        }
        let same_mesh = match (Dist::of_type(value.r#type()), Dist::of_type(r#type)) {
            (Some(from), Some(to)) => from.mesh == to.mesh,
            _ => false,
        };
        let foldable = OperationResult::try_from(value).is_ok_and(|result| {
            let producer = result.owner();
            matches!(
                OpKind::of(&producer),
                OpKind::Contraction | OpKind::Reduction
            ) && crate::ir::users(value).is_empty()
        });
        if same_mesh && foldable {
            value.set_type(r#type);
            return value;
        }
        self.op(Op::FusionSet, &[value], &[], r#type)
    }

    /// `value` with its axes `axes` gathered (made `serial` by a
    /// `fusion.set`), one set per value and placement.
    pub fn gather(&mut self, value: Value<'c, 'a>, axes: &[usize]) -> Value<'c, 'a> {
        let tensor = Tensor::of(value.r#type());
        if axes.iter().all(|&axis| !tensor.placement(axis).is_device()) {
            return value;
        }
        let r#type = tensor.gathered(axes).to_type(self.context);
        let entry = (key(value.to_raw().ptr), key(r#type.to_raw().ptr));
        if let Some(&gathered) = self.gathers.get(&entry) {
            return gathered;
        }
        let gathered = self.op(Op::FusionSet, &[value], &[], r#type);
        self.gathers.insert(entry, gathered);
        gathered
    }
}
