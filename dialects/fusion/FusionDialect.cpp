//===- FusionDialect.cpp - the fusion dialect: registration and verifiers -===//
#include "fusion/FusionDialect.h"
#include "common/Verify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace hir;
using namespace hir::fusion;

#include "fusion/FusionDialect.cpp.inc"
#include "fusion/FusionEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fusion/FusionAttrs.cpp.inc"

/// The verifier of every unary and binary elementwise op (their ODS classes'
/// `extraClassDefinition`); defined with the other verifiers below.
static LogicalResult verifyElementwise(Operation *op, bool sameElementType = true);

/// The rest of one bracketed level of a mesh, after its `[`: device ids, or
/// lists of one shape; appends the ids to `ranks` and the level's shape
/// (its length, then its elements' shape) to `shape`.
static ParseResult parseMeshLevel(OpAsmParser &parser, SMLoc start, SmallVectorImpl<int64_t> &ranks,
                                  SmallVectorImpl<int64_t> &shape) {
  if (succeeded(parser.parseOptionalRSquare())) {
    shape.push_back(0);
    return success();
  }
  std::optional<SmallVector<int64_t>> elementShape;
  int64_t length = 0;
  do {
    SmallVector<int64_t> element;
    if (succeeded(parser.parseOptionalLSquare())) {
      if (parseMeshLevel(parser, start, ranks, element))
        return failure();
    } else {
      int64_t rank;
      if (parser.parseInteger(rank))
        return failure();
      ranks.push_back(rank);
    }
    if (elementShape && *elementShape != element)
      return parser.emitError(start, "mesh rows differ in size");
    elementShape = element;
    ++length;
  } while (succeeded(parser.parseOptionalComma()));
  if (parser.parseRSquare())
    return failure();
  shape.push_back(length);
  shape.append(elementShape->begin(), elementShape->end());
  return success();
}

/// `[0, 1, 2, 3]` (a 1-D mesh), `[[0, 1], [2, 3]]` (its rows: a 2-D mesh) or
/// `[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]` (a 3-D mesh), stored flat with its
/// `shape` when it has more than one axis.
static ParseResult parseMeshDevices(OpAsmParser &parser, DenseI64ArrayAttr &devices,
                                   DenseI64ArrayAttr &shape) {
  SMLoc start = parser.getCurrentLocation();
  SmallVector<int64_t> ranks, dims;
  if (parser.parseLSquare() || parseMeshLevel(parser, start, ranks, dims))
    return failure();
  devices = DenseI64ArrayAttr::get(parser.getContext(), ranks);
  if (dims.size() > 1)
    shape = DenseI64ArrayAttr::get(parser.getContext(), dims);
  return success();
}

static void printMeshLevel(OpAsmPrinter &printer, ArrayRef<int64_t> devices,
                           ArrayRef<int64_t> shape) {
  printer << "[";
  if (shape.size() <= 1) {
    llvm::interleaveComma(devices, printer);
  } else {
    int64_t stride = static_cast<int64_t>(devices.size()) / shape.front();
    for (int64_t index = 0; index < shape.front(); ++index) {
      if (index)
        printer << ", ";
      printMeshLevel(printer, devices.slice(index * stride, stride), shape.drop_front());
    }
  }
  printer << "]";
}

static void printMeshDevices(OpAsmPrinter &printer, Operation *, DenseI64ArrayAttr devices,
                             DenseI64ArrayAttr shape) {
  int64_t size = 1;
  for (int64_t dim : shape ? shape.asArrayRef() : ArrayRef<int64_t>())
    size *= dim;
  if (shape && shape.size() > 1 && size == static_cast<int64_t>(devices.size()) && size > 0)
    printMeshLevel(printer, devices.asArrayRef(), shape.asArrayRef());
  else
    printMeshLevel(printer, devices.asArrayRef(), {});
}

#define GET_OP_CLASSES
#include "fusion/FusionOps.cpp.inc"

void FusionDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fusion/FusionAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fusion/FusionOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DistAttr
//===----------------------------------------------------------------------===//

