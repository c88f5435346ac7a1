//! What a HIR pass and pipeline are to the registry (`registry.rs`) and to
//! the passes themselves: the [`HirPass`] trait, options as declared
//! ([`OptionInfo`]) and as given ([`PassOptions`]), and the descriptions of a
//! pass ([`PassInfo`]) and a pipeline ([`PipelineInfo`]).

use crate::options::Choice;
use melior::ir::OperationRef;

/// A HIR pass: what one instance of a registered pass does on each op it is
/// run on (its anchor, or any op for an op-agnostic pass).
///
/// An instance is created from the pass's option values and run by one thread
/// at a time (the pass manager's threads each run their own).
pub trait HirPass: Send {
    /// Runs on `op`; returns false after emitting the errors as diagnostics at
    /// their locations, which makes the pass fail.
    fn run(&mut self, op: OperationRef) -> bool;
}

/// An option of a pass or pipeline.
pub struct OptionInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub default: &'static str,
}

/// The option values a pass or pipeline is created with, in declaration order.
pub struct PassOptions<'a> {
    declared: &'static [OptionInfo],
    values: Vec<&'a str>,
}

impl<'a> PassOptions<'a> {
    /// The declared defaults.
    pub fn defaults(declared: &'static [OptionInfo]) -> Self {
        Self {
            declared,
            values: declared.iter().map(|option| option.default).collect(),
        }
    }

    /// The values given (as many as `declared`, in its order).
    pub(crate) fn given(declared: &'static [OptionInfo], values: Vec<&'a str>) -> Self {
        debug_assert_eq!(declared.len(), values.len());
        Self { declared, values }
    }

    /// The text option `name` was given, or its default.
    pub(crate) fn text(&self, name: &str) -> &'a str {
        let index = self
            .declared
            .iter()
            .position(|option| option.name == name)
            .unwrap_or_else(|| panic!("option '{name}' is not declared"));
        self.values[index]
    }

    /// A positive integer option, at most [`crate::options::MAX_COUNT`].
    pub fn positive(&self, name: &str) -> Result<usize, String> {
        crate::options::count(name, self.text(name), 1)
    }

    /// A non-negative integer option, at most [`crate::options::MAX_COUNT`].
    pub fn count(&self, name: &str) -> Result<usize, String> {
        crate::options::count(name, self.text(name), 0)
    }

    /// An option that takes one of a [`Choice`]'s values.
    pub fn choice<T: Choice>(&self, name: &str) -> Result<T, String> {
        T::parse(name, self.text(name))
    }
}

/// A pass as the registry knows it.
pub struct PassInfo {
    /// The name pipelines and `hir-opt` flags use.
    pub argument: &'static str,
    pub description: &'static str,
    /// The op it runs on (`builtin.module`, `func.func`), empty for any op.
    pub anchor: &'static str,
    pub options: &'static [OptionInfo],
    /// Creates a fresh instance, or says why the options are invalid.
    pub create: fn(&PassOptions) -> Result<Box<dyn HirPass>, String>,
}

/// A named pipeline: its passes as a textual pipeline built from its options.
pub struct PipelineInfo {
    pub argument: &'static str,
    pub description: &'static str,
    pub options: &'static [OptionInfo],
    /// The pipeline's elements (as `mlirOpPassManagerAddPipeline` takes them).
    pub build: fn(&PassOptions) -> Result<String, String>,
}

/// How many pool streams stream loops rotate over; 0 for the pool's size.
pub const NUM_STREAMS: OptionInfo = OptionInfo {
    name: "num-streams",
    description: "Pool streams a stream loop rotates over (0: all the pool has)",
    default: "0",
};
