//! `hir-opt`: the `mlir-opt` command line over HIR's dialects and the
//! upstream dialects HIR lowers through or imports from, with every HIR pass
//! and the upstream passes HIR's pipelines and a `shard` user run.

use std::{
    ffi::{CString, c_char, c_int},
    os::unix::ffi::OsStringExt,
    process::ExitCode,
};

fn main() -> ExitCode {
    hir_tools::memory::exit_on_out_of_memory("hir-opt");
    hir::passes::register_all();
    let args: Vec<CString> = std::env::args_os()
        .map(|arg| CString::new(arg.into_vec()).expect("OS arguments hold no NUL"))
        .collect();
    let mut argv: Vec<*mut c_char> = args.iter().map(|arg| arg.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    // SAFETY: argv holds `args.len()` valid C strings and a terminating null;
    // `args` outlives the call.
    let code = unsafe { hir::dialects::ffi::hirOptMain(args.len() as c_int, argv.as_mut_ptr()) };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
