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
#include <new>
#include <unistd.h>

namespace {
/// The tool's name, copied: what the message starts with.
char tool[64];

[[noreturn]] void sayAndExit() {
  constexpr char message[] =
      ": error: out of memory: the compiler (MLIR and LLVM) could not allocate; "
      "raise the memory or address-space limit (ulimit -v)\n";
  (void)!write(STDERR_FILENO, tool, strlen(tool));
  (void)!write(STDERR_FILENO, message, sizeof message - 1);
  _exit(1);
}

void onNewFailure() { sayAndExit(); }

void onBadAlloc(void *, const char *, bool) { sayAndExit(); }

void onFatalError(void *, const char *reason, bool) {
  constexpr char message[] = ": error: LLVM: ";
  (void)!write(STDERR_FILENO, tool, strlen(tool));
  (void)!write(STDERR_FILENO, message, sizeof message - 1);
  (void)!write(STDERR_FILENO, reason, strlen(reason));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(1);
}

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
