// HIR's cuda backend kernels, compiled once per process by NVRTC. They need
// no CUDA header: bf16 and f16 are 16-bit words converted through f32 by hand
// and by PTX, every kernel computes in f32 and rounds once to nearest even,
// exactly as the cpu backend does, so pointwise results match it bit for bit.
// Integer types (I32, I64) compute in i64 with wrapping (two's complement)
// arithmetic, done on u64 so that no signed overflow is undefined, and
// store the low bits, as the cpu backend's `ints` does: bit for bit again.
// kernels.rs appends one extern "C" entry per (op, element type).

#define HIR_MAX_RANK 8

typedef long long i64;
typedef unsigned long long u64;

// A strided view: the first element and one stride per axis, in elements.
struct View {
    u64 ptr;
    i64 strides[HIR_MAX_RANK];
};

// A pointwise launch: out = f(a[, b]) over `sizes` (the shared shape).
struct Pointwise {
    i64 rank;
    i64 numel;
    i64 sizes[HIR_MAX_RANK];
    View out;
    View a;
    View b;
};

// A three-operand pointwise launch (where): `p` with `c`, the third view.
struct Ternary {
    Pointwise p;
    View c;
};

// The threads of a `reduce_split` block.
#define HIR_SPLIT_THREADS 256

// A reduction: out (kept axes) = op over the reduced axes of in.
struct Reduce {
    i64 kept_rank;
    i64 reduced_rank;
    i64 outputs;
    i64 reduced;
    i64 kept_sizes[HIR_MAX_RANK];
    i64 reduced_sizes[HIR_MAX_RANK];
    i64 in_reduced_strides[HIR_MAX_RANK];
    View out;
    View in;  // strides of the kept axes
};

// An element type: T its storage, C the type it is computed in.
struct F32 {
    typedef float T;
    typedef float C;
    static __device__ float load(const T *p) { return *p; }
    static __device__ T round(float x) { return x; }
};

struct BF16 {
    typedef unsigned short T;
    typedef float C;
    static __device__ float load(const T *p) { return __uint_as_float(((unsigned)*p) << 16); }
    static __device__ T round(float x) {
        unsigned u = __float_as_uint(x);
        if ((u & 0x7fffffffu) > 0x7f800000u) return (T)((u >> 16) | 0x40u);
        u += 0x7fffu + ((u >> 16) & 1u);
        return (T)(u >> 16);
    }
};

struct F16 {
    typedef unsigned short T;
    typedef float C;
    static __device__ float load(const T *p) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(*p));
        return f;
    }
    static __device__ T round(float x) {
        T h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
        return h;
    }
};

struct I32 {
    typedef int T;
    typedef i64 C;
    static __device__ C load(const T *p) { return *p; }
    // The low 32 bits (u64 to unsigned is modular; NVRTC keeps the bits
    // from unsigned to int).
    static __device__ T round(C x) { return (T)(unsigned)(u64)x; }
    static __device__ C lowest() { return -2147483647LL - 1; }
};

struct I64 {
    typedef long long T;
    typedef i64 C;
    static __device__ C load(const T *p) { return *p; }
    static __device__ T round(C x) { return x; }
    static __device__ C lowest() { return -9223372036854775807LL - 1; }
};

// Sixteen bytes: what one thread moves per access on the wide paths (a
// 16-byte load or store is a quarter of the instructions of 4-byte ones,
// and a 2-byte element per access cannot reach HBM bandwidth).
struct alignas(16) Word16 {
    unsigned v[4];
};

// A word's elements of type T.
template <class T> union Lanes {
    Word16 word;
    T e[sizeof(Word16) / sizeof(T)];
};

__device__ float hir_max(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b); }
__device__ float hir_min(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b); }

