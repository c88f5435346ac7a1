//! The C API of the dialects and of the shims in `dialects/capi/`
//! (`hir-c/*.h`).

use mlir_sys::{
    MlirAttribute, MlirContext, MlirDialectHandle, MlirDialectRegistry, MlirOpPassManager,
    MlirOperation, MlirStringCallback, MlirStringRef, MlirType,
};
use std::ffi::{c_char, c_int, c_void};

/// One option of a registered pass or pipeline (`HirPassOption`).
#[repr(C)]
pub struct PassOption {
    pub name: *const c_char,
    pub description: *const c_char,
    pub default_value: *const c_char,
}

/// Creates an instance of a pass from option values, or reports an error and
/// returns null (`HirPassCreate`).
pub type PassCreate = unsafe extern "C" fn(
    user_data: *mut c_void,
    values: *const MlirStringRef,
    num_values: isize,
    on_error: MlirStringCallback,
    error_user_data: *mut c_void,
) -> *mut c_void;

/// Runs an instance on an op; false after emitting its errors (`HirPassRun`).
pub type PassRun = unsafe extern "C" fn(instance: *mut c_void, op: MlirOperation) -> bool;

/// Frees an instance (`HirPassDestroy`).
pub type PassDestroy = unsafe extern "C" fn(instance: *mut c_void);

/// A pass with options (`HirPassInfo`).
#[repr(C)]
pub struct PassInfo {
    pub argument: *const c_char,
    pub description: *const c_char,
    pub anchor: *const c_char,
    pub options: *const PassOption,
    pub num_options: isize,
    pub create: PassCreate,
    pub run: PassRun,
    pub destroy: PassDestroy,
    pub user_data: *mut c_void,
}

/// Adds a pipeline's passes to a pass manager, or reports an error.
pub type PipelineBuild = unsafe extern "C" fn(
    user_data: *mut c_void,
    pass_manager: MlirOpPassManager,
    values: *const MlirStringRef,
    num_values: isize,
    on_error: MlirStringCallback,
    error_user_data: *mut c_void,
) -> bool;

/// A named pipeline with options (`HirPipelineInfo`).
#[repr(C)]
pub struct PipelineInfo {
    pub argument: *const c_char,
    pub description: *const c_char,
    pub options: *const PassOption,
    pub num_options: isize,
    pub build: PipelineBuild,
    pub user_data: *mut c_void,
}

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
        stream_chunks: i64,
    ) -> MlirAttribute;
    pub fn hirFusionDistAttrGetMesh(attr: MlirAttribute) -> MlirStringRef;
    pub fn hirFusionDistAttrGetRank(attr: MlirAttribute) -> isize;
    pub fn hirFusionDistAttrGetAxis(attr: MlirAttribute, axis: isize) -> i32;
    pub fn hirFusionDistAttrGetStreamChunks(attr: MlirAttribute) -> i64;

    pub fn hirOpKindOf(op: MlirOperation) -> i32;
    pub fn hirDestinationOperand(op: MlirOperation) -> isize;
    pub fn hirOperandAxisMap(
        op: MlirOperation,
        operand: isize,
        axes: *mut i64,
        capacity: isize,
    ) -> isize;
    pub fn hirIsOpTriviallyDead(op: MlirOperation) -> bool;
    pub fn hirOpIsLoop(op: MlirOperation) -> bool;

    pub fn hirShardShardingRank(op: MlirOperation) -> isize;
    pub fn hirShardShardingSplitAxes(
        op: MlirOperation,
        axis: isize,
        grid_axes: *mut i16,
        capacity: isize,
    ) -> isize;

    pub fn hirTypeIsAHostStream(r#type: MlirType) -> bool;
    pub fn hirHostStreamTypeGet(ctx: MlirContext) -> MlirType;
    pub fn hirHostSelectViewType(source: MlirType, axis: i64) -> MlirType;
    pub fn hirTypeIsACommRequest(r#type: MlirType) -> bool;
    pub fn hirCommRequestTypeGet(ctx: MlirContext) -> MlirType;

    pub fn hirRegisterAllDialects(registry: MlirDialectRegistry);
    pub fn hirRegisterPass(info: *const PassInfo);
    pub fn hirRegisterPassPipeline(info: *const PipelineInfo);
    pub fn hirRegisterUpstreamPasses();
    pub fn hirRegisterLLVMTranslations(context: MlirContext);
    pub fn hirOptMain(argc: c_int, argv: *mut *mut c_char) -> c_int;
    pub fn hirExitOnOutOfMemory(tool: *const c_char);
    pub fn hirFindParserCrash(source: MlirStringRef, what: *mut MlirStringRef) -> isize;

    pub fn hirObjectJitCreate(
        object: *const c_void,
        size: usize,
        names: *const MlirStringRef,
        addresses: *const *mut c_void,
        num_symbols: isize,
        on_error: MlirStringCallback,
        user_data: *mut c_void,
    ) -> *mut ObjectJit;
    pub fn hirObjectJitLookupPacked(
        jit: *mut ObjectJit,
        name: MlirStringRef,
        on_error: MlirStringCallback,
        user_data: *mut c_void,
    ) -> *mut c_void;
    pub fn hirObjectJitDestroy(jit: *mut ObjectJit);
    pub fn hirJitHostTarget(callback: MlirStringCallback, user_data: *mut c_void);
}

/// An object file linked into the process (`HirObjectJit`, opaque).
#[repr(C)]
pub struct ObjectJit {
    _opaque: [u8; 0],
}
