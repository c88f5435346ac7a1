//! Unit tests of `kernels.rs`: the wide-word choice.

use super::*;

#[test]
fn wide_words_need_contiguous_aligned_rows() {
    let aligned = 4096 as *mut u8;
    // bf16 rows of 2048 with outer strides of whole words: 8 lanes.
    assert_eq!(lanes(2, &[4, 2048], &[vec![4096, 1]], &[], &[aligned]), 8);
    assert_eq!(lanes(4, &[4, 2048], &[vec![4096, 1]], &[8], &[aligned]), 4);
    // A row length, an outer stride, a step or a pointer off a word.
    assert_eq!(lanes(2, &[4, 2044], &[vec![4096, 1]], &[], &[aligned]), 1);
    assert_eq!(lanes(2, &[4, 2048], &[vec![4100, 1]], &[], &[aligned]), 1);
    assert_eq!(lanes(2, &[4, 2048], &[vec![4096, 1]], &[3], &[aligned]), 1);
    assert_eq!(
        lanes(2, &[4, 2048], &[vec![4096, 1]], &[], &[4098 as *mut u8]),
        1
    );
    // Strided rows or no axis at all.
    assert_eq!(lanes(2, &[4, 2048], &[vec![1, 4]], &[], &[aligned]), 1);
    assert_eq!(lanes(2, &[], &[vec![]], &[], &[aligned]), 1);
    let mut strides = [4096, 1];
    widen(&mut strides, 8);
    assert_eq!(strides, [512, 1]);
    assert_eq!(widen_innermost(&[4096, 1], 8), vec![4096, 8]);
}
