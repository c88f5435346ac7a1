// Scaled dot-product attention, appended to kernels.cu (its element types).
//
// `hir_flash_<t>_<d>`: FlashAttention-2's forward on tensor cores
// (mma.sync m16n8k16, f32 accumulation) for bf16/f16 with head dim d a
// multiple of 16 up to 128: a block of 8 warps takes 128 query rows (16 a
// warp) of one batch entry and walks the keys in tiles of 64, K and V tiles
// double-buffered in shared memory by cp.async, the scores and running
// softmax kept in registers; P is rounded to the element type for its MMA
// with V, as the cpu backend's reference rounds it.
//
// `hir_attention_rows_<t>`: any float type and head dims up to 256, any
// strides: a warp per query row, keys one at a time.

#define HIR_ATT_MAX_BATCH 4
#define HIR_LOG2E 1.4426950408889634f
// NVRTC has no math.h for INFINITY.
#define HIR_INF __int_as_float(0x7f800000)

struct AttnTensor {
    u64 ptr;
    i64 row_stride;
    i64 col_stride;
    i64 batch_strides[HIR_ATT_MAX_BATCH];
};

struct AttnParams {
    AttnTensor q, k, v, out;
    u64 mask;
    i64 mask_row_stride;
    i64 mask_col_stride;
    i64 batch_rank;
    i64 batch_sizes[HIR_ATT_MAX_BATCH];
    i64 batch_base;
    i64 sq, sk, d, dv;
    i64 causal;
    double scale_log2;
};

// The element offset of batch entry `b` in a tensor.
__device__ inline i64 hir_batch_offset(const AttnParams &p, const AttnTensor &t, i64 b) {
    i64 offset = 0;
    for (i64 a = p.batch_rank - 1; a >= 0; --a) {
        offset += (b % p.batch_sizes[a]) * t.batch_strides[a];
        b /= p.batch_sizes[a];
    }
    return offset;
}

// The additive mask at (row, key), in the log2 domain the scores are in.
template <class E>
__device__ inline float hir_mask_at(const AttnParams &p, i64 row, i64 key) {
    const typename E::T *mask = (const typename E::T *)p.mask;
    return E::load(mask + row * p.mask_row_stride + key * p.mask_col_stride) * HIR_LOG2E;
}

// ---- the warp-per-row kernel ----------------------------------------------

template <class E>
__device__ void attention_rows(const AttnParams &p) {
    typedef typename E::T T;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const i64 row = (i64)blockIdx.x * 4 + warp;
    if (row >= p.sq) return;
    const i64 b = p.batch_base + blockIdx.y;
    const T *q = (const T *)p.q.ptr + hir_batch_offset(p, p.q, b) + row * p.q.row_stride;
    const T *k = (const T *)p.k.ptr + hir_batch_offset(p, p.k, b);
    const T *v = (const T *)p.v.ptr + hir_batch_offset(p, p.v, b);
    T *out = (T *)p.out.ptr + hir_batch_offset(p, p.out, b) + row * p.out.row_stride;
    float qr[8], acc[8];
    for (int i = 0; i < 8; ++i) {
        const i64 d = lane + 32 * i;
        qr[i] = d < p.d ? E::load(q + d * p.q.col_stride) : 0.0f;
        acc[i] = 0.0f;
    }
    const float scale = (float)p.scale_log2;
    float m = -HIR_INF, l = 0.0f;
    const i64 keys = p.causal ? min(p.sk, row + 1) : p.sk;
    for (i64 j = 0; j < keys; ++j) {
        const T *kj = k + j * p.k.row_stride;
        float dot = 0.0f;
        for (int i = 0; i < 8; ++i) {
            const i64 d = lane + 32 * i;
            if (d < p.d) dot += qr[i] * E::load(kj + d * p.k.col_stride);
        }
        for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        float s = dot * scale;
        if (p.mask) s += hir_mask_at<E>(p, row, j);
        if (s == -HIR_INF) continue;
        const float m_new = fmaxf(m, s);
        const float correction = exp2f(m - m_new);
        const float pj = exp2f(s - m_new);
        l = l * correction + pj;
        const T p_rounded = E::round(pj);
        const float rounded = E::load(&p_rounded);
        const T *vj = v + j * p.v.row_stride;
        for (int i = 0; i < 8; ++i) {
            const i64 d = lane + 32 * i;
            if (d < p.dv) acc[i] = acc[i] * correction + rounded * E::load(vj + d * p.v.col_stride);
        }
        m = m_new;
    }
    const float inverse = l > 0.0f ? 1.0f / l : 0.0f;
    for (int i = 0; i < 8; ++i) {
        const i64 d = lane + 32 * i;
        if (d < p.dv) out[d * p.out.col_stride] = E::round(acc[i] * inverse);
    }
}

// ---- the tensor-core kernel -----------------------------------------------

#define HIR_BM 128
#define HIR_BN 64
#define HIR_THREADS 256
// One MMA row tile (16 query rows) a warp, its Q fragments held in
// registers: two tiles a warp (halving the K and V fragments read from
// shared memory, as FlashAttention-2 does) spilled at d = 128 and measured
// 110-146 TFLOP/s against this layout's 172 on H100.

