//! How an op maps the axes of its operands to the axes of its output, as its
//! `AxisMapOpInterface` says (common/AxisMap.td): the fusion and host compute
//! ops. Passes ask the op instead of deriving the maps from what it is.

use crate::ffi;
use melior::ir::{Type, TypeLike, ValueLike, operation::OperationLike};

/// For each operand of `op`, the output axis each of its axes maps to,
/// `None` for the axes the op reduces; `None` for an op with no axis map.
pub fn axis_map<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Vec<Vec<Option<usize>>>> {
    if op.operand_count() == 0 {
        return None;
    }
    (0..op.operand_count())
        .map(|operand| {
            let mut axes = [0i64; 16];
            // SAFETY: `op` is live; the call writes at most `axes.len()` entries.
            let rank = unsafe {
                ffi::hirOperandAxisMap(
                    op.to_raw(),
                    operand as isize,
                    axes.as_mut_ptr(),
                    axes.len() as isize,
                )
            };
            let rank = usize::try_from(rank).ok()?;
            let mut map = axes.to_vec();
            if rank > axes.len() {
                map = vec![0; rank];
                // SAFETY: as above, with room for every axis.
                unsafe {
                    ffi::hirOperandAxisMap(
                        op.to_raw(),
                        operand as isize,
                        map.as_mut_ptr(),
                        rank as isize,
                    )
                };
            }
            map.truncate(rank);
            Some(
                map.into_iter()
                    .map(|axis| usize::try_from(axis).ok())
                    .collect(),
            )
        })
        .collect()
}

