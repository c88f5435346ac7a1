//===- HostDialect.cpp - the host dialect: registration and verifiers -----===//
#include "host/HostDialect.h"
#include "common/Verify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace hir;
using namespace hir::host;

#include "host/HostDialect.cpp.inc"
#include "host/HostEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "host/HostTypes.cpp.inc"

static ShapedType shaped(Value value) {
  return value ? cast<ShapedType>(value.getType()) : ShapedType();
}

/// The verifiers of every unary and binary elementwise op (their ODS classes'
/// `extraClassDefinition`).
template <typename Op>
static LogicalResult verifyUnary(Op op, bool sameElementType = true) {
  return verifySameShape(op, shaped(op.getInput()), "input", shaped(op.getOutput()), "output",
                         sameElementType);
}

template <typename Op>
static LogicalResult verifyBinary(Op op) {
  if (failed(verifySameShape(op, shaped(op.getLhs()), "lhs", shaped(op.getOutput()), "output")))
    return failure();
  return verifySameShape(op, shaped(op.getRhs()), "rhs", shaped(op.getOutput()), "output");
}

#define GET_OP_CLASSES
#include "host/HostOps.cpp.inc"

void HostDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "host/HostTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "host/HostOps.cpp.inc"
      >();
}

LogicalResult HostDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  return op->emitError() << "unknown host attribute '" << attribute.getName().getValue() << "'";
}

LogicalResult AllocOp::verify() {
  MemRefType type = getType();
  if (!type.hasStaticShape())
    return emitOpError() << "buffer shape must be static, got " << type;
  if (!type.getLayout().isIdentity())
    return emitOpError() << "buffer must have the identity layout, got " << type.getLayout();
  return success();
}

MemRefType SelectOp::inferResultType(MemRefType source, int64_t axis) {
  if (axis < 0 || axis >= source.getRank())
    return {};
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(source.getStridesAndOffset(strides, offset)))
    return {};
  SmallVector<int64_t> shape(source.getShape());
  shape.erase(shape.begin() + axis);
  strides.erase(strides.begin() + axis);
  auto layout = StridedLayoutAttr::get(source.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(shape, source.getElementType(), layout, source.getMemorySpace());
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto source = dyn_cast<MemRefType>(adaptor.getSource().getType());
  if (!source)
    return emitOptionalError(location, "'host.select' op source must be a memref");
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= source.getRank())
    return emitOptionalError(location, "'host.select' op axis ", axis,
                             " is out of range for rank ", source.getRank());
  MemRefType view = inferResultType(source, axis);
  if (!view)
    return emitOptionalError(location, "'host.select' op source ", source,
                             " has no strided layout");
  types.push_back(view);
  return success();
}

// Runs before the interface's check that the result type is the inferred
// one (InferTypeOpInterface verifies with regions, after this), so that a
// wrong op gets one diagnostic naming what is wrong.
LogicalResult SelectOp::verify() {
  MemRefType source = getSource().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= source.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank " << source.getRank();
  APInt index;
  if (matchPattern(getIndex(), m_ConstantInt(&index))) {
    // A dynamic extent bounds a constant index from below only.
    bool dynamic = source.isDynamicDim(axis);
    if (index.isNegative() || (!dynamic && index.getSExtValue() >= source.getDimSize(axis))) {
      InFlightDiagnostic diag = emitOpError() << "index " << index.getSExtValue()
                                              << " is out of range for axis " << axis;
      if (dynamic)
        return diag << " of dynamic extent";
      return diag << " of extent " << source.getDimSize(axis);
    }
  }
  MemRefType expected = inferResultType(source, axis);
  if (!expected)
    return emitOpError() << "source " << source << " has no strided layout";
  if (getType() != expected)
    return emitOpError() << "result type " << getType() << " is not the view type " << expected;
  return success();
}

LogicalResult StreamForOp::verify() {
  Block &body = getBody().front();
  Type index = IndexType::get(getContext());
  Type stream = StreamType::get(getContext());
  if (body.getNumArguments() != 2 || body.getArgument(0).getType() != index ||
      body.getArgument(1).getType() != stream)
    return emitOpError() << "body must take the iteration's index and stream (index, "
                         << stream << ")";
  // The join waits for the iteration's stream only: work enqueued on another
  // stream at the end of the body would not be joined.
  SetCurrentStreamOp last;
  for (Operation &op : body)
    if (auto set = dyn_cast<SetCurrentStreamOp>(op))
      last = set;
  if (last && last.getStream() != body.getArgument(1))
    return last.emitOpError()
           << "is the last stream switch of a host.stream_for iteration, so it must make the "
              "iteration's stream current again";
  return success();
}

