//! `fusion.mesh` as the passes read it: the devices in order (row-major) and
//! the shape, `[n]`, `[rows, columns]` or `[planes, rows, columns]`, and what
//! a device parallel type means on it: `didx` splits over the last mesh axis
//! (the columns), `didy` over the one before (the rows), `didz` over the one
//! before that (the planes of a 3-D mesh). A collective over one of them runs
//! within each team of devices that differ only along that axis.

use crate::ir;
use crate::ops::Op;
use hir_dialects::dist::ParallelType;
use melior::ir::{
    OperationRef,
    attribute::{DenseI64ArrayAttribute, StringAttribute},
    operation::OperationLike,
};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mesh {
    pub devices: Vec<i64>,
    pub shape: Vec<i64>,
}

impl Mesh {
    /// The mesh axis `parallel_type` splits over, if it is a device type the
    /// mesh has an axis for.
    fn axis(&self, parallel_type: ParallelType) -> Option<usize> {
        let last = self.shape.len().checked_sub(1)?;
        match parallel_type {
            ParallelType::DIDx => Some(last),
            ParallelType::DIDy => last.checked_sub(1),
            ParallelType::DIDz => last.checked_sub(2),
            ParallelType::Serial | ParallelType::Stream => None,
        }
    }

    /// The number of devices along the mesh axis of `parallel_type`: the
    /// number of parts it splits a tensor axis into.
    pub fn parts(&self, parallel_type: ParallelType) -> Option<i64> {
        Some(self.shape[self.axis(parallel_type)?])
    }

    /// The teams of a collective over `parallel_type`, one after the other,
    /// and their size when there are several (`None`: the whole mesh, in
    /// order, is the one team).
    /// The teams are listed in the row-major order of the other axes'
    /// coordinates, each in the order of its own axis.
    pub fn teams(&self, parallel_type: ParallelType) -> (Vec<i64>, Option<i64>) {
        let Some(axis) = self.axis(parallel_type) else {
            return (self.devices.clone(), None);
        };
        let size = self.shape[axis] as usize;
        let count = self.devices.len() / size;
        if count <= 1 {
            return (self.devices.clone(), None);
        }
        // Row-major strides: a device's index is the sum of coordinate * stride.
        let stride = |axis: usize| self.shape[axis + 1..].iter().product::<i64>() as usize;
        let others: Vec<usize> = (0..self.shape.len())
            .filter(|&other| other != axis)
            .collect();
        let mut teams = Vec::with_capacity(self.devices.len());
        for team in 0..count {
            // The team's coordinates along the other axes, row-major.
            let mut rest = team;
            let mut base = 0;
            for &other in others.iter().rev() {
                let extent = self.shape[other] as usize;
                base += (rest % extent) * stride(other);
                rest /= extent;
            }
            teams.extend((0..size).map(|position| self.devices[base + position * stride(axis)]));
        }
        (teams, Some(size as i64))
    }
}

/// Mesh name to mesh, from the `fusion.mesh` ops of `module`.
pub fn meshes(module: OperationRef) -> HashMap<String, Mesh> {
    let mut meshes = HashMap::new();
    for op in ir::body(module) {
        if !Op::FusionMesh.is(&op) {
            continue;
        }
        let symbol = op
            .attribute("sym_name")
            .ok()
            .and_then(|attr| StringAttribute::try_from(attr).ok());
        let list = |name: &str| {
            let array = DenseI64ArrayAttribute::try_from(op.attribute(name).ok()?).ok()?;
            Some(
                (0..array.len())
                    .map(|index| array.element(index).expect("in range"))
                    .collect::<Vec<i64>>(),
            )
        };
        if let (Some(symbol), Some(devices)) = (symbol, list("devices")) {
            let shape = list("shape").unwrap_or_else(|| vec![devices.len() as i64]);
            meshes.insert(symbol.value().to_owned(), Mesh { devices, shape });
        }
    }
    meshes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teams_are_the_rows_or_columns_of_a_2d_mesh() {
        let mesh = Mesh {
            devices: (0..8).collect(),
            shape: vec![2, 4],
        };
        assert_eq!(mesh.parts(ParallelType::DIDx), Some(4));
        assert_eq!(mesh.parts(ParallelType::DIDy), Some(2));
        assert_eq!(mesh.teams(ParallelType::DIDx), ((0..8).collect(), Some(4)));
        assert_eq!(
            mesh.teams(ParallelType::DIDy),
            (vec![0, 4, 1, 5, 2, 6, 3, 7], Some(2))
        );
    }

    #[test]
    fn teams_of_a_3d_mesh_vary_along_one_axis() {
        let mesh = Mesh {
            devices: (0..8).collect(),
            shape: vec![2, 2, 2],
        };
        assert_eq!(mesh.parts(ParallelType::DIDz), Some(2));
        assert_eq!(
            mesh.teams(ParallelType::DIDx),
            (vec![0, 1, 2, 3, 4, 5, 6, 7], Some(2))
        );
        assert_eq!(
            mesh.teams(ParallelType::DIDy),
            (vec![0, 2, 1, 3, 4, 6, 5, 7], Some(2))
        );
        assert_eq!(
            mesh.teams(ParallelType::DIDz),
            (vec![0, 4, 1, 5, 2, 6, 3, 7], Some(2))
        );
        let flat = Mesh {
            devices: (0..4).collect(),
            shape: vec![1, 1, 4],
        };
        assert_eq!(flat.teams(ParallelType::DIDx), ((0..4).collect(), None));
    }

    #[test]
    fn a_1d_mesh_is_one_team_and_has_no_didy() {
        let mesh = Mesh {
            devices: vec![4, 5, 6],
            shape: vec![3],
        };
        assert_eq!(mesh.parts(ParallelType::DIDx), Some(3));
        assert_eq!(mesh.parts(ParallelType::DIDy), None);
        assert_eq!(mesh.teams(ParallelType::DIDx), (vec![4, 5, 6], None));
    }
}
