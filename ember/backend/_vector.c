/* ember.backend._vector: row and cell kernels that NumPy runs as many passes, each writing a
 * temporary: log_softmax over the rows of a float32 matrix and its gradient, and the
 * element-wise part of an LSTM step and of its gradient. The GIL is released; the thread pool
 * runs blocks of rows side by side (ember.backend.kernels wraps these).
 *
 *   log_softmax(x, out, n, skipped)   out = (x - max) - log(sum(exp(x - max))), per row of n:
 *                                     one pass for the max, one for the sum of exponentials,
 *                                     one to write (the subtractions rounded as NumPy's)
 *   log_softmax_backward(out, grad, res, n, skipped)
 *                                     res = grad - exp(out) * sum(grad), per row: one pass
 *                                     for the sum, one to write (product, then difference)
 *   lstm_cell_forward(gate, c_prev, cell, tanh_cell, h, hidden)
 *                                     float32 rows of pre-activations i, f, g, o (B, 4H) made
 *                                     sigmoid(i), sigmoid(f), tanh(g), sigmoid(o) in place;
 *                                     cell = f * c_prev + i * g, tanh_cell = tanh(cell),
 *                                     h = o * tanh_cell (B, H); twelve NumPy calls in one
 *   lstm_cell_backward(gate, c_prev, tanh_cell, grad_h, dh, dc, dgates, hidden, is_double)
 *                                     one step of backpropagation through time: the gate
 *                                     gradients from dh (+ grad_h) and the cell gradient dc,
 *                                     which becomes the previous step's; float32 or float64,
 *                                     NumPy's operations in NumPy's order (the same bits)
 *
 * The exponential is a vector one: e^x = 2^k * e^r with k = round(x / ln 2) and
 * r = x - k ln 2 (ln 2 in two parts, so r is exact to a few ulp), e^r by its Taylor series to
 * degree 7 (|r| <= ln2/2: truncation below 1e-8 relative) and 2^k built in the exponent
 * bits. Results are within ~2 ulp of NumPy's exp, denormals included (so that an infinite
 * gradient sum times a tiny probability is infinite, not 0 * inf = NaN, as in NumPy).
 * sigmoid(x) = 1 / (1 + e^-x) as the NumPy path computes it; tanh(x) = -t / (2 + t) with
 * t = e^(-2|x|) - 1 from the same series without its constant term (no cancellation near 0),
 * the sign put back. NaN propagates through both.
 *
 * log_softmax: row sums add blocks of 256 terms in float32 and the blocks in double
 * precision. A row holding a NaN or an infinity (input of the forward; log-probabilities of
 * the gradient) is left to the caller's NumPy code: its entry in `skipped` (uint8, one per
 * row) is set to 1, the row's output is not written. Rows are independent, so the result
 * does not depend on how the rows are shared out. Without AVX2 and FMA (checked at run time)
 * the vector functions refuse to run: `available()` is False and the caller keeps NumPy
 * (lstm_cell_backward is plain C and always runs).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_PATH 1
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))

static const float EXP_HI = 89.0f;    /* e^x is inf above ~88.72: k = 128 gives it */
static const float EXP_LO = -104.0f;  /* e^x rounds to 0 below ~-103.97 */

AVX2 static inline __m256 exp8(__m256 x) {
    const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
    const __m256 ln2_hi = _mm256_set1_ps(0.693359375f);
    const __m256 ln2_lo = _mm256_set1_ps(-2.12194440e-4f);
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(EXP_LO)), _mm256_set1_ps(EXP_HI));
    __m256 k = _mm256_round_ps(_mm256_mul_ps(x, log2e),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, ln2_hi, x);
    r = _mm256_fnmadd_ps(k, ln2_lo, r);
    /* 1 + r + r^2/2! + ... + r^7/7!, Horner */
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* 2^k as 2^k1 * 2^k2, k1 = floor(k / 2): both normal exponents for k in [-150, 128],
     * the first product exact, the second rounding once (to a denormal, to inf) */
    __m256i ki = _mm256_cvtps_epi32(k);
    __m256i k1 = _mm256_srai_epi32(ki, 1), k2 = _mm256_sub_epi32(ki, k1);
    const __m256i bias = _mm256_set1_epi32(127);
    p = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23)));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias),
                                                                   23)));
}

/* Row sums: each lane adds BLOCK / 16 terms in float32, then the blocks' sums are added in
 * double precision. A row of ten thousand float32 terms summed lane by lane in float32 lost
 * ~8x the accuracy of NumPy's pairwise sum; widening every vector cost ~25% of the forward. */
enum { BLOCK = 256 };

