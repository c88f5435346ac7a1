//! Option values as types. An option that takes one of a few names is an
//! enum implementing [`Choice`], which lists its values and spells them
//! once: the pass registry, `hir-lower`'s typed options
//! ([`crate::pipeline::LowerOptions`]), the command lines and Python all
//! parse and print it through that list, so a value is never renamed or
//! re-validated on its way from the user to the pass.

use hir_abi::Transport;

/// The largest count an option takes: what the IR's `index` and `i64`
/// constants hold, so that a count reaches the passes as given (never
/// wrapped by a cast).
pub const MAX_COUNT: usize = i64::MAX as usize;

/// Option `option`'s count given as `value`: an integer from `min` to
/// [`MAX_COUNT`], or the error that says so.
pub fn count(option: &str, value: &str, min: usize) -> Result<usize, String> {
    value
        .parse::<usize>()
        .ok()
        .filter(|count| (min..=MAX_COUNT).contains(count))
        .ok_or_else(|| {
            format!("option '{option}' must be an integer from {min} to {MAX_COUNT}, not '{value}'")
        })
}

/// A count [`count`] admitted, as the IR's `i64`.
pub fn to_i64(count: usize) -> Result<i64, String> {
    i64::try_from(count).map_err(|_| format!("{count} is over the largest count, {MAX_COUNT}"))
}

/// An option's closed set of values, each with the one name every layer
/// spells it by.
pub trait Choice: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// Every value, in the order `--help` lists them.
    const ALL: &'static [Self];

    /// The value's name in pipelines, on command lines and in Python.
    fn name(self) -> &'static str;

    /// The value named `name`.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|value| value.name() == name)
    }

    /// The value of option `option` given as `value`, or the error that says
    /// which values it takes.
    fn parse(option: &str, value: &str) -> Result<Self, String> {
        Self::from_name(value).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|value| value.name()).collect();
            format!(
                "option '{option}' must be one of {}, not '{value}'",
                names.join("|")
            )
        })
    }
}

/// Declares an enum whose variants are a [`Choice`]'s values: each with
/// its doc and its name.
#[macro_export]
macro_rules! choice {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $spelling:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $crate::options::Choice for $name {
            const ALL: &'static [Self] = &[$($name::$variant,)+];

            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $spelling,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::options::Choice::name(*self))
            }
        }
    };
}

impl Choice for Transport {
    const ALL: &'static [Self] = &Transport::ALL;

    fn name(self) -> &'static str {
        Transport::name(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    choice! {
        /// A test choice.
        pub enum Fruit {
            /// Red.
            Apple = "apple",
            Pear = "pear",
        }
    }

    #[test]
    fn names_round_trip() {
        for &fruit in Fruit::ALL {
            assert_eq!(Fruit::from_name(fruit.name()), Some(fruit));
        }
        assert_eq!(Fruit::parse("fruit", "pear"), Ok(Fruit::Pear));
        assert_eq!(
            Fruit::parse("fruit", "plum").unwrap_err(),
            "option 'fruit' must be one of apple|pear, not 'plum'"
        );
        assert_eq!(
            <Transport as Choice>::parse("p2p", "cuda"),
            Ok(Transport::Cuda)
        );
    }

    #[test]
    fn counts_are_parsed_into_their_range_not_wrapped() {
        assert_eq!(count("chunks", "3", 0), Ok(3));
        assert_eq!(count("chunks", "9223372036854775807", 0), Ok(MAX_COUNT));
        for value in [
            "9223372036854775808",
            "18446744073709551615",
            "-1",
            "1e3",
            "",
        ] {
            assert_eq!(
                count("chunks", value, 0).unwrap_err(),
                format!("option 'chunks' must be an integer from 0 to {MAX_COUNT}, not '{value}'")
            );
        }
        assert!(count("n", "0", 1).unwrap_err().contains("from 1 to"));
        assert_eq!(to_i64(MAX_COUNT), Ok(i64::MAX));
        assert!(to_i64(MAX_COUNT + 1).is_err());
    }
}
