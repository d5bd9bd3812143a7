/* ember.backend._casts: float32 <-> float16 and float32 <-> bfloat16 conversions of
 * contiguous buffers, bit for bit NumPy's (float16) and ml_dtypes' (bfloat16) astype.
 *
 * NumPy converts float16 one element at a time in software (~1.2 ns an element here);
 * ml_dtypes' float32 -> bfloat16 costs ~0.3 ns. Mixed-precision training on the host
 * casts every operand of every product (ember/backend/gemm.py, ember/_ops/conv.py) and
 * every autocast input, so these loops matter.
 *
 *   convert(src, dst, kind, lo, hi, path) -> flags
 *       dst[lo:hi] = src[lo:hi] converted (element indices), GIL released; kind:
 *         0 float32 -> float16    1 float16 -> float32
 *         2 float32 -> bfloat16   3 bfloat16 -> float32
 *       path: -1 the fastest this CPU runs, else one of paths() (tests run each).
 *   paths() -> tuple of the paths this CPU runs: 0 portable C, 1 the same C compiled for
 *       AVX2 (GCC vectorizes it), 2 F16C/AVX2 intrinsics (bfloat16 -> float32 takes path
 *       1's loop), 3 AVX-512F intrinsics. Checked at run time (__builtin_cpu_supports).
 *
 * Measured (ns an element, 100k elements in cache, one core of the dev VM, AVX-512 CPU;
 * NumPy / ml_dtypes astype: 1.45, 1.2, 0.32, 0.05 for kinds 0-3):
 *       path 0: 0.37 0.32 0.38 0.05   path 1: 0.18 0.17 0.18 0.035
 *       path 2: 0.16 0.06 0.12 0.035  path 3: 0.09 0.04 0.07 0.03
 * From ~1M elements all are memory-bound (~0.06-0.09). GCC's vectorization of the portable
 * float16 loops needs AVX2's per-lane shifts: hence the blocked form below.
 *
 * The results are the reference code's (NumPy's npy_floatbits_to_halfbits and
 * npy_halfbits_to_floatbits, Eigen/ml_dtypes' round-to-nearest-even bfloat16):
 *   float32 -> float16: round to nearest even, subnormal halves included; a finite value
 *       of magnitude >= 65520 becomes +-inf; NaN keeps its sign and the top 10 bits of its
 *       payload, made non-zero (0x7c01) when they are all zero -- not quieted: F16C's
 *       vcvtps2ph would set the quiet bit, so the intrinsics path redoes blocks holding a
 *       NaN in C.
 *   float16 -> float32: exact; NaN payload shifted up, not quieted (vcvtph2ps would quiet
 *       a signaling NaN: same fix-up).
 *   float32 -> bfloat16: round to nearest even on the bits (subnormals too: no flushing,
 *       unlike AVX512-BF16's vcvtneps2bf16, which is not used); NaN becomes 0x7fc0 with its
 *       sign.
 *   bfloat16 -> float32: the bits shifted up 16.
 * No floating-point status flag is left set (the intrinsics run with MXCSR saved and
 * restored; the C paths are integer code). Instead the returned flags say what NumPy's cast
 * would have reported, so that the caller can redo the cast with NumPy where np.errstate
 * asks for a warning or an error:
 *   1 overflow  (float32 -> float16: a finite value became inf)
 *   2 underflow (float32 -> float16: a non-zero value below 2^-14 lost bits; NumPy's rule)
 *   4 invalid   (float32 -> bfloat16: a signaling NaN; ml_dtypes' comparison raises it)
 *
 * Buffers are raw bytes (no format is asked for: bfloat16 has no buffer format); their
 * sizes are checked against hi, dtypes and contiguity by the caller
 * (ember/backend/kernels.py: cast), which also needs them aligned to their element size.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

enum { F32_TO_F16 = 0, F16_TO_F32 = 1, F32_TO_BF16 = 2, BF16_TO_F32 = 3 };
enum { FLAG_OVERFLOW = 1, FLAG_UNDERFLOW = 2, FLAG_INVALID = 4 };

#if defined(__GNUC__) || defined(__clang__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

/* ---- portable loops ------------------------------------------------------------------
 * The float16 ones twice: every case branch-free (the reference: it vectorizes with AVX2's
 * per-lane shifts, not with SSE2's), and blocks of 64 that are all normal numbers or zeros
 * (the common case) in a short loop with constant shifts, which SSE2 vectorizes too: a
 * block holding anything else is redone by the first. */

