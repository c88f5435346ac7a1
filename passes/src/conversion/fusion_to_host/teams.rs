//! The teams of a collective over one mesh axis, and a rank's position in
//! its team, computed on the host from `host.rank`.

use super::Lowering;
use crate::{
    builders::{self, Builder},
    fusion::mesh::Mesh,
    ops::Op,
};
use hir_dialects::dist::ParallelType;
use melior::ir::{Attribute, Location, Type, Value};

impl<'c, 'm> Lowering<'c, 'm> {
    /// The team attributes of a collective over `parallel_type` on `mesh`:
    /// its one team, or its teams and their size.
    pub(super) fn team_attributes(
        &self,
        mesh: &Mesh,
        parallel_type: ParallelType,
    ) -> Vec<(&'static str, Attribute<'c>)> {
        let (ranks, team_size) = mesh.teams(parallel_type);
        let mut attributes = vec![("team", builders::team(self.context, &ranks))];
        if let Some(size) = team_size {
            attributes.push(("team_size", builders::i64_attribute(self.context, size)));
        }
        attributes
    }

    /// This rank's position in its team, as an index: in `team`, or in the
    /// one of the teams of `team_size` ranks listed in `team` that holds it.
    pub(super) fn team_position(
        &self,
        builder: &Builder<'c, 'm>,
        team: &[i64],
        team_size: Option<i64>,
        location: Location<'c>,
    ) -> Value<'c, 'm> {
        let index = Type::index(self.context);
        let rank = builder.rank(location);
        let size = team_size.unwrap_or(team.len() as i64);
        if team
            .iter()
            .enumerate()
            .all(|(position, &rank)| position as i64 == rank)
            && size == team.len() as i64
        {
            return rank;
        }
        // The sum over listed ranks i of (rank == team[i] ? i mod size : 0).
        let i1 = melior::ir::r#type::IntegerType::new(self.context, 1).into();
        let mut position = builder.index(0, location);
        for (index_in_team, &member) in team.iter().enumerate() {
            let member = builder.index(member, location);
            let equal = builders::result(builder.op(
                Op::ArithCmpi.name(),
                location,
                &[rank, member],
                &[("predicate", builders::i64_attribute(self.context, 0))],
                &[i1],
            ));
            let candidate = builder.index(index_in_team as i64 % size, location);
            position = builders::result(builder.op(
                Op::ArithSelect.name(),
                location,
                &[equal, candidate, position],
                &[],
                &[index],
            ));
        }
        position
    }
}
