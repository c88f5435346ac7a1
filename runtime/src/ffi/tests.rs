//! The symbol table against `Entry`, the views a transpose and a reshape
//! read through, and the C-ABI boundary's handling of panics.

use super::*;
use crate::memref::View;
use std::collections::HashMap;

#[test]
fn every_entry_has_exactly_one_symbol() {
    let table = table();
    let mut by_entry: HashMap<Entry, Vec<&str>> = HashMap::new();
    for (name, entry, address) in &table {
        assert_eq!(
            *name,
            entry.c_name(),
            "the function for {entry:?} is misnamed"
        );
        assert!(!address.is_null());
        by_entry.entry(*entry).or_default().push(name);
    }
    for entry in Entry::all() {
        assert_eq!(by_entry.get(&entry).map(Vec::len), Some(1), "{entry:?}");
    }
    assert_eq!(table.len(), Entry::all().len());
    assert_eq!(symbols().len(), table.len() + heap::symbols().len());
}

#[test]
fn a_transpose_reads_its_input_with_the_axes_permuted() {
    let view = View {
        sizes: smallvec::smallvec![2, 3, 4],
        strides: smallvec::smallvec![12, 4, 1],
        ..View::contiguous(hir_abi::DType::F32, std::ptr::null_mut(), &[2, 3, 4])
    };
    let moved = permuted(&view, &[2, 0, 1]).unwrap();
    assert_eq!(
        (moved.sizes, moved.strides),
        (smallvec::smallvec![4, 2, 3], smallvec::smallvec![1, 12, 4])
    );
    for wrong in [&[0, 1][..], &[0, 0, 1], &[0, 1, 3]] {
        assert!(permuted(&view, wrong).is_err(), "{wrong:?}");
    }
}

#[test]
fn a_reshape_views_its_input_in_the_output_shape() {
    let dtype = hir_abi::DType::F32;
    let strided = |sizes: &[usize], strides: &[usize]| View {
        strides: crate::memref::Extents::from_slice(strides),
        ..View::contiguous(dtype, std::ptr::null_mut(), sizes)
    };
    let view = |v: View| (v.sizes, v.strides);
    // Contiguous: merged and split freely, unit axes anywhere.
    let whole = strided(&[2, 3, 4], &[12, 4, 1]);
    assert_eq!(
        view(reshaped(&whole, &[6, 4]).unwrap()),
        (smallvec::smallvec![6, 4], smallvec::smallvec![4, 1])
    );
    assert_eq!(
        view(reshaped(&whole, &[2, 1, 12]).unwrap()),
        (
            smallvec::smallvec![2, 1, 12],
            smallvec::smallvec![12, 12, 1]
        )
    );
    // A stream slice [2, 4] (axis 1 at one index) of [2, 3, 4]: each axis
    // kept, or the inner one split.
    let slice = strided(&[2, 4], &[12, 1]);
    assert_eq!(
        view(reshaped(&slice, &[2, 2, 2]).unwrap()),
        (smallvec::smallvec![2, 2, 2], smallvec::smallvec![12, 2, 1])
    );
    // Merging the slice's axes, or a transposed view's, takes a copy.
    assert!(reshaped(&slice, &[8]).is_err());
    assert!(reshaped(&strided(&[3, 2], &[1, 3]), &[6]).is_err());
    assert!(reshaped(&whole, &[5, 5]).is_err());
}

#[test]
fn panics_stop_at_the_boundary_and_fail_the_rank() {
    let world = crate::cpu::World::new(crate::cpu::Config::new(1, 1)).unwrap();
    let error = world
        .run(|device| {
            work(Entry::Wait, (), |_| panic!("boom"));
            assert!(device.failed());
            // Later work is skipped; queries still answer.
            assert_eq!(hir_rt_alloc(0, 8), std::ptr::null_mut());
            assert_eq!(hir_rt_stream_from_pool(3), 1);
        })
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rank 0: hir_rt_wait: internal error: boom"
    );
}

