//! Typed wrappers of the upstream ops `convert-shard-to-fusion` reads that
//! melior's generated set lacks (`shard`, and linalg's structured ops, which
//! live in another `.td` than melior's `linalg`), generated from MLIR's own
//! `.td` files as melior generates the others.

melior::dialect! {
    name: "shard",
    files: ["mlir/Dialect/Shard/IR/ShardOps.td"],
}

/// linalg's structured ops (`linalg.matmul`, `linalg.add`, ...).
pub mod structured {
    melior::dialect! {
        name: "linalg",
        files: ["mlir/Dialect/Linalg/IR/LinalgStructuredOps.td"],
    }
}
