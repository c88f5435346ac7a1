//! The JIT: MLIR's ExecutionEngine over the lowered module, with every
//! runtime symbol registered; or, on a hit of the compile cache
//! ([`crate::cache`]), the object file such an engine compiled, linked into
//! the process as the engine links it, with nothing compiled. The C API is
//! used directly because melior's `ExecutionEngine::new` keeps a null engine
//! when compilation fails, and MLIR 22 wants the symbols registered before an
//! explicit initialization.

use anyhow::{Context as _, Result, anyhow, bail};
use hir_dialects::ffi::{
    ObjectJit, hirObjectJitCreate, hirObjectJitDestroy, hirObjectJitLookupPacked,
};
use melior::{
    StringRef,
    ir::{BlockLike, Module, attribute::StringAttribute, operation::OperationLike},
};
use mlir_sys::{
    MlirExecutionEngine, MlirStringRef, mlirExecutionEngineCreate, mlirExecutionEngineDestroy,
    mlirExecutionEngineDumpToObjectFile, mlirExecutionEngineInitialize,
    mlirExecutionEngineLookupPacked, mlirExecutionEngineRegisterSymbol,
};
use std::ffi::c_void;
use std::path::Path;

/// The packed interface of a JIT'd function (one pointer per argument),
/// callable only through [`hir_runtime::exit::call`]: every launcher then
/// gets a failed rank back at its program's next runtime call.
#[derive(Clone, Copy)]
pub struct Packed(hir_runtime::exit::Packed);

impl Packed {
    /// Calls the function on `arguments` on the calling thread's rank;
    /// returns false when it returned, true when the rank had failed and
    /// its next runtime call left the program.
    ///
    /// # Safety
    /// `arguments` are what the function takes, valid for the call.
    pub unsafe fn call(self, arguments: *mut *mut c_void) -> bool {
        // SAFETY: a packed wrapper the JIT made, and the caller's promise.
        unsafe { hir_runtime::exit::call(self.0, arguments) }
    }
}

pub struct Engine {
    raw: Raw,
}

/// What holds the code.
enum Raw {
    /// MLIR's ExecutionEngine, which compiled the module.
    Compiled(MlirExecutionEngine),
    /// An object file an ExecutionEngine compiled, loaded by
    /// `dialects/capi/ObjectJit.cpp`.
    Loaded(*mut ObjectJit),
}

impl Engine {
    /// Compiles `module` (in the LLVM dialect) at [`OPT_LEVEL`] and resolves its
    /// external calls to `symbols`.
    pub fn new(module: &Module, symbols: &[(String, *mut ())]) -> Result<Self> {
        Ok(Self {
            raw: Raw::Compiled(compile(module, symbols, false)?),
        })
    }

    /// As [`Engine::new`], and the object file it compiled `module` to, for
    /// [`Engine::load`] to run in another process: MLIR writes it only to a
    /// file, `scratch`, which is read and removed. A failure to get it is the
    /// inner error; the engine is good either way. Compiles the module now,
    /// not at the first lookup.
    pub fn new_with_object(
        module: &Module,
        symbols: &[(String, *mut ())],
        scratch: &Path,
    ) -> Result<(Self, Result<Vec<u8>>)> {
        let raw = compile(module, symbols, true)?;
        let engine = Self {
            raw: Raw::Compiled(raw),
        };
        // MLIR keeps the object once the module is compiled, which the
        // lookup of any function's packed wrapper does (a declaration has
        // none); its dump would instead look up every function's,
        // declarations' too, and fail.
        for function in functions(module) {
            // SAFETY: the engine is valid; a null address is no wrapper.
            let address =
                unsafe { mlirExecutionEngineLookupPacked(raw, StringRef::new(&function).to_raw()) };
            if !address.is_null() {
                break;
            }
        }
        let object = scratch
            .to_str()
            .ok_or_else(|| anyhow!("{} is not UTF-8, which MLIR takes", scratch.display()))
            .and_then(|path| {
                // SAFETY: the engine keeps its object code (enableObjectDump).
                // Failures are printed on stderr, and leave no file.
                unsafe { mlirExecutionEngineDumpToObjectFile(raw, StringRef::new(path).to_raw()) };
                let object = std::fs::read(scratch)
                    .with_context(|| format!("reading the object file {path} MLIR dumped"));
                // The object is read (or was never written): nothing to keep.
                let _ = std::fs::remove_file(scratch);
                object
            });
        Ok((engine, object))
    }

