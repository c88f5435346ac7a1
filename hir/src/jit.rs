//! The JIT: MLIR's ExecutionEngine over the lowered module, with every
//! runtime symbol registered. The C API is used directly because melior's
//! `ExecutionEngine::new` keeps a null engine when compilation fails, and
//! MLIR 22 wants the symbols registered before an explicit initialization.

use anyhow::{Result, bail};
use melior::{StringRef, ir::Module};
use mlir_sys::{
    MlirExecutionEngine, mlirExecutionEngineCreate, mlirExecutionEngineDestroy,
    mlirExecutionEngineInitialize, mlirExecutionEngineLookupPacked,
    mlirExecutionEngineRegisterSymbol,
};
use std::ffi::c_void;

/// The packed interface of a function: one pointer per argument.
pub type Packed = unsafe extern "C" fn(arguments: *mut *mut c_void);

pub struct Engine {
    raw: MlirExecutionEngine,
}

impl Engine {
    /// Compiles `module` (in the LLVM dialect) at `-O2` and resolves its
    /// external calls to `symbols`.
    pub fn new(module: &Module, symbols: &[(String, *mut ())]) -> Result<Self> {
        // SAFETY: the module is valid; no shared libraries are passed.
        let raw = unsafe {
            mlirExecutionEngineCreate(module.to_raw(), 2, 0, std::ptr::null(), false, false)
        };
        if raw.ptr.is_null() {
            bail!("the JIT cannot compile the lowered module (see the errors above)");
        }
        let engine = Self { raw };
        for (name, address) in symbols {
            // SAFETY: `address` is the runtime's function of that name, which
            // lives as long as the process.
            unsafe {
                mlirExecutionEngineRegisterSymbol(
                    engine.raw,
                    StringRef::new(name).to_raw(),
                    address.cast(),
                )
            };
        }
        // SAFETY: every symbol the module calls is registered.
        unsafe { mlirExecutionEngineInitialize(engine.raw) };
        Ok(engine)
    }

    /// The packed interface of function `name`.
    pub fn lookup(&self, name: &str) -> Result<Packed> {
        // SAFETY: the engine is valid; a null address is mapped to an error.
        let address =
            unsafe { mlirExecutionEngineLookupPacked(self.raw, StringRef::new(name).to_raw()) };
        if address.is_null() {
            bail!("the JIT has no function '{name}'");
        }
        // SAFETY: a packed wrapper has this signature.
        Ok(unsafe { std::mem::transmute::<*mut c_void, Packed>(address) })
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: the engine is valid and no code of it runs any more.
        unsafe { mlirExecutionEngineDestroy(self.raw) }
    }
}
