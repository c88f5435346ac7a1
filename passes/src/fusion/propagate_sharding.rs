//! `fusion-propagate-sharding`: gives a `#fusion.dist` to every tensor the
//! user left unannotated (function arguments and results of fusion ops),
//! from producers to consumers and back, to a fixed point.
//!
//! Each fusion op ties the axes of its operands to those of its result as
//! `axis_map` describes (identity for `set` and the pointwise ops; `sum` and
//! `amax` drop the reduced axes; `broadcast` inserts axes; `matmul` and
//! `linear` map batch, `M` and `N`, and tie the two sides of the contraction
//! `K`; `reshape` maps an axis it keeps whole and the outermost axis of a
//! group it merges or splits, so a split moves across it as an outer split),
//! and all its tensors to one mesh. An inferred axis takes the
//! parallel type of the axis it is tied to, except that:
//! - `stream` is a schedule the user chose for one value: it is never
//!   propagated (the inferred axis is `serial`);
//! - `didx` (`didy`) is propagated only to an axis whose extent is a
//!   multiple of the mesh's size along its mesh axis (otherwise the axis is
//!   `serial`);
//! - an axis tied to nothing annotated (a new broadcast axis, a reduced axis)
//!   is `serial`;
//! - a matmul's batch axis of extent 1 that the op broadcasts along a longer
//!   result axis is tied to nothing: every device reads it whole, so it is
//!   `serial`, and an operand annotated `didx` or `didy` on it is an error.
//!
//! A fusion op that reads no tensor (`fill`, `iota`) left unannotated takes
//! what its users' constraints imply.
//!
//! Annotated values are never changed. A value that two neighbours give
//! different distributions is an error, as is a value that would get two
//! `didx` axes, and a reshape whose outer split cannot reach the other side
//! (the mesh does not divide that side's outer extent: `[8, 6]` split on
//! axis 1 over 2 devices, reshaped to `[8, 3, 2]`). A function with no annotated tensor is all-`serial` on the
//! module's mesh when there is exactly one (an error otherwise); functions
//! with neither a fusion op nor an annotated tensor are left alone. The
//! functions' types follow their arguments and returned values.
//!
//! ```mlir
//! fusion.mesh @tp = [0, 1, 2, 3]
//! func.func @f(%a: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, %b: tensor<8x16xf32>)
//!     -> tensor<4x16xf32> {
//!   %c = fusion.matmul %a, %b : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>,
//!                               tensor<8x16xf32> -> tensor<4x16xf32>
//!   return %c : tensor<4x16xf32>
//! }
//! ```
//! becomes
//! ```mlir
//! func.func @f(%a: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>,
//!              %b: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>)
//!     -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>> {
//!   %c = fusion.matmul %a, %b : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>,
//!                               tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
//!                            -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
//!   return %c : tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
//! }
//! ```

