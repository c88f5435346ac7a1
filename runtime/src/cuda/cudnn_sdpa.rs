//! cuDNN's fused flash attention as a backend-API operation graph: the one
//! cudnn-frontend's `sdpa` node expands to for inference (its composite
//! form, which cuDNN 9 fuses into one flash-attention engine; Transformer
//! Engine and PyTorch's cuDNN SDPA run the same), its plan (the first engine
//! config cuDNN's heuristics offer that finalizes) and its execution with a
//! variant pack of pointers. `cudnn_attention.rs` decides when it runs.
//!
//! The graph, in cudnn-frontend's order (scores and softmax in f32):
//!
//! ```text
//! S = matmul(Q [b,h,sq,d], K^T [b,h,d,sk])     K^T: K's strides, last two swapped
//! S = S * scale                                scale: f32 by value
//! S = S + mask [1,1,sq,sk]                     with a mask
//! S = select(row >= col, S, -inf)              causal: GEN_INDEX on axes 2 and 3, CMP_GE
//! M = max(S) over keys;  E = exp(S - M);  Z = sum(E) over keys
//! stats = M + log(Z)                           virtual: the pattern cuDNN fuses has it
//! O [b,h,sq,d] = matmul(E / Z, V [b,h,sk,d])   E / Z in the inputs' type
//! ```
//!
//! Below cuDNN 9.10 the causal mask selects the lowest f32 rather than -inf,
//! as cudnn-frontend does.

use super::blas::WORKSPACE;
use super::cudnn::{self, Attr, Descriptor, Handle, Kind};
use crate::error::{Error, Result};
use cudarc::cudnn::sys;
use hir_abi::DType;
use std::ffi::c_void;
use std::time::Instant;

/// The graph's tensors that the variant pack binds.
const Q: i64 = 1;
const K: i64 = 2;
const V: i64 = 3;
const O: i64 = 4;
const SCALE: i64 = 5;
const MASK: i64 = 6;
const NEG_INF: i64 = 7;
/// The first id of the virtual tensors.
const VIRTUAL: i64 = 100;

/// An attention as cuDNN's graph describes it: what its plan depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    pub dtype: DType,
    pub b: i64,
    pub h: i64,
    pub sq: i64,
    pub sk: i64,
    pub d: i64,
    /// `[b, h, s, d]` strides of q, k, v and out.
    pub strides: [[i64; 4]; 4],
    /// The mask's row stride (its column stride is 1).
    pub mask: Option<i64>,
    pub causal: bool,
}

fn data_type(dtype: DType) -> sys::cudnnDataType_t {
    match dtype {
        DType::BF16 => sys::cudnnDataType_t::CUDNN_DATA_BFLOAT16,
        DType::F16 => sys::cudnnDataType_t::CUDNN_DATA_HALF,
        _ => unreachable!("`problem` takes bf16 and f16 only"),
    }
}

const FLOAT: sys::cudnnDataType_t = sys::cudnnDataType_t::CUDNN_DATA_FLOAT;

/// What a tensor of the graph is.
struct TensorSpec<'a> {
    name: &'static str,
    uid: i64,
    data_type: sys::cudnnDataType_t,
    dims: &'a [i64],
    strides: &'a [i64],
    is_virtual: bool,
    by_value: bool,
}

const ONE: [i64; 4] = [1; 4];

impl<'a> TensorSpec<'a> {
    /// A tensor the variant pack binds to device memory.
    fn input(
        name: &'static str,
        uid: i64,
        data_type: sys::cudnnDataType_t,
        dims: &'a [i64],
        strides: &'a [i64],
    ) -> TensorSpec<'a> {
        TensorSpec {
            name,
            uid,
            data_type,
            dims,
            strides,
            is_virtual: false,
            by_value: false,
        }
    }

    /// An f32 scalar the variant pack passes by value (a host address).
    fn scalar(name: &'static str, uid: i64) -> TensorSpec<'static> {
        TensorSpec {
            by_value: true,
            ..TensorSpec::input(name, uid, FLOAT, &ONE, &ONE)
        }
    }
}

