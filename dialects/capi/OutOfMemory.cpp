//===- OutOfMemory.cpp - the tools' end when the compiler runs out --------===//
//
// LLVM's and MLIR's C++ code cannot go on when an allocation fails: by
// default `new` throws std::bad_alloc, nothing catches it, and the process
// aborts (SIGABRT, "terminate called ..."), and LLVM's own allocations abort
// through report_bad_alloc_error; a fatal error of LLVM (a thread it cannot
// start) aborts too. A tool instead says so, as its other errors, and exits
// with status 1. The handlers allocate nothing.
//===----------------------------------------------------------------------===//
#include "hir-c/Registration.h"

#include "llvm/Support/ErrorHandling.h"

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <new>
#include <unistd.h>

namespace {
/// The tool's name, copied: what the message starts with.
char tool[64];

/// Writes `<tool>: error: <what><reason>` to stderr and ends the process.
[[noreturn]] void sayAndExit(const char *what, const char *reason = "") {
  for (const char *part : {static_cast<const char *>(tool), ": error: ", what, reason, "\n"})
    (void)!write(STDERR_FILENO, part, strlen(part));
  _exit(1);
}

constexpr char outOfMemory[] = "out of memory: the compiler (MLIR and LLVM) could not allocate; "
                               "raise the memory or address-space limit (ulimit -v)";

void onNewFailure() { sayAndExit(outOfMemory); }

void onBadAlloc(void *, const char *, bool) { sayAndExit(outOfMemory); }

void onFatalError(void *, const char *reason, bool) { sayAndExit("LLVM: ", reason); }

/// Installed first of all the program's static constructors: LLVM's own
/// (its command-line options) allocate before `main`.
__attribute__((constructor(101))) void installHandlers() {
  strncpy(tool, program_invocation_short_name, sizeof tool - 1);
  std::set_new_handler(onNewFailure);
  llvm::install_bad_alloc_error_handler(onBadAlloc);
  llvm::install_fatal_error_handler(onFatalError);
}
} // namespace

void hirExitOnOutOfMemory(const char *name) {
  strncpy(tool, name, sizeof tool - 1);
}