LogicalResult CopyOp::verify() {
  return verifySameShape(*this, shaped(getInput()), "input", shaped(getOutput()), "output");
}

LogicalResult TransposeOp::verify() {
  return verifyPermutation(*this, shaped(getInput()), shaped(getOutput()), getPermutation());
}

LogicalResult ReshapeOp::verify() {
  return verifyReshape(*this, shaped(getInput()), shaped(getOutput()));
}

LogicalResult FillOp::verify() {
  return verifyFillValue(*this, shaped(getOutput()), getValue().convertToDouble());
}

LogicalResult IotaOp::verify() { return verifyIotaAxis(*this, shaped(getOutput()), getAxis()); }

LogicalResult WhereOp::verify() {
  ShapedType output = shaped(getOutput());
  if (failed(verifySameShape(*this, shaped(getMask()), "mask", output, "output")) ||
      failed(verifySameShape(*this, shaped(getLhs()), "lhs", output, "output")))
    return failure();
  return verifySameShape(*this, shaped(getRhs()), "rhs", output, "output");
}


LogicalResult SumOp::verify() {
  return verifyReduction(*this, shaped(getInput()), shaped(getOutput()), getAxes());
}

LogicalResult AmaxOp::verify() {
  return verifyReduction(*this, shaped(getInput()), shaped(getOutput()), getAxes());
}

LogicalResult BroadcastOp::verify() {
  return verifyBroadcast(*this, shaped(getInput()), shaped(getOutput()), getAxes());
}

/// An epilogue would apply to the accumulated sum, which the unfused ops
/// never compute: the activation belongs to a GEMM that writes its output.
template <typename GemmOp> static LogicalResult verifyEpilogue(GemmOp op) {
  if (op.getActivation() && op.getAccumulate())
    return op.emitOpError() << "cannot apply activation "
                            << stringifyActivation(*op.getActivation())
                            << " with accumulate: an epilogue applies to a GEMM that writes its "
                               "output";
  return success();
}

LogicalResult MatmulOp::verify() {
  if (failed(verifyEpilogue(*this)))
    return failure();
  return verifyMatmul(*this, shaped(getLhs()), shaped(getRhs()), shaped(getOutput()),
                      /*allowVectorLhs=*/true);
}

LogicalResult LinearOp::verify() {
  if (failed(verifyEpilogue(*this)))
    return failure();
  if (getAccumulate() && getBias())
    return emitOpError() << "accumulates its product without a bias (the bias would be added at each accumulation)";
  return verifyLinear(*this, shaped(getInput()), shaped(getWeight()), shaped(getBias()),
                      shaped(getOutput()));
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, shaped(getQ()), shaped(getK()), shaped(getV()),
                         shaped(getMask()), shaped(getOutput()),
                         getScale().convertToDouble());
}

/// A fused op's iteration shape: that of its outputs of the largest rank.
static ArrayRef<int64_t> iterationShape(FusedOp op) {
  MemRefType largest;
  for (Type output : op.getOutputs().getTypes()) {
    auto type = cast<MemRefType>(output);
    if (!largest || type.getRank() > largest.getRank())
      largest = type;
  }
  return largest ? largest.getShape() : ArrayRef<int64_t>{};
}

/// Whether `shape` is `iteration` without its last axis: a row of a fused
/// op that reduces along that axis.
static bool isRowShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> iteration) {
  return !iteration.empty() && shape == iteration.drop_back();
}

/// Every output has the iteration shape, or it without its last axis (a row
/// output, one value per row).
LogicalResult FusedOp::verify() {
  if (getOutputs().empty())
    return emitOpError() << "needs at least one output";
  for (auto [index, output] : llvm::enumerate(getOutputs().getTypes()))
    if (!cast<MemRefType>(output).hasStaticShape())
      return emitOpError() << "output #" << index << " must have a static shape, got " << output;
  ArrayRef<int64_t> shape = iterationShape(*this);
  for (auto [index, output] : llvm::enumerate(getOutputs().getTypes())) {
    ArrayRef<int64_t> outputShape = cast<MemRefType>(output).getShape();
    if (outputShape != shape && !isRowShape(outputShape, shape))
      return emitOpError() << "output #" << index << " of type " << output
                           << " has neither the iteration shape [" << shape
                           << "] (its largest outputs') nor that shape without its last axis";
  }
  return success();
}

