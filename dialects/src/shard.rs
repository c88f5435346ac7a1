//! What HIR reads of upstream `shard` ops that MLIR's C API has no accessor
//! for (`hir-c/Shard.h`): the split axes of a `shard.sharding`.

use crate::ffi;
use melior::ir::operation::OperationLike;

/// For each tensor axis the `split_axes` of `op`, a `shard.sharding`, names,
/// the grid axes it is split along (empty: not split); `None` for any other
/// op. Tensor axes past the list are not split.
pub fn split_axes<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Vec<Vec<i16>>> {
    // SAFETY: `op` is live for the calls; each writes at most `capacity` entries.
    let rank = usize::try_from(unsafe { ffi::hirShardShardingRank(op.to_raw()) }).ok()?;
    (0..rank)
        .map(|axis| {
            let count = unsafe {
                ffi::hirShardShardingSplitAxes(op.to_raw(), axis as isize, [].as_mut_ptr(), 0)
            };
            let mut grid_axes = vec![0i16; usize::try_from(count).ok()?];
            // SAFETY: as above, with room for every grid axis.
            unsafe {
                ffi::hirShardShardingSplitAxes(
                    op.to_raw(),
                    axis as isize,
                    grid_axes.as_mut_ptr(),
                    grid_axes.len() as isize,
                )
            };
            Some(grid_axes)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map_function_ops;

    #[test]
    fn reads_the_split_axes_of_a_sharding() {
        let axes = map_function_ops(
            r#"
            func.func @f() {
              %s = shard.sharding @g split_axes = [[], [1, 0]] : !shard.sharding
              %r = shard.sharding @g split_axes = [[]] : !shard.sharding
              return
            }
            shard.grid @g(shape = 2x4)"#,
            |op| split_axes(op),
        );
        assert_eq!(
            axes,
            vec![Some(vec![vec![], vec![1, 0]]), Some(vec![vec![]]), None]
        );
    }
}
