//! What HIR's launchers share: `hir-run` (run one program) and `hir-bench`
//! (the overlap benchmarks) parse, lower and JIT-compile fusion programs the
//! same way, pass them the same buffers and run them on the same runtimes.
//!
//! - [`args`]: what the command lines share (bounds, value parsers, `--version`);
//! - [`log`]: logging (`HIR_LOG`) and progress on a terminal;
//! - [`program`]: parsing, the entry's global signature, the lowering;
//! - [`jit`]: MLIR's ExecutionEngine with the runtime's symbols;
//! - [`backend`]: the cpu or cuda runtime, running and timing the ranks;
//! - [`launch`]: the ranks as threads or one process each (the launcher,
//!   the rank's rendezvous and watchdog, the exchanges with rank 0);
//! - [`buffer`]: the arguments of each rank, packed for the entry;
//! - [`tensor`], [`reference`]: f64 values and the reference evaluation;
//! - [`programs`]: the benchmark programs, generated from parameters.

pub mod args;
pub mod backend;
pub mod buffer;
pub mod jit;
pub mod launch;
pub mod log;
pub mod program;
pub mod programs;
pub mod reference;
pub mod tensor;

use melior::{
    Context,
    diagnostic::{Diagnostic, DiagnosticSeverity},
};

/// A context with HIR's dialects, passes and LLVM translations registered,
/// which prints its diagnostics on stderr.
pub fn context() -> Context {
    let context = registered_context();
    context.attach_diagnostic_handler(|diagnostic| {
        print_diagnostic(&diagnostic);
        true
    });
    context
}

/// A context with HIR's dialects, passes and LLVM translations registered
/// and no diagnostic handler: the caller attaches its own (the Python
/// package collects them into its exceptions).
pub fn registered_context() -> Context {
    let context = Context::new();
    hir::register_all(&context);
    hir::passes::register_all();
    // SAFETY: the context is valid.
    unsafe { hir::dialects::ffi::hirRegisterLLVMTranslations(context.to_raw()) };
    context
}

/// Prints a diagnostic on stderr as [`format_diagnostic`] writes it.
pub fn print_diagnostic(diagnostic: &Diagnostic) {
    eprint!("{}", format_diagnostic(diagnostic));
}

/// A diagnostic as `file:line:col: error: message`, then its notes, each
/// on a line of its own.
pub fn format_diagnostic(diagnostic: &Diagnostic) -> String {
    let location = diagnostic.location().to_string();
    // `loc("file":line:col)` reads as `file:line:col`.
    let location = location
        .strip_prefix("loc(")
        .and_then(|location| location.strip_suffix(')'))
        .map_or(location.clone(), |location| location.replacen('"', "", 2));
    let severity = match diagnostic.severity() {
        DiagnosticSeverity::Error => "error",
        DiagnosticSeverity::Warning => "warning",
        DiagnosticSeverity::Note => "note",
        DiagnosticSeverity::Remark => "remark",
    };
    let mut text = format!("{location}: {severity}: {diagnostic}\n");
    for index in 0..diagnostic.note_count() {
        if let Ok(note) = diagnostic.note(index) {
            text.push_str(&format_diagnostic(&note));
        }
    }
    text
}