LogicalResult FusedOp::verifyRegions() {
  Block &body = getBody().front();
  unsigned inputs = getInputs().size(), buffers = getNumOperands();
  if (body.getNumArguments() < buffers)
    return emitOpError() << "body must take the " << buffers
                         << " operands then the temporaries, got " << body.getNumArguments()
                         << " arguments";
  for (unsigned index = 0; index < buffers; ++index)
    if (body.getArgument(index).getType() != getOperand(index).getType())
      return emitOpError() << "body argument #" << index << " has type "
                           << body.getArgument(index).getType() << ", not the type of operand #"
                           << index << ", " << getOperand(index).getType();
  ArrayRef<int64_t> shape = iterationShape(*this);
  for (unsigned index = buffers; index < body.getNumArguments(); ++index) {
    auto type = dyn_cast<MemRefType>(body.getArgument(index).getType());
    if (!type || (type.getShape() != shape && !isRowShape(type.getShape(), shape)) ||
        !type.getLayout().isIdentity())
      return emitOpError() << "temporary #" << index - buffers
                           << " must be a buffer of the iteration shape, or of it without its "
                              "last axis, with the identity layout, got "
                           << body.getArgument(index).getType();
  }
  // Which arguments an op of the body has written so far.
  SmallVector<bool> written(body.getNumArguments(), false);
  auto argumentOf = [&](Value value) -> std::optional<unsigned> {
    auto argument = dyn_cast<BlockArgument>(value);
    if (!argument || argument.getOwner() != &body)
      return std::nullopt;
    return argument.getArgNumber();
  };
  // A broadcast reads an input: every other argument has the iteration
  // shape, which its output has too. A fill is a constant of the kernel.
  for (Operation &op : body) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(&op);
    if (op.getDialect() != getOperation()->getDialect() ||
        !(op.hasTrait<hir::Elementwise>() || op.hasTrait<hir::Broadcast>() ||
          op.hasTrait<hir::Reduction>() || isa<FillOp>(op)) ||
        !dps || dps.getNumDpsInits() != 1)
      return op.emitOpError() << "cannot be in a host.fused body, which holds only elementwise "
                                 "host ops, fills, broadcasts and reductions";
    if (op.hasTrait<hir::Reduction>()) {
      auto axes = op.getAttrOfType<DenseI64ArrayAttr>("axes");
      auto input = cast<MemRefType>(dps.getDpsInputOperand(0)->get().getType());
      if (!axes || input.getShape() != shape ||
          axes.asArrayRef() != ArrayRef<int64_t>{input.getRank() - 1})
        return op.emitOpError() << "in a host.fused body must reduce the last axis of a buffer of "
                                   "the iteration shape ["
                                << shape << "]";
    }
    for (OpOperand *input : dps.getDpsInputOperands()) {
      std::optional<unsigned> argument = argumentOf(input->get());
      if (!argument)
        return op.emitOpError() << "reads operand #" << input->getOperandNumber()
                                << ", which is not an argument of the host.fused body";
      if (*argument >= inputs && !written[*argument])
        return op.emitOpError() << "reads body argument #" << *argument
                                << " before any op of the host.fused body writes it";
    }
    std::optional<unsigned> target = argumentOf(dps.getDpsInitOperand(0)->get());
    if (!target)
      return op.emitOpError() << "writes a value that is not an argument of the host.fused body";
    if (*target < inputs)
      return op.emitOpError() << "writes input #" << *target << " of the host.fused body";
    if (written[*target])
      return op.emitOpError() << "writes body argument #" << *target
                              << ", which an earlier op of the host.fused body writes";
    written[*target] = true;
  }
  for (unsigned index = inputs; index < body.getNumArguments(); ++index)
    if (!written[index])
      return emitOpError() << "body argument #" << index << " (an "
                           << (index < buffers ? "output" : "temporary")
                           << ") is never written";
  return success();
}