/// For each operand of `op`, whether each of its axes is broadcast: of
/// extent 1, mapped to an output axis (the result's, or the destination's of
/// a host op) of another extent, as a matmul's batch axes broadcast. Such an
/// axis is read at index 0 for every index of the output's: a pass that
/// slices or distributes the output along it keeps the operand whole there.
/// `None` for an op with no axis map.
pub fn broadcast_axes<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Vec<Vec<bool>>> {
    let maps = axis_map(op)?;
    let output = match crate::destination(op) {
        Some(operand) => op.operand(operand).ok()?.r#type(),
        None => op.result(0).ok()?.r#type(),
    };
    let output = shape(output)?;
    Some(
        maps.iter()
            .enumerate()
            .map(|(operand, map)| {
                let extents = op
                    .operand(operand)
                    .ok()
                    .and_then(|value| shape(value.r#type()))
                    .unwrap_or_default();
                map.iter()
                    .enumerate()
                    .map(|(axis, mapped)| {
                        mapped.is_some_and(|to| extents.get(axis) == Some(&1) && output[to] != 1)
                    })
                    .collect()
            })
            .collect(),
    )
}

/// The extents of a ranked shaped type (tensor or memref; a dynamic extent
/// is negative).
fn shape(r#type: Type) -> Option<Vec<i64>> {
    let raw = r#type.to_raw();
    // SAFETY: `raw` is a live type; the shaped-type queries run only on a
    // ranked shaped type, within its rank.
    unsafe {
        if !mlir_sys::mlirTypeIsAShaped(raw) || !mlir_sys::mlirShapedTypeHasRank(raw) {
            return None;
        }
        let rank = mlir_sys::mlirShapedTypeGetRank(raw);
        Some(
            (0..rank)
                .map(|axis| mlir_sys::mlirShapedTypeGetDimSize(raw, axis as isize))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_say_how_their_axes_map() {
        let maps = crate::map_function_ops(
            r#"
            func.func @f(%a: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>,
                         %x: memref<4x8xf32>, %y: memref<8x16xf32>, %z: memref<4x16xf32>) {
              %s = fusion.sum %a [1] : tensor<2x4x8xf32> -> tensor<2x8xf32>
              %l = fusion.linear %a, %w, %b : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
              host.matmul ins(%x, %y : memref<4x8xf32>, memref<8x16xf32>) outs(%z : memref<4x16xf32>)
              %r = comm.allreduce %z into %z sum team [0] : memref<4x16xf32> into memref<4x16xf32>
              return
            }
            "#,
            |op| axis_map(op),
        );
        assert_eq!(maps[0], Some(vec![vec![Some(0), None, Some(1)]]));
        assert_eq!(
            maps[1],
            Some(vec![
                vec![Some(0), Some(1), None],
                vec![Some(2), None],
                vec![Some(2)]
            ])
        );
        assert_eq!(
            maps[2],
            Some(vec![
                vec![Some(0), None],
                vec![None, Some(1)],
                vec![Some(0), Some(1)]
            ])
        );
        assert_eq!(maps[3], None);
    }

    #[test]
    fn attention_keeps_batch_axes_sq_and_dv_and_reduces_d_and_sk() {
        let maps = crate::map_function_ops(
            r#"
            func.func @f(%q: tensor<2x8x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x4xf32>,
                         %m: tensor<8x12xf32>, %o: memref<8x4xf32>, %x: memref<8x16xf32>,
                         %y: memref<12x16xf32>, %z: memref<12x4xf32>) {
              %0 = fusion.attention %q, %k, %v, %m causal : tensor<2x8x16xf32>, tensor<2x12x16xf32>, tensor<2x12x4xf32>, tensor<8x12xf32> -> tensor<2x8x4xf32>
              host.attention scale 0.25 ins(%x, %y, %z : memref<8x16xf32>, memref<12x16xf32>, memref<12x4xf32>) outs(%o : memref<8x4xf32>)
              return
            }
            "#,
            |op| axis_map(op),
        );
        assert_eq!(
            maps[0],
            Some(vec![
                vec![Some(0), Some(1), None],
                vec![Some(0), None, None],
                vec![Some(0), None, Some(2)],
                vec![Some(1), None]
            ])
        );
        // No batch axis; the destination maps to itself.
        assert_eq!(
            maps[1],
            Some(vec![
                vec![Some(0), None],
                vec![None, None],
                vec![None, Some(1)],
                vec![Some(0), Some(1)]
            ])
        );
    }

    #[test]
    fn matmul_batch_axes_align_from_the_right_and_broadcast_at_extent_1() {
        let maps = crate::map_function_ops(
            r#"
            func.func @f(%a: tensor<4x2x8x16xf32>, %b: tensor<1x16x32xf32>,
                         %c: tensor<8x16xf32>, %d: tensor<3x1x16x32xf32>,
                         %x: memref<1x8x16xf32>, %y: memref<4x16x32xf32>, %z: memref<4x8x32xf32>) {
              %0 = fusion.matmul %a, %b : tensor<4x2x8x16xf32>, tensor<1x16x32xf32> -> tensor<4x2x8x32xf32>
              %1 = fusion.matmul %c, %d : tensor<8x16xf32>, tensor<3x1x16x32xf32> -> tensor<3x1x8x32xf32>
              host.matmul ins(%x, %y : memref<1x8x16xf32>, memref<4x16x32xf32>) outs(%z : memref<4x8x32xf32>)
              return
            }
            "#,
            |op| (axis_map(op), broadcast_axes(op)),
        );
        // rhs [1, K, N] against [4, 2, M, N]: its unit axis is output axis 1.
        assert_eq!(
            maps[0].0,
            Some(vec![
                vec![Some(0), Some(1), Some(2), None],
                vec![Some(1), None, Some(3)]
            ])
        );
        assert_eq!(
            maps[0].1,
            Some(vec![vec![false; 4], vec![true, false, false]])
        );
        // An lhs without batch axes; rhs's unit axis meets an output axis of 1.
        assert_eq!(
            maps[1].0,
            Some(vec![
                vec![Some(2), None],
                vec![Some(0), Some(1), None, Some(3)]
            ])
        );
        assert_eq!(maps[1].1, Some(vec![vec![false; 2], vec![false; 4]]));
        // The host op's output is its destination; the lhs's unit batch axis
        // is broadcast along it.
        assert_eq!(
            maps[2].1,
            Some(vec![
                vec![true, false, false],
                vec![false; 3],
                vec![false; 3]
            ])
        );
    }
}
