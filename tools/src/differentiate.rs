//! `fusion-differentiate` on a parsed program or on a program's text, as
//! `hir-run --grad` and `hir-bench program mlp --grad` run it.

use crate::program;
use anyhow::{Result, anyhow};
use hir::passes::Choice;
use hir::passes::fusion::differentiate::Saved;
use melior::{Context, ir::Module, pass::PassManager};

/// Adds `@{function}_forward` and `@{function}_backward` to `module`; the
/// pass's diagnostics go where the context prints them.
pub fn differentiate(
    context: &Context,
    module: &mut Module,
    function: &str,
    saved: Saved,
) -> Result<()> {
    let manager = PassManager::new(context);
    melior::utility::parse_pass_pipeline(
        manager.as_operation_pass_manager(),
        &format!(
            "builtin.module(fusion-differentiate{{function={function} saved={}}})",
            saved.name()
        ),
    )
    .map_err(|error| anyhow!("fusion-differentiate: {error}"))?;
    manager
        .run(module)
        .map_err(|_| anyhow!("fusion-differentiate failed on @{function}"))
}

/// The fusion program `text` (named `name` in diagnostics) with its
/// entry's forward and backward added, printed.
pub fn differentiate_text(text: &str, name: &str, saved: Saved) -> Result<String> {
    let context = crate::context();
    let mut module = program::parse_source(&context, text, name)?;
    let entry = program::function_name(&program::entry(&module)?);
    differentiate(&context, &mut module, entry.trim_start_matches('@'), saved)?;
    Ok(module.as_operation().to_string())
}