INLINE uint32_t f32_to_f16_all(const uint32_t *restrict src, uint16_t *restrict dst,
                                Py_ssize_t n) {
    uint32_t over = 0, under = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t x = src[i];
        uint32_t sign = (x & 0x80000000u) >> 16;
        uint32_t a = x & 0x7fffffffu;
        /* normal half: rebias the exponent, round the 13 dropped bits to nearest even (a
         * carry into the exponent is right; from 65520 up it reaches inf, 0x7c00) */
        uint32_t norm = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
        /* subnormal half or zero (a < 2^-14): the significand with its implicit bit shifted
         * right by 126 - exponent (14..24; 25 for anything smaller, which rounds to 0),
         * rounded to nearest even */
        uint32_t e = a >> 23;
        uint32_t shift = 126u - (e < 112u ? e : 112u);
        shift = shift < 25u ? shift : 25u;
        uint32_t sig = (a & 0x7fffffu) | 0x800000u;
        uint32_t sub = sig >> shift;
        uint32_t rem = sig & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        uint32_t up = (uint32_t)(rem > halfway) | ((uint32_t)(rem == halfway) & sub);
        sub += up & 1u;
        /* NaN: the top 10 payload bits, at least one of them set */
        uint32_t nan = 0x7c00u | ((a & 0x7fffffu) >> 13) | (uint32_t)((a & 0x7fe000u) == 0);
        uint32_t big = a <= 0x7f800000u ? 0x7c00u : nan;
        uint32_t finite = a < 0x47800000u ? norm : big;
        uint32_t r = a < 0x38800000u ? sub : finite;
        dst[i] = (uint16_t)(r | sign);
        /* (the flags as unsigned range checks: GCC vectorizes these, not && chains) */
        over |= (uint32_t)(a - 0x477ff000u < 0x7f800000u - 0x477ff000u);   /* finite, >= 65520 */
        under |= (uint32_t)(a - 1u < 0x38800000u - 1u) & (uint32_t)(rem != 0);
    }
    return (over ? FLAG_OVERFLOW : 0) | (under ? FLAG_UNDERFLOW : 0);
}

INLINE uint32_t f16_to_f32_all(const uint16_t *restrict src, uint32_t *restrict dst,
                                Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t h = src[i];
        uint32_t a = h & 0x7fffu;
        /* a subnormal half is a * 2^-24 (a in 1..1023), normalized: p = floor(log2 a).
         * Integer code only: GCC does not vectorize a float conversion under a select */
        uint32_t p = (uint32_t)(a >= 2u) + (uint32_t)(a >= 4u) + (uint32_t)(a >= 8u)
                   + (uint32_t)(a >= 16u) + (uint32_t)(a >= 32u) + (uint32_t)(a >= 64u)
                   + (uint32_t)(a >= 128u) + (uint32_t)(a >= 256u) + (uint32_t)(a >= 512u);
        uint32_t sub = ((p + 103u) << 23) + ((a << (23u - p)) & 0x7fffffu);
        sub = a ? sub : 0u;
        /* normal: rebias the exponent 15 -> 127; inf and NaN: all-ones exponent, payload
         * kept */
        uint32_t big = (a + (a < 0x7c00u ? 0x1c000u : 0x38000u)) << 13;
        uint32_t r = a < 0x400u ? sub : big;
        dst[i] = r | ((h & 0x8000u) << 16);
    }
    return 0;
}

#define BLOCK 64

INLINE uint32_t f32_to_f16_span(const uint32_t *restrict src, uint16_t *restrict dst,
                                Py_ssize_t n) {
    uint32_t flags = 0;
    for (Py_ssize_t i = 0; i < n; i += BLOCK) {
        Py_ssize_t m = n - i < BLOCK ? n - i : BLOCK;
        uint32_t odd = 0;  /* a value neither 0 nor in [2^-14, 65520): redo the block */
        for (Py_ssize_t k = 0; k < m; k++) {
            uint32_t x = src[i + k];
            uint32_t a = x & 0x7fffffffu;
            uint32_t norm = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
            dst[i + k] = (uint16_t)((a ? norm : 0u) | ((x & 0x80000000u) >> 16));
            odd |= (uint32_t)(a - 0x38800000u >= 0x477ff000u - 0x38800000u)
                   & (uint32_t)(a != 0);
        }
        if (odd)
            flags |= f32_to_f16_all(src + i, dst + i, m);
    }
    return flags;
}

