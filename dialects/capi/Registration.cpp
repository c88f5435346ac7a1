//===- Registration.cpp - dialect and pass registration for HIR's tools ---===//
//
// The C API cannot register a pass by name; these few lines, with RustPass.cpp,
// let Rust passes appear in textual pipelines and as hir-opt flags.
//
//===----------------------------------------------------------------------===//
#include "hir-c/Registration.h"

#include "comm/CommDialect.h"
#include "fusion/FusionDialect.h"
#include "host/HostDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void hirRegisterAllDialects(MlirDialectRegistry registry) {
  DialectRegistry &dialects = *unwrap(registry);
  dialects.insert<hir::fusion::FusionDialect, hir::host::HostDialect, hir::comm::CommDialect,
                  func::FuncDialect, arith::ArithDialect, scf::SCFDialect,
                  cf::ControlFlowDialect, memref::MemRefDialect, LLVM::LLVMDialect,
                  index::IndexDialect>();
  // What convert-shard-to-fusion imports: upstream shard IR over linalg and
  // tensor, with the sharding models sharding-propagation and shard-partition
  // ask the ops of these dialects for.
  dialects.insert<shard::ShardDialect, linalg::LinalgDialect, tensor::TensorDialect>();
  arith::registerShardingInterfaceExternalModels(dialects);
  func::registerShardingInterfaceExternalModels(dialects);
  linalg::registerShardingInterfaceExternalModels(dialects);
  tensor::registerShardingInterfaceExternalModels(dialects);
}

void hirRegisterUpstreamPasses() {
  registerTransformsPasses();
  shard::registerShardPasses();
}

void hirRegisterLLVMTranslations(MlirContext context) {
  MLIRContext &ctx = *unwrap(context);
  registerBuiltinDialectTranslation(ctx);
  registerLLVMDialectTranslation(ctx);
}