#[test]
fn a_refused_memref_alloc_fails_the_rank_and_leaves_its_program() {
    /// A program that stores into what it allocated, as a lowered one does.
    unsafe extern "C" fn program(arguments: *mut *mut c_void) {
        // SAFETY: the one argument is a pointer to the byte count.
        let bytes = unsafe { **arguments.cast::<*const usize>() };
        // Escaping, so that the optimizer keeps the allocation.
        let ptr = std::hint::black_box(heap::_mlir_memref_to_llvm_alloc(bytes)).cast::<u8>();
        // SAFETY: the allocation is never null: a refused one left.
        unsafe { ptr.write(7) };
        unsafe { heap::_mlir_memref_to_llvm_free(ptr.cast()) };
    }
    let world = crate::cpu::World::new(crate::cpu::Config::new(1, 1)).unwrap();
    let call = |bytes: usize| {
        let mut arguments: [*mut c_void; 1] = [(&raw const bytes).cast_mut().cast()];
        // SAFETY: `program` takes one pointer to a byte count.
        unsafe { crate::exit::call(program, arguments.as_mut_ptr()) }
    };
    let error = world
        .run(|device| {
            assert!(!call(64), "64 B are allocated");
            assert!(!device.failed());
            assert!(call(1 << 60), "2^60 B are refused and the program left");
        })
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rank 0: memref.alloc: out of memory: the program's memref.alloc of 1152921504606846976 B"
    );
}

#[test]
fn a_memref_freed_twice_fails_the_rank_and_leaves_its_program() {
    /// Frees its allocation once, or twice when asked.
    unsafe extern "C" fn program(arguments: *mut *mut c_void) {
        // SAFETY: the one argument is a pointer to the number of frees.
        let frees = unsafe { **arguments.cast::<*const usize>() };
        let ptr = std::hint::black_box(heap::_mlir_memref_to_llvm_alloc(16));
        for _ in 0..frees {
            // SAFETY: the heap checks that the block is live.
            unsafe { heap::_mlir_memref_to_llvm_free(ptr) };
        }
    }
    let world = crate::cpu::World::new(crate::cpu::Config::new(1, 1)).unwrap();
    let call = |frees: usize| {
        let mut arguments: [*mut c_void; 1] = [(&raw const frees).cast_mut().cast()];
        // SAFETY: `program` takes one pointer to a count.
        unsafe { crate::exit::call(program, arguments.as_mut_ptr()) }
    };
    let error = world
        .run(|device| {
            assert!(!call(1), "one free is the program's right");
            // SAFETY: null is nothing to free.
            unsafe { heap::_mlir_memref_to_llvm_free(std::ptr::null_mut()) };
            assert!(!device.failed());
            assert!(call(2), "the second free left the program");
        })
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with("rank 0: memref.dealloc: frees 0x")
            && text.ends_with(
                "which the program's heap does not hold: freed before, not from memref.alloc, or another rank's"
            ),
        "{text}"
    );
}

/// A block is freed only by the rank that allocated it: between a block's
/// two frees `malloc` may hand its address to another rank, and the stale
/// second free must fail its own rank, not free the other's block.
#[test]
fn a_rank_cannot_free_another_ranks_block() {
    /// Allocates a block into `*arguments[0]`, or frees the block there.
    unsafe extern "C" fn program(arguments: *mut *mut c_void) {
        // SAFETY: argument 0 points to a block slot, argument 1 to a flag.
        unsafe {
            let slot = (*arguments).cast::<*mut c_void>();
            if **arguments.add(1).cast::<*const bool>() {
                *slot = heap::_mlir_memref_to_llvm_alloc(16);
            } else {
                heap::_mlir_memref_to_llvm_free(*slot);
            }
        }
    }
    // The block's address, kept between the calls.
    let block = std::sync::atomic::AtomicUsize::new(0);
    let call = |allocate: bool| {
        let mut slot = block.load(std::sync::atomic::Ordering::Relaxed) as *mut c_void;
        let mut arguments: [*mut c_void; 2] = [
            (&raw mut slot).cast(),
            (&raw const allocate).cast_mut().cast(),
        ];
        // SAFETY: `program` takes a block slot and a flag.
        let left = unsafe { crate::exit::call(program, arguments.as_mut_ptr()) };
        block.store(slot as usize, std::sync::atomic::Ordering::Relaxed);
        left
    };
    let owner = crate::cpu::World::new(crate::cpu::Config::new(1, 1)).unwrap();
    let other = crate::cpu::World::new(crate::cpu::Config::new(1, 1)).unwrap();
    owner.run(|_| assert!(!call(true))).unwrap();
    let error = other
        .run(|_| assert!(call(false), "the stranger's free left"))
        .unwrap_err();
    assert!(error.to_string().ends_with("or another rank's"), "{error}");
    // The block is still its owner's, live and freed once.
    owner
        .run(|device| {
            assert!(!call(false));
            assert!(!device.failed());
        })
        .unwrap();
}