AVX2 static inline double hsum_d(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

typedef struct { __m256d lo, hi; } Sum;  /* two chains: the adds' latency overlaps */

AVX2 static inline void widen_add(Sum *acc, __m256 v) {
    acc->lo = _mm256_add_pd(acc->lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    acc->hi = _mm256_add_pd(acc->hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

AVX2 static inline double total(Sum a, Sum b) {
    return hsum_d(_mm256_add_pd(_mm256_add_pd(a.lo, a.hi), _mm256_add_pd(b.lo, b.hi)));
}


/* true lanes: NaN or +-inf */
AVX2 static inline __m256 not_finite(__m256 x) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    return _mm256_cmp_ps(_mm256_and_ps(x, abs_mask), _mm256_set1_ps(INFINITY), _CMP_NLT_UQ);
}

AVX2 static inline __m256 keep_nan(__m256 result, __m256 x) {
    return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

AVX2 static inline __m256 sigmoid8(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 e = exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)));  /* e^-x */
    return keep_nan(_mm256_div_ps(one, _mm256_add_ps(one, e)), x);
}

/* e^x - 1 for x in [-20, 0] (clamped there: tanh needs no more) */
AVX2 static inline __m256 expm1_neg8(__m256 x) {
    const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
    x = _mm256_max_ps(x, _mm256_set1_ps(-20.0f));
    __m256 k = _mm256_round_ps(_mm256_mul_ps(x, log2e),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    /* q = e^r - 1 = r + r^2/2! + ... + r^7/7!, Horner without the constant term */
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256 q = _mm256_mul_ps(p, r);
    __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
    /* 2^k (1 + q) - 1 = 2^k q + (2^k - 1); 2^k - 1 is exact for k in [-29, 0] */
    return _mm256_fmadd_ps(scale, q, _mm256_sub_ps(scale, _mm256_set1_ps(1.0f)));
}

AVX2 static inline __m256 tanh8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 a = _mm256_andnot_ps(sign, x);
    __m256 t = expm1_neg8(_mm256_mul_ps(a, _mm256_set1_ps(-2.0f)));  /* in (-1, 0] */
    __m256 y = _mm256_div_ps(_mm256_andnot_ps(sign, t), _mm256_add_ps(_mm256_set1_ps(2.0f), t));
    return keep_nan(_mm256_or_ps(y, _mm256_and_ps(x, sign)), x);
}

/* The last n % 8 entries of a row as a vector, the missing lanes set to `fill`. */
AVX2 static inline __m256 load_tail(const float *p, Py_ssize_t count, float fill) {
    float buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = i < count ? p[i] : fill;
    return _mm256_loadu_ps(buf);
}

/* One row; 0 when it holds a NaN or an infinity (nothing written). */
AVX2 static int log_softmax_row(const float *x, float *out, Py_ssize_t n) {
    Py_ssize_t full = n & ~(Py_ssize_t)7, tail = n - full;
    __m256 vmax = _mm256_set1_ps(-INFINITY), bad = _mm256_setzero_ps();
    for (Py_ssize_t j = 0; j < full; j += 8) {
        __m256 v = _mm256_loadu_ps(x + j);
        bad = _mm256_or_ps(bad, not_finite(v));
        vmax = _mm256_max_ps(vmax, v);
    }
    if (tail) {
        __m256 v = load_tail(x + full, tail, -INFINITY);
        vmax = _mm256_max_ps(vmax, v);
        bad = _mm256_or_ps(bad, not_finite(load_tail(x + full, tail, 0.0f)));
    }
    if (_mm256_movemask_ps(bad))
        return 0;
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const __m256 mx = _mm256_set1_ps(_mm_cvtss_f32(m4));
    Sum s0 = {_mm256_setzero_pd(), _mm256_setzero_pd()}, s1 = s0;
    Py_ssize_t j = 0;
    while (j < full) {  /* blocks of BLOCK terms in float32, blocks added in double */
        Py_ssize_t stop = j + BLOCK < full ? j + BLOCK : full;
        __m256 f0 = _mm256_setzero_ps(), f1 = _mm256_setzero_ps();
        for (; j + 16 <= stop; j += 16) {
            f0 = _mm256_add_ps(f0, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), mx)));
            f1 = _mm256_add_ps(f1, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j + 8), mx)));
        }
        for (; j < stop; j += 8)
            f0 = _mm256_add_ps(f0, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), mx)));
        widen_add(&s0, f0);
        widen_add(&s1, f1);
    }
    if (tail)  /* padding of -inf: e^(-inf) = 0 */
        widen_add(&s1, exp8(_mm256_sub_ps(load_tail(x + full, tail, -INFINITY), mx)));
    /* NumPy takes the log of the float32 sum */
    const __m256 lse = _mm256_set1_ps(logf((float)total(s0, s1)));
    for (j = 0; j < full; j += 8)
        _mm256_storeu_ps(out + j, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), mx), lse));
    const float m = _mm_cvtss_f32(m4), l = _mm256_cvtss_f32(lse);
    for (; j < n; j++)
        out[j] = (x[j] - m) - l;
    return 1;
}

