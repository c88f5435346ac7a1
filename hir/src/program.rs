//! The program a launcher (`hir-run`, `hir-bench`) runs: parsing, its entry
//! function and the global signature the fusion program gives it, and the
//! lowering to LLVM.

use crate::dialects::dist::{Dist, ParallelType};
use crate::passes::{LowerOptions, ir};
use anyhow::{Context as _, Result, bail};
use hir_abi::DType;
use melior::{
    Context, StringRef,
    ir::{
        BlockLike, Module, OperationRef, RegionLike, Type, TypeLike,
        attribute::{DenseI64ArrayAttribute, StringAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::{DimSize, FunctionType, MemRefType, RankedTensorType, ShapedTypeLike},
    },
    pass::PassManager,
};
use std::io::Read as _;
use std::path::Path;

/// The static shape of a ranked tensor or memref type.
pub fn tensor_shape(r#type: Type) -> Option<Vec<usize>> {
    let (rank, dim): (usize, Box<dyn Fn(usize) -> DimSize>) =
        if let Ok(tensor) = RankedTensorType::try_from(r#type) {
            (
                tensor.rank(),
                Box::new(move |axis| tensor.dim_size(axis).expect("axis in range")),
            )
        } else if let Ok(memref) = MemRefType::try_from(r#type) {
            (
                memref.rank(),
                Box::new(move |axis| memref.dim_size(axis).expect("axis in range")),
            )
        } else {
            return None;
        };
    (0..rank)
        .map(|axis| match dim(axis) {
            DimSize::Static(extent) => Some(extent as usize),
            DimSize::Dynamic => None,
        })
        .collect()
}

/// The runtime's element type of a tensor or memref type.
pub fn element_dtype(r#type: Type) -> Result<DType> {
    // SAFETY: `r#type` is valid; the element is only read from a shaped type.
    let element = unsafe {
        let raw = r#type.to_raw();
        if !mlir_sys::mlirTypeIsAShaped(raw) {
            bail!("type {type} holds no elements");
        }
        Type::from_raw(mlir_sys::mlirShapedTypeGetElementType(raw))
    };
    DType::from_mlir(&element.to_string()).with_context(|| {
        format!("element type {element} of {type} is not one the runtime takes (f32, bf16, f16)")
    })
}

/// One argument or result of the entry function.
#[derive(Clone, Debug)]
pub struct Param {
    /// The global shape (fusion) or the per-rank one (host IR).
    pub shape: Vec<usize>,
    pub dtype: DType,
    /// Where a fusion value lives: its mesh's devices, in order, and its
    /// `didx` axis, if any.
    pub placement: Option<Placement>,
}

#[derive(Clone, Debug)]
pub struct Placement {
    pub mesh: String,
    pub devices: Vec<usize>,
    /// `[n]`, `[rows, columns]` or `[planes, rows, columns]`.
    pub shape: Vec<usize>,
    pub didx: Option<usize>,
    /// The axis split over the rows of a 2- or 3-D mesh, if any.
    pub didy: Option<usize>,
    /// The axis split over the planes of a 3-D mesh, if any.
    pub didz: Option<usize>,
}

impl Placement {
    /// The tensor axis split over each mesh axis, if any, outermost first:
    /// `didx` over the last mesh axis, `didy` the one before, `didz` the
    /// one before that.
    pub fn split_axes(&self) -> Vec<Option<usize>> {
        let types = [self.didz, self.didy, self.didx];
        types[types.len() - self.shape.len()..].to_vec()
    }

    /// Mesh position `index`'s coordinate along each mesh axis (row-major).
    pub fn coordinates(&self, index: usize) -> Vec<usize> {
        let mut rest = index;
        let mut coordinates = vec![0; self.shape.len()];
        for (axis, &extent) in self.shape.iter().enumerate().rev() {
            coordinates[axis] = rest % extent;
            rest /= extent;
        }
        coordinates
    }

    /// Each split axis with its number of parts and the position along
    /// its mesh axis of mesh position `index`, outermost mesh axis first.
    pub fn splits(&self, index: usize) -> Vec<(usize, usize, usize)> {
        let coordinates = self.coordinates(index);
        self.split_axes()
            .into_iter()
            .enumerate()
            .filter_map(|(mesh_axis, split)| {
                split.map(|axis| (axis, self.shape[mesh_axis], coordinates[mesh_axis]))
            })
            .collect()
    }
}

impl Param {
    /// What each rank holds: one of its mesh's equal slices of each split
    /// (`didx`, `didy`, `didz`) axis.
    pub fn local_shape(&self) -> Vec<usize> {
        let mut shape = self.shape.clone();
        if let Some(placement) = &self.placement {
            for (axis, parts, _) in placement.splits(0) {
                shape[axis] /= parts;
            }
        }
        shape
    }
}

/// The entry function's parameters.
pub struct Signature {
    pub name: String,
    /// Whether the program is written in fusion (global shapes) or is host IR.
    pub fusion: bool,
    pub inputs: Vec<Param>,
    pub outputs: Vec<Param>,
}

/// Parses `source`, named `name` in diagnostics. Text MLIR's parser would
/// crash on is an error before it is parsed.
pub fn parse_source<'c>(context: &'c Context, source: &str, name: &str) -> Result<Module<'c>> {
    refuse_parser_crash(source.as_bytes(), name)?;
    // SAFETY: the context is valid; a null module is mapped to `None`.
    let module = unsafe {
        Module::from_option_raw(mlir_sys::mlirModuleCreateParse(
            context.to_raw(),
            StringRef::new(source).to_raw(),
        ))
    };
    module.with_context(|| format!("{name} does not parse or verify"))
}

