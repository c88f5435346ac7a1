//! Unit tests of `kernels.rs`: the wide-word choice and the generated entries.

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

#[test]
fn every_entry_is_generated_once() {
    let source = source();
    let entries = source.matches("extern \"C\" __global__").count();
    let floats = DType::FLOATS.len();
    // Per reduction: by block, short, wide and split.
    let per_type = 4 + 4 * Reduction::ALL.len();
    // The integer types: neg, abs, relu; every binary op but div. Casts:
    // every pair but an integer type to itself.
    let casts = DType::ALL.len() * DType::ALL.len() - DType::INTS.len();
    assert_eq!(
        entries,
        4 + casts
            + floats * (per_type + Unary::ALL.len() + 2 * Binary::ALL.len())
            + DType::INTS.len() * (per_type + 3 + 2 * (Binary::ALL.len() - 1))
    );
    assert!(source.contains("void hir_neg_i32(Pointwise p) { unary<I32, I32, IntNeg>(p); }"));
    assert!(source.contains("void hir_add_i64_wide(Pointwise p) { binary_wide<I64, IntAdd>(p); }"));
    assert!(source.contains("void hir_sum_i64(Reduce p) { reduce<I64, IntSumOp>(p); }"));
    assert!(source.contains("void hir_fill_i32(Generate p) { fill_int<I32>(p); }"));
    assert!(source.contains("void hir_copy_64(Pointwise p) { copy<u64>(p); }"));
    assert!(!source.contains("hir_exp_i32") && !source.contains("hir_div_i64"));
    assert!(source.contains("void hir_exp_bf16(Pointwise p)"));
    assert!(source.contains("void hir_where_f16(Ternary p)"));
    assert!(source.contains("void hir_iota_bf16(Generate p)"));
    assert!(source.contains("void hir_random_bf16(Random p) { random<BF16>(p); }"));
    assert!(source.contains("void hir_random_i32(Random p) { random_int<I32>(p); }"));
    assert!(source.contains("void hir_sum_bf16_short(Reduce p)"));
    assert!(source.contains("void hir_sum_bf16_split(Reduce p) { reduce_split<BF16, SumOp>(p); }"));
    assert!(source.contains("void hir_cast_bf16_f16(Pointwise p)"));
    assert!(
        source.contains("void hir_cast_bf16_i64(Pointwise p) { unary<BF16, I64, OpToI64>(p); }")
    );
    assert!(
        source.contains("void hir_cast_i32_f16(Pointwise p) { unary<I32, F16, IntToF16>(p); }")
    );
    assert!(source.contains("void hir_cast_i64_i32(Pointwise p) { unary<I64, I32, IntCast>(p); }"));
    assert!(!source.contains("hir_cast_i32_i32"));
    assert!(source.contains("void hir_amax_f16(Reduce p)"));
    assert!(source.contains("void hir_sum_f32_wide(Reduce p)"));
    assert!(source.contains("void hir_copy_128(Pointwise p)"));
    assert!(source.contains("void hir_add_bf16_wide(Pointwise p)"));
}
