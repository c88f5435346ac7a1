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

/// The most ranks `-n` starts on one host (threads or processes).
pub const MAX_RANKS: usize = 1024;
/// The most streams a rank's pool holds.
pub const MAX_STREAMS: usize = 1024;
/// The longest `--timeout`: a week, far below what `Instant` arithmetic can
/// hold.
pub const MAX_TIMEOUT_SECONDS: usize = 7 * 24 * 3600;

/// `value` of `flag` as an integer from 1 to `max`.
pub fn bounded(flag: &str, value: &str, max: usize) -> Result<usize> {
    match positive(flag, value)? {
        count if count > max => bail!("{flag} must be at most {max}, not {count}"),
        count => Ok(count),
    }
}

/// `value` of `flag` as a timeout in whole seconds, 1 to [`MAX_TIMEOUT_SECONDS`].
pub fn timeout(flag: &str, value: &str) -> Result<std::time::Duration> {
    let seconds = bounded(flag, value, MAX_TIMEOUT_SECONDS)?;
    Ok(std::time::Duration::from_secs(seconds as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_errors_not_wraps() {
        assert_eq!(bounded("-n", "4", MAX_RANKS).unwrap(), 4);
        assert!(bounded("-n", "0", MAX_RANKS).is_err());
        assert!(bounded("-n", "2000", MAX_RANKS).is_err());
        assert!(bounded("-n", "-1", MAX_RANKS).is_err());
        assert!(timeout("--timeout", "18446744073709551615").is_err());
        assert!(timeout("--timeout", "99999999999999999999999").is_err());
        assert_eq!(timeout("--timeout", "5").unwrap().as_secs(), 5);
    }
}
