//===- CommDialect.cpp - the comm dialect: registration and verifiers -----===//
#include "comm/CommDialect.h"
#include "common/RowsSyntax.h"
#include "common/Verify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace hir;
using namespace hir::comm;

#include "comm/CommDialect.cpp.inc"
#include "comm/CommEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "comm/CommTypes.cpp.inc"

/// `[0, 1, 2, 3]` (one team) or `[[0, 1], [2, 3]]` (teams of one size,
/// stored flat with `teamSize`).
static ParseResult parseTeams(OpAsmParser &parser, DenseI64ArrayAttr &team,
                              IntegerAttr &teamSize) {
  SmallVector<int64_t> ranks;
  std::optional<int64_t> size;
  if (parseRows(parser, ranks, size, "teams differ in size"))
    return failure();
  team = DenseI64ArrayAttr::get(parser.getContext(), ranks);
  if (size)
    teamSize = IntegerAttr::get(IntegerType::get(parser.getContext(), 64), *size);
  return success();
}

static void printTeams(OpAsmPrinter &printer, Operation *, DenseI64ArrayAttr team,
                       IntegerAttr teamSize) {
  printRows(printer, team.asArrayRef(), teamSize ? teamSize.getInt() : 0);
}

#define GET_OP_CLASSES
#include "comm/CommOps.cpp.inc"

void CommDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "comm/CommTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "comm/CommOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

static LogicalResult verifyTeam(Operation *op, ArrayRef<int64_t> team) {
  if (team.empty())
    return op->emitOpError("team is empty");
  llvm::SmallSetVector<int64_t, 8> seen;
  for (int64_t rank : team) {
    if (rank < 0)
      return op->emitOpError() << "team rank " << rank << " is negative";
    if (!seen.insert(rank))
      return op->emitOpError() << "rank " << rank << " appears twice in the team";
  }
  return success();
}

static LogicalResult verifyRoot(Operation *op, ArrayRef<int64_t> team, int64_t root) {
  if (!llvm::is_contained(team, root))
    return op->emitOpError() << "root " << root << " is not in the team";
  return success();
}

/// The root of a broadcast or reduce: exactly one of a constant `root` and
/// a value `dynamicRoot`; a constant one (or a value that folds to one) is in
/// the team.
static LogicalResult verifyRoot(Operation *op, ArrayRef<int64_t> team,
                                std::optional<int64_t> root, Value dynamicRoot) {
  if (root && dynamicRoot)
    return op->emitOpError("has both a constant root attribute and a root value; give one");
  if (!root && !dynamicRoot)
    return op->emitOpError("has no root: give a constant 'root' attribute or a root value");
  APInt constant;
  if (dynamicRoot && matchPattern(dynamicRoot, m_ConstantInt(&constant)))
    return verifyRoot(op, team, constant.getSExtValue());
  return root ? verifyRoot(op, team, *root) : success();
}

static LogicalResult verifyCollectiveBackend(Operation *op, Backend backend) {
  if (backend != Backend::nccl)
    return op->emitOpError() << "backend '" << stringifyEnum(backend)
                             << "' moves point-to-point transfers only; collectives use 'nccl'";
  return success();
}

static MemRefType memref(Value value) { return cast<MemRefType>(value.getType()); }

/// `large` is `small` concatenated `teamSize` times along `axis` (allgather,
/// gather; reversed for reduce-scatter, scatter).
static LogicalResult verifyConcatenation(Operation *op, MemRefType small, StringRef smallName,
                                         MemRefType large, StringRef largeName, int64_t axis,
                                         int64_t teamSize) {
  if (small.getRank() != large.getRank())
    return op->emitOpError() << smallName << " and " << largeName << " differ in rank: "
                             << small.getRank() << " vs " << large.getRank();
  if (small.getElementType() != large.getElementType())
    return op->emitOpError() << smallName << " and " << largeName << " differ in element type: "
                             << small.getElementType() << " vs " << large.getElementType();
  if (axis < 0 || axis >= small.getRank())
    return op->emitOpError() << "axis " << axis << " is out of range for rank "
                             << small.getRank();
  if (!small.hasStaticShape() || !large.hasStaticShape())
    return op->emitOpError("buffers need static shapes");
  for (int64_t i = 0; i < small.getRank(); ++i) {
    int64_t expected = i == axis ? small.getDimSize(i) * teamSize : small.getDimSize(i);
    if (large.getDimSize(i) == expected)
      continue;
    if (i == axis)
      return op->emitOpError() << "team size " << teamSize << " times " << smallName
                               << " extent " << small.getDimSize(i) << " along axis " << axis
                               << " is not the " << largeName << " extent "
                               << large.getDimSize(i);
    return op->emitOpError() << smallName << " and " << largeName << " differ along axis " << i
                             << ": " << small.getDimSize(i) << " vs " << large.getDimSize(i);
  }
  return success();
}

template <typename Op>
static LogicalResult verifyCollective(Op op) {
  if (failed(verifyTeam(op, op.getTeam())) || failed(verifyCollectiveBackend(op, op.getBackend())))
    return failure();
  if (std::optional<uint64_t> size = op.getTeamSize()) {
    int64_t teamSize = static_cast<int64_t>(*size);
    if (teamSize <= 0 || op.getTeam().size() % teamSize != 0)
      return op.emitOpError() << "team_size " << teamSize << " does not divide the "
                              << op.getTeam().size() << " ranks of the teams";
  }
  return success();
}

/// `avg` divides: it combines floats only.
template <typename Op>
static LogicalResult verifyReduceKind(Op op) {
  Type element = memref(op.getInput()).getElementType();
  if (op.getKind() == ReduceKind::avg && isa<IntegerType>(element))
    return op.emitOpError() << "avg of " << element << " is not supported (integer division)";
  return success();
}

