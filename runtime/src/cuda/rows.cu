// The device functions of the fused row kernels (`fused_rows.rs`) and of
// the pointwise fused kernel's word path (`fused.rs`), appended once to
// their generated source after `kernels.cu`.

// `acc` combined over the block by `Op`, in every thread.
template <class Op> __device__ float hir_block_reduce(float acc, float *scratch) {
    for (int shift = 16; shift > 0; shift /= 2)
        acc = Op::combine(acc, __shfl_xor_sync(0xffffffffu, acc, shift));
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    __syncthreads();
    if (lane == 0) scratch[warp] = acc;
    __syncthreads();
    acc = lane < warps ? scratch[lane] : Op::template init<F32>();
    for (int shift = 16; shift > 0; shift /= 2)
        acc = Op::combine(acc, __shfl_xor_sync(0xffffffffu, acc, shift));
    return acc;
}
// V consecutive elements at `p` as f32: one element, or 16-byte words
// (`p` 16-byte aligned).
template <class E, int V> __device__ void hir_load_row(const typename E::T *p, float *out) {
    typedef typename E::T T;
    if (V == 1) { out[0] = E::load(p); return; }
    const int per = sizeof(Word16) / sizeof(T);
#pragma unroll
    for (int w = 0; w < V / per; ++w) {
        Lanes<T> x;
        x.word = ((const Word16 *)p)[w];
#pragma unroll
        for (int l = 0; l < per; ++l) out[w * per + l] = E::load(&x.e[l]);
    }
}
// `LANES` (8) elements of type E as raw 16-byte words, converted to f32
// where a lane is read: half the registers of f32 values for bf16 and f16.
template <class E> struct RowWords {
    Word16 w[8 * sizeof(typename E::T) / sizeof(Word16)];
};
template <class E> __device__ __forceinline__ void hir_load_words(const typename E::T *p, RowWords<E> &out) {
#pragma unroll
    for (int w = 0; w < 8 * sizeof(typename E::T) / sizeof(Word16); ++w) out.w[w] = ((const Word16 *)p)[w];
}
template <class E> __device__ __forceinline__ float hir_word_lane(const RowWords<E> &in, int e) {
    typedef typename E::T T;
    const int per = sizeof(Word16) / sizeof(T);
    Lanes<T> x;
    x.word = in.w[e / per];
    return E::load(&x.e[e % per]);
}
template <class E, int V> __device__ void hir_store_row(typename E::T *p, const float *in) {
    typedef typename E::T T;
    if (V == 1) { p[0] = E::round(in[0]); return; }
    const int per = sizeof(Word16) / sizeof(T);
#pragma unroll
    for (int w = 0; w < V / per; ++w) {
        Lanes<T> y;
#pragma unroll
        for (int l = 0; l < per; ++l) y.e[l] = E::round(in[w * per + l]);
        ((Word16 *)p)[w] = y.word;
    }
}
