//! Interrupting a run from the thread that waits for it: a launcher (the
//! Python package, whose thread must run the interpreter's signal handlers
//! for Ctrl-C to raise `KeyboardInterrupt`) wraps its call of `World::run`
//! in [`checking`]. While the ranks run, the waiting thread calls the check
//! every [`POLL`]; once it returns a reason, every rank of the run fails
//! with [`crate::Error::Interrupted`]: its waits on other ranks end, its
//! later runtime calls do nothing or leave its program ([`crate::exit`]),
//! and the run returns. A rank still inside its program [`STOP`] later (a
//! loop that makes no runtime call) is left running on its thread, and the
//! world is closed (`core/rank_threads.rs`).

use std::cell::Cell;
use std::time::Duration;

/// How often the waiting thread calls the check.
pub const POLL: Duration = Duration::from_millis(50);

/// How long an interrupted run waits for its ranks to leave their programs
/// before it leaves them running and closes the world: with [`POLL`], an
/// interrupt ends the call within 1 s.
pub const STOP: Duration = Duration::from_millis(500);

/// Says why to stop, once there is a reason.
pub type Check<'a> = &'a dyn Fn() -> Option<String>;

thread_local! {
    /// The check of the innermost [`checking`] on this thread, its lifetime
    /// erased: it is removed before that call returns.
    static CHECK: Cell<Option<Check<'static>>> = const { Cell::new(None) };
}

/// Runs `work` (a run of a world, from this thread) with `check` called by
/// the run's wait while the ranks run.
///
/// A run interrupted while a rank cannot be stopped returns with that
/// rank's thread still running the program: the program's code and the
/// arrays it was given must then stay alive for the life of the process
/// (the Python package leaks them). A world that did so says it is closed
/// (`World::closed`).
pub fn checking<R>(check: Check<'_>, work: impl FnOnce() -> R) -> R {
    // SAFETY: only the lifetime changes; the guard takes the check out of
    // the slot before `check` goes, unwinding included.
    let check: Check<'static> = unsafe { std::mem::transmute(check) };
    let outer = CHECK.with(|slot| slot.replace(Some(check)));
    struct Restore(Option<Check<'static>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHECK.with(|slot| slot.set(self.0.take()));
        }
    }
    let _restore = Restore(outer);
    work()
}

/// The reason to stop, if this thread runs under [`checking`] and its check
/// gives one.
pub(crate) fn poll() -> Option<String> {
    CHECK.with(|slot| slot.get()).and_then(|check| check())
}
