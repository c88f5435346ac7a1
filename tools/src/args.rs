//! What `hir-run`'s and `hir-bench`'s command lines share: the bounds of
//! their counts, the value parsers that enforce them (clap prints their
//! errors as `invalid value '0' for '-n <N>': must be at least 1`), the
//! version line, and how a usage error is reported.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use hir::passes::Choice;
use std::io::IsTerminal;
use std::time::Duration;

/// The most ranks `-n` starts on one host (threads or processes), and the
/// most streams a rank's pool holds: the runtime's bounds on a world, which
/// Python's `hir.init` takes too.
pub use hir_runtime::world::{MAX_RANKS, MAX_STREAMS};
/// The longest `--timeout`: a week, far below what `Instant` arithmetic can
/// hold.
pub const MAX_TIMEOUT_SECONDS: usize = 7 * 24 * 3600;

/// `--version`: the crate's version and the commit the tools were built from
/// (`git describe`, `-dirty` for a tree with changes; see `tools/build.rs`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("HIR_COMMIT"),
    ")"
);

/// A non-negative integer.
pub fn number<T: std::str::FromStr>(value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| "takes a non-negative integer".to_owned())
}

/// A count that goes into the IR (`--ring-chunks`): 0 to
/// [`hir::passes::options::MAX_COUNT`] (2^63 - 1), as `hir-lower` takes it,
/// never wrapped.
pub fn ir_count(value: &str) -> Result<usize, String> {
    hir::passes::options::count("", value, 0).map_err(|_| {
        format!(
            "must be an integer from 0 to {}",
            hir::passes::options::MAX_COUNT
        )
    })
}

/// An integer of at least 1.
pub fn positive(value: &str) -> Result<usize, String> {
    match number::<usize>(value)? {
        0 => Err("must be at least 1".to_owned()),
        count => Ok(count),
    }
}

/// An integer from 1 to `max`.
pub fn bounded(max: usize) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync {
    move |value| match positive(value)? {
        count if count > max => Err(format!("must be at most {max}")),
        count => Ok(count),
    }
}

/// A timeout in whole seconds, 1 to [`MAX_TIMEOUT_SECONDS`].
pub fn timeout(value: &str) -> Result<Duration, String> {
    let seconds = bounded(MAX_TIMEOUT_SECONDS)(value)?;
    Ok(Duration::from_secs(seconds as u64))
}

/// One of `all`, by its `name`: clap lists the names in `--help` and in the
/// error for any other value, and suggests the nearest.
pub fn named<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(all.iter().map(|&value| name(value))).map(move |given| {
        *all.iter()
            .find(|&&value| name(value) == given)
            .expect("clap admits only the possible values")
    })
}

/// One of a [`Choice`]'s values, by the name every layer spells it by.
pub fn choice<T: Choice>() -> impl TypedValueParser<Value = T> {
    named(T::ALL, T::name)
}

/// The command line as `parse` reads it (`T::try_parse_from`, with what
/// clap cannot check itself). `--help` and `--version` print and exit 0; a
/// usage error is printed as `TOOL: error: ...` (the tools' other errors
/// start so too) and exits 2.
pub fn parse_or_exit<T>(
    tool: &str,
    parse: impl FnOnce(std::env::ArgsOs) -> Result<T, clap::Error>,
) -> T {
    parse(std::env::args_os()).unwrap_or_else(|error| {
        // `hir-bench` without a command prints its help on stderr, as is.
        let help = error.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand;
        if error.use_stderr() && !help {
            // In colour on a terminal, as clap's own errors are.
            let rendered = error.render();
            if std::io::stderr().is_terminal() {
                eprint!("{tool}: {}", rendered.ansi());
            } else {
                eprint!("{tool}: {rendered}");
            }
            std::process::exit(2);
        }
        error.exit()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_errors_not_wraps() {
        let ranks = bounded(MAX_RANKS);
        assert_eq!(ranks("4").unwrap(), 4);
        assert_eq!(ranks("0").unwrap_err(), "must be at least 1");
        assert_eq!(ranks("2000").unwrap_err(), "must be at most 1024");
        assert_eq!(ranks("-1").unwrap_err(), "takes a non-negative integer");
        assert!(timeout("18446744073709551615").is_err());
        assert!(timeout("99999999999999999999999").is_err());
        assert_eq!(timeout("5").unwrap().as_secs(), 5);
        assert_eq!(
            number::<u64>("x").unwrap_err(),
            "takes a non-negative integer"
        );
        assert_eq!(ir_count("3").unwrap(), 3);
        for wraps in ["9223372036854775808", "18446744073709551615", "-1"] {
            assert_eq!(
                ir_count(wraps).unwrap_err(),
                "must be an integer from 0 to 9223372036854775807"
            );
        }
    }

    #[test]
    fn version_names_the_commit() {
        assert!(VERSION.starts_with(env!("CARGO_PKG_VERSION")));
        assert!(VERSION.contains("(commit "));
    }
}