__device__ inline unsigned hir_smem(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ inline void hir_cp_async16(unsigned dst, const void *src, bool valid) {
    const int bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

__device__ inline void hir_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ inline void hir_cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }

__device__ inline void hir_ldmatrix_x4(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2,
                                       unsigned &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

__device__ inline void hir_ldmatrix_x4_trans(unsigned addr, unsigned &r0, unsigned &r1,
                                             unsigned &r2, unsigned &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// 2^x in one instruction (-inf gives 0), as FlashAttention's exp2f under fast math.
__device__ inline float hir_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// The MMA and the packing of two f32 into one register of the element type.
struct MmaBF16 {
    typedef BF16 E;
    static __device__ inline void mma(float *c, const unsigned *a, unsigned b0, unsigned b1) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ inline unsigned pack(float lo, float hi) {
        unsigned r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};

struct MmaF16 {
    typedef F16 E;
    static __device__ inline void mma(float *c, const unsigned *a, unsigned b0, unsigned b1) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ inline unsigned pack(float lo, float hi) {
        unsigned r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};

// Copies rows [row0, row0 + ROWS) of a [rows, D] tile (row stride `stride`)
// into shared memory rows of D + 8 elements (the padding puts the 8 rows an
// ldmatrix reads in distinct banks); rows past `rows` are zeros.
template <int ROWS, int D>
__device__ inline void hir_load_tile(unsigned short *dst, const unsigned short *src, i64 stride,
                                     i64 row0, i64 rows) {
    constexpr int CHUNKS = D / 8;
    for (int c = threadIdx.x; c < ROWS * CHUNKS; c += HIR_THREADS) {
        const int r = c / CHUNKS, col = (c % CHUNKS) * 8;
        const bool valid = row0 + r < rows;
        const unsigned short *from = valid ? src + (row0 + r) * stride + col : src;
        hir_cp_async16(hir_smem(dst + r * (D + 8) + col), from, valid);
    }
}

template <class M, int D>
__device__ void flash(const AttnParams &p) {
    typedef typename M::E E;
    constexpr int ROW = D + 8;
    constexpr int KT = D / 16;  // k-steps of Q K^T; also pairs of 8-wide output tiles
    constexpr int NT = HIR_BN / 8;
    extern __shared__ __align__(16) unsigned short hir_attention_smem[];
    unsigned short *sq = hir_attention_smem;
    unsigned short *sk = sq + HIR_BM * ROW;
    unsigned short *sv = sk + 2 * HIR_BN * ROW;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const i64 m_blocks = (p.sq + HIR_BM - 1) / HIR_BM;
    // The longest causal rows first: they set the kernel's tail.
    const i64 m0 = (m_blocks - 1 - blockIdx.x) * HIR_BM;
    const i64 b = p.batch_base + blockIdx.y;
    const unsigned short *q = (const unsigned short *)p.q.ptr + hir_batch_offset(p, p.q, b);
    const unsigned short *k = (const unsigned short *)p.k.ptr + hir_batch_offset(p, p.k, b);
    const unsigned short *v = (const unsigned short *)p.v.ptr + hir_batch_offset(p, p.v, b);
    unsigned short *out = (unsigned short *)p.out.ptr + hir_batch_offset(p, p.out, b);

    i64 n_blocks = (p.sk + HIR_BN - 1) / HIR_BN;
    if (p.causal) {
        const i64 last_row = min(m0 + HIR_BM, p.sq) - 1;
        n_blocks = min(n_blocks, last_row / HIR_BN + 1);
    }

    hir_load_tile<HIR_BM, D>(sq, q + m0 * p.q.row_stride, p.q.row_stride, 0, p.sq - m0);
    if (n_blocks > 0) {
        hir_load_tile<HIR_BN, D>(sk, k, p.k.row_stride, 0, p.sk);
        hir_load_tile<HIR_BN, D>(sv, v, p.v.row_stride, 0, p.sk);
    }
    hir_cp_async_commit();
    hir_cp_async_wait_all();
    __syncthreads();

    // This warp's 16 query rows as MMA A fragments.
    unsigned qf[KT][4];
    #pragma unroll
    for (int kk = 0; kk < KT; ++kk) {
        const int r = warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        const int c = kk * 16 + (lane / 16) * 8;
        hir_ldmatrix_x4(hir_smem(sq + r * ROW + c), qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3]);
    }

    float acc[2 * KT][4];
    #pragma unroll
    for (int t = 0; t < 2 * KT; ++t)
        #pragma unroll
        for (int e = 0; e < 4; ++e) acc[t][e] = 0.0f;
    float m[2] = {-HIR_INF, -HIR_INF}, l[2] = {0.0f, 0.0f};
    const i64 rows[2] = {m0 + warp * 16 + lane / 4, m0 + warp * 16 + lane / 4 + 8};
    const float scale = (float)p.scale_log2;

    for (i64 j = 0; j < n_blocks; ++j) {
        const int buf = j % 2;
        if (j + 1 < n_blocks) {
            const int next = (j + 1) % 2;
            hir_load_tile<HIR_BN, D>(sk + next * HIR_BN * ROW, k, p.k.row_stride, (j + 1) * HIR_BN, p.sk);
            hir_load_tile<HIR_BN, D>(sv + next * HIR_BN * ROW, v, p.v.row_stride, (j + 1) * HIR_BN, p.sk);
        }
        hir_cp_async_commit();
        const unsigned short *kt = sk + buf * HIR_BN * ROW;
        const unsigned short *vt = sv + buf * HIR_BN * ROW;

        // S = Q K^T: this warp's 16 rows by the tile's 64 keys.
        float s[NT][4];
        #pragma unroll
        for (int t = 0; t < NT; ++t)
            #pragma unroll
            for (int e = 0; e < 4; ++e) s[t][e] = 0.0f;
        #pragma unroll
        for (int kk = 0; kk < KT; ++kk) {
            #pragma unroll
            for (int np = 0; np < NT / 2; ++np) {
                const int r = np * 16 + (lane % 8) + (lane / 16) * 8;
                const int c = kk * 16 + ((lane / 8) % 2) * 8;
                unsigned b0, b1, b2, b3;
                hir_ldmatrix_x4(hir_smem(kt + r * ROW + c), b0, b1, b2, b3);
                M::mma(s[2 * np], qf[kk], b0, b1);
                M::mma(s[2 * np + 1], qf[kk], b2, b3);
            }
        }

        // Scale into the log2 domain; mask; hide keys past the end or ahead.
        const i64 key0 = j * HIR_BN;
        const bool edge = key0 + HIR_BN > p.sk || (p.causal && key0 + HIR_BN - 1 > m0 + warp * 16);
        #pragma unroll
        for (int t = 0; t < NT; ++t) {
            #pragma unroll
            for (int e = 0; e < 4; ++e) {
                const i64 row = rows[e / 2];
                const i64 key = key0 + t * 8 + 2 * (lane % 4) + (e % 2);
                float x = s[t][e] * scale;
                if (p.mask && row < p.sq && key < p.sk) x += hir_mask_at<E>(p, row, key);
                if (edge && (key >= p.sk || (p.causal && key > row))) x = -HIR_INF;
                s[t][e] = x;
            }
        }

        // The running softmax of each of the thread's two rows.
        #pragma unroll
        for (int h = 0; h < 2; ++h) {
            float tile_max = -HIR_INF;
            #pragma unroll
            for (int t = 0; t < NT; ++t) tile_max = fmaxf(tile_max, fmaxf(s[t][2 * h], s[t][2 * h + 1]));
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
            const float m_new = fmaxf(m[h], tile_max);
            // A row with nothing visible yet subtracts 0, not -inf.
            const float base = m_new == -HIR_INF ? 0.0f : m_new;
            const float correction = hir_exp2(m[h] - base);
            m[h] = m_new;
            float sum = 0.0f;
            #pragma unroll
            for (int t = 0; t < NT; ++t) {
                #pragma unroll
                for (int e = 2 * h; e < 2 * h + 2; ++e) {
                    s[t][e] = hir_exp2(s[t][e] - base);
                    sum += s[t][e];
                }
            }
            l[h] = l[h] * correction + sum;
            #pragma unroll
            for (int t = 0; t < 2 * KT; ++t) {
                acc[t][2 * h] *= correction;
                acc[t][2 * h + 1] *= correction;
            }
        }

        // O += P V, P's accumulator fragments reused as A fragments.
        #pragma unroll
        for (int kk = 0; kk < NT / 2; ++kk) {
            const unsigned a[4] = {
                M::pack(s[2 * kk][0], s[2 * kk][1]),
                M::pack(s[2 * kk][2], s[2 * kk][3]),
                M::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                M::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]),
            };
            #pragma unroll
            for (int dp = 0; dp < KT; ++dp) {
                const int r = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
                const int c = dp * 16 + (lane / 16) * 8;
                unsigned b0, b1, b2, b3;
                hir_ldmatrix_x4_trans(hir_smem(vt + r * ROW + c), b0, b1, b2, b3);
                M::mma(acc[2 * dp], a, b0, b1);
                M::mma(acc[2 * dp + 1], a, b2, b3);
            }
        }
        hir_cp_async_wait_all();
        __syncthreads();
    }

    #pragma unroll
    for (int h = 0; h < 2; ++h) {
        float total = l[h];
        total += __shfl_xor_sync(0xffffffffu, total, 1);
        total += __shfl_xor_sync(0xffffffffu, total, 2);
        const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
        const i64 row = rows[h];
        if (row >= p.sq) continue;
        #pragma unroll
        for (int t = 0; t < 2 * KT; ++t) {
            const int col = t * 8 + 2 * (lane % 4);
            *(unsigned *)(out + row * p.out.row_stride + col) =
                M::pack(acc[t][2 * h] * inverse, acc[t][2 * h + 1] * inverse);
        }
    }
}
