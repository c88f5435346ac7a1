//===- Dialects.cpp - C API of the fusion, host and comm dialects ---------===//
#include "hir-c/Comm.h"
#include "hir-c/Fusion.h"
#include "hir-c/Host.h"

#include "comm/CommDialect.h"
#include "fusion/FusionDialect.h"
#include "host/HostDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Fusion, fusion, hir::fusion::FusionDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Host, host, hir::host::HostDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Comm, comm, hir::comm::CommDialect)

bool hirAttributeIsAFusionDist(MlirAttribute attr) {
  return isa<hir::fusion::DistAttr>(unwrap(attr));
}

MlirAttribute hirFusionDistAttrGet(MlirContext ctx, MlirStringRef mesh, intptr_t rank,
                                   const int32_t *axes, int64_t streamChunks) {
  SmallVector<hir::fusion::ParallelType> types;
  for (intptr_t i = 0; i < rank; ++i)
    types.push_back(static_cast<hir::fusion::ParallelType>(axes[i]));
  MLIRContext *context = unwrap(ctx);
  return wrap(hir::fusion::DistAttr::get(context, FlatSymbolRefAttr::get(context, unwrap(mesh)),
                                         types, streamChunks));
}

MlirStringRef hirFusionDistAttrGetMesh(MlirAttribute attr) {
  return wrap(cast<hir::fusion::DistAttr>(unwrap(attr)).getMesh().getValue());
}

intptr_t hirFusionDistAttrGetRank(MlirAttribute attr) {
  return cast<hir::fusion::DistAttr>(unwrap(attr)).getAxes().size();
}

int32_t hirFusionDistAttrGetAxis(MlirAttribute attr, intptr_t axis) {
  return static_cast<int32_t>(cast<hir::fusion::DistAttr>(unwrap(attr)).getAxes()[axis]);
}

int64_t hirFusionDistAttrGetStreamChunks(MlirAttribute attr) {
  return cast<hir::fusion::DistAttr>(unwrap(attr)).getStreamChunks();
}

bool hirTypeIsAHostStream(MlirType type) { return isa<hir::host::StreamType>(unwrap(type)); }

MlirType hirHostStreamTypeGet(MlirContext ctx) {
  return wrap(hir::host::StreamType::get(unwrap(ctx)));
}

MlirType hirHostSelectViewType(MlirType source, int64_t axis) {
  auto memref = dyn_cast<MemRefType>(unwrap(source));
  if (!memref)
    return {nullptr};
  return wrap(hir::host::SelectOp::inferResultType(memref, axis));
}

bool hirTypeIsACommRequest(MlirType type) { return isa<hir::comm::RequestType>(unwrap(type)); }

MlirType hirCommRequestTypeGet(MlirContext ctx) {
  return wrap(hir::comm::RequestType::get(unwrap(ctx)));
}