Attribute DistAttr::parse(AsmParser &parser, Type) {
  FlatSymbolRefAttr mesh;
  SmallVector<ParallelType> axes;
  int64_t streamChunks = 0;
  auto parseAxis = [&]() -> ParseResult {
    FailureOr<ParallelType> axis = FieldParser<ParallelType>::parse(parser);
    if (failed(axis))
      return failure();
    axes.push_back(*axis);
    // `stream<k>`: the stream axis in k chunks.
    if (*axis == ParallelType::stream && succeeded(parser.parseOptionalLess())) {
      SMLoc at = parser.getCurrentLocation();
      if (parser.parseInteger(streamChunks) || parser.parseGreater())
        return failure();
      if (streamChunks < 1)
        return parser.emitError(at) << "a stream axis has at least one chunk, not "
                                    << streamChunks;
    }
    return success();
  };
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis) ||
      parser.parseGreater())
    return {};
  return DistAttr::get(parser.getContext(), mesh, axes, streamChunks);
}

void DistAttr::print(AsmPrinter &printer) const {
  printer << "<" << getMesh() << ", [";
  llvm::interleaveComma(getAxes(), printer, [&](ParallelType axis) {
    printer << stringifyEnum(axis);
    if (axis == ParallelType::stream && getStreamChunks())
      printer << "<" << getStreamChunks() << ">";
  });
  printer << "]>";
}

std::optional<unsigned> DistAttr::findAxis(ParallelType type) const {
  for (auto [axis, t] : llvm::enumerate(getAxes()))
    if (t == type)
      return axis;
  return std::nullopt;
}

LogicalResult DistAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                       function_ref<InFlightDiagnostic()> emitError) const {
  if (getAxes().size() != shape.size())
    return emitError() << "distribution has " << getAxes().size()
                       << " parallel types for a tensor of rank " << shape.size();
  for (ParallelType type :
       {ParallelType::didx, ParallelType::didy, ParallelType::didz, ParallelType::stream})
    if (llvm::count(getAxes(), type) > 1)
      return emitError() << "distribution has more than one '" << stringifyEnum(type)
                         << "' axis";
  if (getStreamChunks()) {
    std::optional<unsigned> stream = findAxis(ParallelType::stream);
    if (!stream)
      return emitError() << "distribution has " << getStreamChunks()
                         << " stream chunks but no 'stream' axis";
    int64_t extent = shape[*stream];
    if (getStreamChunks() < 1 || extent % getStreamChunks() != 0)
      return emitError() << "stream axis " << *stream << " of extent " << extent
                         << " does not split into " << getStreamChunks() << " equal chunks";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  if (getDevices().empty())
    return emitOpError("mesh has no device");
  if (std::optional<ArrayRef<int64_t>> shape = getShape()) {
    int64_t size = 1;
    for (int64_t dim : *shape)
      size *= dim;
    if (shape->size() < 2 || shape->size() > 3 || size != getSize())
      return emitOpError() << "mesh shape must have 2 or 3 axes whose product is the "
                           << getSize() << " devices";
  }
  llvm::SmallSetVector<int64_t, 8> seen;
  for (int64_t device : getDevices()) {
    if (device < 0)
      return emitOpError() << "device id " << device << " is negative";
    if (!seen.insert(device))
      return emitOpError() << "device " << device << " appears twice";
  }
  return success();
}

/// A tensor's encoding, if any, is a distribution.
static LogicalResult verifyEncodings(Operation *op) {
  for (Type type : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    Attribute encoding = cast<RankedTensorType>(type).getEncoding();
    if (encoding && !isa<DistAttr>(encoding))
      return op->emitOpError() << "tensor encoding " << encoding
                               << " is not a #fusion.dist distribution";
  }
  return success();
}

static ShapedType shaped(Value value) {
  return value ? cast<ShapedType>(value.getType()) : ShapedType();
}

LogicalResult SetOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifySameShape(*this, shaped(getInput()), "input", shaped(getResult()), "result");
}

/// Shared by every elementwise op: inputs and result agree in shape and, unless
/// `sameElementType` is false (cast), in element type.
static LogicalResult verifyElementwise(Operation *op, bool sameElementType) {
  if (failed(verifyEncodings(op)))
    return failure();
  ShapedType result = shaped(op->getResult(0));
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (failed(verifySameShape(op, shaped(operand), op->getNumOperands() == 1 ? "input" : (i == 0 ? "lhs" : "rhs"),
                               result, "result", sameElementType)))
      return failure();
  return success();
}

LogicalResult CastOp::verify() { return verifyElementwise(*this, /*sameElementType=*/false); }

