/*===- hir-c/ObjectJit.h - running a cached object file, no compile -*- C -*-===*/
#ifndef HIR_C_OBJECTJIT_H
#define HIR_C_OBJECTJIT_H

#include "mlir-c/Support.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An object file MLIR's ExecutionEngine compiled, linked into this process
   without compiling anything: what a hit of HIR's compile cache runs. */
typedef struct HirObjectJit HirObjectJit;

/* Loads `size` bytes of an object file that mlirExecutionEngineDumpToObjectFile
   wrote, with each `names[i]` resolved to `addresses[i]` (the runtime's
   functions) and every other external symbol to the process's (libc, libm),
   as the ExecutionEngine resolves them. Returns null after reporting why
   through `onError`: the bytes are not an object file for this host, or it
   has static initializers, which only the ExecutionEngine's compile of the IR
   runs. The object's code is linked by the first lookup. */
MLIR_CAPI_EXPORTED HirObjectJit *
hirObjectJitCreate(const void *object, size_t size, const MlirStringRef *names,
                   void *const *addresses, intptr_t numSymbols,
                   MlirStringCallback onError, void *userData);

/* The packed wrapper of function `name` (`_mlir_` + name, as
   mlirExecutionEngineLookupPacked finds it), or null after reporting why
   through `onError` (a symbol the object calls is nowhere defined). */
MLIR_CAPI_EXPORTED void *hirObjectJitLookupPacked(HirObjectJit *jit, MlirStringRef name,
                                                  MlirStringCallback onError,
                                                  void *userData);

/* Frees the JIT and the code it loaded. */
MLIR_CAPI_EXPORTED void hirObjectJitDestroy(HirObjectJit *jit);

/* What the ExecutionEngine compiles for on this host, as text: the LLVM
   version, the target triple, the CPU name and its features. Code compiled
   for one such target is reusable on another only when the texts match. */
MLIR_CAPI_EXPORTED void hirJitHostTarget(MlirStringCallback callback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_OBJECTJIT_H */
