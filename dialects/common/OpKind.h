//===- OpKind.h - the op traits that say what kind of computation an op is -===//
//
// The fusion and host compute ops carry one of four marker traits
// (common/Traits.td) that say how the op's result relates to its operands,
// so that passes ask the op (`op->hasTrait<hir::Elementwise>()`, or
// `hirOpKindOf` in the C API) instead of keeping lists of op names:
//
//   Elementwise  each result element is computed from the elements at the
//                same position of every operand (shapes match)
//   Reduction    reduces the axes listed in its `axes` attribute, which are
//                dropped from the result
//   Broadcast    inserts the new axes listed in its `axes` attribute,
//                repeating the input along them
//   Contraction  a matrix product over the operands' last axis (the
//                contracted K axis)
//
// The traits verify nothing: the ops' own verifiers check their shapes.
//
//===----------------------------------------------------------------------===//
#ifndef HIR_COMMON_OPKIND_H
#define HIR_COMMON_OPKIND_H

#include "mlir/IR/OpDefinition.h"

namespace hir {

template <typename ConcreteType>
class Elementwise : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {};

template <typename ConcreteType>
class Reduction : public mlir::OpTrait::TraitBase<ConcreteType, Reduction> {};

template <typename ConcreteType>
class Broadcast : public mlir::OpTrait::TraitBase<ConcreteType, Broadcast> {};

template <typename ConcreteType>
class Contraction : public mlir::OpTrait::TraitBase<ConcreteType, Contraction> {};

} // namespace hir

#endif // HIR_COMMON_OPKIND_H