struct OpNeg { static __device__ float apply(float a) { return -a; } };
struct OpExp { static __device__ float apply(float a) { return expf(a); } };
struct OpTanh { static __device__ float apply(float a) { return tanhf(a); } };
struct OpAbs { static __device__ float apply(float a) { return fabsf(a); } };
struct OpRelu { static __device__ float apply(float a) { return a < 0.0f ? 0.0f : a; } };
// torch's gelu(approximate='tanh'): sqrt(2 / pi) = 0.7978845608.
struct OpGelu {
    static __device__ float apply(float a) {
        return 0.5f * a * (1.0f + tanhf(0.7978845608f * (a + 0.044715f * a * a * a)));
    }
};
struct OpRsqrt { static __device__ float apply(float a) { return 1.0f / sqrtf(a); } };
struct OpCast { static __device__ float apply(float a) { return a; } };
struct OpAdd { static __device__ float apply(float a, float b) { return a + b; } };
struct OpSub { static __device__ float apply(float a, float b) { return a - b; } };
struct OpMul { static __device__ float apply(float a, float b) { return a * b; } };
struct OpDiv { static __device__ float apply(float a, float b) { return a / b; } };
struct OpMax { static __device__ float apply(float a, float b) { return hir_max(a, b); } };
struct OpMin { static __device__ float apply(float a, float b) { return hir_min(a, b); } };

// The integer ops (`Unary::takes` and `Binary::takes` an integer type).
__device__ i64 hir_wrap_neg(i64 a) { return (i64)(0ull - (u64)a); }
struct IntNeg { static __device__ i64 apply(i64 a) { return hir_wrap_neg(a); } };
struct IntAbs { static __device__ i64 apply(i64 a) { return a < 0 ? hir_wrap_neg(a) : a; } };
struct IntRelu { static __device__ i64 apply(i64 a) { return a < 0 ? 0 : a; } };
struct IntAdd { static __device__ i64 apply(i64 a, i64 b) { return (i64)((u64)a + (u64)b); } };
struct IntSub { static __device__ i64 apply(i64 a, i64 b) { return (i64)((u64)a - (u64)b); } };
struct IntMul { static __device__ i64 apply(i64 a, i64 b) { return (i64)((u64)a * (u64)b); } };
struct IntMax { static __device__ i64 apply(i64 a, i64 b) { return a < b ? b : a; } };
struct IntMin { static __device__ i64 apply(i64 a, i64 b) { return b < a ? b : a; } };

// Casts to and from the integer types, as the cpu backend's `casts`: a
// float to an integer truncates toward zero, NaN gives 0 and values beyond
// the range saturate (by hand, not by the conversion instruction's rules);
// an integer to a float rounds to nearest even once, to `Bits` significant
// bits, into an f32 that the output type's `round` then stores exactly (so
// an integer to bf16 or f16 is not rounded twice through f32); i64 to i32
// keeps the low bits (I32::round).
struct OpToI32 {
    static __device__ i64 apply(float a) {
        if (a != a) return 0;
        if (a >= 2147483648.0f) return 2147483647LL;
        if (a <= -2147483648.0f) return -2147483647LL - 1;
        return (i64)a;
    }
};
struct OpToI64 {
    static __device__ i64 apply(float a) {
        if (a != a) return 0;
        if (a >= 9223372036854775808.0f) return 9223372036854775807LL;
        if (a <= -9223372036854775808.0f) return -9223372036854775807LL - 1;
        return (i64)a;
    }
};
template <int Bits> __device__ float hir_int_to_float(i64 x) {
    u64 magnitude = x < 0 ? 0ull - (u64)x : (u64)x;
    int width = 64 - __clzll((long long)magnitude);
    int shift = width > Bits ? width - Bits : 0;
    u64 kept = magnitude >> shift;
    if (shift > 0) {
        u64 rest = magnitude & ((1ull << shift) - 1);
        u64 half = 1ull << (shift - 1);
        if (rest > half || (rest == half && (kept & 1ull))) kept += 1;
    }
    // kept <= 2^Bits and 2^shift (shift <= 63) are exact f32s, and so is
    // their product.
    float value = (float)kept * __int_as_float((127 + shift) << 23);
    return x < 0 ? -value : value;
}
struct IntToF32 { static __device__ float apply(i64 a) { return hir_int_to_float<24>(a); } };
struct IntToBF16 { static __device__ float apply(i64 a) { return hir_int_to_float<8>(a); } };
struct IntToF16 { static __device__ float apply(i64 a) { return hir_int_to_float<11>(a); } };
struct IntCast { static __device__ i64 apply(i64 a) { return a; } };

