//===- AxisMap.cpp - how an op maps operand axes to output axes -----------===//
#include "common/AxisMap.h"
#include "common/OpKind.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

namespace hir {
#include "common/AxisMapInterface.cpp.inc"
} // namespace hir

namespace {

int64_t rankOf(Value value) { return cast<ShapedType>(value.getType()).getRank(); }

/// The op's inputs, and the rank of its output.
std::pair<SmallVector<Value>, int64_t> inputsAndOutputRank(Operation *op) {
  if (auto destination = dyn_cast<DestinationStyleOpInterface>(op)) {
    SmallVector<Value> inputs;
    for (OpOperand *input : destination.getDpsInputOperands())
      inputs.push_back(input->get());
    return {inputs, rankOf(destination.getDpsInits()[0])};
  }
  return {SmallVector<Value>(op->getOperands()), rankOf(op->getResult(0))};
}

SmallVector<int64_t> identity(int64_t rank) {
  SmallVector<int64_t> map;
  for (int64_t axis = 0; axis < rank; ++axis)
    map.push_back(axis);
  return map;
}

SmallVector<int64_t> axesAttribute(Operation *op) {
  SmallVector<int64_t> axes;
  if (auto attribute = op->getAttrOfType<DenseI64ArrayAttr>("axes"))
    axes.assign(attribute.asArrayRef().begin(), attribute.asArrayRef().end());
  return axes;
}

/// The maps of the inputs, then the identity of a host op's destination.
hir::AxisMaps withDestination(Operation *op, hir::AxisMaps maps, int64_t outputRank) {
  if (isa<DestinationStyleOpInterface>(op))
    maps.push_back(identity(outputRank));
  return maps;
}

} // namespace

hir::AxisMaps hir::axisMapsByKind(Operation *op) {
  auto [inputs, outputRank] = inputsAndOutputRank(op);
  AxisMaps maps;
  if (op->hasTrait<Elementwise>()) {
    for (Value input : inputs)
      maps.push_back(identity(rankOf(input)));
  } else if (op->hasTrait<Reduction>()) {
    SmallVector<int64_t> reduced = axesAttribute(op), map;
    int64_t next = 0;
    for (int64_t axis = 0; axis < rankOf(inputs[0]); ++axis)
      map.push_back(llvm::is_contained(reduced, axis) ? -1 : next++);
    maps.push_back(map);
  } else if (op->hasTrait<Broadcast>()) {
    SmallVector<int64_t> added = axesAttribute(op), map;
    for (int64_t axis = 0; axis < outputRank; ++axis)
      if (!llvm::is_contained(added, axis))
        map.push_back(axis);
    maps.push_back(map);
  }
  return withDestination(op, maps, outputRank);
}

hir::AxisMaps hir::matmulAxisMaps(Operation *op) {
  auto [inputs, outputRank] = inputsAndOutputRank(op);
  // Operand axes align with the output's from the right (torch.matmul's
  // broadcasting): batch axes, M (lhs) and N (rhs) keep their place from the
  // end; K is reduced. A batch axis of extent 1 maps to its output axis all
  // the same, and is broadcast along it when that axis is longer.
  auto alignedRight = [outputRank = outputRank](Value operand) {
    int64_t rank = rankOf(operand);
    SmallVector<int64_t> map;
    for (int64_t axis = 0; axis < rank; ++axis)
      map.push_back(axis + outputRank - rank);
    return map;
  };
  SmallVector<int64_t> lhs = alignedRight(inputs[0]);
  lhs.back() = -1;
  SmallVector<int64_t> rhs = alignedRight(inputs[1]);
  rhs[rhs.size() - 2] = -1;
  return withDestination(op, {lhs, rhs}, outputRank);
}

hir::AxisMaps hir::linearAxisMaps(Operation *op) {
  auto [inputs, outputRank] = inputsAndOutputRank(op);
  SmallVector<int64_t> input = identity(rankOf(inputs[0]));
  input.back() = -1;
  AxisMaps maps = {input, {outputRank - 1, -1}};
  if (inputs.size() == 3)
    maps.push_back({outputRank - 1});
  return withDestination(op, maps, outputRank);
}