INLINE uint32_t f16_to_f32_span(const uint16_t *restrict src, uint32_t *restrict dst,
                                Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i += BLOCK) {
        Py_ssize_t m = n - i < BLOCK ? n - i : BLOCK;
        uint32_t odd = 0;  /* a subnormal, inf or NaN: redo the block */
        for (Py_ssize_t k = 0; k < m; k++) {
            uint32_t h = src[i + k];
            uint32_t a = h & 0x7fffu;
            dst[i + k] = (a ? (a + 0x1c000u) << 13 : 0u) | ((h & 0x8000u) << 16);
            odd |= (uint32_t)(a - 0x400u >= 0x7c00u - 0x400u) & (uint32_t)(a != 0);
        }
        if (odd)
            f16_to_f32_all(src + i, dst + i, m);
    }
    return 0;
}

INLINE uint32_t f32_to_bf16_span(const uint32_t *restrict src, uint16_t *restrict dst,
                                 Py_ssize_t n) {
    uint32_t invalid = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t x = src[i];
        uint32_t a = x & 0x7fffffffu;
        uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;  /* nearest even */
        uint32_t nan = ((x >> 16) & 0x8000u) | 0x7fc0u;
        dst[i] = (uint16_t)(a > 0x7f800000u ? nan : r);
        invalid |= (uint32_t)(a > 0x7f800000u) & (uint32_t)((a & 0x400000u) == 0);
    }
    return invalid ? FLAG_INVALID : 0;
}

INLINE uint32_t bf16_to_f32_span(const uint16_t *restrict src, uint32_t *restrict dst,
                                 Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        dst[i] = (uint32_t)src[i] << 16;
    return 0;
}

typedef uint32_t (*span_fn)(const void *src, void *dst, Py_ssize_t n);

#define SPAN_FUNCTIONS(SUFFIX, ATTR)                                                         \
    ATTR static uint32_t f32_to_f16_##SUFFIX(const void *s, void *d, Py_ssize_t n) {        \
        return f32_to_f16_span((const uint32_t *)s, (uint16_t *)d, n);                      \
    }                                                                                        \
    ATTR static uint32_t f16_to_f32_##SUFFIX(const void *s, void *d, Py_ssize_t n) {        \
        return f16_to_f32_span((const uint16_t *)s, (uint32_t *)d, n);                      \
    }                                                                                        \
    ATTR static uint32_t f32_to_bf16_##SUFFIX(const void *s, void *d, Py_ssize_t n) {       \
        return f32_to_bf16_span((const uint32_t *)s, (uint16_t *)d, n);                     \
    }                                                                                        \
    ATTR static uint32_t bf16_to_f32_##SUFFIX(const void *s, void *d, Py_ssize_t n) {       \
        return bf16_to_f32_span((const uint16_t *)s, (uint32_t *)d, n);                     \
    }

SPAN_FUNCTIONS(portable, )

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_PATHS 1
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX2_F16C __attribute__((target("avx2,f16c")))

SPAN_FUNCTIONS(avx2, AVX2)

/* float32 -> float16 with vcvtps2ph, 8 at a time (rounding: nearest even, from the
 * immediate, whatever MXCSR says). Overflow: a finite lane >= 65520. Underflow: a non-zero
 * lane below 2^-14 whose half is not exact (NumPy's rule: its dropped bits are not all 0),
 * found by widening the half back. A block holding a NaN is redone in C (vcvtps2ph quiets
 * NaNs, NumPy does not), as is the tail. */