/// The largest program file a tool reads: far above any real program, and
/// far below what parsing it would need of memory.
pub const MAX_PROGRAM_BYTES: u64 = 256 << 20;

/// The bytes of the program file `path`: a regular file of at most
/// [`MAX_PROGRAM_BYTES`] (not a device or a pipe, which may never end).
pub fn read(path: &Path) -> Result<Vec<u8>> {
    check_file(path)?;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_PROGRAM_BYTES + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > MAX_PROGRAM_BYTES {
        bail!(
            "{} grew past {MAX_PROGRAM_BYTES} bytes while it was read",
            path.display()
        );
    }
    Ok(bytes)
}

fn check_file(path: &Path) -> Result<()> {
    let metadata =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !metadata.is_file() {
        bail!(
            "{} is not a regular file: a program is read from one",
            path.display()
        );
    }
    if metadata.len() > MAX_PROGRAM_BYTES {
        bail!(
            "{} has {} bytes, more than a program may have ({MAX_PROGRAM_BYTES})",
            path.display(),
            metadata.len()
        );
    }
    Ok(())
}

/// An error when `bytes` hold text MLIR 22's parser would crash on.
fn refuse_parser_crash(bytes: &[u8], name: &str) -> Result<()> {
    let mut what = mlir_sys::MlirStringRef {
        data: std::ptr::null(),
        length: 0,
    };
    // SAFETY: the string reference lives through the call, which only reads
    // it, and `what` is written only with a static string.
    let crash = unsafe {
        crate::dialects::ffi::hirFindParserCrash(
            mlir_sys::MlirStringRef {
                data: bytes.as_ptr().cast(),
                length: bytes.len(),
            },
            &mut what,
        )
    };
    if crash >= 0 {
        // SAFETY: on a hit, `what` is a static string of the C API.
        let what = unsafe { StringRef::from_raw(what) };
        bail!(
            "{name}: {} at byte {crash}, which MLIR 22's parser crashes on",
            what.as_str().unwrap_or("text")
        );
    }
    Ok(())
}

/// Parses `path`; MLIR reports syntax and verifier errors located in it.
/// Text MLIR's parser would crash on is an error before it is parsed.
pub fn parse<'c>(context: &'c Context, path: &Path) -> Result<Module<'c>> {
    let bytes = read(path)?;
    let name = path.to_string_lossy();
    refuse_parser_crash(&bytes, &name)?;
    // SAFETY: the context is valid; a null module is mapped to `None`.
    let module = unsafe {
        Module::from_option_raw(mlir_sys::mlirModuleCreateParseFromFile(
            context.to_raw(),
            StringRef::new(&name).to_raw(),
        ))
    };
    module.with_context(|| format!("{} does not parse or verify", path.display()))
}

fn public_functions<'c, 'a>(module: &'a Module<'c>) -> Vec<OperationRef<'c, 'a>> {
    let mut functions = Vec::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        let private = op
            .attribute("sym_visibility")
            .ok()
            .and_then(|visibility| StringAttribute::try_from(visibility).ok())
            .is_some_and(|visibility| visibility.value() != "public");
        let has_body = op
            .region(0)
            .is_ok_and(|region| region.first_block().is_some());
        if ir::name(&op) == "func.func" && !private && has_body {
            functions.push(op);
        }
        next = op.next_in_block();
    }
    functions
}

