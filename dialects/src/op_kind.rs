//! What kind of computation an op is, as its ODS traits say
//! (`common/Traits.td`): passes ask the op instead of keeping lists of op
//! names.

use crate::ffi;
use melior::ir::operation::OperationLike;

/// The kind an op's traits mark it as (`HirOpKind` of `hir-c/OpKind.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Not a compute op of the fusion or host dialect (or unregistered).
    None,
    /// Each result element is computed from the elements at the same
    /// position of every operand: set, neg, cast, the binary ops, host.copy.
    Elementwise,
    /// Reduces the axes of its `axes` attribute, dropped from the result:
    /// sum, amax.
    Reduction,
    /// Inserts the new axes of its `axes` attribute: broadcast.
    Broadcast,
    /// A matrix product over the operands' last axis: matmul, linear.
    Contraction,
}

impl OpKind {
    /// The kind of `op`.
    pub fn of<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Self {
        // SAFETY: `op` is a valid operation for the duration of the call.
        match unsafe { ffi::hirOpKindOf(op.to_raw()) } {
            1 => Self::Elementwise,
            2 => Self::Reduction,
            3 => Self::Broadcast,
            4 => Self::Contraction,
            _ => Self::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::register_all;
    use melior::{
        Context,
        ir::{BlockLike, Module, RegionLike, operation::OperationLike},
    };

    /// The kind of the first op named `name` in `module`.
    fn kind_of(module: &Module, name: &str) -> OpKind {
        fn find(op: melior::ir::OperationRef, name: &str) -> Option<OpKind> {
            if op.name().as_string_ref().as_str().ok() == Some(name) {
                return Some(OpKind::of(&op));
            }
            for region in op.regions() {
                let mut block = region.first_block();
                while let Some(current) = block {
                    let mut next = current.first_operation();
                    while let Some(nested) = next {
                        if let Some(kind) = find(nested, name) {
                            return Some(kind);
                        }
                        next = nested.next_in_block();
                    }
                    block = current.next_in_region();
                }
            }
            None
        }
        find(module.as_operation(), name).unwrap_or_else(|| panic!("{name} is in the module"))
    }

    #[test]
    fn kinds_come_from_the_ops_traits() {
        let context = Context::new();
        register_all(&context);
        let source = r#"
            func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>,
                         %x: memref<4x8xf32>, %y: memref<4x8xf32>, %z: memref<4xf32>,
                         %w: memref<8x8xf32>) -> tensor<4x16xf32> {
              %0 = fusion.add %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
              %1 = fusion.sum %0 [1] : tensor<4x8xf32> -> tensor<4xf32>
              %2 = fusion.broadcast %1 [1] : tensor<4xf32> -> tensor<4x8xf32>
              %3 = fusion.matmul %2, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
              %4 = fusion.attention %a, %a, %a causal : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
              host.copy ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
              host.amax [1] ins(%x : memref<4x8xf32>) outs(%z : memref<4xf32>)
              host.linear ins(%x, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%y : memref<4x8xf32>)
              return %3 : tensor<4x16xf32>
            }
        "#;
        let module = Module::parse(&context, source).expect("the module parses");
        assert!(module.as_operation().verify());
        let expected = [
            ("fusion.add", OpKind::Elementwise),
            ("fusion.sum", OpKind::Reduction),
            ("fusion.broadcast", OpKind::Broadcast),
            ("fusion.matmul", OpKind::Contraction),
            // Two contractions and a softmax: none of the four kinds.
            ("fusion.attention", OpKind::None),
            ("host.copy", OpKind::Elementwise),
            ("host.amax", OpKind::Reduction),
            ("host.linear", OpKind::Contraction),
            ("func.return", OpKind::None),
            ("func.func", OpKind::None),
        ];
        for (name, kind) in expected {
            assert_eq!(kind_of(&module, name), kind, "{name}");
        }
    }
}
