//! Views checked against the rank's buffers on the GPU: an overrun, a
//! collective past its buffer, memory the rank does not know.

use super::*;

/// Rank 0's error after `program` ran on one GPU through the C ABI:
/// `program` gets the device and a 64-byte buffer from `hir_rt_alloc` (a
/// [4, 4] f32 `g`) and makes one bad call. The next allocation, filled with
/// a pattern first, must be untouched.
fn overrun(program: &(dyn Fn(&CudaDevice, *mut u8) + Sync)) -> Option<String> {
    let world = world(1, false)?;
    let pattern: Vec<u8> = (0..64u8).map(|byte| byte ^ 0x5a).collect();
    let seen = std::sync::Mutex::new(Vec::new());
    let error = world
        .run(|device| {
            let g = crate::ffi::hir_rt_alloc(0, 64).cast::<u8>();
            let neighbour = crate::ffi::hir_rt_alloc(1, 64).cast::<u8>();
            device.copy_to_device(neighbour, &pattern).unwrap();
            program(device, g);
            assert!(device.failed());
            device.synchronize().unwrap();
            let mut bytes = vec![0u8; 64];
            device.copy_from_device(neighbour, &mut bytes).unwrap();
            *crate::lock(&seen) = bytes;
        })
        .unwrap_err();
    assert_eq!(*crate::lock(&seen), pattern, "the neighbour was written");
    Some(error.to_string())
}

#[test]
fn an_out_of_range_select_in_a_loop_is_an_error_not_a_gpu_fault() {
    // `host.select %g[0][%i]` for i in 0..=4, each row negated from a
    // launcher's buffer: row 4 is past g's end and fails before a kernel is
    // launched.
    let Some(error) = overrun(&|device, g| {
        let input = device.buffer(16).unwrap();
        device.copy_to_device(input.ptr(), &[0u8; 16]).unwrap();
        let input = Descriptor::new(input.ptr(), 0, &[4], &[1]);
        for i in 0..=4 {
            let row = Descriptor::new(g, 4 * i, &[4], &[1]);
            unsafe { crate::ffi::_mlir_ciface_hir_rt_neg_f32(input.ptr(), row.ptr()) };
        }
    }) else {
        return;
    };
    assert_eq!(
        error,
        "rank 0: hir_rt_neg_f32: operand #2 view [offset 64 B, 4 x 4 B, strides 1] \
         overruns its allocation of 64 B"
    );
}

#[test]
fn a_collective_into_a_view_past_its_buffer_is_refused_before_nccl() {
    let Some(error) = overrun(&|_, g| {
        let mut team = [0i64];
        let team = Descriptor::new(team.as_mut_ptr().cast(), 0, &[1], &[1]);
        let (input, past) = (
            Descriptor::new(g, 0, &[16], &[1]),
            Descriptor::new(g, 1, &[16], &[1]),
        );
        let allreduce = crate::ffi::_mlir_ciface_hir_rt_allreduce_f32;
        unsafe { allreduce(input.ptr(), past.ptr(), 0, 0, 0, team.ptr(), 0) };
    }) else {
        return;
    };
    assert_eq!(
        error,
        "rank 0: hir_rt_allreduce_f32: operand #2 view [offset 4 B, 16 x 4 B, strides 1] \
         overruns its allocation of 64 B"
    );
}

#[test]
fn views_of_memory_the_rank_does_not_know_are_refused_on_the_gpu() {
    // A host pointer, and a launcher's buffer after it was freed, would be
    // illegal addresses for a kernel: both are refused first.
    let mut host = [0f32; 16];
    let host = host.as_mut_ptr() as usize;
    for freed in [false, true] {
        let Some(error) = overrun(&|device, g| {
            let ptr = if freed {
                device.buffer(64).unwrap().ptr()
            } else {
                host as *mut u8
            };
            let (unknown, g) = (
                Descriptor::new(ptr, 0, &[16], &[1]),
                Descriptor::new(g, 0, &[16], &[1]),
            );
            unsafe { crate::ffi::_mlir_ciface_hir_rt_copy_f32(unknown.ptr(), g.ptr()) };
        }) else {
            return;
        };
        assert!(
            error.starts_with(
                "rank 0: hir_rt_copy_f32: operand #1 view [16 x 4 B, strides 1] points into 0x"
            ),
            "{error}"
        );
        assert!(error.contains("which is no buffer of this rank"), "{error}");
    }
}