LogicalResult WhereOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  ShapedType result = shaped(getResult());
  if (failed(verifySameShape(*this, shaped(getMask()), "mask", result, "result")) ||
      failed(verifySameShape(*this, shaped(getLhs()), "lhs", result, "result")))
    return failure();
  return verifySameShape(*this, shaped(getRhs()), "rhs", result, "result");
}

LogicalResult TransposeOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyPermutation(*this, shaped(getInput()), shaped(getResult()), getPermutation());
}

/// `type`'s parallel type on `axis`, if `type` is annotated (unannotated,
/// fusion-propagate-sharding infers it).
static std::optional<ParallelType> parallelType(RankedTensorType type, int64_t axis) {
  if (auto dist = dyn_cast_or_null<DistAttr>(type.getEncoding()))
    return dist.getAxes()[axis];
  return std::nullopt;
}

/// The first axis in [begin, end) that `type`'s distribution does not keep
/// `serial`, with its parallel type.
static std::optional<std::pair<int64_t, ParallelType>>
distributedAxis(RankedTensorType type, int64_t begin, int64_t end) {
  for (int64_t axis = begin; axis < end; ++axis)
    if (std::optional<ParallelType> parallel = parallelType(type, axis);
        parallel && *parallel != ParallelType::serial)
      return std::make_pair(axis, *parallel);
  return std::nullopt;
}

LogicalResult ReshapeOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyReshape(*this, input, result)))
    return failure();
  for (const ReshapeGroup &group : reshapeGroups(input.getShape(), result.getShape())) {
    if (group.keepsAxis())
      continue;
    std::string axes = llvm::formatv("input axes [{0}, {1}) to result axes [{2}, {3})",
                                     group.inBegin, group.inEnd, group.outBegin, group.outEnd);
    auto fail = [&](StringRef side, std::pair<int64_t, ParallelType> axis) {
      return emitOpError() << side << " axis " << axis.first << " is "
                           << stringifyEnum(axis.second) << " but the reshape merges or splits it ("
                           << axes
                           << "); only an axis kept whole, or the outermost axis of a merged or "
                              "split group distributed alike (didx, didy or didz) on both sides, "
                              "may be distributed";
    };
    // A group with axes on both sides may be distributed on its outermost
    // axis, alike on both sides (an outer split: each device's shard is one
    // contiguous run of the group's row-major elements on both sides, when
    // the device count divides both outer extents, which
    // fusion-verify-sharding checks). A side left unannotated is inferred
    // later; a group of unit axes on one side only is serial.
    bool bothSides = group.inEnd > group.inBegin && group.outEnd > group.outBegin;
    int64_t skip = bothSides ? 1 : 0;
    if (bothSides) {
      std::optional<ParallelType> in = parallelType(input, group.inBegin);
      std::optional<ParallelType> out = parallelType(result, group.outBegin);
      if (in == ParallelType::stream)
        return fail("input", {group.inBegin, *in});
      if (out == ParallelType::stream)
        return fail("result", {group.outBegin, *out});
      if (in && out && *in != *out)
        return emitOpError() << "input axis " << group.inBegin << " is " << stringifyEnum(*in)
                             << " but result axis " << group.outBegin << " is "
                             << stringifyEnum(*out)
                             << "; the outermost axes of a merged or split group (" << axes
                             << ") are distributed alike (an outer split) or not at all";
    }
    if (auto axis = distributedAxis(input, group.inBegin + skip, group.inEnd))
      return fail("input", *axis);
    if (auto axis = distributedAxis(result, group.outBegin + skip, group.outEnd))
      return fail("result", *axis);
  }
  return success();
}

LogicalResult SliceOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(verifySlice(*this, input, result, getOffsets(), getStrides())))
    return failure();
  // An axis the slice cuts is serial wherever it is annotated: a device's
  // part of it would hold indices of other devices' parts.
  for (int64_t axis = 0; axis < input.getRank(); ++axis) {
    if (slicesWhole(input.getShape(), result.getShape(), getOffsets(), getStrides(), axis))
      continue;
    for (auto [side, type] : {std::pair<StringRef, RankedTensorType>{"input", input},
                              std::pair<StringRef, RankedTensorType>{"result", result}})
      if (std::optional<ParallelType> parallel = parallelType(type, axis);
          parallel && *parallel != ParallelType::serial)
        return emitOpError() << side << " axis " << axis << " is " << stringifyEnum(*parallel)
                             << " but the slice cuts it (offset " << getOffsets()[axis]
                             << ", stride " << getStrides()[axis] << ", "
                             << result.getDimSize(axis) << " of " << input.getDimSize(axis)
                             << "); only an axis taken whole may be distributed (reshard it "
                                "first, or reshape the part to cut onto a serial axis)";
  }
  return success();
}