AVX2_F16C static uint32_t f32_to_f16_f16c(const void *s, void *d, Py_ssize_t n) {
    const float *src = (const float *)s;
    uint16_t *dst = (uint16_t *)d;
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
    const __m256i inf = _mm256_set1_epi32(0x7f800000);
    const __m256i big = _mm256_set1_epi32(0x477fefff);   /* a > big: a >= 65520 */
    const __m256i small = _mm256_set1_epi32(0x38800000); /* a < small: below 2^-14 */
    __m256i over = _mm256_setzero_si256(), under = _mm256_setzero_si256();
    uint32_t flags = 0;
    unsigned csr = _mm_getcsr();
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(src + i);
        __m256i a = _mm256_and_si256(_mm256_castps_si256(v), abs_mask);
        if (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(a, inf)))) {
            flags |= f32_to_f16_avx2(src + i, dst + i, 8);  /* a NaN: NumPy's payload */
            continue;
        }
        __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + i), h);
        over = _mm256_or_si256(over, _mm256_andnot_si256(_mm256_cmpeq_epi32(a, inf),
                                                         _mm256_cmpgt_epi32(a, big)));
        __m256i back = _mm256_and_si256(_mm256_castps_si256(_mm256_cvtph_ps(h)), abs_mask);
        __m256i tiny = _mm256_andnot_si256(_mm256_cmpeq_epi32(a, _mm256_setzero_si256()),
                                           _mm256_cmpgt_epi32(small, a));
        under = _mm256_or_si256(under, _mm256_andnot_si256(_mm256_cmpeq_epi32(back, a), tiny));
    }
    _mm_setcsr(csr);  /* vcvtps2ph sets precision/underflow/overflow status: put it back */
    if (!_mm256_testz_si256(over, over))
        flags |= FLAG_OVERFLOW;
    if (!_mm256_testz_si256(under, under))
        flags |= FLAG_UNDERFLOW;
    return flags | f32_to_f16_avx2(src + i, dst + i, n - i);
}

/* float16 -> float32 with vcvtph2ps, 8 at a time; a block holding a NaN (vcvtph2ps would
 * quiet a signaling one) and the tail are done in C. Exact: no status flag is raised. */
AVX2_F16C static uint32_t f16_to_f32_f16c(const void *s, void *d, Py_ssize_t n) {
    const uint16_t *src = (const uint16_t *)s;
    float *dst = (float *)d;
    const __m128i abs_mask = _mm_set1_epi16(0x7fff);
    const __m128i inf = _mm_set1_epi16(0x7c00);
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(src + i));
        if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, abs_mask), inf))) {
            f16_to_f32_avx2(src + i, dst + i, 8);
            continue;
        }
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    return f16_to_f32_avx2(src + i, dst + i, n - i);
}

/* float32 -> bfloat16, 8 at a time: the C loop's rounding on the bits, its NaN as a
 * blend, two vectors packed into 16 halves (GCC's vectorization of the loop widens and
 * narrows twice as much). */
AVX2 static uint32_t f32_to_bf16_x8(const void *s, void *d, Py_ssize_t n) {
    const uint32_t *src = (const uint32_t *)s;
    uint16_t *dst = (uint16_t *)d;
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
    const __m256i inf = _mm256_set1_epi32(0x7f800000);
    const __m256i one = _mm256_set1_epi32(1), round = _mm256_set1_epi32(0x7fff);
    const __m256i sign = _mm256_set1_epi32(0x8000), qnan = _mm256_set1_epi32(0x7fc0);
    const __m256i quiet = _mm256_set1_epi32(0x400000);
    __m256i invalid = _mm256_setzero_si256();
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i r[2];
        for (int k = 0; k < 2; k++) {
            __m256i x = _mm256_loadu_si256((const __m256i *)(src + i + 8 * k));
            __m256i hi = _mm256_srli_epi32(x, 16);
            __m256i v = _mm256_add_epi32(_mm256_add_epi32(x, round), _mm256_and_si256(hi, one));
            __m256i isnan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);
            __m256i nan = _mm256_or_si256(_mm256_and_si256(hi, sign), qnan);
            r[k] = _mm256_blendv_epi8(_mm256_srli_epi32(v, 16), nan, isnan);
            invalid = _mm256_or_si256(invalid, _mm256_andnot_si256(
                _mm256_cmpeq_epi32(_mm256_and_si256(x, quiet), quiet), isnan));
        }
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xd8);
        _mm256_storeu_si256((__m256i *)(dst + i), packed);
    }
    uint32_t flags = _mm256_testz_si256(invalid, invalid) ? 0 : FLAG_INVALID;
    return flags | f32_to_bf16_avx2(src + i, dst + i, n - i);
}

