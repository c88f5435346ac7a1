//! Whole programs: an error skipping the rest of its rank, the trace's
//! tracks, and the stream-parallel allgather-matmul host program through
//! the C ABI.

use super::*;

#[test]
fn an_error_skips_the_rest_of_the_rank_and_names_the_op() {
    let world = world(1, 1);
    let error = world
        .run(|device| {
            let mut a = array(DType::F32, &[4], |e| e as f32);
            let mut b = array(DType::F32, &[5], |_| 0.0);
            let mut c = array(DType::F32, &[4], |_| 0.0);
            let _known = known(device, &[&a, &b, &c]);
            let (a, b, c_view) = (
                Descriptor::of(&view(&mut a)),
                Descriptor::of(&view(&mut b)),
                Descriptor::of(&view(&mut c)),
            );
            let copy: UnaryFn = symbol(Entry::Copy(DType::F32));
            let add: BinaryFn = symbol(Entry::Binary(Binary::Add, DType::F32));
            unsafe {
                copy(a.ptr(), b.ptr());
                add(a.ptr(), a.ptr(), c_view.ptr());
            }
            device.synchronize().unwrap();
            assert_eq!(c.to_f32(), [0.0; 4]);
        })
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rank 0: hir_rt_copy_f32: output has shape [5], expected [4]"
    );
}

#[test]
fn the_trace_has_a_track_per_rank_and_stream() {
    let world = world(2, 1);
    world
        .run(|device| {
            let mut a = array(DType::F32, &[4], |_| 1.0);
            let mut b = array(DType::F32, &[4], |_| 0.0);
            device.set_current_stream(1).unwrap();
            device
                .compute(kernel(KernelOp::Copy, vec![view(&mut a)], view(&mut b)))
                .unwrap();
            let op = CollectiveOp {
                op: Collective::Allreduce,
                kind: ReduceKind::Max,
                root: 0,
                axis: 0,
                team: team(&[0, 1]),
                backend: Transport::Nccl,
                input: view(&mut a),
                output: view(&mut b),
            };
            let request = device.collective(op).unwrap();
            device.wait(request).unwrap();
            device.synchronize().unwrap();
        })
        .unwrap();
    let json = world.trace().unwrap().to_chrome_json();
    for rank in 0..2 {
        assert!(json.contains(&format!(r#""pid":{rank},"args":{{"name":"rank {rank}"}}"#)));
        assert!(json.contains(&format!(
            r#""pid":{rank},"tid":2,"args":{{"name":"stream 1"}}"#
        )));
        assert!(json.contains(&format!(
            r#""pid":{rank},"tid":3,"args":{{"name":"comm [0, 1]"}}"#
        )));
        assert!(json.contains(&format!(
            r#"{{"ph":"X","name":"copy_f32","pid":{rank},"tid":2,"#
        )));
        assert!(json.contains(&format!(
            r#"{{"ph":"X","name":"allreduce_f32","pid":{rank},"tid":3,"#
        )));
    }
    let path = std::env::temp_dir().join(format!("hir-trace-{}.json", std::process::id()));
    world.write_chrome_trace(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), json);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn the_stream_parallel_ag_matmul_host_program_through_the_c_abi() {
    // Host.md's @ag_matmul on 2 ranks and 2 streams, each call as the
    // lowering emits it: a: [S, 1, M, K], b: [K, N], c: [S, D, M, N].
    let (s, d, m, k, n) = (2usize, 2usize, 3usize, 4usize, 5usize);
    let world = world(d, s);
    let a_of = |rank: usize, e: usize| ((rank * 7 + e) % 11) as f32 - 5.0;
    let b_of = |e: usize| (e % 5) as f32 - 2.0;
    let outputs = world
        .run(|device| {
            let rank = device.rank();
            let mut a = array(DType::BF16, &[s, 1, m, k], |e| a_of(rank, e));
            let mut b = array(DType::BF16, &[k, n], b_of);
            let mut c = array(DType::BF16, &[s, d, m, n], |_| 0.0);
            let _known = known(device, &[&a, &b, &c]);
            let (a, b_view, c_view) = (view(&mut a), view(&mut b), view(&mut c));
            let bytes = (s * d * m * k * 2) as i64;
            let g_ptr = crate::ffi::hir_rt_alloc(0, bytes).cast::<u8>();
            let g = View::contiguous(DType::BF16, g_ptr, &[s, d, m, k]);
            let mut ranks = [0i64, 1];
            let team = team_descriptor(&mut ranks);
            let allgather: CollectiveFn =
                symbol(Entry::Collective(Collective::Allgather, DType::BF16));
            let matmul: BinaryFn = symbol(Entry::Matmul(DType::BF16));
            use crate::ffi::*;
            let main = hir_rt_get_current_stream();
            for i in 0..s as i64 {
                hir_rt_set_current_stream(hir_rt_stream_from_pool(i));
                hir_rt_sync_stream(main);
            }
            for i in 0..s {
                let stream = hir_rt_stream_from_pool(i as i64);
                hir_rt_set_current_stream(stream);
                let ai = Descriptor::of(&select(&a, 0, i));
                let gi = Descriptor::of(&select(&g, 0, i));
                let ci = Descriptor::of(&select(&c_view, 0, i));
                let b = Descriptor::of(&b_view);
                unsafe {
                    let request = allgather(ai.ptr(), gi.ptr(), 0, 0, 0, team.ptr(), 0);
                    hir_rt_wait(request);
                    matmul(gi.ptr(), b.ptr(), ci.ptr());
                }
                hir_rt_set_current_stream(main);
                hir_rt_sync_stream(stream);
            }
            hir_rt_dealloc(g_ptr.cast());
            device.synchronize().unwrap();
            c.to_f32()
        })
        .unwrap();
    // c[i, r] = a_r[i, 0] @ b, on every rank.
    let b: Vec<f32> = (0..k * n).map(b_of).collect();
    let mut want = Vec::new();
    for i in 0..s {
        for r in 0..d {
            for row in 0..m {
                for col in 0..n {
                    let dot: f32 = (0..k)
                        .map(|p| a_of(r, (i * m + row) * k + p) * b[p * n + col])
                        .sum();
                    want.push(dot);
                }
            }
        }
    }
    assert_eq!(outputs[0], want);
    assert_eq!(outputs[1], want);
    // Slice i's allgather and matmul ran on pool stream i + 1 (track i + 2).
    let slices = world.trace().unwrap().slices();
    for rank in 0..d {
        for stream in 1..=s {
            assert!(
                slices
                    .iter()
                    .any(|x| x.rank == rank && x.tid == stream + 1 && x.name == "matmul_bf16")
            );
        }
    }
}