/// The descriptors of an operation graph as it is built, kept alive with
/// the plan (as cudnn-frontend keeps them).
#[derive(Default)]
struct Graph {
    /// Every descriptor made, in order.
    descriptors: Vec<Descriptor>,
    /// Indices into `descriptors` of the operations, in order.
    operations: Vec<usize>,
    next_uid: i64,
}

impl Graph {
    fn keep(&mut self, descriptor: Descriptor) -> usize {
        self.descriptors.push(descriptor);
        self.descriptors.len() - 1
    }

    fn get(&self, index: usize) -> &Descriptor {
        &self.descriptors[index]
    }

    fn tensor(&mut self, spec: TensorSpec) -> Result<usize> {
        let tensor = Descriptor::new(Kind::CUDNN_BACKEND_TENSOR_DESCRIPTOR, spec.name)?;
        tensor.set_data_type(Attr::CUDNN_ATTR_TENSOR_DATA_TYPE, spec.data_type)?;
        tensor.set_i64s(Attr::CUDNN_ATTR_TENSOR_DIMENSIONS, spec.dims)?;
        tensor.set_i64s(Attr::CUDNN_ATTR_TENSOR_STRIDES, spec.strides)?;
        tensor.set_i64(Attr::CUDNN_ATTR_TENSOR_UNIQUE_ID, spec.uid)?;
        tensor.set_i64(Attr::CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16)?;
        if spec.is_virtual {
            tensor.set_bool(Attr::CUDNN_ATTR_TENSOR_IS_VIRTUAL, true)?;
        }
        if spec.by_value {
            tensor.set_bool(Attr::CUDNN_ATTR_TENSOR_IS_BY_VALUE, true)?;
        }
        tensor.finalize()?;
        Ok(self.keep(tensor))
    }

    /// A virtual tensor of the graph.
    fn temp(
        &mut self,
        name: &'static str,
        data_type: sys::cudnnDataType_t,
        dims: &[i64],
        strides: &[i64],
    ) -> Result<usize> {
        let uid = VIRTUAL + self.next_uid;
        self.next_uid += 1;
        self.tensor(TensorSpec {
            name,
            uid,
            data_type,
            dims,
            strides,
            is_virtual: true,
            by_value: false,
        })
    }

    /// A pointwise operation `y = mode(x[, b[, t]])` computed in `math`.
    fn pointwise(
        &mut self,
        name: &'static str,
        mode: sys::cudnnPointwiseMode_t,
        math: sys::cudnnDataType_t,
        inputs: &[usize],
        y: usize,
    ) -> Result<()> {
        self.pointwise_on(name, mode, math, None, inputs, y)
    }

    /// `y` = the index of each element of `x` along `axis`.
    fn gen_index(&mut self, name: &'static str, axis: i64, x: usize, y: usize) -> Result<()> {
        let mode = sys::cudnnPointwiseMode_t::CUDNN_POINTWISE_GEN_INDEX;
        self.pointwise_on(name, mode, FLOAT, Some(axis), &[x], y)
    }