#define AVX512 __attribute__((target("avx512f")))

/* The F16C loops 16 at a time in AVX-512 registers (masks instead of compares to
 * vectors). */
AVX512 static uint32_t f32_to_f16_x16(const void *s, void *d, Py_ssize_t n) {
    const float *src = (const float *)s;
    uint16_t *dst = (uint16_t *)d;
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
    const __m512i inf = _mm512_set1_epi32(0x7f800000);
    const __m512i big = _mm512_set1_epi32(0x477fefff);
    const __m512i small = _mm512_set1_epi32(0x38800000);
    __mmask16 over = 0, under = 0;
    uint32_t flags = 0;
    unsigned csr = _mm_getcsr();
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(src + i);
        __m512i a = _mm512_and_si512(_mm512_castps_si512(v), abs_mask);
        if (_mm512_cmpgt_epi32_mask(a, inf)) {
            flags |= f32_to_f16_avx2(src + i, dst + i, 16);
            continue;
        }
        __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_si256((__m256i *)(dst + i), h);
        over |= _mm512_mask_cmpneq_epi32_mask(_mm512_cmpgt_epi32_mask(a, big), a, inf);
        __mmask16 tiny = _mm512_mask_cmpgt_epi32_mask(_mm512_test_epi32_mask(a, a), small, a);
        if (tiny) {
            __m512i back = _mm512_and_si512(_mm512_castps_si512(_mm512_cvtph_ps(h)), abs_mask);
            under |= _mm512_mask_cmpneq_epi32_mask(tiny, back, a);
        }
    }
    _mm_setcsr(csr);
    flags |= (over ? FLAG_OVERFLOW : 0) | (under ? FLAG_UNDERFLOW : 0);
    return flags | f32_to_f16_avx2(src + i, dst + i, n - i);
}

AVX512 static uint32_t f16_to_f32_x16(const void *s, void *d, Py_ssize_t n) {
    const uint16_t *src = (const uint16_t *)s;
    float *dst = (float *)d;
    const __m256i abs_mask = _mm256_set1_epi16(0x7fff);
    const __m256i inf = _mm256_set1_epi16(0x7c00);
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
        if (!_mm256_testz_si256(_mm256_cmpgt_epi16(_mm256_and_si256(h, abs_mask), inf),
                                _mm256_cmpgt_epi16(_mm256_and_si256(h, abs_mask), inf))) {
            f16_to_f32_avx2(src + i, dst + i, 16);
            continue;
        }
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(h));
    }
    return f16_to_f32_avx2(src + i, dst + i, n - i);
}

AVX512 static uint32_t f32_to_bf16_x16(const void *s, void *d, Py_ssize_t n) {
    const uint32_t *src = (const uint32_t *)s;
    uint16_t *dst = (uint16_t *)d;
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
    const __m512i inf = _mm512_set1_epi32(0x7f800000);
    const __m512i one = _mm512_set1_epi32(1), round = _mm512_set1_epi32(0x7fff);
    const __m512i sign = _mm512_set1_epi32(0x8000), qnan = _mm512_set1_epi32(0x7fc0);
    const __m512i quiet = _mm512_set1_epi32(0x400000);
    __mmask16 invalid = 0;
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i x = _mm512_loadu_si512((const void *)(src + i));
        __m512i hi = _mm512_srli_epi32(x, 16);
        __m512i v = _mm512_srli_epi32(
            _mm512_add_epi32(_mm512_add_epi32(x, round), _mm512_and_si512(hi, one)), 16);
        __mmask16 isnan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, abs_mask), inf);
        v = _mm512_mask_mov_epi32(v, isnan, _mm512_or_si512(_mm512_and_si512(hi, sign), qnan));
        invalid |= _mm512_mask_testn_epi32_mask(isnan, x, quiet);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtepi32_epi16(v));
    }
    return (invalid ? FLAG_INVALID : 0) | f32_to_bf16_avx2(src + i, dst + i, n - i);
}

