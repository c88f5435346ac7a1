//! The cuda world of a rank in a process group: the cuda backend stands on
//! the process bootstrap (`crate::bootstrap`), which does not know it.

use super::{Config, World};
use crate::bootstrap::ProcessGroup;
use crate::error::Result;

impl World {
    /// The cuda world of this process in `group`: its rank on GPU
    /// `LOCAL_RANK`, its communicators spanning the group's processes, the
    /// world size the group's (`config.ranks` is ignored).
    pub fn join(group: &ProcessGroup, config: Config) -> Result<World> {
        World::process(
            Config {
                ranks: group.world_size(),
                ..config
            },
            group.rank(),
            group.local_rank(),
            group.bootstrap(),
        )
    }
}
