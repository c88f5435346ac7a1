/* A C program outside HIR's build that uses HIR's installed CMake package:
 * registers the HIR dialects with an MLIR context through the C API, parses
 * a module with fusion, host and comm ops and verifies it, then checks that
 * the comm verifier rejects a wrong allgather. scripts/cmake-consumer.sh
 * builds it and checks what it prints; it exits non-zero if anything
 * differs from what is expected here. */
#include "hir-c/Comm.h"
#include "hir-c/Registration.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <stdio.h>
#include <string.h>

static const char *kValid =
    "fusion.mesh @tp = [0, 1]\n"
    "func.func @all_dialects(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>,\n"
    "                        %buf: memref<2x8xf32>, %i: index) {\n"
    "  %g = fusion.set %a : tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>\n"
    "                    -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>\n"
    "  %s = host.stream_from_pool %i : !host.stream\n"
    "  %row = host.select %buf[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>\n"
    "  %r = comm.allreduce %row into %row sum team [0, 1]\n"
    "      : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>\n"
    "  comm.wait %r\n"
    "  return\n"
    "}\n";

/* An allgather over 2 ranks of 1 row cannot fill 3 rows. */
static const char *kInvalid =
    "func.func @bad(%a: memref<1x8xf32>, %b: memref<3x8xf32>) {\n"
    "  %r = comm.allgather %a into %b team [0, 1] : memref<1x8xf32> into memref<3x8xf32>\n"
    "  return\n"
    "}\n";

struct Counts {
  int fusion, host, comm;
  bool requestType;
};

static bool hasPrefix(MlirStringRef s, const char *prefix) {
  size_t n = strlen(prefix);
  return s.length >= n && memcmp(s.data, prefix, n) == 0;
}

static MlirWalkResult count(MlirOperation op, void *userData) {
  struct Counts *counts = userData;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (hasPrefix(name, "fusion."))
    counts->fusion++;
  else if (hasPrefix(name, "host."))
    counts->host++;
  else if (hasPrefix(name, "comm."))
    counts->comm++;
  if (hasPrefix(name, "comm.allreduce"))
    counts->requestType = hirTypeIsACommRequest(mlirValueGetType(mlirOperationGetResult(op, 0)));
  return MlirWalkResultAdvance;
}

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

/* Prints every diagnostic on one line and counts them. */
static MlirLogicalResult onDiagnostic(MlirDiagnostic diagnostic, void *userData) {
  ++*(int *)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  hirRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  int diagnostics = 0;
  mlirContextAttachDiagnosticHandler(ctx, onDiagnostic, &diagnostics, NULL);

  int status = 0;
  MlirModule valid = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kValid));
  if (mlirModuleIsNull(valid) || !mlirOperationVerify(mlirModuleGetOperation(valid))) {
    printf("the valid module does not parse and verify\n");
    status = 1;
  } else {
    struct Counts counts = {0, 0, 0, false};
    mlirOperationWalk(mlirModuleGetOperation(valid), count, &counts, MlirWalkPreOrder);
    printf("verified: %d fusion, %d host, %d comm ops; comm.allreduce gives !comm.request: %s\n",
           counts.fusion, counts.host, counts.comm, counts.requestType ? "yes" : "no");
    if (counts.fusion != 2 || counts.host != 2 || counts.comm != 2 || !counts.requestType)
      status = 1;
    mlirModuleDestroy(valid);
  }

  /* Parsing verifies: the comm verifier's error comes through the handler. */
  MlirModule invalid = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kInvalid));
  if (!mlirModuleIsNull(invalid) || diagnostics != 1) {
    printf("the invalid module was not rejected with one diagnostic\n");
    status = 1;
  }
  if (!mlirModuleIsNull(invalid))
    mlirModuleDestroy(invalid);

  mlirContextDestroy(ctx);
  return status;
}
