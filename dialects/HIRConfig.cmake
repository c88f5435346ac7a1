# find_package(HIR) gives HIR::hir_dialects (the dialects, their C API and the
# mlir-opt driver, for programs linked to static MLIR) and HIR_DIALECT_PLUGIN
# (for mlir-opt --load-dialect-plugin).
include("${CMAKE_CURRENT_LIST_DIR}/HIRTargets.cmake")
get_filename_component(HIR_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(HIR_INCLUDE_DIRS "${HIR_PREFIX}/include")
set(HIR_DIALECT_PLUGIN "${HIR_PREFIX}/lib/libHIRDialects.so")
