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

    #[test]
    fn compute_ops_and_collectives_name_their_output() {
        let found = crate::map_function_ops(
            r#"
            func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
              host.add ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
              %r = comm.allreduce %a into %b sum team [0] : memref<8xf32> into memref<8xf32>
              comm.wait %r
              return
            }
            "#,
            |op| destination(op),
        );
        assert_eq!(found, [Some(2), Some(1), None, None]);
    }
}