use super::axis_map;
use super::mesh::{self, Mesh};
use crate::HirPass;
use crate::diagnostics::emit_error;
use crate::ir;
use crate::ops::Op;
use crate::rewrite;
use hir_dialects::{
    OpKind,
    dist::{Dist, ParallelType},
};
use melior::{
    Context,
    ir::{
        BlockLike, Location, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{StringAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::FunctionType,
    },
};
use std::collections::HashMap;

/// The op the pass runs on: meshes are symbols of the module.
pub const ANCHOR: &str = crate::ops::MODULE;
pub const ARGUMENT: &str = "fusion-propagate-sharding";

/// Creates the pass (anchored on `builtin.module`).
pub fn create() -> Box<dyn HirPass> {
    Box::new(PropagateSharding)
}

struct PropagateSharding;

impl HirPass for PropagateSharding {
    fn run(&mut self, module: OperationRef) -> bool {
        let context = module.context();
        // SAFETY: `context` lives through the run, the only place the reference is used.
        let context = unsafe { context.to_ref() };
        let meshes = mesh::meshes(module);
        let mut ok = true;
        for function in ir::body(module) {
            if Op::FuncFunc.is(&function) {
                ok &= propagate(context, function, &meshes);
            }
        }
        ok
    }
}

/// Where a value sits in an op.
#[derive(Clone, Copy)]
enum Role {
    Operand(usize),
    Result,
}

/// A value as one op sees it.
#[derive(Clone, Copy)]
struct End {
    node: usize,
    role: Role,
}

/// What one fusion op says: its tensors share a mesh (`ends`, operands then
/// the result) and each pair of `axes` shares a parallel type.
struct Constraint<'c, 'a> {
    op: OperationRef<'c, 'a>,
    ends: Vec<End>,
    axes: Vec<((End, usize), (End, usize))>,
}

/// A tensor value and what is known of its distribution.
struct Node<'c, 'a> {
    value: Value<'c, 'a>,
    shape: Vec<i64>,
    annotated: Option<Dist>,
    /// The pass may give it a distribution: an unannotated argument of the
    /// function or result of a fusion op (not a value some other op made).
    open: bool,
    mesh: Option<String>,
    axes: Vec<Option<ParallelType>>,
    /// How diagnostics name it, and where.
    what: String,
    location: Location<'c>,
}

impl Node<'_, '_> {
    fn mesh(&self) -> Option<&String> {
        self.annotated
            .as_ref()
            .map(|dist| &dist.mesh)
            .or(self.mesh.as_ref())
    }

    /// The inferred distribution, once complete.
    fn inferred(&self) -> Dist {
        Dist {
            mesh: self
                .mesh
                .clone()
                .expect("every open value has a mesh by now"),
            axes: self
                .axes
                .iter()
                .map(|axis| axis.expect("every axis is inferred by now"))
                .collect(),
            // Never inferred: stream is a schedule the user chose.
            stream_chunks: None,
        }
    }
}

/// The tensors of one function and the constraints between them.
struct Graph<'c, 'a> {
    nodes: Vec<Node<'c, 'a>>,
    /// Raw value to node.
    index: HashMap<usize, usize>,
    constraints: Vec<Constraint<'c, 'a>>,
}

impl<'c, 'a> Graph<'c, 'a> {
    fn build(function: OperationRef<'c, 'a>, symbol: &str) -> Option<Self> {
        let entry = ir::region(&function, 0)?.first_block()?;
        let mut graph = Self {
            nodes: Vec::new(),
            index: HashMap::new(),
            constraints: Vec::new(),
        };
        for index in 0..entry.argument_count() {
            let argument = entry.argument(index).expect("index is in range");
            graph.add(
                argument.into(),
                true,
                format!("argument #{index} of @{symbol}"),
                argument.location(),
            );
        }
        // A fusion op that reads no tensor (fill, iota) makes an open value
        // too: its users' constraints infer it.
        let ops: Vec<_> = ir::nested(function)
            .into_iter()
            .filter_map(|op| {
                axis_map::operand_axes(&op)
                    .or_else(|| axis_map::makes_tensor(&op).then(Vec::new))
                    .map(|axes| (op, axes))
            })
            .collect();
        for (op, _) in &ops {
            let result = op.result(0).expect("fusion compute ops have one result");
            let what = format!("result #0 of '{}'", ir::name(op));
            graph.add(result.into(), true, what, op.location());
        }
        for (op, mapping) in ops {
            graph.constrain(op, &mapping);
        }
        Some(graph)
    }

    /// Adds a node for `value` if it is a tensor, and returns it.
    fn add(
        &mut self,
        value: Value<'c, 'a>,
        open: bool,
        what: String,
        location: Location<'c>,
    ) -> Option<usize> {
        let key = value.to_raw().ptr as usize;
        if let Some(&node) = self.index.get(&key) {
            return Some(node);
        }
        let shape = axis_map::shape(value.r#type())?;
        let annotated = Dist::of_type(value.r#type());
        self.nodes.push(Node {
            value,
            open: open && annotated.is_none(),
            mesh: None,
            axes: vec![None; shape.len()],
            shape,
            annotated,
            what,
            location,
        });
        self.index.insert(key, self.nodes.len() - 1);
        Some(self.nodes.len() - 1)
    }

    fn constrain(&mut self, op: OperationRef<'c, 'a>, mapping: &[Vec<Option<usize>>]) {
        let name = ir::name(&op);
        let mut ends = Vec::new();
        for (index, operand) in op.operands().enumerate() {
            // An operand no fusion op made is read, never inferred.
            let what = format!("operand #{index} of '{name}'");
            let node = self.add(operand, false, what, op.location());
            ends.push(End {
                node: node.expect("fusion operands are tensors"),
                role: Role::Operand(index),
            });
        }
        let result = End {
            node: self.index[&(op.result(0).expect("one result").to_raw().ptr as usize)],
            role: Role::Result,
        };
        // A broadcast axis is read whole for every index of its result
        // axis: the two share no distribution.
        let broadcast = hir_dialects::broadcast_axes(&op).unwrap_or_default();
        let mut axes = Vec::new();
        for (operand, operand_axes) in mapping.iter().enumerate() {
            for (axis, result_axis) in operand_axes.iter().enumerate() {
                let broadcast = broadcast
                    .get(operand)
                    .is_some_and(|axes| axes.get(axis) == Some(&true));
                if let (Some(result_axis), false) = (result_axis, broadcast) {
                    axes.push(((ends[operand], axis), (result, *result_axis)));
                }
            }
        }
        // Both sides of a contraction are split alike: tie lhs's K to rhs's.
        if OpKind::of(&op) == OpKind::Contraction {
            let k = |operand: usize| axis_map::reduced(&mapping[operand]).next();
            if let (Some(lhs), Some(rhs)) = (k(0), k(1)) {
                axes.push(((ends[0], lhs), (ends[1], rhs)));
            }
        }
        ends.push(result);
        self.constraints.push(Constraint { op, ends, axes });
    }

    /// The parallel type axis `from` gives axis `to`, if it is known.
    fn propose(
        &self,
        from: (usize, usize),
        to: (usize, usize),
        meshes: &HashMap<String, Mesh>,
    ) -> Option<ParallelType> {
        let source = &self.nodes[from.0];
        let parallel_type = match &source.annotated {
            Some(dist) => dist.axes[from.1],
            None => source.axes[from.1]?,
        };
        let mesh = source.mesh()?;
        let extent = self.nodes[to.0].shape[to.1];
        let fits = meshes
            .get(mesh)
            .and_then(|mesh| mesh.parts(parallel_type))
            .is_some_and(|parts| extent > 0 && extent % parts == 0);
        Some(if parallel_type.is_device() && fits {
            parallel_type
        } else {
            ParallelType::Serial
        })
    }

    /// Fills what the constraints imply into open nodes until nothing
    /// changes; the first value an axis gets stays (conflicts are checked
    /// afterwards, on complete distributions).
    fn solve(&mut self, meshes: &HashMap<String, Mesh>) {
        let mut changed = true;
        while changed {
            changed = false;
            for constraint in 0..self.constraints.len() {
                for (from, to) in self.mesh_pairs(constraint) {
                    let mesh = self.nodes[from].mesh().cloned();
                    let target = &mut self.nodes[to];
                    if target.open && target.mesh.is_none() && mesh.is_some() {
                        target.mesh = mesh;
                        changed = true;
                    }
                }
                for (from, to) in self.axis_pairs(constraint) {
                    let proposed = self.propose(from, to, meshes);
                    let target = &mut self.nodes[to.0];
                    if target.open && target.axes[to.1].is_none() && proposed.is_some() {
                        target.axes[to.1] = proposed;
                        changed = true;
                    }
                }
            }
        }
    }

    /// (from, to) node pairs of a constraint's shared mesh, both ways.
    fn mesh_pairs(&self, constraint: usize) -> Vec<(usize, usize)> {
        let ends = &self.constraints[constraint].ends;
        let (result, operands) = ends.split_last().expect("a result");
        operands
            .iter()
            .flat_map(|operand| [(operand.node, result.node), (result.node, operand.node)])
            .collect()
    }

    /// ((node, axis), (node, axis)) pairs of a constraint's tied axes, both ways.
    fn axis_pairs(&self, constraint: usize) -> Vec<((usize, usize), (usize, usize))> {
        self.constraints[constraint]
            .axes
            .iter()
            .flat_map(|&((a, a_axis), (b, b_axis))| {
                [
                    ((a.node, a_axis), (b.node, b_axis)),
                    ((b.node, b_axis), (a.node, a_axis)),
                ]
            })
            .collect()
    }

    /// The first constraint an inferred distribution breaks, as the value
    /// (end), the op, its distribution and the one the op implies.
    fn find_conflict(
        &self,
        meshes: &HashMap<String, Mesh>,
    ) -> Option<(End, OperationRef<'c, 'a>, Dist, Dist)> {
        for constraint in &self.constraints {
            let (result, operands) = constraint.ends.split_last().expect("a result");
            for (from, to) in operands
                .iter()
                .flat_map(|&operand| [(operand, *result), (*result, operand)])
            {
                let target = &self.nodes[to.node];
                let Some(mesh) = self.nodes[from.node].mesh() else {
                    continue;
                };
                if target.open && target.mesh.as_ref() != Some(mesh) {
                    let mut implied = target.inferred();
                    implied.mesh = mesh.clone();
                    return Some((to, constraint.op, target.inferred(), implied));
                }
            }
            for &((a, a_axis), (b, b_axis)) in &constraint.axes {
                for ((from, from_axis), (to, to_axis)) in
                    [((a, a_axis), (b, b_axis)), ((b, b_axis), (a, a_axis))]
                {
                    let target = &self.nodes[to.node];
                    let proposed = self.propose((from.node, from_axis), (to.node, to_axis), meshes);
                    if let Some(proposed) = proposed
                        && target.open
                        && target.axes[to_axis] != Some(proposed)
                    {
                        let mut implied = target.inferred();
                        implied.axes[to_axis] = proposed;
                        return Some((to, constraint.op, target.inferred(), implied));
                    }
                }
            }
        }
        None
    }
}

/// Infers the distributions of one function; false after an error.
fn propagate<'c>(
    context: &'c Context,
    function: OperationRef<'c, '_>,
    meshes: &HashMap<String, Mesh>,
) -> bool {
    let symbol = function
        .attribute("sym_name")
        .ok()
        .and_then(|attr| StringAttribute::try_from(attr).ok())
        .map(|attr| attr.value().to_owned())
        .unwrap_or_default();
    // A declaration has no body to infer anything in.
    let Some(mut graph) = Graph::build(function, &symbol) else {
        return true;
    };
    let annotated = graph.nodes.iter().any(|node| node.annotated.is_some());
    if graph.constraints.is_empty() && !annotated {
        return true;
    }
    if !broadcast_axes_are_not_split(&graph) {
        return false;
    }
    graph.solve(meshes);

    // What nothing annotated reaches: the module's only mesh, all serial.
    let only_mesh = (meshes.len() == 1).then(|| meshes.keys().next().expect("one").clone());
    for node in graph.nodes.iter_mut().filter(|node| node.open) {
        if node.mesh.is_none() {
            let Some(mesh) = &only_mesh else {
                let (location, message) = if annotated {
                    (
                        node.location,
                        format!(
                            "cannot infer a distribution for {}: no annotated tensor is connected to it and the module has {} fusion.mesh ops; annotate it",
                            node.what,
                            meshes.len()
                        ),
                    )
                } else {
                    (
                        function.location(),
                        format!(
                            "cannot infer a distribution for the tensors of @{symbol}: none is annotated and the module has {} fusion.mesh ops; annotate at least one tensor",
                            meshes.len()
                        ),
                    )
                };
                emit_error(location, &message);
                return false;
            };
            node.mesh = Some(mesh.clone());
        }
        for axis in &mut node.axes {
            axis.get_or_insert(ParallelType::Serial);
        }
    }

    if let Some((end, op, inferred, implied)) = graph.find_conflict(meshes) {
        let what = match end.role {
            Role::Operand(index) => format!("operand #{index}"),
            Role::Result => "result #0".to_owned(),
        };
        emit_error(
            op.location(),
            &format!(
                "conflicting distributions inferred for {what} of '{}': {} vs {}; annotate it",
                ir::name(&op),
                inferred.to_attribute(context),
                implied.to_attribute(context),
            ),
        );
        return false;
    }
    if !outer_splits_carry(&graph, meshes) {
        return false;
    }
    for node in graph.nodes.iter().filter(|node| node.open) {
        for parallel_type in ParallelType::DEVICE {
            let sharded: Vec<_> = (0..node.axes.len())
                .filter(|&axis| node.axes[axis] == Some(parallel_type))
                .collect();
            if let [first, second, ..] = sharded[..] {
                emit_error(
                    node.location,
                    &format!(
                        "cannot infer a distribution for {}: axes {first} and {second} would both be {}; annotate it",
                        node.what,
                        parallel_type.keyword()
                    ),
                );
                return false;
            }
        }
    }

    for node in graph.nodes.iter().filter(|node| node.open) {
        let r#type = axis_map::with_dist(context, node.value.r#type(), &node.inferred());
        node.value.set_type(r#type);
    }
    update_function_type(context, function);
    true
}

/// Whether every `fusion.reshape` carries a device split of one side's
/// outermost axis of a merged or split group to the other side's (an outer
/// split); else an error at the op naming the outer extent that the mesh's
/// devices do not divide (`propose` made it `serial`, which the reshape's
/// verifier would reject without saying why).
fn outer_splits_carry(graph: &Graph, meshes: &HashMap<String, Mesh>) -> bool {
    let side = |end: End| match end.role {
        Role::Operand(_) => "input",
        Role::Result => "result",
    };
    for constraint in graph
        .constraints
        .iter()
        .filter(|constraint| Op::FusionReshape.is(&constraint.op))
    {
        for &((a, a_axis), (b, b_axis)) in &constraint.axes {
            for ((from, from_axis), (to, to_axis)) in
                [((a, a_axis), (b, b_axis)), ((b, b_axis), (a, a_axis))]
            {
                let (source, target) = (&graph.nodes[from.node], &graph.nodes[to.node]);
                let parallel_type = match &source.annotated {
                    Some(dist) => Some(dist.axes[from_axis]),
                    None => source.axes[from_axis],
                };
                let (Some(parallel_type), Some(mesh)) = (parallel_type, source.mesh()) else {
                    continue;
                };
                if !target.open
                    || !parallel_type.is_device()
                    || target.axes[to_axis] != Some(ParallelType::Serial)
                {
                    continue;
                }
                let parts = meshes
                    .get(mesh)
                    .and_then(|mesh| mesh.parts(parallel_type))
                    .unwrap_or(0);
                emit_error(
                    constraint.op.location(),
                    &format!(
                        "cannot carry {keyword} from {} axis {from_axis} of 'fusion.reshape' to \
                         {} axis {to_axis} of extent {}, not a multiple of the {parts} devices \
                         of mesh '@{mesh}' (an outer split needs the devices to divide the \
                         outermost extents of the merged or split group on both sides)",
                        side(from),
                        side(to),
                        target.shape[to_axis],
                        keyword = parallel_type.keyword(),
                    ),
                );
                return false;
            }
        }
    }
    true
}

/// Whether no annotated operand is split over devices (`didx`, `didy`) on
/// an axis its op broadcasts (a matmul's batch axis of extent 1 against a
/// longer result axis): such an axis is read whole by every device; else an
/// error at the op.
fn broadcast_axes_are_not_split(graph: &Graph) -> bool {
    for constraint in &graph.constraints {
        let op = constraint.op;
        let broadcast = hir_dialects::broadcast_axes(&op).unwrap_or_default();
        for (operand, end) in constraint.ends.iter().enumerate() {
            let Some(dist) = &graph.nodes[end.node].annotated else {
                continue;
            };
            let Some(axis) = (0..dist.axes.len()).find(|&axis| {
                dist.axes[axis].is_device()
                    && broadcast
                        .get(operand)
                        .is_some_and(|axes| axes.get(axis) == Some(&true))
            }) else {
                continue;
            };
            emit_error(
                op.location(),
                &format!(
                    "operand #{operand} of '{}' is {} on axis {axis}, which the op broadcasts \
                     (extent 1 read for every index of the result's axis): a broadcast axis is \
                     whole on every device; make it serial",
                    ir::name(&op),
                    dist.axes[axis].keyword()
                ),
            );
            return false;
        }
    }
    true
}

/// Rebuilds `function_type` from the entry block's arguments and the
/// returned values.
pub(crate) fn update_function_type<'c>(context: &'c Context, function: OperationRef<'c, '_>) {
    let old = function
        .attribute("function_type")
        .ok()
        .and_then(|attr| TypeAttribute::try_from(attr).ok())
        .and_then(|attr| FunctionType::try_from(attr.value()).ok())
        .expect("a func.func has a function type");
    let entry = ir::region(&function, 0)
        .and_then(|region| region.first_block())
        .expect("a function with a body");
    let inputs: Vec<Type> = (0..entry.argument_count())
        .map(|index| entry.argument(index).expect("in range").r#type())
        .collect();
    let results: Vec<Type> = match ir::nested(function)
        .into_iter()
        .find(|op| Op::FuncReturn.is(op))
    {
        Some(ret) => ret.operands().map(|value| value.r#type()).collect(),
        None => (0..old.result_count())
            .map(|index| old.result(index).expect("in range"))
            .collect(),
    };
    let function_type = FunctionType::new(context, &inputs, &results);
    rewrite::set_attribute(
        &rewrite::rewriter(function).as_rewriter_base(),
        function,
        "function_type",
        TypeAttribute::new(function_type.into()).into(),
    );
}
