//! Where a benchmark's numbers come from: the commit, the date, the backend,
//! and on the cuda backend the GPU, the driver, CUDA, NCCL and cuBLASLt, so
//! that every JSON and CSV says what made it.

use crate::cli::Run;
use hir_tools::backend::Backend;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// `git describe` of the build (`-dirty` for uncommitted changes).
    pub commit: &'static str,
    /// When the report was written, UTC (RFC 3339).
    pub date: String,
    pub backend: &'static str,
    pub devices: usize,
    pub dtype: &'static str,
    /// The cuda backend's GPU and software; `None` on the cpu backend.
    pub gpu: Option<String>,
    pub driver_cuda: Option<String>,
    pub cuda: Option<String>,
    pub nccl: Option<String>,
    pub cublaslt: Option<String>,
}

impl Provenance {
    /// The provenance of `run`, as of now.
    pub fn of(run: &Run) -> Provenance {
        let versions = match run.backend {
            Backend::Cuda => hir_runtime::cuda::versions().ok(),
            Backend::Cpu => None,
        };
        Provenance {
            commit: env!("HIR_COMMIT"),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            backend: run.backend.name(),
            devices: run.devices,
            dtype: run.dtype.mlir(),
            gpu: versions.as_ref().map(|v| v.gpu.clone()),
            driver_cuda: versions.as_ref().map(|v| v.driver_cuda.clone()),
            cuda: versions.as_ref().map(|v| v.cuda.clone()),
            nccl: versions.as_ref().and_then(|v| v.nccl.clone()),
            cublaslt: versions.as_ref().map(|v| v.cublaslt.clone()),
        }
    }

    /// The CSV columns this adds before each row's own.
    pub const CSV_HEADER: &'static str =
        "commit,date,backend,devices,dtype,gpu,driver_cuda,cuda,nccl,cublaslt";

    /// Its values as CSV fields (none contains a comma: a GPU name with one
    /// has it replaced).
    pub fn csv(&self) -> String {
        let field = |value: &Option<String>| value.as_deref().unwrap_or("").replace(',', ";");
        format!(
            "{},{},{},{},{},{},{},{},{},{}",
            self.commit,
            self.date,
            self.backend,
            self.devices,
            self.dtype,
            field(&self.gpu),
            field(&self.driver_cuda),
            field(&self.cuda),
            field(&self.nccl),
            field(&self.cublaslt)
        )
    }
}