    fn pointwise_on(
        &mut self,
        name: &'static str,
        mode: sys::cudnnPointwiseMode_t,
        math: sys::cudnnDataType_t,
        axis: Option<i64>,
        inputs: &[usize],
        y: usize,
    ) -> Result<()> {
        let desc = Descriptor::new(Kind::CUDNN_BACKEND_POINTWISE_DESCRIPTOR, name)?;
        desc.set_pointwise_mode(Attr::CUDNN_ATTR_POINTWISE_MODE, mode)?;
        desc.set_data_type(Attr::CUDNN_ATTR_POINTWISE_MATH_PREC, math)?;
        if let Some(axis) = axis {
            desc.set_i64(Attr::CUDNN_ATTR_POINTWISE_AXIS, axis)?;
        }
        desc.finalize()?;
        let op = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, name)?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, &desc)?;
        let ports = [
            Attr::CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
            Attr::CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
            Attr::CUDNN_ATTR_OPERATION_POINTWISE_TDESC,
        ];
        for (&port, &input) in ports.iter().zip(inputs) {
            op.set_descriptor(port, self.get(input))?;
        }
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_POINTWISE_YDESC, self.get(y))?;
        op.set_f32(Attr::CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0)?;
        op.set_f32(Attr::CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0)?;
        op.finalize()?;
        self.keep(desc);
        let op = self.keep(op);
        self.operations.push(op);
        Ok(())
    }

    /// `c = a b`, batched over the leading axes, in f32.
    fn matmul(&mut self, name: &'static str, a: usize, b: usize, c: usize) -> Result<()> {
        let desc = Descriptor::new(Kind::CUDNN_BACKEND_MATMUL_DESCRIPTOR, name)?;
        desc.set_data_type(Attr::CUDNN_ATTR_MATMUL_COMP_TYPE, FLOAT)?;
        desc.finalize()?;
        let op = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, name)?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_ADESC, self.get(a))?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_BDESC, self.get(b))?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_CDESC, self.get(c))?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_DESC, &desc)?;
        op.finalize()?;
        self.keep(desc);
        let op = self.keep(op);
        self.operations.push(op);
        Ok(())
    }

    /// `y = op(x)` over the axes where `y` has extent 1, in f32.
    fn reduction(
        &mut self,
        name: &'static str,
        operator: sys::cudnnReduceTensorOp_t,
        x: usize,
        y: usize,
    ) -> Result<()> {
        let desc = Descriptor::new(Kind::CUDNN_BACKEND_REDUCTION_DESCRIPTOR, name)?;
        desc.set_data_type(Attr::CUDNN_ATTR_REDUCTION_COMP_TYPE, FLOAT)?;
        desc.set_reduction(Attr::CUDNN_ATTR_REDUCTION_OPERATOR, operator)?;
        desc.finalize()?;
        let op = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, name)?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_REDUCTION_XDESC, self.get(x))?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_REDUCTION_YDESC, self.get(y))?;
        op.set_descriptor(Attr::CUDNN_ATTR_OPERATION_REDUCTION_DESC, &desc)?;
        op.finalize()?;
        self.keep(desc);
        let op = self.keep(op);
        self.operations.push(op);
        Ok(())
    }

    /// The finalized operation graph of `key` on `handle` (the module's
    /// graph), its descriptor last in `descriptors`.
    fn build(handle: &Handle, key: &Key) -> Result<Graph> {
        let mut graph = Graph::operations(key)?;
        let ops = Descriptor::new(Kind::CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "sdpa")?;
        ops.set_handle(Attr::CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle)?;
        let operations: Vec<&Descriptor> = graph.operations.iter().map(|&i| graph.get(i)).collect();
        ops.set_descriptors(Attr::CUDNN_ATTR_OPERATIONGRAPH_OPS, &operations)?;
        ops.finalize()?;
        graph.keep(ops);
        Ok(graph)
    }

    /// The finalized tensors and operations of `key`'s graph (which need no
    /// handle, nor a GPU).
    fn operations(key: &Key) -> Result<Graph> {
        use sys::cudnnPointwiseMode_t as P;
        let mut graph = Graph::default();
        let Key {
            dtype,
            b,
            h,
            sq,
            sk,
            d,
            strides,
            mask,
            causal,
        } = *key;
        let io = data_type(dtype);
        let [q_strides, k_strides, v_strides, o_strides] = strides;
        let q = graph.tensor(TensorSpec::input("Q", Q, io, &[b, h, sq, d], &q_strides))?;
        // K^T: K's [b, h, sk, d] with the last two axes swapped.
        let k_t = [k_strides[0], k_strides[1], k_strides[3], k_strides[2]];
        let kt = graph.tensor(TensorSpec::input("K^T", K, io, &[b, h, d, sk], &k_t))?;
        let v = graph.tensor(TensorSpec::input("V", V, io, &[b, h, sk, d], &v_strides))?;
        let o = graph.tensor(TensorSpec::input("O", O, io, &[b, h, sq, d], &o_strides))?;
        let scale = graph.tensor(TensorSpec::scalar("attn_scale", SCALE))?;
        let scores = [b, h, sq, sk];
        let packed = [h * sq * sk, sq * sk, sk, 1];
        let rows = [b, h, sq, 1];
        let row_strides = [h * sq, sq, 1, 1];

        let s = graph.temp("bmm1", FLOAT, &scores, &packed)?;
        graph.matmul("bmm1", q, kt, s)?;
        let mut last = graph.temp("attn_scale", FLOAT, &scores, &packed)?;
        graph.pointwise(
            "attn_scale",
            P::CUDNN_POINTWISE_MUL,
            FLOAT,
            &[s, scale],
            last,
        )?;
        if let Some(row) = mask {
            let (dims, strides) = ([1, 1, sq, sk], [sq * row, sq * row, row, 1]);
            let bias = graph.tensor(TensorSpec::input("bias", MASK, io, &dims, &strides))?;
            let biased = graph.temp("bias", FLOAT, &scores, &packed)?;
            graph.pointwise("bias", P::CUDNN_POINTWISE_ADD, FLOAT, &[last, bias], biased)?;
            last = biased;
        }
        if causal {
            let int32 = sys::cudnnDataType_t::CUDNN_DATA_INT32;
            let boolean = sys::cudnnDataType_t::CUDNN_DATA_BOOLEAN;
            let row = graph.temp("gen_row_index", int32, &scores, &packed)?;
            graph.gen_index("gen_row_index", 2, last, row)?;
            let col = graph.temp("gen_col_index", int32, &scores, &packed)?;
            graph.gen_index("gen_col_index", 3, last, col)?;
            let keep = graph.temp("row>=col", boolean, &scores, &packed)?;
            graph.pointwise(
                "row>=col",
                P::CUDNN_POINTWISE_CMP_GE,
                boolean,
                &[row, col],
                keep,
            )?;
            let neg_inf = graph.tensor(TensorSpec::scalar("-inf", NEG_INF))?;
            let masked = graph.temp("binary_select", FLOAT, &scores, &packed)?;
            graph.pointwise(
                "binary_select",
                P::CUDNN_POINTWISE_BINARY_SELECT,
                FLOAT,
                &[last, neg_inf, keep],
                masked,
            )?;
            last = masked;
        }
        // Softmax, as cudnn-frontend's composite softmax with stats.
        let max = graph.temp("Max", FLOAT, &rows, &row_strides)?;
        graph.reduction(
            "Max",
            sys::cudnnReduceTensorOp_t::CUDNN_REDUCE_TENSOR_MAX,
            last,
            max,
        )?;
        let sub = graph.temp("sub_M", FLOAT, &scores, &packed)?;
        graph.pointwise("sub", P::CUDNN_POINTWISE_SUB, FLOAT, &[last, max], sub)?;
        let exp = graph.temp("exp_sub_M", FLOAT, &scores, &packed)?;
        graph.pointwise("exp", P::CUDNN_POINTWISE_EXP, FLOAT, &[sub], exp)?;
        let sum = graph.temp("SumExp", FLOAT, &rows, &row_strides)?;
        graph.reduction(
            "sum",
            sys::cudnnReduceTensorOp_t::CUDNN_REDUCE_TENSOR_ADD,
            exp,
            sum,
        )?;
        let log = graph.temp("log", FLOAT, &rows, &row_strides)?;
        graph.pointwise("log", P::CUDNN_POINTWISE_LOG, FLOAT, &[sum], log)?;
        let stats = graph.temp("Stats", FLOAT, &rows, &row_strides)?;
        graph.pointwise("add", P::CUDNN_POINTWISE_ADD, FLOAT, &[max, log], stats)?;
        // The second matmul takes the probabilities in the inputs' type.
        let p = graph.temp("softmax", io, &scores, &packed)?;
        graph.pointwise("div", P::CUDNN_POINTWISE_DIV, FLOAT, &[exp, sum], p)?;
        graph.matmul("bmm2", p, v, o)?;
        Ok(graph)
    }
}