// Reductions: `init<E>()` is the identity in E's compute type.
struct SumOp {
    template <class E> static __device__ float init() { return 0.0f; }
    static __device__ float combine(float a, float b) { return a + b; }
};
struct AmaxOp {
    template <class E> static __device__ float init() { return __int_as_float(0xff800000); }
    static __device__ float combine(float a, float b) { return hir_max(a, b); }
};
struct IntSumOp {
    template <class E> static __device__ i64 init() { return 0; }
    static __device__ i64 combine(i64 a, i64 b) { return IntAdd::apply(a, b); }
};
struct IntAmaxOp {
    template <class E> static __device__ i64 init() { return E::lowest(); }
    static __device__ i64 combine(i64 a, i64 b) { return IntMax::apply(a, b); }
};

// Element offsets of linear index `i` of the launch shape in out, a and b.
// What is left of `i` at the outermost axis is its index there: no division
// (64-bit divisions dominate a copy's time otherwise; a contiguous view is
// one axis after coalescing, so it needs none).
__device__ void offsets(const Pointwise &p, i64 i, i64 &o, i64 &a, i64 &b) {
    o = 0; a = 0; b = 0;
    for (i64 d = p.rank - 1; d >= 0; --d) {
        i64 index = i;
        if (d > 0) {
            index = i % p.sizes[d];
            i /= p.sizes[d];
        }
        o += index * p.out.strides[d];
        a += index * p.a.strides[d];
        b += index * p.b.strides[d];
    }
}

#define HIR_GRID_STRIDE(i, n) \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

template <class W> __device__ void copy(const Pointwise &p) {
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        ((W *)p.out.ptr)[o] = ((const W *)p.a.ptr)[a];
    }
}

template <class In, class Out, class Op> __device__ void unary(const Pointwise &p) {
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        typename In::C x = In::load((const typename In::T *)p.a.ptr + a);
        ((typename Out::T *)p.out.ptr)[o] = Out::round(Op::apply(x));
    }
}

template <class E, class Op> __device__ void binary(const Pointwise &p) {
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        typename E::C x = E::load((const typename E::T *)p.a.ptr + a);
        typename E::C y = E::load((const typename E::T *)p.b.ptr + b);
        ((typename E::T *)p.out.ptr)[o] = E::round(Op::apply(x, y));
    }
}

// `binary` on 16-byte words: the launch counts words on the innermost axis
// (every view contiguous there) and its strides are in words.
template <class E, class Op> __device__ void binary_wide(const Pointwise &p) {
    typedef typename E::T T;
    const int lanes = sizeof(Word16) / sizeof(T);
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        Lanes<T> x, y, z;
        x.word = ((const Word16 *)p.a.ptr)[a];
        y.word = ((const Word16 *)p.b.ptr)[b];
        for (int l = 0; l < lanes; ++l) z.e[l] = E::round(Op::apply(E::load(&x.e[l]), E::load(&y.e[l])));
        ((Word16 *)p.out.ptr)[o] = z.word;
    }
}

// The offset in `v` of linear index `i` of `p`'s launch shape.
__device__ i64 view_offset(const Pointwise &p, const View &v, i64 i) {
    i64 offset = 0;
    for (i64 d = p.rank - 1; d >= 0; --d) {
        i64 index = i;
        if (d > 0) {
            index = i % p.sizes[d];
            i /= p.sizes[d];
        }
        offset += index * v.strides[d];
    }
    return offset;
}

// out = a != 0 ? b : c (a is the mask; NaN is nonzero), bits copied.
template <class E> __device__ void where(const Ternary &t) {
    typedef typename E::T T;
    const Pointwise &p = t.p;
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, m, a;
        offsets(p, i, o, m, a);
        const T *source = E::load((const T *)p.a.ptr + m) != (typename E::C)0
                              ? (const T *)p.b.ptr + a
                              : (const T *)t.c.ptr + view_offset(p, t.c, i);
        ((T *)p.out.ptr)[o] = *source;
    }
}

// A launch of no input (fill, iota) over `p`'s shape. `p.a` is never read:
// its strides are 1 along the iota axis and 0 elsewhere, so that its offset
// at an element is the element's index along that axis. An integer fill's
// value is `offset` (exact), a float fill's `value`.
struct Generate {
    Pointwise p;
    i64 offset;
    float value;
};

// out = value, rounded once.
template <class E> __device__ void fill(const Generate &g) {
    const Pointwise &p = g.p;
    typename E::T v = E::round(g.value);
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        ((typename E::T *)p.out.ptr)[o] = v;
    }
}

