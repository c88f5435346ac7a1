//! Option values as both launchers' command lines read them.

use anyhow::{Context, Result, bail};

/// `value` of `flag` as a non-negative integer.
pub fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T> {
    value
        .parse()
        .ok()
        .with_context(|| format!("{flag} takes a non-negative integer, not '{value}'"))
}

/// `value` of `flag` as an integer of at least 1.
pub fn positive(flag: &str, value: &str) -> Result<usize> {
    match number::<usize>(flag, value)? {
        0 => bail!("{flag} must be at least 1"),
        count => Ok(count),
    }
}
