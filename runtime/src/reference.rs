//! Test support: the cpu backend as the reference another backend's tests
//! compare with, so that those tests need not import `cpu` (the backends
//! import the core, never each other).

use crate::device::Device;
use crate::error::RunError;

/// Runs `body` on every rank of a cpu world of `ranks` ranks and 2 pool
/// streams, as `cpu::World::run` does.
pub(crate) fn run<T: Send>(
    ranks: usize,
    body: impl Fn(&dyn Device) -> T + Sync,
) -> Result<Vec<T>, RunError> {
    let world = crate::cpu::World::new(crate::cpu::Config::new(ranks, 2))
        .unwrap_or_else(|error| panic!("cpu backend: {error}"));
    world.run(body)
}