// out = offset + the index along the iota axis, through f32 (rounded to
// nearest even, as the cpu backend's `as f32`).
template <class E> __device__ void iota(const Generate &g) {
    const Pointwise &p = g.p;
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        ((typename E::T *)p.out.ptr)[o] = E::round((float)(g.offset + a));
    }
}

// An integer fill: out = offset, wrapped once.
template <class E> __device__ void fill_int(const Generate &g) {
    const Pointwise &p = g.p;
    typename E::T v = E::round(g.offset);
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        ((typename E::T *)p.out.ptr)[o] = v;
    }
}

// An integer iota: out = offset + the index along the iota axis, wrapped.
template <class E> __device__ void iota_int(const Generate &g) {
    const Pointwise &p = g.p;
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        ((typename E::T *)p.out.ptr)[o] = E::round(IntAdd::apply(g.offset, a));
    }
}

// Random input values (runtime/src/random.rs, which defines them): element
// `offset + a` of the global array keyed `key`, `p.a` strided as the global
// array so that `a` is an element's global flat index less `offset`.
struct Random {
    Pointwise p;
    i64 offset;
    u64 key;
};

__device__ u64 hir_mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

__device__ u64 hir_random_bits(const Random &r, i64 a) {
    return hir_mix(r.key + (u64)(r.offset + a + 1) * 0x9e3779b97f4a7c15ULL);
}

// Drawn in f64, rounded to f32, then to the element type (nearest even).
template <class E> __device__ void random(const Random &r) {
    const Pointwise &p = r.p;
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        u64 bits = hir_random_bits(r, a);
        double drawn = 0.1 + 0.9 * ((double)(bits >> 11) / 9007199254740992.0);
        float single = __double2float_rn((bits & 1) ? -drawn : drawn);
        ((typename E::T *)p.out.ptr)[o] = E::round(single);
    }
}

template <class E> __device__ void random_int(const Random &r) {
    const Pointwise &p = r.p;
    HIR_GRID_STRIDE(i, p.numel) {
        i64 o, a, b;
        offsets(p, i, o, a, b);
        u64 bits = hir_random_bits(r, a);
        i64 magnitude = 1 + (i64)((bits >> 32) % 9);
        ((typename E::T *)p.out.ptr)[o] = E::round((bits & 1) ? -magnitude : magnitude);
    }
}

// Output element `out`'s offset in the output (`o`) and the offset of its
// first input element (`base`).
// (The outermost axis needs no division, as in `offsets`.)
__device__ void kept_offsets(const Reduce &r, i64 out, i64 &o, i64 &base) {
    o = 0, base = 0;
    for (i64 d = r.kept_rank - 1; d >= 0; --d) {
        i64 index = out;
        if (d > 0) {
            index = out % r.kept_sizes[d];
            out /= r.kept_sizes[d];
        }
        o += index * r.out.strides[d];
        base += index * r.in.strides[d];
    }
}

// The offset of reduced element `j` from its output element's first input.
__device__ i64 reduced_offset(const Reduce &r, i64 j) {
    i64 offset = 0;
    for (i64 d = r.reduced_rank - 1; d >= 0; --d) {
        i64 index = j;
        if (d > 0) {
            index = j % r.reduced_sizes[d];
            j /= r.reduced_sizes[d];
        }
        offset += index * r.in_reduced_strides[d];
    }
    return offset;
}

// One block per output element (grid-stride over outputs); the block's
// threads stride over the reduced elements, then combine by warp shuffles
// and one shared-memory step.
template <class E, class Op> __device__ void reduce(const Reduce &r) {
    typedef typename E::C C;
    __shared__ C partial[32];
    for (i64 out = blockIdx.x; out < r.outputs; out += gridDim.x) {
        i64 o, base;
        kept_offsets(r, out, o, base);
        const typename E::T *in = (const typename E::T *)r.in.ptr + base;
        C acc = Op::template init<E>();
        for (i64 j = threadIdx.x; j < r.reduced; j += blockDim.x) {
            acc = Op::combine(acc, E::load(in + reduced_offset(r, j)));
        }
        for (int shift = 16; shift > 0; shift /= 2)
            acc = Op::combine(acc, __shfl_down_sync(0xffffffffu, acc, shift));
        unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        if (lane == 0) partial[warp] = acc;
        __syncthreads();
        if (warp == 0) {
            unsigned warps = (blockDim.x + 31) / 32;
            acc = lane < warps ? partial[lane] : Op::template init<E>();
            for (int shift = 16; shift > 0; shift /= 2)
                acc = Op::combine(acc, __shfl_down_sync(0xffffffffu, acc, shift));
            if (lane == 0) ((typename E::T *)r.out.ptr)[o] = E::round(acc);
        }
        __syncthreads();
    }
}

