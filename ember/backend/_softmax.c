/* ember.backend._softmax: log_softmax over the rows of a float32 matrix, and its gradient,
 * in AVX2 vectors with the GIL released (ember.backend.kernels wraps it; the thread pool
 * runs blocks of rows side by side).
 *
 * NumPy needs six passes over a row for the forward (max, subtract, exp, sum, log,
 * subtract) and four for the gradient, each a separate call writing a temporary. Here:
 *
 *   log_softmax(x, out, n, skipped)   out = (x - max) - log(sum(exp(x - max))), per row of n:
 *                                     one pass for the max, one for the sum of exponentials,
 *                                     one to write (the subtractions rounded as NumPy's)
 *   log_softmax_backward(out, grad, res, n, skipped)
 *                                     res = grad - exp(out) * sum(grad), per row: one pass
 *                                     for the sum, one to write (product, then difference)
 *
 * The exponential is a vector one: e^x = 2^k * e^r with k = round(x / ln 2) and
 * r = x - k ln 2 (ln 2 in two parts, so r is exact to a few ulp), e^r by its Taylor series to
 * degree 7 (|r| <= ln2/2: truncation below 1e-8 relative) and 2^k built in the exponent
 * bits. Row sums add blocks of 256 terms in float32 and the blocks in double precision. Results are within ~2 ulp of NumPy's exp, denormals included (so that an infinite
 * gradient sum times a tiny probability is infinite, not 0 * inf = NaN, as in NumPy).
 *
 * A row holding a NaN or an infinity (input of the forward; log-probabilities of the
 * gradient) is left to the caller's NumPy code: its entry in `skipped` (uint8, one per row)
 * is set to 1, the row's output is not written. Rows are independent, so the result does not
 * depend on how the rows are shared out. Without AVX2 and FMA (checked at run time) nothing
 * is computed: `available()` is False and the caller keeps NumPy.
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
        PyErr_SetString(PyExc_ValueError, "_softmax: buffers must hold whole rows of n floats");
        return -1;
    }
    for (int i = 1; i < count; i++)
        if (bufs[i].len != bufs[0].len) {
            PyErr_SetString(PyExc_ValueError, "_softmax: buffers of different sizes");
            return -1;
        }
    *rows = bufs[0].len / ((Py_ssize_t)sizeof(float) * n);
    if (skipped->len < *rows) {
        PyErr_SetString(PyExc_ValueError, "_softmax: one skip flag per row needed");
        return -1;
    }
    return 0;
}

static PyObject *py_log_softmax(PyObject *self, PyObject *args) {
    Py_buffer b[2], skipped;
    Py_ssize_t n, rows, left = 0;
    if (!usable()) {
        PyErr_SetString(PyExc_RuntimeError, "_softmax: this CPU has no AVX2/FMA");
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
        PyErr_SetString(PyExc_RuntimeError, "_softmax: this CPU has no AVX2/FMA");
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

static PyObject *py_available(PyObject *self, PyObject *unused) {
    return PyBool_FromLong(usable());
}

static PyMethodDef softmax_functions[] = {
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
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef softmax_module = {
    PyModuleDef_HEAD_INIT, "_softmax",
    "log_softmax rows and their gradient in AVX2 vectors (see ember/backend/kernels.py).",
    -1, softmax_functions, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__softmax(void) {
    return PyModule_Create(&softmax_module);
}