/* One row of the gradient; 0 when its log-probabilities hold a NaN or an infinity. */
AVX2 static int log_softmax_backward_row(const float *out, const float *grad, float *res,
                                         Py_ssize_t n) {
    Py_ssize_t full = n & ~(Py_ssize_t)7, tail = n - full;
    Sum s0 = {_mm256_setzero_pd(), _mm256_setzero_pd()}, s1 = s0;
    __m256 bad = _mm256_setzero_ps();
    Py_ssize_t j = 0;
    while (j < full) {
        Py_ssize_t stop = j + BLOCK < full ? j + BLOCK : full;
        __m256 f0 = _mm256_setzero_ps(), f1 = _mm256_setzero_ps();
        for (; j + 16 <= stop; j += 16) {
            f0 = _mm256_add_ps(f0, _mm256_loadu_ps(grad + j));
            f1 = _mm256_add_ps(f1, _mm256_loadu_ps(grad + j + 8));
            bad = _mm256_or_ps(bad, not_finite(_mm256_loadu_ps(out + j)));
            bad = _mm256_or_ps(bad, not_finite(_mm256_loadu_ps(out + j + 8)));
        }
        for (; j < stop; j += 8) {
            f0 = _mm256_add_ps(f0, _mm256_loadu_ps(grad + j));
            bad = _mm256_or_ps(bad, not_finite(_mm256_loadu_ps(out + j)));
        }
        widen_add(&s0, f0);
        widen_add(&s1, f1);
    }
    if (tail) {
        widen_add(&s1, load_tail(grad + full, tail, 0.0f));
        bad = _mm256_or_ps(bad, not_finite(load_tail(out + full, tail, 0.0f)));
    }
    if (_mm256_movemask_ps(bad))
        return 0;
    /* an infinite gradient makes the double sum inf or NaN as NumPy's float32 one is; a
     * finite float32 sum is rounded once */
    const __m256 s = _mm256_set1_ps((float)total(s0, s1));
    for (j = 0; j < full; j += 8) {
        __m256 e = _mm256_mul_ps(exp8(_mm256_loadu_ps(out + j)), s);
        _mm256_storeu_ps(res + j, _mm256_sub_ps(_mm256_loadu_ps(grad + j), e));
    }
    if (tail) {
        float e[8];
        _mm256_storeu_ps(e, _mm256_mul_ps(exp8(load_tail(out + full, tail, 0.0f)), s));
        for (Py_ssize_t i = 0; i < tail; i++)
            res[full + i] = grad[full + i] - e[i];
    }
    return 1;
}

/* One step's cell for 8 hidden units (j .. j+7) of one row, from vectors; returns h. */
AVX2 static inline void lstm_cell8(__m256 *i, __m256 *f, __m256 *g, __m256 *o, __m256 c_prev,
                                   __m256 *cell, __m256 *tanh_cell, __m256 *h) {
    *i = sigmoid8(*i);
    *f = sigmoid8(*f);
    *g = tanh8(*g);
    *o = sigmoid8(*o);
    /* NumPy's order: f * c, i * g, then their sum */
    *cell = _mm256_add_ps(_mm256_mul_ps(*f, c_prev), _mm256_mul_ps(*i, *g));
    *tanh_cell = tanh8(*cell);
    *h = _mm256_mul_ps(*o, *tanh_cell);
}

AVX2 static void lstm_forward_row(float *gate, const float *c_prev, float *cell,
                                  float *tanh_cell, float *h, Py_ssize_t hidden) {
    float *gi = gate, *gf = gate + hidden, *gg = gate + 2 * hidden, *go = gate + 3 * hidden;
    Py_ssize_t j = 0;
    for (; j + 8 <= hidden; j += 8) {
        __m256 i = _mm256_loadu_ps(gi + j), f = _mm256_loadu_ps(gf + j);
        __m256 g = _mm256_loadu_ps(gg + j), o = _mm256_loadu_ps(go + j);
        __m256 c, tc, hv;
        lstm_cell8(&i, &f, &g, &o, _mm256_loadu_ps(c_prev + j), &c, &tc, &hv);
        _mm256_storeu_ps(gi + j, i);
        _mm256_storeu_ps(gf + j, f);
        _mm256_storeu_ps(gg + j, g);
        _mm256_storeu_ps(go + j, o);
        _mm256_storeu_ps(cell + j, c);
        _mm256_storeu_ps(tanh_cell + j, tc);
        _mm256_storeu_ps(h + j, hv);
    }
    if (j < hidden) {  /* the last hidden % 8 units, through 8-lane buffers */
        Py_ssize_t count = hidden - j;
        __m256 i = load_tail(gi + j, count, 0.0f), f = load_tail(gf + j, count, 0.0f);
        __m256 g = load_tail(gg + j, count, 0.0f), o = load_tail(go + j, count, 0.0f);
        __m256 c, tc, hv;
        lstm_cell8(&i, &f, &g, &o, load_tail(c_prev + j, count, 0.0f), &c, &tc, &hv);
        float out[7][8];
        _mm256_storeu_ps(out[0], i);
        _mm256_storeu_ps(out[1], f);
        _mm256_storeu_ps(out[2], g);
        _mm256_storeu_ps(out[3], o);
        _mm256_storeu_ps(out[4], c);
        _mm256_storeu_ps(out[5], tc);
        _mm256_storeu_ps(out[6], hv);
        for (Py_ssize_t k = 0; k < count; k++) {
            gi[j + k] = out[0][k];
            gf[j + k] = out[1][k];
            gg[j + k] = out[2][k];
            go[j + k] = out[3][k];
            cell[j + k] = out[4][k];
            tanh_cell[j + k] = out[5][k];
            h[j + k] = out[6][k];
        }
    }
}

