//! Contexts with HIR registered, and its diagnostics as text.

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
    crate::register_all(&context);
    crate::passes::register_all();
    // SAFETY: the context is valid.
    unsafe { crate::dialects::ffi::hirRegisterLLVMTranslations(context.to_raw()) };
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
