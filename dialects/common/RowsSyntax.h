//===- RowsSyntax.h - `[a, b]` or `[[a, b], [c, d]]` lists of ranks -*- C++ -*-===//
//
// A mesh's devices and a collective's teams are written the same way: a flat
// list, or rows of one length, stored flat with the row length.
//
//===----------------------------------------------------------------------===//
#ifndef HIR_COMMON_ROWSSYNTAX_H
#define HIR_COMMON_ROWSSYNTAX_H

#include "mlir/IR/OpImplementation.h"

namespace hir {

/// Parses `[a, b, ...]` into `values`, or `[[a, b], [c, d], ...]` into
/// `values` (row after row) and `rowLength`; rows of different lengths are
/// the error `rowsDiffer`, at the list.
mlir::ParseResult parseRows(mlir::AsmParser &parser, llvm::SmallVectorImpl<int64_t> &values,
                            std::optional<int64_t> &rowLength, llvm::StringRef rowsDiffer);

/// Prints `values` as rows of `rowLength`, or flat when `rowLength` is not
/// positive or does not divide them (the verifiers reject that IR).
void printRows(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values, int64_t rowLength);

} // namespace hir

#endif // HIR_COMMON_ROWSSYNTAX_H
