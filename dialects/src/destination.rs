//! The buffer an op writes, as its destination-passing-style interface says
//! (`DestinationStyleOpInterface` on the host compute ops and the comm
//! collectives): passes ask the op, not the position of its operands.

use crate::ffi;
use melior::ir::operation::OperationLike;

/// The operand number of the one buffer `op` writes, `None` for an op that
/// is not in destination-passing style with one init.
pub fn destination<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<usize> {
    // SAFETY: `op` is a valid operation for the duration of the call.
    usize::try_from(unsafe { ffi::hirDestinationOperand(op.to_raw()) }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::register_all;
    use melior::{
        Context,
        ir::{BlockLike, Module, RegionLike, operation::OperationLike},
    };

    #[test]
    fn compute_ops_and_collectives_name_their_output() {
        let context = Context::new();
        register_all(&context);
        let module = Module::parse(
            &context,
            r#"
            func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
              host.add ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
              %r = comm.allreduce %a into %b sum team [0] : memref<8xf32> into memref<8xf32>
              comm.wait %r
              return
            }
            "#,
        )
        .expect("parses");
        let function = module.body().first_operation().expect("a function");
        let body = function.region(0).unwrap().first_block().unwrap();
        let ops: Vec<_> =
            std::iter::successors(body.first_operation(), |op| op.next_in_block()).collect();
        let found: Vec<Option<usize>> = ops.iter().map(destination).collect();
        assert_eq!(found, [Some(2), Some(1), None, None]);
    }
}
