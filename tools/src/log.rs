//! The tools' logging: `tracing` events on stderr, filtered by `HIR_LOG`
//! (`HIR_LOG=debug`, `HIR_LOG=hir_tools=debug,info`: `tracing-subscriber`'s
//! `EnvFilter` syntax; default `info`), and the progress of a long run, which
//! only a terminal sees.
//!
//! A line reads `TOOL: [LEVEL: ][SPAN: ...]message[ field=value ...]`: the
//! level is left out for `info`; each span the event is in adds its fields
//! (a field named `message` without its name). In a rank's process (ranks in
//! processes or under torchrun) that starts with `rank=R`:
//! [`crate::launch::rank`] enters a `rank` span; with ranks as threads, an
//! event about one rank carries a `rank` field.

use std::fmt;
use std::io::IsTerminal;
use std::sync::OnceLock;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The variable that selects what is logged.
pub const ENV: &str = "HIR_LOG";

/// Logs the events `HIR_LOG` selects (default `info`) to stderr, each line
/// starting with `tool: `. An `HIR_LOG` that does not parse is reported
/// once and the rest of it used.
pub fn init(tool: &'static str) {
    let filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .with_env_var(ENV)
        .from_env_lossy();
    // A second init (a test calling it again) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .event_format(Format { tool })
        .try_init();
}

/// Set by the launcher for its ranks when its own stderr is a terminal:
/// their stderr is a pipe to it, but what they write reaches the terminal.
pub const PROGRESS_ENV: &str = "HIR_PROGRESS";

/// Whether progress shows: stderr is a terminal, or the launcher's is.
pub fn progress_shown() -> bool {
    static SHOWN: OnceLock<bool> = OnceLock::new();
    *SHOWN.get_or_init(|| {
        std::io::stderr().is_terminal() || std::env::var_os(PROGRESS_ENV).is_some_and(|v| v == "1")
    })
}

/// One step of a long run: an `info` event on a terminal, a `debug` one
/// elsewhere (a log file, a CI job), which `HIR_LOG=debug` shows.
#[macro_export]
macro_rules! progress {
    ($($arg:tt)+) => {
        if $crate::log::progress_shown() {
            ::tracing::info!($($arg)+)
        } else {
            ::tracing::debug!($($arg)+)
        }
    };
}

struct Format {
    tool: &'static str,
}

impl<S, N> FormatEvent<S, N> for Format
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        write!(writer, "{}: ", self.tool)?;
        let level = *event.metadata().level();
        if level != Level::INFO {
            let name = match level {
                Level::ERROR => "error",
                Level::WARN => "warning",
                Level::DEBUG => "debug",
                _ => "trace",
            };
            write!(writer, "{name}: ")?;
        }
        if let Some(scope) = context.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                if let Some(fields) = extensions.get::<FormattedFields<N>>()
                    && !fields.is_empty()
                {
                    write!(writer, "{fields}: ")?;
                }
            }
        }
        context.format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// The lines `body` logs at `level` and above, as `init`'s format writes them.
    fn logged(level: LevelFilter, body: impl FnOnce()) -> String {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_writer(move || Sink(sink.clone()))
            .with_ansi(false)
            .event_format(Format { tool: "tool" })
            .finish();
        tracing::subscriber::with_default(subscriber, body);
        let bytes = buffer.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_name_the_tool_the_level_and_the_rank() {
        let text = logged(LevelFilter::DEBUG, || {
            tracing::info!("plain");
            tracing::warn!(count = 2, "careful");
            let _rank = tracing::info_span!("rank", rank = 3).entered();
            tracing::debug!(ms = 1.5, "lowered");
            let _variant = tracing::info_span!("variant", message = "ag 8x8x8 gemm").entered();
            tracing::info!("check: ok");
        });
        assert_eq!(
            text,
            "tool: plain\n\
             tool: warning: careful count=2\n\
             tool: debug: rank=3: lowered ms=1.5\n\
             tool: rank=3: ag 8x8x8 gemm: check: ok\n"
        );
        assert_eq!(logged(LevelFilter::INFO, || tracing::debug!("hidden")), "");
    }
}
