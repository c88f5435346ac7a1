//===- AxisMap.h - how an op maps operand axes to output axes -------------===//
//
// The AxisMapOpInterface (common/AxisMap.td) and the maps it is made of. An
// op's output is its result (fusion) or its destination-passing-style init
// (host), which maps every axis to itself.
//
//===----------------------------------------------------------------------===//
#ifndef HIR_COMMON_AXISMAP_H
#define HIR_COMMON_AXISMAP_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

namespace hir {

using AxisMaps = llvm::SmallVector<llvm::SmallVector<int64_t>>;

/// The maps of an elementwise, reduction or broadcast op (its kind trait).
AxisMaps axisMapsByKind(mlir::Operation *op);
/// `[B1.., M, K] x [B2.., K, N] -> [B.., M, N]` (B the broadcast of B1 and
/// B2): K reduced, every other axis to the output axis at the same place from
/// the end; a batch axis of extent 1 against a longer output axis is
/// broadcast along it.
AxisMaps matmulAxisMaps(mlir::Operation *op);
/// `[B.., K] x [N, K] (+ [N]) -> [B.., N]`: K reduced, the weight's and the
/// bias's N to the last output axis.
AxisMaps linearAxisMaps(mlir::Operation *op);
/// `q [B.., Sq, D], k [B.., Sk, D], v [B.., Sk, Dv] (, mask [Sq, Sk]) ->
/// [B.., Sq, Dv]`: the batch axes to themselves, q's and the mask's Sq to
/// the output's Sq, v's Dv to Dv; D and Sk reduced.
AxisMaps attentionAxisMaps(mlir::Operation *op);
/// A transpose's: input axis `permutation[i]` to output axis `i` (the
/// op's `permutation` attribute).
AxisMaps permutationAxisMaps(mlir::Operation *op);

/// One group of a reshape: input axes [inBegin, inEnd) hold the elements of
/// output axes [outBegin, outEnd) (row-major, equal products). A group of one
/// axis on each side keeps that axis whole.
struct ReshapeGroup {
  int64_t inBegin, inEnd, outBegin, outEnd;
  bool keepsAxis() const { return inEnd - inBegin == 1 && outEnd - outBegin == 1; }
};
/// The smallest groups of a reshape of `input` to `output` (a unit axis on
/// one side only is a group of its own); none if the element counts differ.
llvm::SmallVector<ReshapeGroup> reshapeGroups(llvm::ArrayRef<int64_t> input,
                                              llvm::ArrayRef<int64_t> output);
/// A reshape's: an axis kept whole maps to its output axis, and so does the
/// outermost input axis of a merged or split group, to the group's outermost
/// output axis (a distribution there is an outer split); the group's other
/// axes map nowhere (-1: they correspond to no one output axis).
AxisMaps reshapeAxisMaps(mlir::Operation *op);

/// Whether a slice takes axis `axis` of `input` whole into `output`
/// (offset 0, stride 1, the same extent).
bool slicesWhole(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> output,
                 llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> strides, int64_t axis);
/// A slice's: an axis taken whole maps to itself, an axis cut nowhere (-1:
/// the result's axis holds only some of its indices, elsewhere).
AxisMaps sliceAxisMaps(mlir::Operation *op);

} // namespace hir

#include "common/AxisMapInterface.h.inc"

#endif // HIR_COMMON_AXISMAP_H
