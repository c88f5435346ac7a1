//! The C API of the dialects and of the shims in `dialects/capi/`
//! (`hir-c/*.h`).

use mlir_sys::{
    MlirAttribute, MlirContext, MlirDialectHandle, MlirDialectRegistry, MlirPass, MlirStringRef,
    MlirType,
};
use std::ffi::{c_char, c_int, c_void};

/// Creates a fresh pass each time a pipeline asks for one.
pub type PassFactory = unsafe extern "C" fn(user_data: *mut c_void) -> MlirPass;

unsafe extern "C" {
    pub fn mlirGetDialectHandle__fusion__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__host__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__comm__() -> MlirDialectHandle;

    pub fn hirAttributeIsAFusionDist(attr: MlirAttribute) -> bool;
    pub fn hirFusionDistAttrGet(
        ctx: MlirContext,
        mesh: MlirStringRef,
        rank: isize,
        axes: *const i32,
    ) -> MlirAttribute;
    pub fn hirFusionDistAttrGetMesh(attr: MlirAttribute) -> MlirStringRef;
    pub fn hirFusionDistAttrGetRank(attr: MlirAttribute) -> isize;
    pub fn hirFusionDistAttrGetAxis(attr: MlirAttribute, axis: isize) -> i32;

    pub fn hirTypeIsAHostStream(r#type: MlirType) -> bool;
    pub fn hirHostStreamTypeGet(ctx: MlirContext) -> MlirType;
    pub fn hirTypeIsACommRequest(r#type: MlirType) -> bool;
    pub fn hirCommRequestTypeGet(ctx: MlirContext) -> MlirType;

    pub fn hirRegisterAllDialects(registry: MlirDialectRegistry);
    pub fn hirRegisterPass(factory: PassFactory, user_data: *mut c_void);
    pub fn hirRegisterUpstreamPasses();
    pub fn hirOptMain(argc: c_int, argv: *mut *mut c_char) -> c_int;
}
