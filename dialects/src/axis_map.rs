//! How an op maps the axes of its operands to the axes of its output, as its
//! `AxisMapOpInterface` says (common/AxisMap.td): the fusion and host compute
//! ops. Passes ask the op instead of deriving the maps from what it is.

use crate::ffi;
use melior::ir::operation::OperationLike;

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
}
