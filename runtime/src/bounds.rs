//! The buffers a rank's views may point into, and the check every entry
//! makes before a kernel, copy or transfer touches a view: the view's bytes
//! lie inside the buffer its descriptor's allocated pointer names.
//!
//! A rank knows two kinds of buffers: those its caching allocator handed out
//! (`hir_rt_alloc`, recorded by [`crate::site_cache::SiteCache`]) and those a
//! launcher registered ([`Allocations::register`]: a program's arguments).
//! The table is a sorted map from start address to end, so a check is one
//! range lookup per view under one lock per call. Device pointers are
//! checked against the same table: a cuda rank records its `cuMemAlloc`
//! buffers there, and CUDA's unified address space keeps them apart from
//! host memory and from each other.

use crate::error::{Error, Result};
use crate::lock;
use crate::memref::Operand;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// One rank's known buffers.
#[derive(Debug, Default)]
pub struct Allocations(Mutex<Table>);

#[derive(Debug, Default)]
struct Table {
    /// Start address -> (end address, id of the record).
    by_start: BTreeMap<usize, (usize, u64)>,
    next_id: u64,
}

impl Allocations {
    /// Records `bytes` (at least one) at `ptr`; returns the record's id. Any
    /// record it overlaps is stale (the memory was just handed out, so what
    /// was there before is gone) and is dropped.
    pub(crate) fn insert(&self, ptr: *const u8, bytes: usize) -> Result<u64> {
        let start = ptr as usize;
        let end = start.checked_add(bytes.max(1)).ok_or_else(|| {
            Error::Invalid(format!(
                "a buffer of {bytes} B at {ptr:p} ends past the address space"
            ))
        })?;
        let mut table = lock(&self.0);
        let stale: Vec<usize> = table
            .by_start
            .range(..end)
            .rev()
            .take_while(|&(_, &(other_end, _))| other_end > start)
            .map(|(&other_start, _)| other_start)
            .collect();
        for other_start in stale {
            table.by_start.remove(&other_start);
        }
        let id = table.next_id;
        table.next_id += 1;
        table.by_start.insert(start, (end, id));
        Ok(id)
    }

    /// Forgets record `id` at `start`, if it is still there.
    pub(crate) fn remove(&self, start: usize, id: u64) {
        let mut table = lock(&self.0);
        if table
            .by_start
            .get(&start)
            .is_some_and(|&(_, known)| known == id)
        {
            table.by_start.remove(&start);
        }
    }

    /// Makes `bytes` at `ptr` a buffer the rank's views may point into (a
    /// launcher's argument), until the returned registration drops. Drop it
    /// before the memory is freed.
    pub fn register(self: &Arc<Self>, ptr: *const u8, bytes: usize) -> Result<Registration> {
        let id = self.insert(ptr, bytes)?;
        Ok(Registration {
            table: self.clone(),
            start: ptr as usize,
            id,
        })
    }

    /// The check of one call's operands, under one lock for all of them.
    pub(crate) fn checker(&self) -> Checker<'_> {
        Checker(lock(&self.0))
    }
}

/// [`Allocations::checker`]: the table, locked while a call's operands are
/// checked.
pub(crate) struct Checker<'a>(MutexGuard<'a, Table>);

impl Checker<'_> {
    /// Checks operand `number` (1-based, as the entry's arguments) of a
    /// call: its allocated pointer is in a known buffer and its bytes lie
    /// inside that buffer.
    pub(crate) fn check(&self, number: usize, operand: &Operand) -> Result<()> {
        let table = &self.0;
        let base = operand.allocated;
        let Some((&start, &(end, _))) = table.by_start.range(..=base).next_back() else {
            return Err(unknown(number, operand));
        };
        if base >= end {
            return Err(unknown(number, operand));
        }
        let span = operand.view.byte_range()?;
        if span.is_empty() {
            return Ok(());
        }
        if span.start < start || span.end > end {
            let offset = span.start as i128 - start as i128;
            return Err(Error::Invalid(format!(
                "operand #{number} view [offset {offset} B, {}] {} its allocation of {} B",
                describe(operand),
                if span.start < start {
                    "starts before"
                } else {
                    "overruns"
                },
                end - start
            )));
        }
        Ok(())
    }
}

fn unknown(number: usize, operand: &Operand) -> Error {
    Error::Invalid(format!(
        "operand #{number} view [{}] points into {:#x}, which is no buffer of this rank \
         (neither from hir_rt_alloc nor an argument the launcher registered)",
        describe(operand),
        operand.allocated
    ))
}

/// `4x64 x 4 B, strides 128x1`.
fn describe(operand: &Operand) -> String {
    let view = &operand.view;
    let join = |values: &[usize]| {
        values
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join("x")
    };
    let sizes = if view.sizes.is_empty() {
        "1".to_string()
    } else {
        join(&view.sizes)
    };
    format!(
        "{sizes} x {} B, strides {}",
        view.dtype.size(),
        if view.strides.is_empty() {
            "-".to_string()
        } else {
            join(&view.strides)
        }
    )
}

/// A launcher's buffer known to a rank; forgotten when dropped.
#[derive(Debug)]
pub struct Registration {
    table: Arc<Allocations>,
    start: usize,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.table.remove(self.start, self.id);
    }
}

#[cfg(test)]
mod tests;