// A reduction over outer axes (or a short one): one thread per output
// element, so that neighbouring threads read neighbouring elements; a block
// per output would leave most of its threads idle or read strided.
template <class E, class Op> __device__ void reduce_short(const Reduce &r) {
    HIR_GRID_STRIDE(out, r.outputs) {
        i64 o, base;
        kept_offsets(r, out, o, base);
        const typename E::T *in = (const typename E::T *)r.in.ptr + base;
        typename E::C acc = Op::template init<E>();
        for (i64 j = 0; j < r.reduced; ++j) {
            acc = Op::combine(acc, E::load(in + reduced_offset(r, j)));
        }
        ((typename E::T *)r.out.ptr)[o] = E::round(acc);
    }
}

// An outer reduction of few outputs (a column sum, a bias gradient): too few
// words for a thread each to fill the device, so a block is `blockDim.x`
// words of the innermost kept axis (contiguous) by `blockDim.y` groups of
// reduced elements (a power of two); group `y` folds every `blockDim.y`-th
// element, then the groups combine in shared memory, in a fixed order, and
// the sum is rounded once.
template <class E, class Op> __device__ void reduce_split(const Reduce &r) {
    typedef typename E::T T;
    typedef typename E::C C;
    const int lanes = sizeof(Word16) / sizeof(T);
    __shared__ C partial[HIR_SPLIT_THREADS * lanes];
    i64 word = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    bool live = word < r.outputs;
    C acc[lanes];
    for (int l = 0; l < lanes; ++l) acc[l] = Op::template init<E>();
    i64 o = 0, base = 0;
    if (live) {
        kept_offsets(r, word, o, base);
        const T *in = (const T *)r.in.ptr + base;
#pragma unroll 4
        for (i64 j = threadIdx.y; j < r.reduced; j += blockDim.y) {
            Lanes<T> x;
            x.word = *(const Word16 *)(in + reduced_offset(r, j));
            for (int l = 0; l < lanes; ++l) acc[l] = Op::combine(acc[l], E::load(&x.e[l]));
        }
    }
    unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    for (int l = 0; l < lanes; ++l) partial[t * lanes + l] = acc[l];
    __syncthreads();
    for (unsigned half = blockDim.y / 2; half > 0; half /= 2) {
        if (threadIdx.y < half) {
            unsigned u = (threadIdx.y + half) * blockDim.x + threadIdx.x;
            for (int l = 0; l < lanes; ++l)
                partial[t * lanes + l] = Op::combine(partial[t * lanes + l], partial[u * lanes + l]);
        }
        __syncthreads();
    }
    if (threadIdx.y == 0 && live) {
        Lanes<T> y;
        for (int l = 0; l < lanes; ++l) y.e[l] = E::round(partial[t * lanes + l]);
        *(Word16 *)((T *)r.out.ptr + o) = y.word;
    }
}

// `reduce_short` on 16-byte words: each thread reduces the 16 / sizeof(T)
// consecutive outputs of a word (the launch counts words on the innermost
// kept axis; its strides stay in elements).
template <class E, class Op> __device__ void reduce_wide(const Reduce &r) {
    typedef typename E::T T;
    const int lanes = sizeof(Word16) / sizeof(T);
    HIR_GRID_STRIDE(out, r.outputs) {
        i64 o, base;
        kept_offsets(r, out, o, base);
        const T *in = (const T *)r.in.ptr + base;
        typename E::C acc[lanes];
        for (int l = 0; l < lanes; ++l) acc[l] = Op::template init<E>();
        for (i64 j = 0; j < r.reduced; ++j) {
            Lanes<T> x;
            x.word = *(const Word16 *)(in + reduced_offset(r, j));
            for (int l = 0; l < lanes; ++l) acc[l] = Op::combine(acc[l], E::load(&x.e[l]));
        }
        Lanes<T> y;
        for (int l = 0; l < lanes; ++l) y.e[l] = E::round(acc[l]);
        *(Word16 *)((T *)r.out.ptr + o) = y.word;
    }
}
