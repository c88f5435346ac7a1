//! Contexts with HIR registered, and its diagnostics as text.

use anyhow::anyhow;
use melior::{
    Context,
    diagnostic::{Diagnostic, DiagnosticSeverity},
};
use std::cell::RefCell;
use std::rc::Rc;

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

/// The diagnostics a context emits, kept as text so that an error can carry
/// them (or printed on stderr as they come).
pub struct Collected(Rc<RefCell<String>>);

impl Collected {
    /// Attaches a handler to `context` that keeps its diagnostics, or prints
    /// them if `print`.
    pub fn attach(context: &Context, print: bool) -> Self {
        let kept = Rc::new(RefCell::new(String::new()));
        let sink = kept.clone();
        context.attach_diagnostic_handler(move |diagnostic| {
            let text = format_diagnostic(&diagnostic);
            if print {
                eprint!("{text}");
            } else {
                sink.borrow_mut().push_str(&text);
            }
            true
        });
        Self(kept)
    }

    /// `error` followed by the diagnostics kept so far.
    pub fn add_to(&self, error: anyhow::Error) -> anyhow::Error {
        let text = self.0.borrow();
        if text.is_empty() {
            error
        } else {
            anyhow!("{error:#}\n{}", text.trim_end())
        }
    }
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