static int cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
#define HAVE_AVX2_PATH 0
static int cpu_has_avx2(void) { return 0; }
#endif

static int vector_ok = -1;

static int usable(void) {
    if (vector_ok < 0)
        vector_ok = cpu_has_avx2();
    return vector_ok;
}

/* Checks shared by both functions: float32 buffers of whole rows of n, one flag per row. */
static int check_rows(Py_buffer *bufs, int count, Py_buffer *skipped, Py_ssize_t n,
                      Py_ssize_t *rows) {
    if (n <= 0 || bufs[0].len % ((Py_ssize_t)sizeof(float) * n) != 0) {
        PyErr_SetString(PyExc_ValueError, "_vector: buffers must hold whole rows of n floats");
        return -1;
    }
    for (int i = 1; i < count; i++)
        if (bufs[i].len != bufs[0].len) {
            PyErr_SetString(PyExc_ValueError, "_vector: buffers of different sizes");
            return -1;
        }
    *rows = bufs[0].len / ((Py_ssize_t)sizeof(float) * n);
    if (skipped->len < *rows) {
        PyErr_SetString(PyExc_ValueError, "_vector: one skip flag per row needed");
        return -1;
    }
    return 0;
}

static PyObject *py_log_softmax(PyObject *self, PyObject *args) {
    Py_buffer b[2], skipped;
    Py_ssize_t n, rows, left = 0;
    if (!usable()) {
        PyErr_SetString(PyExc_RuntimeError, "_vector: this CPU has no AVX2/FMA");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*w*nw*", &b[0], &b[1], &n, &skipped))
        return NULL;
    PyObject *result = NULL;
    if (check_rows(b, 2, &skipped, n, &rows) == 0) {
#if HAVE_AVX2_PATH
        const float *x = b[0].buf;
        float *out = b[1].buf;
        uint8_t *skip = skipped.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < rows; i++) {
            skip[i] = !log_softmax_row(x + i * n, out + i * n, n);
            left += skip[i];
        }
        Py_END_ALLOW_THREADS
#endif
        result = PyLong_FromSsize_t(left);
    }
    PyBuffer_Release(&b[0]);
    PyBuffer_Release(&b[1]);
    PyBuffer_Release(&skipped);
    return result;
}

static PyObject *py_log_softmax_backward(PyObject *self, PyObject *args) {
    Py_buffer b[3], skipped;
    Py_ssize_t n, rows, left = 0;
    if (!usable()) {
        PyErr_SetString(PyExc_RuntimeError, "_vector: this CPU has no AVX2/FMA");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*y*w*nw*", &b[0], &b[1], &b[2], &n, &skipped))
        return NULL;
    PyObject *result = NULL;
    if (check_rows(b, 3, &skipped, n, &rows) == 0) {
#if HAVE_AVX2_PATH
        const float *out = b[0].buf, *grad = b[1].buf;
        float *res = b[2].buf;
        uint8_t *skip = skipped.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < rows; i++) {
            skip[i] = !log_softmax_backward_row(out + i * n, grad + i * n, res + i * n, n);
            left += skip[i];
        }
        Py_END_ALLOW_THREADS
#endif
        result = PyLong_FromSsize_t(left);
    }
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&b[i]);
    PyBuffer_Release(&skipped);
    return result;
}

/* One row of one step of the LSTM's backpropagation through time, as the NumPy path
 * (ember/_ops/rnn_ops.py, _recurrence_grads) computes it, operation by operation:
 *   d = dh (+ grad_h);  dG_o = d * ((tanh_c * o) * (1 - o))
 *   c = dc + d * (o * (1 - tanh_c * tanh_c))
 *   dG_i = ((g * i) * (1 - i)) * c;  dG_f = ((c_prev * f) * (1 - f)) * c
 *   dG_g = (i * (1 - g * g)) * c;    dc = c * f  (the carry into the previous step) */
#define LSTM_BACKWARD_LOOP(T, D)                                                             \
    for (Py_ssize_t j = 0; j < hidden; j++) {                                                \
        T i = gi[j], f = gf[j], g = gg[j], o = go[j], t = tc[j];                             \
        T d = D;                                                                             \
        dout[j] = d * ((t * o) * ((T)1 - o));                                                \
        T c = dcp[j] + d * (o * ((T)1 - t * t));                                             \
        di[j] = ((g * i) * ((T)1 - i)) * c;                                                  \
        df[j] = ((cp[j] * f) * ((T)1 - f)) * c;                                              \
        dg[j] = (i * ((T)1 - g * g)) * c;                                                    \
        dcp[j] = c * f;                                                                      \
    }