hir::AxisMaps hir::attentionAxisMaps(Operation *op) {
  auto [inputs, outputRank] = inputsAndOutputRank(op);
  // Verified: q, k, v and the output have one rank, 2 or more.
  SmallVector<int64_t> q = identity(rankOf(inputs[0])), k = identity(rankOf(inputs[1])),
                       v = identity(rankOf(inputs[2]));
  q.back() = -1;
  k[k.size() - 2] = k.back() = -1;
  v[v.size() - 2] = -1;
  AxisMaps maps = {q, k, v};
  if (inputs.size() == 4)
    maps.push_back({outputRank - 2, -1});
  return withDestination(op, maps, outputRank);
}

hir::AxisMaps hir::permutationAxisMaps(Operation *op) {
  auto [inputs, outputRank] = inputsAndOutputRank(op);
  SmallVector<int64_t> map(rankOf(inputs[0]), -1);
  if (auto permutation = op->getAttrOfType<DenseI64ArrayAttr>("permutation"))
    for (auto [output, input] : llvm::enumerate(permutation.asArrayRef()))
      if (input >= 0 && input < static_cast<int64_t>(map.size()))
        map[input] = output;
  return withDestination(op, {map}, outputRank);
}

SmallVector<hir::ReshapeGroup> hir::reshapeGroups(ArrayRef<int64_t> input,
                                                  ArrayRef<int64_t> output) {
  auto product = [](ArrayRef<int64_t> shape) {
    int64_t elements = 1;
    for (int64_t extent : shape)
      elements *= extent;
    return elements;
  };
  int64_t elements = product(input);
  if (elements != product(output))
    return {};
  int64_t n = input.size(), m = output.size();
  if (elements == 0)
    return {{0, n, 0, m}};
  SmallVector<ReshapeGroup> groups;
  int64_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && input[i] == 1 && (j == m || output[j] != 1)) {
      groups.push_back({i, i + 1, j, j});
      ++i;
      continue;
    }
    if (j < m && output[j] == 1 && (i == n || input[i] != 1)) {
      groups.push_back({i, i, j, j + 1});
      ++j;
      continue;
    }
    int64_t inBegin = i, outBegin = j;
    int64_t in = input[i++], out = output[j++];
    while (in != out) {
      if (in < out)
        in *= input[i++];
      else
        out *= output[j++];
    }
    groups.push_back({inBegin, i, outBegin, j});
  }
  return groups;
}

hir::AxisMaps hir::reshapeAxisMaps(Operation *op) {
  auto [inputs, outputRank] = inputsAndOutputRank(op);
  auto shape = [](Value value) { return cast<ShapedType>(value.getType()).getShape(); };
  Value output = isa<DestinationStyleOpInterface>(op)
                     ? cast<DestinationStyleOpInterface>(op).getDpsInits()[0]
                     : op->getResult(0);
  SmallVector<int64_t> map(rankOf(inputs[0]), -1);
  // A kept axis maps to its output axis; so does a merged or split group's
  // outermost axis, which carries a distribution as an outer split.
  for (const ReshapeGroup &group : reshapeGroups(shape(inputs[0]), shape(output)))
    if (group.inEnd > group.inBegin && group.outEnd > group.outBegin)
      map[group.inBegin] = group.outBegin;
  return withDestination(op, {map}, outputRank);
}

bool hir::slicesWhole(ArrayRef<int64_t> input, ArrayRef<int64_t> output, ArrayRef<int64_t> offsets,
                      ArrayRef<int64_t> strides, int64_t axis) {
  auto in = [axis](ArrayRef<int64_t> list) {
    return axis < static_cast<int64_t>(list.size()) ? std::optional(list[axis]) : std::nullopt;
  };
  return in(input) && in(input) == in(output) && in(offsets) == 0 && in(strides) == 1;
}

hir::AxisMaps hir::sliceAxisMaps(Operation *op) {
  auto shape = [](Value value) { return cast<ShapedType>(value.getType()).getShape(); };
  auto list = [op](StringRef name) {
    auto attribute = op->getAttrOfType<DenseI64ArrayAttr>(name);
    return attribute ? attribute.asArrayRef() : ArrayRef<int64_t>();
  };
  ArrayRef<int64_t> input = shape(op->getOperand(0)), output = shape(op->getResult(0));
  SmallVector<int64_t> map;
  for (int64_t axis = 0; axis < static_cast<int64_t>(input.size()); ++axis)
    map.push_back(slicesWhole(input, output, list("offsets"), list("strides"), axis) ? axis : -1);
  return {map};
}
