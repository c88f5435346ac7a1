//! Unit tests of `ipc.rs` that need no GPU: counters and flag slots,
//! exports and destinations on the wire, views translated through mappings.

use super::*;
use crate::cuda::export::MAX_NAME;
use crate::cuda::kernels::MAX_RANK;
use hir_abi::DType;

fn view(ptr: usize, sizes: &[usize], strides: &[usize]) -> View {
    View {
        dtype: DType::BF16,
        ptr: ptr as *mut u8,
        sizes: crate::memref::Extents::from_slice(sizes),
        strides: crate::memref::Extents::from_slice(strides),
    }
}

#[test]
fn counters_number_each_member_and_signals_wrap() {
    let mut counters = Counters::new(3);
    assert_eq!(
        [0, 2, 0, 2].map(|member| counters.next(member)),
        [0, 0, 1, 1]
    );
    assert_eq!(counters, Counters(vec![2, 0, 2]));
    assert_eq!(signal(0), 1);
    assert_eq!(signal(u32::MAX as u64 - 1), u32::MAX);
    // Past 2^32 transfers the values wrap; GEQ waits compare cyclically.
    assert_eq!(signal(u32::MAX as u64), 0);
    assert_eq!(signal(1 << 32), 1);
}

#[test]
fn flags_are_ready_then_done_per_member() {
    let slot = 4 * SLOTS as u64;
    assert_eq!(ready(0x1000, 0, 0), 0x1000);
    assert_eq!(ready(0x1000, 0, SLOTS as u64 + 1), 0x1004);
    assert_eq!(ready(0x1000, 2, 1), 0x1000 + 2 * slot + 4);
    assert_eq!(done(0x1000, 3, 0, 0), 0x1000 + 3 * slot);
    assert_eq!(done(0x1000, 3, 2, 3), 0x1000 + 5 * slot + 12);
}

#[test]
fn exports_round_trip() {
    let same = Export {
        base: 0x7f00_0000,
        size: 4096,
        id: 17,
        flags: 0x7f10_0000,
        reach: Reach::Context(0xabcd),
        mailbox: "/hir-mailbox-12-0-abc".into(),
    };
    assert_eq!(Export::decode(&same.encode(), true).unwrap(), same);
    let handles = Export {
        reach: Reach::Handles {
            buffer: [7; 64],
            flags: [9; 64],
        },
        mailbox: String::new(),
        ..same.clone()
    };
    assert_eq!(Export::decode(&handles.encode(), false).unwrap(), handles);
    assert!(Export::decode(&same.encode(), false).is_err());
    assert!(Export::decode(&handles.encode(), true).is_err());
    for name in ["no-slash", "/", "/a/b", "/a\0b", "/a b"] {
        let bad = Export {
            mailbox: name.into(),
            ..same.clone()
        };
        assert!(Export::decode(&bad.encode(), true).is_err(), "{name:?}");
    }
    let mut long = same.encode();
    long.extend([b'x'; MAX_NAME]);
    assert!(Export::decode(&long, true).is_err());
}

#[test]
fn destinations_round_trip() {
    let destination = Destination(view(0x4000, &[4, 8], &[24, 1]));
    let words = destination.encode();
    assert_eq!(words.len(), 7);
    assert_eq!(Destination::decode(&words).unwrap(), destination);
    assert!(Destination::decode(&words[..words.len() - 1]).is_err());
    assert!(Destination::decode(&words[..2]).is_err());
    let mut bad_dtype = words.clone();
    bad_dtype[0] = 1 << 40;
    assert!(Destination::decode(&bad_dtype).is_err());
    let mut bad_rank = words.clone();
    bad_rank[2] = u64::MAX;
    assert!(Destination::decode(&bad_rank).is_err());
}

#[test]
fn destinations_fit_the_mailbox() {
    // Up to MAX_RANK axes travel as they are.
    let sizes = [2; MAX_RANK];
    let strides: Vec<usize> = (0..MAX_RANK).rev().map(|axis| 1 << (2 * axis)).collect();
    let wide = view(0x4000, &sizes, &strides);
    let destination = Destination::of(&wide).unwrap();
    assert_eq!(destination.0, wide);
    assert_eq!(destination.encode().len(), super::super::mailbox::WORDS);
    // More are merged: a contiguous [1, 2, ..., 2] is one axis.
    let mut sizes = vec![1];
    sizes.extend([2; MAX_RANK + 1]);
    let tall = View::contiguous(DType::F32, 0x4000 as *mut u8, &sizes);
    let merged = Destination::of(&tall).unwrap().0;
    assert_eq!(
        (merged.sizes, merged.strides),
        (
            smallvec::smallvec![1 << (MAX_RANK + 1)],
            smallvec::smallvec![1]
        )
    );
    // Axes that do not merge are an error.
    let sizes = [2; MAX_RANK + 1];
    let strides: Vec<usize> = (0..=MAX_RANK).rev().map(|axis| 1 << (2 * axis)).collect();
    assert!(Destination::of(&view(0x4000, &sizes, &strides)).is_err());
}

fn mapping(start: usize, end: usize, id: u64, local: usize) -> Mapping {
    Mapping {
        remote: Allocation {
            region: (start, end),
            id,
        },
        local,
    }
}

#[test]
fn views_translate_into_the_mapping_that_holds_them() {
    let mappings = [
        mapping(0x1000, 0x2000, 1, 0x9000),
        mapping(0x4000, 0x4100, 2, 0x5000),
    ];
    // A [4, 8] bf16 slice with row stride 24 at 0x4010 ends at 0x40d0.
    let inside = translate(&mappings, &view(0x4010, &[4, 8], &[24, 1])).unwrap();
    assert_eq!(inside.ptr as usize, 0x5010);
    assert_eq!(inside.strides[..], [24, 1]);
    assert_eq!(
        translate(&mappings, &view(0x1ff0, &[16], &[1])).map(|v| v.ptr as usize),
        None,
        "runs past the end of its allocation"
    );
    assert!(translate(&mappings, &view(0x3000, &[1], &[1])).is_none());
}

#[test]
fn a_buffer_is_held_by_the_allocation_around_it() {
    let shared = Allocation {
        region: (0x1000, 0x1100),
        id: 3,
    };
    assert_eq!(
        holding(&[shared], &view(0x1000, &[128], &[1])),
        Some(shared)
    );
    assert_eq!(holding(&[shared], &view(0x1000, &[129], &[1])), None);
}

#[test]
fn a_peer_allocation_at_a_freed_ones_address_replaces_its_mapping() {
    // In one process (no handles opened) mappings are the peer's own
    // addresses.
    let mut ipc = Ipc::default();
    let old = mapping(0x1000, 0x3000, 1, 0x1000);
    let elsewhere = mapping(0x8000, 0x9000, 2, 0x8000);
    ipc.mapped.insert(5, vec![old, elsewhere]);
    // The same allocation shared again (with another team) stays.
    ipc.unmap_freed(5, old.remote).unwrap();
    assert_eq!(ipc.mapped[&5], [old, elsewhere]);
    // A smaller one at the start of the freed range drops it.
    let new = Allocation {
        region: (0x1000, 0x2000),
        id: 9,
    };
    ipc.unmap_freed(5, new).unwrap();
    assert_eq!(ipc.mapped[&5], [elsewhere]);
    // Ranges that only touch do not overlap.
    assert!(!overlap((0x1000, 0x2000), (0x2000, 0x3000)));
    assert!(overlap((0x1000, 0x2001), (0x2000, 0x3000)));
}