/* restrict parameters (the caller passes distinct arrays) and no branch in the loop: it then
 * vectorizes */
#define DEFINE_LSTM_BACKWARD_ROW(NAME, T)                                                    \
    static void NAME(const T *restrict gi, const T *restrict cp, const T *restrict tc,        \
                     const T *restrict gh, const T *restrict dhp, T *restrict dcp,           \
                     T *restrict di, Py_ssize_t hidden) {                                    \
        const T *gf = gi + hidden, *gg = gi + 2 * hidden, *go = gi + 3 * hidden;             \
        T *df = di + hidden, *dg = di + 2 * hidden, *dout = di + 3 * hidden;                 \
        if (gh) {                                                                            \
            LSTM_BACKWARD_LOOP(T, dhp[j] + gh[j])                                            \
        } else {                                                                             \
            LSTM_BACKWARD_LOOP(T, dhp[j])                                                    \
        }                                                                                    \
    }

DEFINE_LSTM_BACKWARD_ROW(lstm_backward_row_f, float)
DEFINE_LSTM_BACKWARD_ROW(lstm_backward_row_d, double)

static void lstm_backward_rows(const char *gate, const char *c_prev, const char *tanh_cell,
                               const char *grad_h, const char *dh, char *dc, char *dgates,
                               Py_ssize_t rows, Py_ssize_t hidden, int is_double) {
    size_t item = is_double ? sizeof(double) : sizeof(float);
    for (Py_ssize_t b = 0; b < rows; b++) {
        size_t row = (size_t)(b * hidden) * item;
        const char *grad_row = grad_h ? grad_h + row : NULL;
        if (is_double)
            lstm_backward_row_d((const double *)(gate + 4 * row), (const double *)(c_prev + row),
                                (const double *)(tanh_cell + row), (const double *)grad_row,
                                (const double *)(dh + row), (double *)(dc + row),
                                (double *)(dgates + 4 * row), hidden);
        else
            lstm_backward_row_f((const float *)(gate + 4 * row), (const float *)(c_prev + row),
                                (const float *)(tanh_cell + row), (const float *)grad_row,
                                (const float *)(dh + row), (float *)(dc + row),
                                (float *)(dgates + 4 * row), hidden);
    }
}

/* Sizes of an LSTM step's buffers: `b` holds state-sized ones (B * H items) after `gates`
 * ones (B * 4H); `rows` gets B. */
static int check_cell(Py_buffer *gates, int n_gates, Py_buffer *states, int n_states,
                      Py_ssize_t hidden, Py_ssize_t item, Py_ssize_t *rows) {
    if (hidden <= 0 || states[0].len % (hidden * item) != 0) {
        PyErr_SetString(PyExc_ValueError, "_vector: state buffers must hold rows of hidden");
        return -1;
    }
    for (int k = 0; k < n_states; k++)
        if (states[k].len != states[0].len) {
            PyErr_SetString(PyExc_ValueError, "_vector: state buffers of different sizes");
            return -1;
        }
    for (int k = 0; k < n_gates; k++)
        if (gates[k].len != 4 * states[0].len) {
            PyErr_SetString(PyExc_ValueError, "_vector: gate buffers must be 4x the state's");
            return -1;
        }
    *rows = states[0].len / (hidden * item);
    return 0;
}

static PyObject *py_lstm_cell_forward(PyObject *self, PyObject *args) {
    Py_buffer gate, st[4];  /* c_prev, cell, tanh_cell, h */
    Py_ssize_t hidden, rows;
    if (!usable()) {
        PyErr_SetString(PyExc_RuntimeError, "_vector: this CPU has no AVX2/FMA");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "w*y*w*w*w*n", &gate, &st[0], &st[1], &st[2], &st[3], &hidden))
        return NULL;
    PyObject *result = NULL;
    if (check_cell(&gate, 1, st, 4, hidden, sizeof(float), &rows) == 0) {
#if HAVE_AVX2_PATH
        float *g = gate.buf, *cell = st[1].buf, *tc = st[2].buf, *h = st[3].buf;
        const float *cp = st[0].buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t b = 0; b < rows; b++)
            lstm_forward_row(g + 4 * b * hidden, cp + b * hidden, cell + b * hidden,
                             tc + b * hidden, h + b * hidden, hidden);
        Py_END_ALLOW_THREADS
#endif
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&gate);
    for (int k = 0; k < 4; k++)
        PyBuffer_Release(&st[k]);
    return result;
}