    /// Loads an object file [`Engine::new_with_object`] returned and links
    /// it, its external calls resolved to `symbols` as [`Engine::new`]
    /// resolves them: no pass, no code generation.
    pub fn load(object: &[u8], symbols: &[(String, *mut ())]) -> Result<Self> {
        let names: Vec<MlirStringRef> = symbols
            .iter()
            .map(|(name, _)| StringRef::new(name).to_raw())
            .collect();
        let addresses: Vec<*mut c_void> =
            symbols.iter().map(|(_, address)| address.cast()).collect();
        let mut error = String::new();
        // SAFETY: the buffers outlive the call, which copies what it keeps;
        // `error` is the String `append` expects.
        let raw = unsafe {
            hirObjectJitCreate(
                object.as_ptr().cast(),
                object.len(),
                names.as_ptr(),
                addresses.as_ptr(),
                names.len() as isize,
                Some(append),
                (&raw mut error).cast(),
            )
        };
        if raw.is_null() {
            bail!("{error}");
        }
        Ok(Self {
            raw: Raw::Loaded(raw),
        })
    }

    /// The packed interface of function `name`.
    pub fn lookup(&self, name: &str) -> Result<Packed> {
        let address = match self.raw {
            Raw::Compiled(raw) => {
                // SAFETY: the engine is valid; a null address is an error.
                let address =
                    unsafe { mlirExecutionEngineLookupPacked(raw, StringRef::new(name).to_raw()) };
                if address.is_null() {
                    bail!("the JIT has no function '{name}'");
                }
                address
            }
            Raw::Loaded(raw) => {
                let mut error = String::new();
                // SAFETY: the JIT is valid; `error` is the String `append`
                // expects; a null address is an error.
                let address = unsafe {
                    hirObjectJitLookupPacked(
                        raw,
                        StringRef::new(name).to_raw(),
                        Some(append),
                        (&raw mut error).cast(),
                    )
                };
                if address.is_null() {
                    bail!("the cached object has no function '{name}': {error}");
                }
                address
            }
        };
        // SAFETY: a packed wrapper has this signature.
        Ok(Packed(unsafe {
            std::mem::transmute::<*mut c_void, hir_runtime::exit::Packed>(address)
        }))
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        match self.raw {
            // SAFETY: the engine is valid and no code of it runs any more.
            Raw::Compiled(raw) => unsafe { mlirExecutionEngineDestroy(raw) },
            // SAFETY: as above.
            Raw::Loaded(raw) => unsafe { hirObjectJitDestroy(raw) },
        }
    }
}

/// The names of the `llvm.func`s of `module`.
fn functions(module: &Module) -> Vec<String> {
    let mut names = Vec::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        if op.name().as_string_ref().as_str() == Ok("llvm.func") {
            let name = op
                .attribute("sym_name")
                .ok()
                .and_then(|name| StringAttribute::try_from(name).ok());
            names.extend(name.map(|name| name.value().to_owned()));
        }
        next = op.next_in_block();
    }
    names
}

/// LLVM's optimization level for the host program. The host program is
/// glue: calls into the runtime, whose own work (driver calls, kernels)
/// dwarfs the instructions around them, so optimizing it buys nothing
/// measurable while its code generation is most of a compile: at -O0 the
/// JIT of a 16-block transformer program took 4.8 s where -O2 took 9.3 s
/// (`hir-bench startup`, docs/benchmarks.md).
const OPT_LEVEL: i32 = 0;

/// An ExecutionEngine compiling `module` at [`OPT_LEVEL`], its external calls
/// resolved to `symbols`, keeping the object code when `dump` is set.
fn compile(
    module: &Module,
    symbols: &[(String, *mut ())],
    dump: bool,
) -> Result<MlirExecutionEngine> {
    // SAFETY: the module is valid; no shared libraries are passed.
    let raw = unsafe {
        mlirExecutionEngineCreate(module.to_raw(), OPT_LEVEL, 0, std::ptr::null(), dump, false)
    };
    if raw.ptr.is_null() {
        bail!("the JIT cannot compile the lowered module (MLIR's diagnostics say why)");
    }
    for (name, address) in symbols {
        // SAFETY: `address` is the runtime's function of that name, which
        // lives as long as the process.
        unsafe {
            mlirExecutionEngineRegisterSymbol(raw, StringRef::new(name).to_raw(), address.cast())
        };
    }
    // SAFETY: every symbol the module calls is registered.
    unsafe { mlirExecutionEngineInitialize(raw) };
    Ok(raw)
}

/// Appends a part of a message the C++ side reports to the `String` at
/// `user_data`.
unsafe extern "C" fn append(part: MlirStringRef, user_data: *mut c_void) {
    // SAFETY: the caller passes the String it gave as user data, and a part
    // of `length` bytes at `data`.
    let (message, bytes) = unsafe {
        (
            &mut *user_data.cast::<String>(),
            std::slice::from_raw_parts(part.data.cast::<u8>(), part.length),
        )
    };
    message.push_str(&String::from_utf8_lossy(bytes));
}
