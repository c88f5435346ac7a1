//! HIR's dialects: `fusion` (tensor programs over a device mesh), `host`
//! (buffers, streams, compute on buffers) and `comm` (collectives, P2P,
//! waits). Defined in ODS under `dialects/`; this crate links their C++
//! build, registers them with melior contexts and generates typed op
//! builders from the same `.td` files.

mod axis_map;
mod destination;
pub mod dist;
pub mod ffi;
mod op_kind;
pub mod shard;

pub use axis_map::{axis_map, broadcast_axes};
pub use destination::destination;
pub use op_kind::OpKind;

use melior::{Context, dialect::DialectRegistry};

/// Registers the HIR dialects, the upstream ones HIR lowers through (func,
/// arith, scf, cf, memref, llvm, index) and those `convert-shard-to-fusion`
/// imports from (shard, linalg, tensor) with `context`, and loads them.
pub fn register_all(context: &Context) {
    let registry = DialectRegistry::new();
    // SAFETY: the registry is valid for the duration of the call.
    unsafe { ffi::hirRegisterAllDialects(registry.to_raw()) };
    context.append_dialect_registry(&registry);
    context.load_all_available_dialects();
}

melior::dialect! {
    name: "fusion",
    files: ["fusion/Fusion.td"],
    include_directory_env_vars: ["CARGO_MANIFEST_DIR"],
}

melior::dialect! {
    name: "host",
    files: ["host/Host.td"],
    include_directory_env_vars: ["CARGO_MANIFEST_DIR"],
}

melior::dialect! {
    name: "comm",
    files: ["comm/Comm.td"],
    include_directory_env_vars: ["CARGO_MANIFEST_DIR"],
}

/// `f` of each op of the body of the first function of `source`, a module
/// of HIR IR (the op-query tests share it).
#[cfg(test)]
fn map_function_ops<T>(source: &str, f: impl Fn(&melior::ir::OperationRef) -> T) -> Vec<T> {
    use melior::ir::{BlockLike, Module, RegionLike, operation::OperationLike};
    let context = Context::new();
    register_all(&context);
    let module = Module::parse(&context, source).expect("parses");
    let function = module.body().first_operation().expect("a function");
    let body = function.region(0).unwrap().first_block().unwrap();
    std::iter::successors(body.first_operation(), |op| op.next_in_block())
        .map(|op| f(&op))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::{Module, operation::OperationLike};

    #[test]
    fn registers_and_parses_all_dialects() {
        let context = Context::new();
        register_all(&context);
        let source = r#"
            fusion.mesh @tp = [0, 1]
            func.func @f(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>,
                         %b: memref<8xf32>, %i: index) {
              %s = host.stream_from_pool %i : !host.stream
              host.set_current_stream %s
              %r = comm.allreduce %b into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
              comm.wait %r
              return
            }
        "#;
        let module = Module::parse(&context, source).expect("HIR IR parses");
        assert!(module.as_operation().verify());
    }
}