static PyObject *py_lstm_cell_backward(PyObject *self, PyObject *args) {
    Py_buffer gb[2], st[5];  /* gate, dgates; c_prev, tanh_cell, dh, dc, grad_h */
    PyObject *grad_h_obj;
    Py_ssize_t hidden, rows;
    int is_double;
    if (!PyArg_ParseTuple(args, "y*y*y*Oy*w*w*np", &gb[0], &st[0], &st[1], &grad_h_obj, &st[2],
                          &st[3], &gb[1], &hidden, &is_double))
        return NULL;
    int has_grad = grad_h_obj != Py_None;
    PyObject *result = NULL;
    if (has_grad && PyObject_GetBuffer(grad_h_obj, &st[4], PyBUF_SIMPLE) < 0)
        goto release;
    Py_ssize_t item = is_double ? (Py_ssize_t)sizeof(double) : (Py_ssize_t)sizeof(float);
    if (check_cell(gb, 2, st, has_grad ? 5 : 4, hidden, item, &rows) == 0) {
        const char *grad_h = has_grad ? st[4].buf : NULL;
        Py_BEGIN_ALLOW_THREADS
        lstm_backward_rows(gb[0].buf, st[0].buf, st[1].buf, grad_h, st[2].buf, st[3].buf,
                           gb[1].buf, rows, hidden, is_double);
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
    if (has_grad)
        PyBuffer_Release(&st[4]);
release:
    PyBuffer_Release(&gb[0]);
    PyBuffer_Release(&gb[1]);
    for (int k = 0; k < 4; k++)
        PyBuffer_Release(&st[k]);
    return result;
}

/* ---- layer normalization over rows of D ---- */

/* Each row function is compiled twice, for AVX2 and for the baseline, the loader picking one
 * (GCC's target_clones): the element-wise loops then run 4 doubles / 8 floats at a time.
 * Reductions keep their order (no -ffast-math), so they run as four independent chains. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define ROW_KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define ROW_KERNEL
#endif

/* Per row: mean and variance in double (two passes), rstd = 1 / sqrt(var + eps);
 * out = (x - mean) * rstd, then * w and + b, each rounded in T as ember's composite formula
 * rounds them. */
#define DEFINE_LAYER_NORM_ROWS(T)                                                            \
    ROW_KERNEL static void ln_forward_rows_##T(                                              \
            const T *restrict x, const T *restrict w, const T *restrict bias,                \
            T *restrict out, double *restrict mean, double *restrict rstd, Py_ssize_t rows,  \
            Py_ssize_t d, double eps) {                                                      \
        for (Py_ssize_t r = 0; r < rows; r++) {                                              \
            const T *restrict xr = x + r * d;                                                \
            T *restrict o = out + r * d;                                                     \
            double a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                           \
            Py_ssize_t j = 0;                                                                \
            for (; j + 4 <= d; j += 4) {                                                     \
                a0 += xr[j]; a1 += xr[j + 1]; a2 += xr[j + 2]; a3 += xr[j + 3];              \
            }                                                                                \
            for (; j < d; j++) a0 += xr[j];                                                  \
            const double m = ((a0 + a1) + (a2 + a3)) / d;                                    \
            a0 = a1 = a2 = a3 = 0;                                                           \
            for (j = 0; j + 4 <= d; j += 4) {                                                \
                double c0 = xr[j] - m, c1 = xr[j + 1] - m, c2 = xr[j + 2] - m,               \
                       c3 = xr[j + 3] - m;                                                   \
                a0 += c0 * c0; a1 += c1 * c1; a2 += c2 * c2; a3 += c3 * c3;                  \
            }                                                                                \
            for (; j < d; j++) { double c = xr[j] - m; a0 += c * c; }                        \
            const double rs = 1.0 / sqrt(((a0 + a1) + (a2 + a3)) / d + eps);                 \
            mean[r] = m;                                                                     \
            rstd[r] = rs;                                                                    \
            const T mt = (T)m, rt = (T)rs;                                                   \
            for (j = 0; j < d; j++) o[j] = (xr[j] - mt) * rt;                                \
            if (w) for (j = 0; j < d; j++) o[j] = o[j] * w[j];                               \
            if (bias) for (j = 0; j < d; j++) o[j] = o[j] + bias[j];                         \
        }                                                                                    \
    }                                                                                        \
    /* Per row, xhat = (x - mean) * rstd and gh = g * w (or g), in T (scratch rows of D):    \
     *   gx = rstd * (gh - sum(gh) / D - xhat * sum(gh * xhat) / D)  (sums in double)        \
     * and over rows, into double accumulators: gw += g * xhat, gb += g. */                   \
    ROW_KERNEL static void ln_backward_rows_##T(                                             \
            const T *restrict g, const T *restrict x, const T *restrict w,                   \
            const double *restrict mean, const double *restrict rstd, T *restrict gx,        \
            double *restrict gw, double *restrict gb, T *restrict xh, T *restrict gh,        \
            Py_ssize_t rows, Py_ssize_t d) {                                                 \
        for (Py_ssize_t r = 0; r < rows; r++) {                                              \
            const T *restrict xr = x + r * d, *restrict gr = g + r * d;                      \
            const T m = (T)mean[r], rs = (T)rstd[r];                                         \
            Py_ssize_t j;                                                                    \
            for (j = 0; j < d; j++) xh[j] = (xr[j] - m) * rs;                                \
            if (w) for (j = 0; j < d; j++) gh[j] = gr[j] * w[j];                             \
            else for (j = 0; j < d; j++) gh[j] = gr[j];                                      \
            if (gw) for (j = 0; j < d; j++) gw[j] += (double)(gr[j] * xh[j]);                \
            if (gb) for (j = 0; j < d; j++) gb[j] += gr[j];                                  \
            if (!gx) continue;                                                               \
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;           \
            for (j = 0; j + 4 <= d; j += 4) {                                                \
                s0 += gh[j]; s1 += gh[j + 1]; s2 += gh[j + 2]; s3 += gh[j + 3];              \
                t0 += (double)gh[j] * xh[j]; t1 += (double)gh[j + 1] * xh[j + 1];            \
                t2 += (double)gh[j + 2] * xh[j + 2]; t3 += (double)gh[j + 3] * xh[j + 3];    \
            }                                                                                \
            for (; j < d; j++) { s0 += gh[j]; t0 += (double)gh[j] * xh[j]; }                 \
            const T a = (T)(((s0 + s1) + (s2 + s3)) / d), c = (T)(((t0 + t1) + (t2 + t3)) / d); \
            T *restrict o = gx + r * d;                                                      \
            for (j = 0; j < d; j++) o[j] = rs * (gh[j] - a - xh[j] * c);                     \
        }                                                                                    \
    }