/// A finalized execution plan, with its engine config and graph (kept
/// alive with it, as cudnn-frontend keeps them).
pub(super) struct Plan {
    plan: Descriptor,
    /// Bytes of device workspace the plan takes (at most [`WORKSPACE`]).
    pub workspace: usize,
    _config: Descriptor,
    _graph: Graph,
}

/// The global index of `config`'s engine, for the log; `None` where cuDNN
/// does not say.
fn engine_index(config: &Descriptor) -> Option<i64> {
    let engine = Descriptor::new(Kind::CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine").ok()?;
    config
        .get_descriptors(
            Attr::CUDNN_ATTR_ENGINECFG_ENGINE,
            std::slice::from_ref(&engine),
        )
        .ok()?;
    engine.get_i64(Attr::CUDNN_ATTR_ENGINE_GLOBAL_INDEX).ok()
}

impl Plan {
    /// The first engine config cuDNN's heuristics (mode A, then the
    /// fallback list) offer for `key` that finalizes with a workspace of at
    /// most [`WORKSPACE`]; or every reason none did.
    pub fn new(handle: &Handle, key: &Key) -> Result<Plan> {
        use sys::cudnnBackendHeurMode_t as H;
        let started = Instant::now();
        let graph = Graph::build(handle, key)?;
        let ops = graph.descriptors.last().expect("the graph is last");
        let mut refusals = Vec::new();
        for mode in [H::CUDNN_HEUR_MODE_A, H::CUDNN_HEUR_MODE_FALLBACK] {
            let mut configs = match heuristic(ops, mode) {
                Ok(configs) => configs,
                Err(error) => {
                    refusals.push(format!("heuristics {mode:?}: {error}"));
                    continue;
                }
            };
            if configs.is_empty() {
                refusals.push(format!("heuristics {mode:?} offer no engine"));
            }
            for index in 0..configs.len() {
                let config = &configs[index];
                let plan = Descriptor::new(Kind::CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "plan")?;
                let finalized = plan
                    .set_handle(Attr::CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle)
                    .and_then(|()| {
                        plan.set_descriptor(Attr::CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config)
                    })
                    .and_then(|()| plan.finalize())
                    .and_then(|()| plan.get_i64(Attr::CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
                match finalized {
                    Ok(bytes) if bytes as usize <= WORKSPACE => {
                        tracing::debug!(
                            ?key,
                            heuristics = ?mode,
                            config = index,
                            engine = ?engine_index(config),
                            workspace = bytes,
                            ms = started.elapsed().as_millis() as u64,
                            "cuDNN attention plan built"
                        );
                        return Ok(Plan {
                            plan,
                            workspace: bytes.max(0) as usize,
                            _config: configs.swap_remove(index),
                            _graph: graph,
                        });
                    }
                    Ok(bytes) => refusals.push(format!(
                        "{mode:?} config {index}: a workspace of {bytes} bytes, over {WORKSPACE}"
                    )),
                    Err(error) => refusals.push(format!("{mode:?} config {index}: {error}")),
                }
            }
        }
        Err(Error::Cuda(format!(
            "cuDNN has no plan for the attention graph: {}",
            refusals.join("; ")
        )))
    }

    /// Enqueues the plan on `handle`'s stream with these pointers.
    pub fn execute(&self, handle: &Handle, key: &Key, pointers: Pointers) -> Result<()> {
        let Pointers {
            q,
            k,
            v,
            out,
            mask,
            scale,
            workspace,
        } = pointers;
        // Below 9.10, the lowest f32 as cudnn-frontend uses there.
        let neg_inf = if cudnn::available().unwrap_or(0) < 9_10_00 {
            f32::MIN
        } else {
            f32::NEG_INFINITY
        };
        let mut uids = vec![Q, K, V, O, SCALE];
        // By-value tensors are read from host memory when the plan is enqueued.
        let mut data = vec![
            q,
            k,
            v,
            out,
            (&scale as *const f32).cast_mut().cast::<c_void>(),
        ];
        if let (Some(mask), Some(_)) = (mask, key.mask) {
            uids.push(MASK);
            data.push(mask);
        }
        if key.causal {
            uids.push(NEG_INF);
            data.push((&neg_inf as *const f32).cast_mut().cast::<c_void>());
        }
        let pack = Descriptor::new(Kind::CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack")?;
        pack.set_i64s(Attr::CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, &uids)?;
        pack.set_pointers(Attr::CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, &data)?;
        pack.set_pointers(Attr::CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &[workspace])?;
        pack.finalize()?;
        cudnn::execute(handle, &self.plan, &pack)
    }
}

/// The engine configs `mode`'s heuristics offer for the finalized graph `ops`.
fn heuristic(ops: &Descriptor, mode: sys::cudnnBackendHeurMode_t) -> Result<Vec<Descriptor>> {
    let heuristics = Descriptor::new(Kind::CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics")?;
    heuristics.set_descriptor(Attr::CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, ops)?;
    heuristics.set_heur_mode(Attr::CUDNN_ATTR_ENGINEHEUR_MODE, mode)?;
    heuristics.finalize()?;
    let count = heuristics.count_descriptors(Attr::CUDNN_ATTR_ENGINEHEUR_RESULTS)?;
    let mut configs = (0..count)
        .map(|_| Descriptor::new(Kind::CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"))
        .collect::<Result<Vec<_>>>()?;
    let filled = heuristics.get_descriptors(Attr::CUDNN_ATTR_ENGINEHEUR_RESULTS, &configs)?;
    configs.truncate(filled);
    Ok(configs)
}

/// The device addresses of one call, and its scale.
pub(super) struct Pointers {
    pub q: *mut c_void,
    pub k: *mut c_void,
    pub v: *mut c_void,
    pub out: *mut c_void,
    pub mask: Option<*mut c_void>,
    pub scale: f32,
    pub workspace: *mut c_void,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tensor and operation of the graph finalizes, for each dtype, with
    /// and without the mask and the causal select (where cuDNN and libcuda,
    /// which cuDNN's engine libraries link, load; no GPU is needed until the
    /// operation graph, which takes a handle).
    #[test]
    fn every_operation_finalizes() {
        if let Err(reason) = cudnn::available() {
            eprintln!("skipped: {reason}");
            return;
        }
        // SAFETY: only tries to open the library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            eprintln!("skipped: no libcuda, which cuDNN's engine libraries link");
            return;
        }
        for dtype in [DType::BF16, DType::F16] {
            for (mask, causal) in [
                (None, false),
                (Some(256), false),
                (None, true),
                (Some(256), true),
            ] {
                let (b, h, sq, sk, d) = (2, 3, 200, 256, 64);
                let key = Key {
                    dtype,
                    b,
                    h,
                    sq,
                    sk,
                    d,
                    strides: [
                        [h * sq * d, sq * d, d, 1],
                        [h * sk * d, sk * d, d, 1],
                        [h * sk * d, sk * d, d, 1],
                        [h * sq * d, sq * d, d, 1],
                    ],
                    mask,
                    causal,
                };
                let graph =
                    Graph::operations(&key).unwrap_or_else(|error| panic!("{key:?}: {error}"));
                let expected = 10 + usize::from(mask.is_some()) + 4 * usize::from(causal);
                assert_eq!(graph.operations.len(), expected, "{key:?}");
            }
        }
    }
}