AVX512 static uint32_t bf16_to_f32_x16(const void *s, void *d, Py_ssize_t n) {
    const uint16_t *src = (const uint16_t *)s;
    uint32_t *dst = (uint32_t *)d;
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
        _mm512_storeu_si512((void *)(dst + i), _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    return bf16_to_f32_avx2(src + i, dst + i, n - i);
}

static int cpu_paths(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        return 1;
    if (!__builtin_cpu_supports("f16c"))
        return 2;
    return __builtin_cpu_supports("avx512f") ? 4 : 3;
}
#else
#define HAVE_X86_PATHS 0
static int cpu_paths(void) { return 1; }
#endif

static int n_paths = 0;  /* paths 0 .. n_paths - 1 run here (found on first use) */

static span_fn pick(int kind, int path) {
    static const span_fn portable[4] = {f32_to_f16_portable, f16_to_f32_portable,
                                        f32_to_bf16_portable, bf16_to_f32_portable};
#if HAVE_X86_PATHS
    static const span_fn avx2[4] = {f32_to_f16_avx2, f16_to_f32_avx2, f32_to_bf16_avx2,
                                    bf16_to_f32_avx2};
    static const span_fn f16c[4] = {f32_to_f16_f16c, f16_to_f32_f16c, f32_to_bf16_x8,
                                    bf16_to_f32_avx2};
    static const span_fn avx512[4] = {f32_to_f16_x16, f16_to_f32_x16, f32_to_bf16_x16,
                                      bf16_to_f32_x16};
    if (path == 3)
        return avx512[kind];
    if (path == 2)
        return f16c[kind];
    if (path == 1)
        return avx2[kind];
#endif
    return portable[kind];
}

static PyObject *convert(PyObject *self, PyObject *args) {
    Py_buffer src, dst;
    int kind, path;
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "y*w*inni", &src, &dst, &kind, &lo, &hi, &path))
        return NULL;
    PyObject *result = NULL;
    if (n_paths == 0)
        n_paths = cpu_paths();
    if (kind < 0 || kind > 3) {
        PyErr_SetString(PyExc_ValueError, "_casts.convert: kind must be 0..3");
        goto done;
    }
    if (path >= n_paths) {
        PyErr_SetString(PyExc_ValueError, "_casts.convert: this CPU does not run that path");
        goto done;
    }
    Py_ssize_t in_size = (kind == F32_TO_F16 || kind == F32_TO_BF16) ? 4 : 2;
    Py_ssize_t out_size = 6 - in_size;
    if (lo < 0 || hi < lo || src.len < hi * in_size || dst.len < hi * out_size) {
        PyErr_SetString(PyExc_ValueError, "_casts.convert: range outside the buffers");
        goto done;
    }
    span_fn fn = pick(kind, path < 0 ? n_paths - 1 : path);
    uint32_t flags;
    Py_BEGIN_ALLOW_THREADS
    flags = fn((const char *)src.buf + lo * in_size, (char *)dst.buf + lo * out_size, hi - lo);
    Py_END_ALLOW_THREADS
    result = PyLong_FromUnsignedLong(flags);
done:
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return result;
}

static PyObject *paths(PyObject *self, PyObject *unused) {
    if (n_paths == 0)
        n_paths = cpu_paths();
    PyObject *t = PyTuple_New(n_paths);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < n_paths; i++) {
        PyObject *v = PyLong_FromLong(i);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyMethodDef cast_functions[] = {
    {"convert", convert, METH_VARARGS,
     "convert(src, dst, kind, lo, hi, path)\n--\n\ndst[lo:hi] = src[lo:hi] converted "
     "(kind 0: float32->float16, 1: float16->float32, 2: float32->bfloat16, 3: "
     "bfloat16->float32; path -1: the fastest here). Returns NumPy's floating-point flags "
     "of the cast: 1 overflow, 2 underflow, 4 invalid."},
    {"paths", paths, METH_NOARGS,
     "paths()\n--\n\nThe paths this CPU runs: 0 portable C, 1 C for AVX2, 2 F16C "
     "intrinsics."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef casts_module = {
    PyModuleDef_HEAD_INIT, "_casts",
    "float32 <-> float16 / bfloat16 conversions, NumPy's and ml_dtypes' bits "
    "(see ember/backend/kernels.py: cast).",
    -1, cast_functions, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__casts(void) {
    return PyModule_Create(&casts_module);
}