DEFINE_LAYER_NORM_ROWS(float)
DEFINE_LAYER_NORM_ROWS(double)

/* A buffer argument that may be None: `held` says whether `view` is to be released. */
typedef struct {
    Py_buffer view;
    int held;
} Optional;

static int get_optional(PyObject *obj, Optional *o, int writable) {
    o->held = 0;
    if (obj == Py_None)
        return 0;
    if (PyObject_GetBuffer(obj, &o->view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0)
        return -1;
    o->held = 1;
    return 0;
}

static void release(Py_buffer *bufs, int n, Optional *opts, int n_opts) {
    for (int k = 0; k < n; k++)
        PyBuffer_Release(&bufs[k]);
    for (int k = 0; k < n_opts; k++)
        if (opts[k].held)
            PyBuffer_Release(&opts[k].view);
}

/* Rows of d in `x` (item bytes each) and in `same`, with one float64 mean and rstd per row;
 * `opts`: None or `lens` bytes each. -1 with a ValueError naming `fn` otherwise. */
static Py_ssize_t layer_norm_rows(const char *fn, Py_buffer *x, Py_buffer *same, Py_ssize_t d,
                                  Py_ssize_t item, Py_buffer *mean, Py_buffer *rstd,
                                  Optional *opts, const Py_ssize_t *lens, int n_opts) {
    int ok = d > 0 && x->len % (d * item) == 0 && same->len == x->len;
    for (int k = 0; ok && k < n_opts; k++)
        ok = !opts[k].held || opts[k].view.len == lens[k];
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "_vector.%s: buffer sizes", fn);
        return -1;
    }
    Py_ssize_t rows = x->len / (d * item);
    if (mean->len < rows * 8 || rstd->len < rows * 8) {
        PyErr_Format(PyExc_ValueError, "_vector.%s: one mean/rstd per row", fn);
        return -1;
    }
    return rows;
}

static PyObject *py_layer_norm_forward(PyObject *self, PyObject *args) {
    Py_buffer b[4];  /* x, out, mean, rstd */
    Optional o[2] = {{.held = 0}, {.held = 0}};  /* weight, bias */
    PyObject *w_obj, *b_obj, *result = NULL;
    Py_ssize_t d;
    double eps;
    int is_double;
    if (!PyArg_ParseTuple(args, "y*OOw*w*w*ndp", &b[0], &w_obj, &b_obj, &b[1], &b[2], &b[3], &d,
                          &eps, &is_double))
        return NULL;
    Py_ssize_t item = is_double ? 8 : 4, rows;
    Py_ssize_t lens[2] = {d * item, d * item};
    if (get_optional(w_obj, &o[0], 0) < 0 || get_optional(b_obj, &o[1], 0) < 0)
        goto done;
    rows = layer_norm_rows("layer_norm_forward", &b[0], &b[1], d, item, &b[2], &b[3], o, lens,
                           2);
    if (rows < 0)
        goto done;
    const void *w = o[0].held ? o[0].view.buf : NULL, *bias = o[1].held ? o[1].view.buf : NULL;
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        ln_forward_rows_double(b[0].buf, w, bias, b[1].buf, b[2].buf, b[3].buf, rows, d, eps);
    else
        ln_forward_rows_float(b[0].buf, w, bias, b[1].buf, b[2].buf, b[3].buf, rows, d, eps);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    release(b, 4, o, 2);
    return result;
}