LogicalResult FillOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyFillValue(*this, shaped(getResult()), getValue().convertToDouble());
}

LogicalResult IotaOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyIotaAxis(*this, shaped(getResult()), getAxis());
}

LogicalResult SumOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyReduction(*this, shaped(getInput()), shaped(getResult()), getAxes());
}

LogicalResult AmaxOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyReduction(*this, shaped(getInput()), shaped(getResult()), getAxes());
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyBroadcast(*this, shaped(getInput()), shaped(getResult()), getAxes());
}

LogicalResult MatmulOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyMatmul(*this, shaped(getLhs()), shaped(getRhs()), shaped(getResult()));
}

LogicalResult LinearOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  return verifyLinear(*this, shaped(getInput()), shaped(getWeight()), shaped(getBias()),
                      shaped(getResult()));
}

/// The distribution of tensor `value`, if it has one.
static DistAttr distOf(Value value) {
  return dyn_cast_or_null<DistAttr>(cast<RankedTensorType>(value.getType()).getEncoding());
}

/// Where a distribution places an axis: `stream` schedules, it places nothing.
static ParallelType placement(ParallelType type) {
  return type == ParallelType::stream ? ParallelType::serial : type;
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyEncodings(*this)))
    return failure();
  std::optional<double> scale;
  if (std::optional<APFloat> value = getScale())
    scale = value->convertToDouble();
  if (failed(verifyAttention(*this, shaped(getQ()), shaped(getK()), shaped(getV()),
                             shaped(getMask()), shaped(getResult()), scale)))
    return failure();
  int64_t rank = cast<ShapedType>(getQ().getType()).getRank();
  if (!scale && cast<ShapedType>(getQ().getType()).getDimSize(rank - 1) == 0)
    return emitOpError("q has D = 0, whose default scale 1 / sqrt(D) is not finite; give a scale");
  // The last two axes of each tensor, by name.
  std::pair<StringRef, Value> tensors[] = {
      {"q", getQ()}, {"k", getK()}, {"v", getV()}, {"result", getResult()}};
  StringRef inner[][2] = {{"Sq", "D"}, {"Sk", "D"}, {"Sk", "Dv"}, {"Sq", "Dv"}};
  // The batch axes' placement, from the first tensor annotated.
  std::optional<std::pair<StringRef, DistAttr>> first;
  for (auto [index, named] : llvm::enumerate(tensors)) {
    auto [name, value] = named;
    DistAttr dist = distOf(value);
    if (!dist)
      continue;
    for (int64_t axis = rank - 2; axis < rank; ++axis)
      if (dist.getAxes()[axis] != ParallelType::serial)
        return emitOpError() << name << " axis " << axis << " (" << inner[index][axis - rank + 2]
                             << ") is " << stringifyEnum(dist.getAxes()[axis])
                             << "; the Sq, Sk, D and Dv axes of attention are serial (only "
                                "batch axes may be split or streamed)";
    if (!first) {
      first = {name, dist};
      continue;
    }
    for (int64_t axis = 0; axis < rank - 2; ++axis) {
      ParallelType expected = first->second.getAxes()[axis], got = dist.getAxes()[axis];
      if (placement(expected) != placement(got))
        return emitOpError() << "batch axis " << axis << " is " << stringifyEnum(expected)
                             << " in " << first->first << " but " << stringifyEnum(got) << " in "
                             << name << "; q, k, v and the result are distributed alike on "
                             << "their batch axes";
    }
  }
  if (DistAttr dist = getMask() ? distOf(getMask()) : DistAttr())
    for (auto [axis, type] : llvm::enumerate(dist.getAxes()))
      if (type != ParallelType::serial)
        return emitOpError() << "mask axis " << axis << " is " << stringifyEnum(type)
                             << "; the mask is read whole by every device: every axis serial";
  return success();
}
