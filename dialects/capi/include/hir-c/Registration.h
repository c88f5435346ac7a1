/*===- hir-c/Registration.h - registering HIR, its passes, hir-opt -*- C -*-===*/
#ifndef HIR_C_REGISTRATION_H
#define HIR_C_REGISTRATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Inserts the fusion, host and comm dialects, the upstream dialects HIR
   lowers through (func, arith, scf, cf, memref, llvm, index) and those
   convert-shard-to-fusion imports from (shard, linalg, tensor), with the
   sharding models of func, arith, linalg and tensor ops that shard's passes
   use. */
MLIR_CAPI_EXPORTED void hirRegisterAllDialects(MlirDialectRegistry registry);

/* One option of a registered pass or pipeline: a string value the Rust side
   parses and checks. */
typedef struct {
  const char *name;
  const char *description;
  const char *defaultValue;
} HirPassOption;

/* Creates an instance of the pass from its option values (in declaration
   order), or returns null after reporting why the values are invalid through
   `onError`. Each `RustPass` object owns one instance, so that the copies a
   multi-threaded pass manager makes share no state. */
typedef void *(*HirPassCreate)(void *userData, const MlirStringRef *values,
                               intptr_t numValues, MlirStringCallback onError,
                               void *errorUserData);

/* Runs an instance on `op` (an op the pass may be scheduled on); returns false
   after emitting its errors as diagnostics on `op`'s context. */
typedef bool (*HirPassRun)(void *instance, MlirOperation op);

/* Frees an instance `create` returned. */
typedef void (*HirPassDestroy)(void *instance);

/* A pass written outside C++ (in Rust), with options: registered as a real
   MLIR pass that runs the instance directly, so that it appears once in IR
   dumps, timings and crash reproducers. */
typedef struct {
  const char *argument;
  const char *description;
  /* The op it runs on, e.g. "func.func"; empty for any op. */
  const char *anchor;
  const HirPassOption *options;
  intptr_t numOptions;
  HirPassCreate create;
  HirPassRun run;
  HirPassDestroy destroy;
  void *userData;
} HirPassInfo;

/* Makes the pass nameable in textual pipelines (`arg{opt=value}`) and on the
   mlir-opt command line, with its options listed by --help. Option values are
   checked when the pipeline is parsed. `info` and the strings it points to
   must outlive the process's use of the registry. */
MLIR_CAPI_EXPORTED void hirRegisterPass(const HirPassInfo *info);

/* Adds a pipeline's passes to `passManager` from its option values; returns
   false after reporting an error through `onError`. */
typedef bool (*HirPipelineBuild)(void *userData, MlirOpPassManager passManager,
                                 const MlirStringRef *values, intptr_t numValues,
                                 MlirStringCallback onError, void *errorUserData);

/* A named pipeline with options, as mlir's PassPipelineRegistration. */
typedef struct {
  const char *argument;
  const char *description;
  const HirPassOption *options;
  intptr_t numOptions;
  HirPipelineBuild build;
  void *userData;
} HirPipelineInfo;

MLIR_CAPI_EXPORTED void hirRegisterPassPipeline(const HirPipelineInfo *info);

/* Registers the upstream passes hir-opt offers beside those HIR's pipelines
   register: MLIR's generic transforms (canonicalize, cse, ...) and shard's
   (sharding-propagation, shard-partition). */
MLIR_CAPI_EXPORTED void hirRegisterUpstreamPasses(void);

/* Registers with `context` the translations to LLVM IR of the builtin and
   LLVM dialects only: what a JIT of a lowered host program needs. */
MLIR_CAPI_EXPORTED void hirRegisterLLVMTranslations(MlirContext context);

/* Runs the mlir-opt driver over the dialects hirRegisterAllDialects inserts
   and every registered pass;
   returns the process exit code. An input file that MLIR 22's parser would
   crash on (see hirFindParserCrash) is an error instead. */
MLIR_CAPI_EXPORTED int hirOptMain(int argc, char **argv);

/* Makes an allocation that fails in MLIR's or LLVM's C++ code (std::bad_alloc,
   LLVM's bad-alloc error) end the process with status 1 and
   `<tool>: error: out of memory: ...` on stderr, and an LLVM fatal error
   with `<tool>: error: LLVM: <reason>`, instead of an abort; `tool` names
   the process in the message. A program that calls this links the handlers,
   which its first static constructor installs (LLVM's own allocate before
   `main`). For tools: the process cannot go on. */
MLIR_CAPI_EXPORTED void hirExitOnOutOfMemory(const char *tool);

/* The byte offset in `source` of text MLIR 22's parser crashes on, or -1;
   `what` then names it (a static string). Two patterns: a dense array of
   `index` (`array<index: ...>`; the parser asks the element type for a bit
   width `index` does not have), which no HIR op takes; and, after a `)`
   (linalg.transpose's, broadcast's and reduce's `outs(...)`), a
   `permutation =` or `dimensions =` not followed by a list of 64-bit
   integer literals (their parsers set the attribute their parse failed to
   make). Text in a `//` comment does not count. Tools check their
   input with it before parsing. */
MLIR_CAPI_EXPORTED intptr_t hirFindParserCrash(MlirStringRef source, MlirStringRef *what);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_REGISTRATION_H */
