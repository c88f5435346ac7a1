//! Unit tests of `kernel_source.rs`: the generated entries and their keys.

use super::*;
use std::collections::HashSet;

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

#[test]
fn every_key_names_one_entry() {
    let keys = Key::all();
    let names: HashSet<String> = keys.iter().map(|key| key.name()).collect();
    assert_eq!(names.len(), keys.len(), "two keys share an entry name");
    let source = source();
    for name in &names {
        assert!(
            source.contains(&format!(" void {name}(")),
            "{name} has no entry"
        );
    }
    let unique: HashSet<Key> = keys.iter().copied().collect();
    assert_eq!(unique.len(), keys.len(), "a key is listed twice");
    // The names launches have always used: the symbols of the PTX.
    assert_eq!(
        Key::BinaryWide(Binary::Add, DType::BF16).name(),
        "hir_add_bf16_wide"
    );
    assert_eq!(
        Key::Reduce(Reduction::Amax, DType::F32, Way::Split).name(),
        "hir_amax_f32_split"
    );
    assert_eq!(
        Key::Generate(Generator::Random, DType::I64).name(),
        "hir_random_i64"
    );
    assert_eq!(Key::Copy(WIDE).name(), "hir_copy_128");
    assert_eq!(Key::Cast(DType::F16, DType::I32).name(), "hir_cast_f16_i32");
}
