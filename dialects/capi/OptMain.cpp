//===- OptMain.cpp - the mlir-opt driver over HIR's dialects --------------===//
#include "hir-c/Registration.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <string>

namespace {
/// The text a tool reads, and the lexing the crash patterns need.
struct Source {
  llvm::StringRef text;

  size_t skipSpace(size_t at) const {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at])))
      ++at;
    return at;
  }

  /// Whether `at` is in a `//` comment, which is not parsed.
  bool inComment(size_t at) const {
    size_t line = text.rfind('\n', at);
    line = line == llvm::StringRef::npos ? 0 : line + 1;
    return text.slice(line, at).contains("//");
  }

  /// Whether `[` at `at` opens a list of integer literals that fit in 64
  /// bits, closed by `]`: what a dense i64 array parses.
  bool isI64List(size_t at) const {
    at = skipSpace(at + 1);
    if (at < text.size() && text[at] == ']')
      return true;
    while (at < text.size()) {
      size_t end = at;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                   text[end] == '-' || text[end] == '_'))
        ++end;
      llvm::StringRef literal = text.slice(at, end);
      bool hex = literal.starts_with("0x");
      int64_t value;
      if (literal.empty() || literal.drop_front(hex ? 2 : 0).getAsInteger(hex ? 16 : 10, value))
        return false;
      at = skipSpace(end);
      if (at < text.size() && text[at] == ']')
        return true;
      if (at >= text.size() || text[at] != ',')
        return false;
      at = skipSpace(at + 1);
    }
    return false;
  }
};
} // namespace

intptr_t hirFindParserCrash(MlirStringRef source, MlirStringRef *what) {
  Source text{unwrap(source)};
  // A dense array of index: the parser asks `index` for a bit width.
  for (size_t at = text.text.find("array"); at != llvm::StringRef::npos;
       at = text.text.find("array", at + 1)) {
    if (text.inComment(at))
      continue;
    size_t next = text.skipSpace(at + 5);
    if (next < text.text.size() && text.text[next] == '<' &&
        text.text.substr(text.skipSpace(next + 1)).starts_with("index")) {
      *what = wrap(llvm::StringRef("a dense array of 'index' (array<index: ...>, which no HIR "
                                   "op takes)"));
      return static_cast<intptr_t>(at);
    }
  }
  // linalg.transpose, linalg.broadcast and linalg.reduce parse `permutation
  // = [...]` or `dimensions = [...]` after their `outs(...)` as a dense i64
  // array, and set the attribute without checking that it parsed.
  for (llvm::StringRef keyword : {"permutation", "dimensions"}) {
    for (size_t at = text.text.find(keyword); at != llvm::StringRef::npos;
         at = text.text.find(keyword, at + 1)) {
      llvm::StringRef before = text.text.take_front(at).rtrim();
      if (!before.ends_with(")") || text.inComment(at))
        continue;
      size_t next = text.skipSpace(at + keyword.size());
      if (next >= text.text.size() || text.text[next] != '=')
        continue;
      next = text.skipSpace(next + 1);
      if (next >= text.text.size() || text.text[next] != '[' || !text.isI64List(next)) {
        *what = wrap(keyword == "permutation"
                         ? llvm::StringRef("a 'permutation' list that is not 64-bit integers "
                                           "(linalg.transpose)")
                         : llvm::StringRef("a 'dimensions' list that is not 64-bit integers "
                                           "(linalg.broadcast, linalg.reduce)"));
        return static_cast<intptr_t>(at);
      }
    }
  }
  return -1;
}

int hirOptMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  hirRegisterAllDialects(wrap(&registry));
  hirRegisterUpstreamPasses();
  auto [input, output] =
      mlir::registerAndParseCLIOptions(argc, argv, "HIR optimizer driver\n", registry);
  // Standard input can be read once only: it goes to the parser unchecked.
  if (input != "-") {
    std::string error;
    if (std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &error)) {
      MlirStringRef what;
      intptr_t at = hirFindParserCrash(wrap(file->getBuffer()), &what);
      if (at >= 0) {
        llvm::errs() << input << ": error: " << unwrap(what) << " at byte " << at
                     << ", which MLIR 22's parser crashes on\n";
        return 1;
      }
    }
  }
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, input, output, registry));
}
