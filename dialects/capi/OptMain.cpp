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

intptr_t hirFindParserCrash(MlirStringRef source) {
  llvm::StringRef text = unwrap(source);
  auto skipSpace = [&](size_t at) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at])))
      ++at;
    return at;
  };
  for (size_t at = text.find("array"); at != llvm::StringRef::npos;
       at = text.find("array", at + 1)) {
    // Text in a comment is not parsed.
    size_t line = text.rfind('\n', at);
    line = line == llvm::StringRef::npos ? 0 : line + 1;
    if (text.slice(line, at).contains("//"))
      continue;
    size_t next = skipSpace(at + 5);
    if (next < text.size() && text[next] == '<' &&
        text.substr(skipSpace(next + 1)).starts_with("index"))
      return static_cast<intptr_t>(at);
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
      intptr_t at = hirFindParserCrash(wrap(file->getBuffer()));
      if (at >= 0) {
        llvm::errs() << input << ": error: a dense array of 'index' at byte " << at
                     << " (array<index: ...>), which MLIR 22's parser crashes on and no "
                        "HIR op takes\n";
        return 1;
      }
    }
  }
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, input, output, registry));
}
