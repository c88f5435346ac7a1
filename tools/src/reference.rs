//! The reference for `--check`: the fusion program evaluated op by op on
//! global tensors in f64, independently of the lowering. Each result is
//! rounded to its element type, as the lowered program stores it.

use super::program::{element_dtype, tensor_shape};
use super::tensor::{self, Tensor};
use anyhow::{Result, bail};
use hir::dialects::{OpKind, fusion};
use hir::passes::ir;
use hir_abi::Unary;
use melior::ir::{
    BlockLike, OperationRef, RegionLike, ValueLike,
    attribute::{DenseI64ArrayAttribute, FloatAttribute, IntegerAttribute},
    operation::OperationLike,
};
use std::collections::HashMap;

/// Whether each op's result is rounded to its element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// As the lowered program stores it (`--check`).
    ElementType,
    /// Not at all: the program's math in f64 (`--grad`'s finite
    /// differences, which rounding to bf16 would drown).
    None,
}

/// The results of `function` (a `func.func` over fusion tensors) on `inputs`.
pub fn evaluate(function: OperationRef, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    evaluate_with(function, inputs, Rounding::ElementType)
}

/// [`evaluate`], each result rounded as `rounding` says.
pub fn evaluate_with(
    function: OperationRef,
    inputs: &[Tensor],
    rounding: Rounding,
) -> Result<Vec<Tensor>> {
    let block = function
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
        .ok_or_else(|| anyhow::anyhow!("the entry function has no body"))?;
    let mut values: HashMap<usize, Tensor> = HashMap::new();
    for (index, input) in inputs.iter().enumerate() {
        let argument = block.argument(index)?;
        values.insert(argument.to_raw().ptr as usize, input.try_clone()?);
    }
    let mut next = block.first_operation();
    while let Some(op) = next {
        let name = ir::name(&op);
        let operands = op
            .operands()
            .map(|operand| {
                values.get(&(operand.to_raw().ptr as usize)).ok_or_else(|| {
                    anyhow::anyhow!(
                        "'{name}' op reads a value the reference evaluation does not hold"
                    )
                })
            })
            .collect::<Result<Vec<&Tensor>>>()?;
        if name == "func.return" {
            return operands.into_iter().map(Tensor::try_clone).collect();
        }
        let result = op.result(0).map_err(|_| {
            anyhow::anyhow!("'{name}' op has no result the reference evaluation can compute")
        })?;
        let shape = tensor_shape(result.r#type())
            .ok_or_else(|| anyhow::anyhow!("'{name}' op's result is not a static tensor"))?;
        let dtype = element_dtype(result.r#type())?;
        let value = apply(&op, &name, &operands, shape)?;
        let value = match rounding {
            Rounding::ElementType => value.rounded(dtype),
            Rounding::None => value,
        };
        values.insert(result.to_raw().ptr as usize, value);
        next = op.next_in_block();
    }
    bail!("the entry function does not end with func.return")
}

fn axes(op: &OperationRef) -> Result<Vec<usize>> {
    list(op, "axes")
}

/// The axis-list attribute `name` of `op`.
fn list(op: &OperationRef, name: &str) -> Result<Vec<usize>> {
    let axes = op
        .attribute(name)
        .ok()
        .and_then(|axes| DenseI64ArrayAttribute::try_from(axes).ok())
        .ok_or_else(|| anyhow::anyhow!("'{}' op has no {name}", ir::name(op)))?;
    Ok((0..axes.len())
        .map(|index| axes.element(index).expect("index in range") as usize)
        .collect())
}

fn apply(op: &OperationRef, name: &str, operands: &[&Tensor], shape: Vec<usize>) -> Result<Tensor> {
    // Every result is allocated fallibly: a shape too large for the host's
    // memory is an error naming it, not an abort.
    let unary = |f: Box<dyn Fn(f64) -> f64>| -> Result<Tensor> {
        let mut data = tensor::reserve(operands[0].data.len(), &shape)?;
        data.extend(operands[0].data.iter().map(|&x| f(x)));
        Ok(Tensor::new(shape.clone(), data))
    };
    let binary = |f: fn(f64, f64) -> f64| -> Result<Tensor> {
        let mut data = tensor::reserve(operands[0].data.len(), &shape)?;
        data.extend(
            operands[0]
                .data
                .iter()
                .zip(&operands[1].data)
                .map(|(&a, &b)| f(a, b)),
        );
        Ok(Tensor::new(shape.clone(), data))
    };
    let unsupported =
        || anyhow::anyhow!("'{name}' op is not supported by the reference evaluation of --check");
    // The kind of computation comes from the op's ODS traits; the scalar
    // function each op applies is the op's own.
    match OpKind::of(op) {
        // From the operand's element type to the result's: what the ABI's
        // cast means in f64 (truncating and saturating to an integer type),
        // then rounded to the result's type as every result is.
        OpKind::Elementwise if name == fusion::CastOperation::name() => {
            let from = element_dtype(op.operand(0)?.r#type())?;
            let to = element_dtype(op.result(0)?.r#type())?;
            unary(Box::new(move |x| to.cast_from(from, x)))
        }
        OpKind::Elementwise if operands.len() == 1 => {
            unary(unary_function(name).ok_or_else(unsupported)?)
        }
        OpKind::Elementwise if name == fusion::WhereOperation::name() => {
            let mut data = tensor::reserve(operands[0].data.len(), &shape)?;
            data.extend(
                (operands[0].data.iter().zip(&operands[1].data))
                    .zip(&operands[2].data)
                    .map(|((&mask, &a), &b)| if mask != 0.0 { a } else { b }),
            );
            Ok(Tensor::new(shape, data))
        }
        OpKind::Elementwise => binary(binary_function(name).ok_or_else(unsupported)?),
        OpKind::Reduction => {
            let (init, f) = reduction_function(name).ok_or_else(unsupported)?;
            reduce(operands[0], &axes(op)?, shape, init, f)
        }
        OpKind::Broadcast => broadcast(operands[0], &axes(op)?, shape),
        OpKind::Contraction if name == fusion::MatmulOperation::name() => {
            matmul(operands[0], operands[1], shape)
        }
        OpKind::Contraction if name == fusion::LinearOperation::name() => {
            linear(operands[0], operands[1], operands.get(2).copied(), shape)
        }
        // The ops of no kind: attention, a transpose, a reshape, a slice and
        // the generators.
        OpKind::None if name == fusion::AttentionOperation::name() => {
            let d = *operands[0].shape.last().ok_or_else(unsupported)?;
            let scale = match op.attribute("scale") {
                Ok(scale) => FloatAttribute::try_from(scale)
                    .map_err(|_| anyhow::anyhow!("'{name}' op's scale is not a float"))?
                    .value(),
                Err(_) => 1.0 / (d as f64).sqrt(),
            };
            let [q, k, v] = [operands[0], operands[1], operands[2]];
            let problem = Attention {
                mask: operands.get(3).copied(),
                scale,
                causal: op.has_attribute("causal"),
            };
            problem.evaluate(q, k, v, shape)
        }
        OpKind::None if name == fusion::TransposeOperation::name() => {
            transpose(operands[0], &list(op, "permutation")?, shape)
        }
        OpKind::None if name == fusion::ReshapeOperation::name() => {
            // The same elements in row-major order.
            Ok(Tensor::new(shape, operands[0].data.clone()))
        }
        OpKind::None if name == fusion::SliceOperation::name() => slice(
            operands[0],
            &list(op, "offsets")?,
            &list(op, "strides")?,
            shape,
        ),
        OpKind::None if name == fusion::FillOperation::name() => {
            let value = op
                .attribute("value")
                .ok()
                .and_then(|value| FloatAttribute::try_from(value).ok())
                .ok_or_else(|| anyhow::anyhow!("'{name}' op has no value"))?;
            Tensor::filled(shape, value.value())
        }
        OpKind::None if name == fusion::IotaOperation::name() => {
            let axis = op
                .attribute("axis")
                .ok()
                .and_then(|axis| IntegerAttribute::try_from(axis).ok())
                .ok_or_else(|| anyhow::anyhow!("'{name}' op has no axis"))?
                .value() as usize;
            let inner = super::tensor::strides(&shape)[axis];
            let mut data = tensor::reserve(tensor::numel(&shape)?, &shape)?;
            data.extend(
                (0..tensor::numel(&shape)?).map(|flat| (flat / inner % shape[axis]) as f64),
            );
            Ok(Tensor::new(shape, data))
        }
        _ => Err(unsupported()),
    }
}

/// `input` with result axis `i` its axis `permutation[i]`, of `shape`.
fn transpose(input: &Tensor, permutation: &[usize], shape: Vec<usize>) -> Result<Tensor> {
    let len = tensor::numel(&shape)?;
    let out_strides = super::tensor::strides(&shape);
    let in_strides = input.strides();
    let mut data = tensor::reserve(len, &shape)?;
    data.extend((0..len).map(|flat| {
        let source: usize = (0..shape.len())
            .map(|axis| (flat / out_strides[axis]) % shape[axis] * in_strides[permutation[axis]])
            .sum();
        input.data[source]
    }));
    Ok(Tensor::new(shape, data))
}

/// The box of `input` of `shape` whose index `i` along axis `a` is
/// `offsets[a] + i * strides[a]`.
fn slice(
    input: &Tensor,
    offsets: &[usize],
    strides: &[usize],
    shape: Vec<usize>,
) -> Result<Tensor> {
    let len = tensor::numel(&shape)?;
    let out_strides = super::tensor::strides(&shape);
    let in_strides = input.strides();
    let mut data = tensor::reserve(len, &shape)?;
    data.extend((0..len).map(|flat| {
        let source: usize = (0..shape.len())
            .map(|axis| {
                let index = (flat / out_strides[axis]) % shape[axis];
                (offsets[axis] + index * strides[axis]) * in_strides[axis]
            })
            .sum();
        input.data[source]
    }));
    Ok(Tensor::new(shape, data))
}

/// A table from fusion op names to what each computes.
type Table<T, const N: usize> = [(&'static str, T); N];

/// What a one-operand elementwise fusion op but cast computes of each
/// element: set keeps the value, the others are the C ABI's unary ops, by
/// mnemonic.
fn unary_function(name: &str) -> Option<Box<dyn Fn(f64) -> f64>> {
    if name == fusion::SetOperation::name() {
        return Some(Box::new(|x| x));
    }
    let mnemonic = name.strip_prefix("fusion.")?;
    let unary = Unary::ALL.into_iter().find(|u| u.name() == mnemonic)?;
    Some(Box::new(move |x| unary.eval(x)))
}

/// What a two-operand elementwise fusion op computes of each pair of elements.
fn binary_function(name: &str) -> Option<fn(f64, f64) -> f64> {
    let functions: Table<fn(f64, f64) -> f64, 6> = [
        (fusion::AddOperation::name(), |a, b| a + b),
        (fusion::SubOperation::name(), |a, b| a - b),
        (fusion::MulOperation::name(), |a, b| a * b),
        (fusion::DivOperation::name(), |a, b| a / b),
        (fusion::MaxOperation::name(), f64::max),
        (fusion::MinOperation::name(), f64::min),
    ];
    find(&functions, name)
}

/// The initial value and the combining function of a reduction.
type Reducer = (f64, fn(f64, f64) -> f64);

/// The initial value and the combining function of a fusion reduction.
fn reduction_function(name: &str) -> Option<Reducer> {
    let functions: Table<Reducer, 2> = [
        (fusion::SumOperation::name(), (0.0, |a, b| a + b)),
        (fusion::AmaxOperation::name(), (f64::NEG_INFINITY, f64::max)),
    ];
    find(&functions, name)
}

/// The entry of `table` for the op named `name`.
fn find<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table
        .iter()
        .find(|(op, _)| *op == name)
        .map(|&(_, function)| function)
}

/// Reduces `axes` of `input` into a tensor of `shape` (the other axes).
fn reduce(
    input: &Tensor,
    axes: &[usize],
    shape: Vec<usize>,
    init: f64,
    f: fn(f64, f64) -> f64,
) -> Result<Tensor> {
    let mut output = Tensor::filled(shape, init)?;
    let kept: Vec<usize> = (0..input.shape.len())
        .filter(|axis| !axes.contains(axis))
        .collect();
    let out_strides = output.strides();
    let in_strides = input.strides();
    for (flat, &value) in input.data.iter().enumerate() {
        let target: usize = kept
            .iter()
            .zip(&out_strides)
            .map(|(&axis, &stride)| (flat / in_strides[axis]) % input.shape[axis] * stride)
            .sum();
        output.data[target] = f(output.data[target], value);
    }
    Ok(output)
}

/// Repeats `input` along the new `axes` of a tensor of `shape`.
fn broadcast(input: &Tensor, axes: &[usize], shape: Vec<usize>) -> Result<Tensor> {
    let len = tensor::numel(&shape)?;
    let out_strides = super::tensor::strides(&shape);
    let kept: Vec<usize> = (0..shape.len())
        .filter(|axis| !axes.contains(axis))
        .collect();
    let in_strides = input.strides();
    let mut data = tensor::reserve(len, &shape)?;
    data.extend((0..len).map(|flat| {
        let source: usize = kept
            .iter()
            .zip(&in_strides)
            .map(|(&axis, &stride)| (flat / out_strides[axis]) % shape[axis] * stride)
            .sum();
        input.data[source]
    }));
    Ok(Tensor::new(shape, data))
}

/// `[B1..., M, K] x [B2..., K, N] -> [B..., M, N]`, B the broadcast of B1
/// and B2 (torch.matmul): each operand's batch axes aligned with the
/// result's from the right, read at 0 along one of extent 1 or one it lacks.
fn matmul(lhs: &Tensor, rhs: &Tensor, shape: Vec<usize>) -> Result<Tensor> {
    let rank = shape.len();
    let (m, n) = (shape[rank - 2], shape[rank - 1]);
    let k = lhs.shape[lhs.shape.len() - 1];
    let batch = &shape[..rank - 2];
    // The offset of the matrix an operand gives result batch coordinates.
    let matrix = |operand: &Tensor, coordinates: &[usize]| -> usize {
        let own = &operand.shape[..operand.shape.len() - 2];
        let skip = batch.len() - own.len();
        let entry = own.iter().enumerate().fold(0, |entry, (axis, &extent)| {
            entry * extent
                + if extent == 1 {
                    0
                } else {
                    coordinates[skip + axis]
                }
        });
        let [rows, columns] = operand.shape[operand.shape.len() - 2..] else {
            unreachable!("matmul operands have rank 2 or more")
        };
        entry * rows * columns
    };
    let mut output = Tensor::filled(shape.clone(), 0.0)?;
    let mut coordinates = vec![0; batch.len()];
    for b in 0..batch.iter().product() {
        let mut rest = b;
        for axis in (0..batch.len()).rev() {
            coordinates[axis] = rest % batch[axis];
            rest /= batch[axis];
        }
        let a = &lhs.data[matrix(lhs, &coordinates)..][..m * k];
        let w = &rhs.data[matrix(rhs, &coordinates)..][..k * n];
        let out = &mut output.data[b * m * n..(b + 1) * m * n];
        for i in 0..m {
            for p in 0..k {
                let x = a[i * k + p];
                for j in 0..n {
                    out[i * n + j] += x * w[p * n + j];
                }
            }
        }
    }
    Ok(output)
}

/// `input [B..., K] @ weight[N, K]^T + bias[N] -> [B..., N]`.
fn linear(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    shape: Vec<usize>,
) -> Result<Tensor> {
    let k = *input.shape.last().expect("linear input has rank >= 1");
    let n = weight.shape[0];
    let rows = input.data.len() / k;
    let mut output = Tensor::filled(shape, 0.0)?;
    for r in 0..rows {
        for j in 0..n {
            let dot: f64 = (0..k)
                .map(|p| input.data[r * k + p] * weight.data[j * k + p])
                .sum();
            output.data[r * n + j] = dot + bias.map_or(0.0, |bias| bias.data[j]);
        }
    }
    Ok(output)
}

/// What a `fusion.attention` adds to its q, k and v.
struct Attention<'a> {
    /// `[Sq, Sk]`, added to every batch index's scores.
    mask: Option<&'a Tensor>,
    scale: f64,
    causal: bool,
}

impl Attention<'_> {
    /// `q [B.., Sq, D], k [B.., Sk, D], v [B.., Sk, Dv] -> [B.., Sq, Dv]`
    /// from the definition, for each batch index and query `i`: every
    /// score `s_j = q_i . k_j * scale + mask[i, j]` (`-inf` where `causal`
    /// hides key `j > i`), their softmax over the keys, and `sum_j p_j v_j`;
    /// zeros for a query whose every score is `-inf` (it sees no key).
    fn evaluate(&self, q: &Tensor, k: &Tensor, v: &Tensor, shape: Vec<usize>) -> Result<Tensor> {
        let rank = q.shape.len();
        let (sq, d, sk, dv) = (
            q.shape[rank - 2],
            q.shape[rank - 1],
            k.shape[rank - 2],
            v.shape[rank - 1],
        );
        let batch: usize = q.shape[..rank - 2].iter().product();
        let mut output = Tensor::filled(shape, 0.0)?;
        let mut scores = Tensor::filled(vec![sk], 0.0)?.data;
        for b in 0..batch {
            let q = &q.data[b * sq * d..][..sq * d];
            let k = &k.data[b * sk * d..][..sk * d];
            let v = &v.data[b * sk * dv..][..sk * dv];
            let out = &mut output.data[b * sq * dv..][..sq * dv];
            for i in 0..sq {
                for (j, score) in scores.iter_mut().enumerate() {
                    *score = if self.causal && j > i {
                        f64::NEG_INFINITY
                    } else {
                        let dot: f64 = (0..d).map(|p| q[i * d + p] * k[j * d + p]).sum();
                        dot * self.scale + self.mask.map_or(0.0, |mask| mask.data[i * sk + j])
                    };
                }
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if max == f64::NEG_INFINITY {
                    continue;
                }
                scores
                    .iter_mut()
                    .for_each(|score| *score = (*score - max).exp());
                let total: f64 = scores.iter().sum();
                for (j, &weight) in scores.iter().enumerate() {
                    for c in 0..dv {
                        out[i * dv + c] += weight / total * v[j * dv + c];
                    }
                }
            }
        }
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(shape: &[usize], data: &[f64]) -> Tensor {
        Tensor::new(shape.to_vec(), data.to_vec())
    }

    #[test]
    fn a_result_too_large_for_memory_is_an_error_naming_its_shape() {
        let x = tensor(&[2], &[1.0, 2.0]);
        let error = broadcast(&x, &[0], vec![1 << 40, 2]).unwrap_err();
        assert!(
            format!("{error:#}").contains("[1099511627776, 2]"),
            "{error:#}"
        );
        let error = broadcast(&x, &[0], vec![usize::MAX, 2]).unwrap_err();
        assert!(format!("{error:#}").contains("more elements than 64-bit sizes hold"));
    }

    #[test]
    fn attention_is_a_softmax_of_scaled_scores_times_v() {
        // One query, two keys of D = 2: scores [1, 0] at scale 1.
        let q = tensor(&[1, 2], &[1.0, 0.0]);
        let k = tensor(&[2, 2], &[1.0, 0.0, 0.0, 1.0]);
        let v = tensor(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let plain = Attention {
            mask: None,
            scale: 1.0,
            causal: false,
        };
        let e = std::f64::consts::E;
        let (p0, p1) = (e / (e + 1.0), 1.0 / (e + 1.0));
        let out = plain.evaluate(&q, &k, &v, vec![1, 2]).unwrap().data;
        assert!((out[0] - (p0 + 3.0 * p1)).abs() < 1e-12);
        assert!((out[1] - (2.0 * p0 + 4.0 * p1)).abs() < 1e-12);
        // Causal: query 0 sees key 0 alone; a batch axis of 2 repeats it.
        let q2 = tensor(&[2, 1, 2], &[1.0, 0.0, 1.0, 0.0]);
        let k2 = tensor(&[2, 2, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
        let v2 = tensor(&[2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        let causal = Attention {
            causal: true,
            ..plain
        };
        let out = causal.evaluate(&q2, &k2, &v2, vec![2, 1, 2]).unwrap();
        assert_eq!(out.data, vec![1.0, 2.0, 5.0, 6.0]);
        // A mask of -inf hides every key: the query gets zeros.
        let mask = tensor(&[1, 2], &[f64::NEG_INFINITY; 2]);
        let hidden = Attention {
            mask: Some(&mask),
            ..plain
        };
        let out = hidden.evaluate(&q, &k, &v, vec![1, 2]).unwrap();
        assert_eq!(out.data, vec![0.0, 0.0]);
    }

    #[test]
    fn reduces_broadcasts_and_multiplies() {
        let x = tensor(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(
            reduce(&x, &[1], vec![2], 0.0, |a, b| a + b).unwrap().data,
            vec![6.0, 15.0]
        );
        assert_eq!(
            reduce(&x, &[0], vec![3], f64::NEG_INFINITY, f64::max)
                .unwrap()
                .data,
            vec![4.0, 5.0, 6.0]
        );
        let row = tensor(&[3], &[1.0, 2.0, 3.0]);
        assert_eq!(
            broadcast(&row, &[0], vec![2, 3]).unwrap().data,
            vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
        );
        let column = tensor(&[2], &[1.0, 2.0]);
        assert_eq!(
            broadcast(&column, &[1], vec![2, 2]).unwrap().data,
            vec![1.0, 1.0, 2.0, 2.0]
        );
        let identity = tensor(&[3, 3], &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(matmul(&x, &identity, vec![2, 3]).unwrap().data, x.data);
        // Broadcast batch axes: lhs [2, 1, 1, 2] x rhs [3, 2, 1] -> [2, 3, 1, 1]:
        // entry (i, j) is lhs[i] . rhs[j].
        let lhs = tensor(&[2, 1, 1, 2], &[1.0, 2.0, 3.0, 4.0]);
        let rhs = tensor(&[3, 2, 1], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        assert_eq!(
            matmul(&lhs, &rhs, vec![2, 3, 1, 1]).unwrap().data,
            vec![1.0, 2.0, 3.0, 3.0, 4.0, 7.0]
        );
        let weight = tensor(&[1, 3], &[1.0, 1.0, 1.0]);
        let bias = tensor(&[1], &[0.5]);
        assert_eq!(
            linear(&x, &weight, Some(&bias), vec![2, 1]).unwrap().data,
            vec![6.5, 15.5]
        );
    }
}
