//! HIR's runtime: the C-ABI functions that JIT'd host programs call (streams,
//! buffers, compute, communication), and the backends behind them.

pub mod abi;
