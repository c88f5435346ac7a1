//! Simplifying the axes of views walked together: size-1 axes dropped and
//! neighbours contiguous in every view merged, so a contiguous tensor is one
//! axis whatever its rank. The kernels, fused kernels, GEMM planning, IPC
//! destinations and staging all walk views through it.

/// Simplifies a shape shared by several views (`strides[v]` per view): drops
/// axes of size 1 and merges each axis into its outer neighbour where every
/// view steps over the inner axis exactly as one outer step.
pub(crate) fn coalesce<S: AsRef<[usize]>>(
    sizes: &[usize],
    strides: &[S],
) -> (Vec<usize>, Vec<Vec<usize>>) {
    let kept = sizes.iter().filter(|&&size| size != 1).count();
    let mut out_sizes: Vec<usize> = Vec::with_capacity(kept);
    let mut out_strides: Vec<Vec<usize>> = vec![Vec::with_capacity(kept); strides.len()];
    for axis in (0..sizes.len()).filter(|&axis| sizes[axis] != 1) {
        let merges = !out_sizes.is_empty()
            && strides
                .iter()
                .zip(&out_strides)
                .all(|(view, merged)| *merged.last().unwrap() == view.as_ref()[axis] * sizes[axis]);
        if merges {
            *out_sizes.last_mut().unwrap() *= sizes[axis];
            for (view, merged) in strides.iter().zip(&mut out_strides) {
                *merged.last_mut().unwrap() = view.as_ref()[axis];
            }
        } else {
            out_sizes.push(sizes[axis]);
            for (view, merged) in strides.iter().zip(&mut out_strides) {
                merged.push(view.as_ref()[axis]);
            }
        }
    }
    (out_sizes, out_strides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesce_merges_contiguous_axes_and_keeps_slices_apart() {
        // A contiguous [2, 3, 4] is one axis.
        assert_eq!(
            coalesce(&[2, 3, 4], &[vec![12, 4, 1]]),
            (vec![24], vec![vec![1]])
        );
        // Slice [4, 8] of [4, 3, 8] along the middle axis: rows 24 apart.
        assert_eq!(
            coalesce(&[4, 1, 8], &[vec![24, 8, 1], vec![8, 8, 1]]),
            (vec![4, 8], vec![vec![24, 1], vec![8, 1]])
        );
        // A broadcast (stride 0) merges only with another broadcast axis.
        assert_eq!(
            coalesce(&[2, 3, 4], &[vec![12, 4, 1], vec![0, 0, 1]]),
            (vec![6, 4], vec![vec![4, 1], vec![0, 1]])
        );
    }
}