/// A rooted collective has one team: its root is a rank of that team.
template <typename Op>
static LogicalResult verifySingleTeam(Op op) {
  if (op.getTeamSizeOrAll() != static_cast<int64_t>(op.getTeam().size()))
    return op.emitOpError("has a root, so it runs within one team, not several");
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

LogicalResult AllgatherOp::verify() {
  if (failed(verifyCollective(*this)))
    return failure();
  return verifyConcatenation(*this, memref(getInput()), "input", memref(getOutput()), "output",
                             getAxis(), getTeamSizeOrAll());
}

LogicalResult GatherOp::verify() {
  if (failed(verifyCollective(*this)) || failed(verifySingleTeam(*this)) ||
      failed(verifyRoot(*this, getTeam(), getRoot())))
    return failure();
  return verifyConcatenation(*this, memref(getInput()), "input", memref(getOutput()), "output",
                             getAxis(), getTeamSizeOrAll());
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyCollective(*this)) || failed(verifyReduceKind(*this)))
    return failure();
  return verifyConcatenation(*this, memref(getOutput()), "output", memref(getInput()), "input",
                             getAxis(), getTeamSizeOrAll());
}

LogicalResult ScatterOp::verify() {
  if (failed(verifyCollective(*this)) || failed(verifySingleTeam(*this)) ||
      failed(verifyRoot(*this, getTeam(), getRoot())))
    return failure();
  return verifyConcatenation(*this, memref(getOutput()), "output", memref(getInput()), "input",
                             getAxis(), getTeamSizeOrAll());
}

LogicalResult AllreduceOp::verify() {
  if (failed(verifyCollective(*this)) || failed(verifyReduceKind(*this)))
    return failure();
  return verifySameShape(*this, memref(getInput()), "input", memref(getOutput()), "output");
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyCollective(*this)) || failed(verifySingleTeam(*this)) ||
      failed(verifyRoot(*this, getTeam(), getRoot(), getDynamicRoot())))
    return failure();
  return verifySameShape(*this, memref(getInput()), "input", memref(getOutput()), "output");
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyCollective(*this)) || failed(verifySingleTeam(*this)) ||
      failed(verifyReduceKind(*this)) ||
      failed(verifyRoot(*this, getTeam(), getRoot(), getDynamicRoot())))
    return failure();
  return verifySameShape(*this, memref(getInput()), "input", memref(getOutput()), "output");
}

LogicalResult AlltoallOp::verify() {
  if (failed(verifyCollective(*this)))
    return failure();
  MemRefType input = memref(getInput());
  if (failed(verifySameShape(*this, input, "input", memref(getOutput()), "output")))
    return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank " << input.getRank();
  int64_t teamSize = getTeamSizeOrAll();
  if (!input.isDynamicDim(axis) && input.getDimSize(axis) % teamSize != 0)
    return emitOpError() << "team size " << teamSize << " does not divide axis " << axis
                         << " of extent " << input.getDimSize(axis);
  return success();
}

//===----------------------------------------------------------------------===//
// Point to point and coalescing
//===----------------------------------------------------------------------===//

/// The `start_coalescing` whose group `op` is in, if any: the nearest
/// coalescing op before `op` in its block is a start.
static StartCoalescingOp enclosingGroup(Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto start = dyn_cast<StartCoalescingOp>(prev))
      return start;
    if (isa<EndCoalescingOp>(prev))
      return {};
  }
  return {};
}

template <typename Op>
static LogicalResult verifyPointToPoint(Op op) {
  if (failed(verifyTeam(op, op.getTeam())))
    return failure();
  APInt peer;
  if (matchPattern(op.getPeer(), m_ConstantInt(&peer)) &&
      !llvm::is_contained(op.getTeam(), peer.getSExtValue()))
    return op.emitOpError() << "peer " << peer.getSExtValue() << " is not in the team";
  if (op.getBackend() == Backend::cuda && enclosingGroup(op))
    return op.emitOpError("'cuda' transfers cannot be coalesced; only 'nccl' ones can");
  return success();
}

LogicalResult SendOp::verify() { return verifyPointToPoint(*this); }
LogicalResult RecvOp::verify() { return verifyPointToPoint(*this); }

LogicalResult StartCoalescingOp::verify() {
  for (Operation *next = (*this)->getNextNode(); next; next = next->getNextNode()) {
    if (isa<EndCoalescingOp>(next))
      return success();
    if (isa<StartCoalescingOp>(next))
      return emitOpError("coalescing groups do not nest");
  }
  return emitOpError("group is not closed by a comm.end_coalescing in the same block");
}

LogicalResult EndCoalescingOp::verify() {
  if (!enclosingGroup(*this))
    return emitOpError("closes no group: no comm.start_coalescing before it in the same block");
  return success();
}

LogicalResult WaitOp::verify() {
  Operation *def = getRequest().getDefiningOp();
  if (def && isa<SendOp, RecvOp>(def) && enclosingGroup(def))
    return emitOpError() << "waits for a '" << def->getName()
                         << "' inside a coalescing group; wait for the group's "
                            "comm.end_coalescing instead";
  return success();
}

LogicalResult ShareMemHandlesOp::verify() {
  if (getBuffers().empty())
    return emitOpError("shares no buffer");
  return verifyTeam(*this, getTeam());
}

LogicalResult BarrierOp::verify() {
  return failure(failed(verifyTeam(*this, getTeam())) ||
                 failed(verifyCollectiveBackend(*this, getBackend())));
}
