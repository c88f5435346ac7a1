//! Logging from Python: the `tracing` events of HIR's compiler and runtime on
//! stderr, filtered by `HIR_LOG` as in the tools (`HIR_LOG=debug`,
//! `HIR_LOG=hir=debug,warn`: `tracing-subscriber`'s `EnvFilter` syntax).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

/// The variable that selects what is logged, as the tools read it.
const ENV: &str = "HIR_LOG";

/// Installs the subscriber at import. Without `HIR_LOG` only warnings show:
/// a library's `info` lines would be noise in its user's program. A process
/// that already has a subscriber (another extension made one) keeps it.
pub fn init() {
    let filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::WARN.into())
        .with_env_var(ENV)
        .from_env_lossy();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .without_time()
        .try_init();
}
