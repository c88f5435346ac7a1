/*===- hir-c/Registration.h - registering HIR, its passes, hir-opt -*- C -*-===*/
#ifndef HIR_C_REGISTRATION_H
#define HIR_C_REGISTRATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Inserts the fusion, host and comm dialects and the upstream dialects HIR
   lowers through (func, arith, scf, cf, memref, llvm, index). */
MLIR_CAPI_EXPORTED void hirRegisterAllDialects(MlirDialectRegistry registry);

/* Makes a pass nameable in textual pipelines and on the mlir-opt command
   line: `factory(userData)` creates a fresh instance (e.g. an external pass
   written in Rust) each time a pipeline asks for one. */
typedef MlirPass (*HirPassFactory)(void *userData);
MLIR_CAPI_EXPORTED void hirRegisterPass(HirPassFactory factory, void *userData);

/* Registers the upstream passes hir-opt offers (canonicalize, cse, ...). */
MLIR_CAPI_EXPORTED void hirRegisterUpstreamPasses(void);

/* Runs the mlir-opt driver over all HIR dialects and every registered pass;
   returns the process exit code. */
MLIR_CAPI_EXPORTED int hirOptMain(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_REGISTRATION_H */