static PyObject *py_layer_norm_backward(PyObject *self, PyObject *args) {
    Py_buffer b[4];  /* grad, x, mean, rstd */
    Optional o[4] = {{.held = 0}, {.held = 0}, {.held = 0}, {.held = 0}};  /* w, gx, gw, gb */
    PyObject *w_obj, *gx_obj, *gw_obj, *gb_obj, *result = NULL;
    Py_ssize_t d;
    int is_double;
    if (!PyArg_ParseTuple(args, "y*y*Oy*y*OOOnp", &b[0], &b[1], &w_obj, &b[2], &b[3], &gx_obj,
                          &gw_obj, &gb_obj, &d, &is_double))
        return NULL;
    Py_ssize_t item = is_double ? 8 : 4, rows;
    Py_ssize_t lens[4] = {d * item, b[1].len, d * 8, d * 8};
    if (get_optional(w_obj, &o[0], 0) < 0 || get_optional(gx_obj, &o[1], 1) < 0 ||
            get_optional(gw_obj, &o[2], 1) < 0 || get_optional(gb_obj, &o[3], 1) < 0)
        goto done;
    rows = layer_norm_rows("layer_norm_backward", &b[1], &b[0], d, item, &b[2], &b[3], o, lens,
                           4);
    if (rows < 0)
        goto done;
    /* two scratch rows of d items (of the dtype) */
    char *scratch = PyMem_RawMalloc(2 * (size_t)d * (size_t)item);
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    void *opt[4];
    for (int k = 0; k < 4; k++)
        opt[k] = o[k].held ? o[k].view.buf : NULL;
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        ln_backward_rows_double(b[0].buf, b[1].buf, opt[0], b[2].buf, b[3].buf, opt[1], opt[2],
                                opt[3], (double *)scratch, (double *)scratch + d, rows, d);
    else
        ln_backward_rows_float(b[0].buf, b[1].buf, opt[0], b[2].buf, b[3].buf, opt[1], opt[2],
                               opt[3], (float *)scratch, (float *)scratch + d, rows, d);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    result = Py_None;
    Py_INCREF(result);
done:
    release(b, 4, o, 4);
    return result;
}

static PyObject *py_available(PyObject *self, PyObject *unused) {
    return PyBool_FromLong(usable());
}

static PyMethodDef vector_functions[] = {
    {"available", py_available, METH_NOARGS,
     "available()\n--\n\nWhether this CPU runs the vector code (AVX2 and FMA)."},
    {"log_softmax", py_log_softmax, METH_VARARGS,
     "log_softmax(x, out, n, skipped)\n--\n\nlog_softmax of each row of n float32s of x "
     "into out; rows holding a NaN or an infinity are flagged in skipped (uint8, one per "
     "row) and left unwritten. Returns how many were."},
    {"log_softmax_backward", py_log_softmax_backward, METH_VARARGS,
     "log_softmax_backward(out, grad, res, n, skipped)\n--\n\nres = grad - exp(out) * "
     "sum(grad) per row of n float32s; rows whose out holds a NaN or an infinity are "
     "flagged in skipped and left unwritten. Returns how many were."},
    {"lstm_cell_forward", py_lstm_cell_forward, METH_VARARGS,
     "lstm_cell_forward(gate, c_prev, cell, tanh_cell, h, hidden)\n--\n\nOne LSTM step's "
     "element-wise part, float32: the (B, 4H) pre-activations made gates in place; cell, "
     "tanh(cell) and h written (B, H)."},
    {"lstm_cell_backward", py_lstm_cell_backward, METH_VARARGS,
     "lstm_cell_backward(gate, c_prev, tanh_cell, grad_h, dh, dc, dgates, hidden, "
     "is_double)\n--\n\nOne step of the LSTM's backpropagation through time: dgates "
     "(B, 4H) from dh (+ grad_h, or None) and dc; dc becomes the previous step's."},
    {"layer_norm_forward", py_layer_norm_forward, METH_VARARGS,
     "layer_norm_forward(x, w, b, out, mean, rstd, d, eps, is_double)\n--\n\nLayer "
     "normalization of each row of d (w, b: None or d values); mean and rstd (float64, one "
     "per row) written for the backward."},
    {"layer_norm_backward", py_layer_norm_backward, METH_VARARGS,
     "layer_norm_backward(g, x, w, mean, rstd, gx, gw, gb, d, is_double)\n--\n\nThe "
     "gradients of layer_norm: gx (or None) written; gw, gb (float64 accumulators of d, or "
     "None) added to."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef vector_module = {
    PyModuleDef_HEAD_INIT, "_vector",
    "log_softmax rows and LSTM cells in AVX2 vectors (see ember/backend/kernels.py).",
    -1, vector_functions, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__vector(void) {
    return PyModule_Create(&vector_module);
}