/// The program's entry point: its one public function with a body.
pub fn entry<'c, 'a>(module: &'a Module<'c>) -> Result<OperationRef<'c, 'a>> {
    match public_functions(module).as_slice() {
        [function] => Ok(*function),
        [] => bail!("the program has no public function to run"),
        functions => bail!(
            "the program has {} public functions ({}); hir-run runs one",
            functions.len(),
            functions
                .iter()
                .map(function_name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub fn function_name(function: &OperationRef) -> String {
    function
        .attribute("sym_name")
        .ok()
        .and_then(|name| StringAttribute::try_from(name).ok())
        .map(|name| format!("@{}", name.value()))
        .unwrap_or_default()
}

fn function_type<'c>(function: &OperationRef<'c, '_>) -> Result<FunctionType<'c>> {
    function
        .attribute("function_type")
        .ok()
        .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
        .and_then(|attribute| FunctionType::try_from(attribute.value()).ok())
        .context("the entry function has no function type")
}

/// The meshes of the module: name, devices and shape.
fn meshes(module: &Module) -> Vec<(String, Vec<usize>, Vec<usize>)> {
    let mut meshes = Vec::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        if ir::name(&op) == "fusion.mesh" {
            let name = op
                .attribute("sym_name")
                .ok()
                .and_then(|name| StringAttribute::try_from(name).ok())
                .map(|name| name.value().to_owned());
            let devices = op
                .attribute("devices")
                .ok()
                .and_then(|devices| DenseI64ArrayAttribute::try_from(devices).ok());
            let shape = op
                .attribute("shape")
                .ok()
                .and_then(|shape| DenseI64ArrayAttribute::try_from(shape).ok());
            if let (Some(name), Some(devices)) = (name, devices) {
                let devices: Vec<usize> = (0..devices.len())
                    .map(|index| devices.element(index).expect("index in range") as usize)
                    .collect();
                let shape = shape.map_or_else(
                    || vec![devices.len()],
                    |shape| {
                        (0..shape.len())
                            .map(|index| shape.element(index).expect("index in range") as usize)
                            .collect()
                    },
                );
                meshes.push((name, devices, shape));
            }
        }
        next = op.next_in_block();
    }
    meshes
}

/// The entry function's signature: global shapes and placements for a
/// fusion program, per-rank buffers for host IR.
pub fn signature(module: &Module, function: &OperationRef) -> Result<Signature> {
    let r#type = function_type(function)?;
    let inputs: Vec<Type> = (0..r#type.input_count())
        .map(|index| r#type.input(index).expect("in range"))
        .collect();
    let outputs: Vec<Type> = (0..r#type.result_count())
        .map(|index| r#type.result(index).expect("in range"))
        .collect();
    let fusion = inputs
        .iter()
        .chain(&outputs)
        .any(|r#type| r#type.is_ranked_tensor());
    let meshes = meshes(module);
    let param = |what: String, r#type: Type| -> Result<Param> {
        let shape = tensor_shape(r#type)
            .with_context(|| format!("{what} of type {type} has no static shape"))?;
        let dtype = element_dtype(r#type).with_context(|| what.clone())?;
        let placement = match Dist::of_type(r#type) {
            Some(dist) => {
                let (devices, mesh_shape) = meshes
                    .iter()
                    .find(|(name, _, _)| *name == dist.mesh)
                    .map(|(_, devices, shape)| (devices.clone(), shape.clone()))
                    .with_context(|| {
                        format!(
                            "{what} is on mesh @{}, which the module does not declare",
                            dist.mesh
                        )
                    })?;
                Some(Placement {
                    mesh: dist.mesh.clone(),
                    devices,
                    shape: mesh_shape,
                    didx: dist.find(ParallelType::DIDx),
                    didy: dist.find(ParallelType::DIDy),
                    didz: dist.find(ParallelType::DIDz),
                })
            }
            None => None,
        };
        Ok(Param {
            shape,
            dtype,
            placement,
        })
    };
    let name = function_name(function);
    if !fusion && !outputs.is_empty() {
        bail!(
            "host function {name} returns values; host programs write their outputs into arguments"
        );
    }
    Ok(Signature {
        fusion,
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(index, &r#type)| param(format!("argument #{index} of {name}"), r#type))
            .collect::<Result<_>>()?,
        outputs: outputs
            .iter()
            .enumerate()
            .map(|(index, &r#type)| param(format!("result #{index} of {name}"), r#type))
            .collect::<Result<_>>()?,
        name,
    })
}

/// Runs `pipeline` (passes nested in `builtin.module(...)`) on `module`;
/// `stage` names it in errors.
pub fn run_pipeline(
    context: &Context,
    module: &mut Module,
    pipeline: &str,
    stage: &str,
    print: bool,
) -> Result<()> {
    let manager = PassManager::new(context);
    melior::utility::parse_pass_pipeline(
        manager.as_operation_pass_manager(),
        &format!("builtin.module({pipeline})"),
    )
    .map_err(|error| anyhow::anyhow!("pipeline of stage '{stage}' does not parse: {error}"))?;
    manager.run(module).map_err(|_| {
        anyhow::anyhow!("lowering failed in stage '{stage}' (MLIR's diagnostics say where)")
    })?;
    if print {
        println!("// ----- IR after {stage}\n{}", module.as_operation());
    }
    Ok(())
}

/// Imports a program written with upstream `shard` ops in place
/// (`convert-shard-to-fusion`, then `fusion-propagate-sharding`, so that the
/// entry's signature places every tensor); a fusion program or host IR is
/// left as it is. Returns whether there was anything to import.
pub fn import(context: &Context, module: &mut Module, print: bool) -> Result<bool> {
    if !crate::passes::conversion::shard_to_fusion::imports(module.as_operation()) {
        return Ok(false);
    }
    run_pipeline(
        context,
        module,
        "convert-shard-to-fusion,fusion-propagate-sharding",
        "import",
        print,
    )?;
    Ok(true)
}

/// Lowers a fusion program to the host program (`hir-lower` with
/// `options`) and checks the signature it gives the entry.
pub fn lower_to_host(
    context: &Context,
    module: &mut Module,
    signature: &Signature,
    options: &LowerOptions,
    print: bool,
) -> Result<()> {
    run_pipeline(context, module, &options.pipeline(), "hir-lower", print)?;
    check_host_signature(module, signature)
}

/// Lowers host IR to the LLVM dialect and checks that nothing else is left.
pub fn lower_to_llvm(context: &Context, module: &mut Module, print: bool) -> Result<()> {
    run_pipeline(
        context,
        module,
        crate::passes::conversion::LLVM_PIPELINE,
        "LLVM lowering",
        print,
    )?;
    let mut left = None;
    let body = module.body();
    let mut next = body.first_operation();
    while let Some(op) = next {
        left = left.or_else(|| first_non_llvm(op));
        next = op.next_in_block();
    }
    if let Some((name, location)) = left {
        bail!("{location}: '{name}' op is not lowered to the LLVM dialect");
    }
    Ok(())
}

fn first_non_llvm(op: OperationRef) -> Option<(String, String)> {
    let name = ir::name(&op);
    if !name.starts_with("llvm.") {
        return Some((name, op.location().to_string()));
    }
    for region in op.regions() {
        let mut block = region.first_block();
        while let Some(current) = block {
            let mut next = current.first_operation();
            while let Some(nested) = next {
                if let Some(found) = first_non_llvm(nested) {
                    return Some(found);
                }
                next = nested.next_in_block();
            }
            block = current.next_in_region();
        }
    }
    None
}

/// After `hir-lower`, the entry function takes each input's local shard,
/// then one buffer per output.
fn check_host_signature(module: &Module, signature: &Signature) -> Result<()> {
    let function = entry(module)?;
    let r#type = function_type(&function)?;
    let expected: Vec<&Param> = signature.inputs.iter().chain(&signature.outputs).collect();
    if r#type.input_count() != expected.len() || r#type.result_count() != 0 {
        bail!(
            "hir-lower made {} take {} arguments and return {}; expected {} buffers (inputs, then outputs) and no result",
            signature.name,
            r#type.input_count(),
            r#type.result_count(),
            expected.len()
        );
    }
    for (index, param) in expected.iter().enumerate() {
        let actual = r#type.input(index).expect("in range");
        if tensor_shape(actual).as_deref() != Some(param.local_shape().as_slice())
            || element_dtype(actual)? != param.dtype
        {
            bail!(
                "hir-lower made argument #{index} of {} a {actual}; expected the local shape {:?} of {}",
                signature.name,
                param.local_shape(),
                param.dtype.mlir()
            );
        }
    }
    Ok(())
}
