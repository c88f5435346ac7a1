//! A fused kernel as the backends receive it: the program of a `host.fused`
//! op ([`hir_abi::fused::Program`], decoded and checked by the entry) and its
//! buffers, checked against each other the same way whatever the backend.
//! The cpu backend interprets the program a block of elements at a time
//! (`cpu/fused.rs`), a row at a time in a row program; the cuda backend
//! compiles it into one kernel (`cuda/fused.rs`).

use crate::error::{Error, Result};
use crate::memref::{Extents, View};
use hir_abi::Entry;
use hir_abi::fused::{Load, MAX_RANK, Program, Store};
use std::sync::Arc;

/// A `host.fused` op with its buffers, inputs then outputs.
#[derive(Clone, Debug)]
pub struct FusedKernel {
    pub program: Arc<Program>,
    /// The program's words: what the cuda backend caches its kernel by.
    pub words: Arc<[i64]>,
    pub buffers: Vec<View>,
}

fn invalid(message: String) -> Error {
    Error::Invalid(format!("fused kernel: {message}"))
}

impl FusedKernel {
    /// The entry that runs it, which also names it in errors and traces.
    pub fn entry(&self) -> Entry {
        Entry::Fused(self.buffers.len())
    }

    /// The iteration shape: that of every output but the row stores'.
    pub fn shape(&self) -> &[usize] {
        let whole = self.program.stores.iter().find(|store| !store.row);
        &self.buffers[whole.expect("decoded: a whole store").buffer].sizes
    }

    /// Checks the buffers against the program: one per program buffer, of
    /// its element type; every output of one shape of at most `MAX_RANK`
    /// axes (the row stores' without the reduced axis, which is the last),
    /// every load's buffer of that shape without its broadcast axes.
    pub fn validate(&self) -> Result<()> {
        let program = &self.program;
        if self.buffers.len() != program.dtypes.len() {
            return Err(invalid(format!(
                "the program takes {} buffers, got {}",
                program.dtypes.len(),
                self.buffers.len()
            )));
        }
        for (index, (view, &dtype)) in self.buffers.iter().zip(&program.dtypes).enumerate() {
            if view.dtype != dtype {
                return Err(invalid(format!(
                    "buffer {index} is {:?}, the program's {dtype:?}",
                    view.dtype
                )));
            }
        }
        let shape = self.shape();
        if shape.len() > MAX_RANK {
            return Err(invalid(format!(
                "the iteration shape {shape:?} has more than {MAX_RANK} axes"
            )));
        }
        if let Some(axis) = program.reduced
            && axis + 1 != shape.len()
        {
            return Err(invalid(format!(
                "the reduced axis {axis} is not the last of the iteration shape {shape:?}"
            )));
        }
        for store in &program.stores {
            let expected = match store.row {
                true => &shape[..shape.len() - 1],
                false => shape,
            };
            let sizes = &self.buffers[store.buffer].sizes;
            if sizes[..] != expected[..] {
                return Err(invalid(format!(
                    "output buffer {} of shape {sizes:?} is not of the shape {expected:?} \
                     (the iteration shape {shape:?}{})",
                    store.buffer,
                    if store.row {
                        " without its last axis"
                    } else {
                        ""
                    }
                )));
            }
        }
        for load in &program.loads {
            let kept: Vec<usize> = (0..shape.len())
                .filter(|axis| !load.broadcast.contains(axis))
                .map(|axis| shape[axis])
                .collect();
            let sizes = &self.buffers[load.buffer].sizes;
            if load.broadcast.iter().any(|&axis| axis >= shape.len()) || sizes[..] != kept[..] {
                return Err(invalid(format!(
                    "buffer {} of shape {sizes:?} is not the iteration shape {shape:?} \
                     without the axes {:?}",
                    load.buffer, load.broadcast
                )));
            }
        }
        Ok(())
    }

    /// The view load `load` reads at the iteration shape: its buffer, with
    /// stride 0 along its broadcast axes.
    pub fn load_view(&self, load: &Load) -> View {
        let buffer = &self.buffers[load.buffer];
        let mut kept = buffer.strides.iter();
        let strides = (0..self.shape().len())
            .map(|axis| match load.broadcast.contains(&axis) {
                true => 0,
                false => *kept.next().expect("validated"),
            })
            .collect();
        View {
            sizes: Extents::from_slice(self.shape()),
            strides,
            ..buffer.clone()
        }
    }

    /// The view a store writes at the iteration shape: its buffer, with
    /// stride 0 along the reduced axis for a row store.
    pub fn store_view(&self, store: &Store) -> View {
        let buffer = &self.buffers[store.buffer];
        if !store.row {
            return buffer.clone();
        }
        let mut strides = buffer.strides.clone();
        strides.push(0);
        View {
            sizes: Extents::from_slice(self.shape()),
            strides,
            ..buffer.clone()
        }
    }

    /// The views the kernel walks, at the iteration shape: the loads'
    /// ([`FusedKernel::load_view`]), then the stores'
    /// ([`FusedKernel::store_view`]).
    pub fn views(&self) -> Vec<View> {
        let loads = self.program.loads.iter().map(|load| self.load_view(load));
        let stores = self
            .program
            .stores
            .iter()
            .map(|store| self.store_view(store));
        loads.chain(stores).collect()
    }

    /// The buffers the kernel reads (as their views, not broadcast).
    pub fn reads(&self) -> impl Iterator<Item = &View> {
        self.program
            .loads
            .iter()
            .map(|load| &self.buffers[load.buffer])
    }

    /// The buffers the kernel writes.
    pub fn writes(&self) -> impl Iterator<Item = &View> {
        self.program
            .stores
            .iter()
            .map(|store| &self.buffers[store.buffer])
    }
}
