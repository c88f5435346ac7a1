//===- RowsSyntax.cpp - `[a, b]` or `[[a, b], [c, d]]` lists of ranks -----===//
#include "common/RowsSyntax.h"

using namespace mlir;

ParseResult hir::parseRows(AsmParser &parser, SmallVectorImpl<int64_t> &values,
                           std::optional<int64_t> &rowLength, StringRef rowsDiffer) {
  auto parseValue = [&]() -> ParseResult {
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    values.push_back(value);
    return success();
  };
  llvm::SMLoc start = parser.getCurrentLocation();
  if (parser.parseLSquare())
    return failure();
  if (succeeded(parser.parseOptionalLSquare())) {
    SmallVector<size_t> lengths;
    do {
      size_t before = values.size();
      if (parser.parseCommaSeparatedList(parseValue) || parser.parseRSquare())
        return failure();
      lengths.push_back(values.size() - before);
    } while (succeeded(parser.parseOptionalComma()) && succeeded(parser.parseLSquare()));
    if (parser.parseRSquare())
      return failure();
    if (llvm::any_of(lengths, [&](size_t length) { return length != lengths.front(); }))
      return parser.emitError(start, rowsDiffer);
    rowLength = static_cast<int64_t>(lengths.front());
    return success();
  }
  if (succeeded(parser.parseOptionalRSquare()))
    return success();
  return failure(parser.parseCommaSeparatedList(parseValue) || parser.parseRSquare());
}

void hir::printRows(AsmPrinter &printer, ArrayRef<int64_t> values, int64_t rowLength) {
  if (rowLength <= 0 || values.size() % rowLength != 0) {
    printer << "[";
    llvm::interleaveComma(values, printer);
    printer << "]";
    return;
  }
  printer << "[";
  for (size_t start = 0; start < values.size(); start += rowLength) {
    if (start)
      printer << ", ";
    printer << "[";
    llvm::interleaveComma(values.slice(start, rowLength), printer);
    printer << "]";
  }
  printer << "]";
}
