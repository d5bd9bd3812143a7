/* ember.backend._kernels: loops NumPy can only run as many small strided calls.
 *
 * im2col and col2im of a 2-D convolution (1-D runs as height 1) and ReLU forward/backward,
 * on C-contiguous buffers, with the GIL released so that the thread pool's workers run them
 * side by side. NumPy's version of im2col is one copy out of a strided window view whose
 * innermost run is a few channels (channels-last) or a strided row (channels-first): tens of
 * thousands of inner loops of 8-30 elements for a small CNN batch, 3-5x slower than this
 * direct loop. col2im adds each kernel offset's slab in turn, as the NumPy path does (the
 * same additions in the same order: the same bits). ReLU's backward is one pass here, three
 * in NumPy (compare, negate, select).
 *
 * The layouts are described by element strides, so one loop serves the channels-last
 * columns (G, N*P, K*Cg) and the channels-first ones (N, G, Cg*K, P):
 *
 *   im2col(src, dst, itemsize, dims, strides)   dst[g,n,p,k,c] = x[n, g*Cg+c, y, x] or 0
 *   col2im(cols, dst, is_double, dims, strides) dst = sum of the terms cols[g,n,p,k,c] at
 *                                               [n, g*Cg+c, y, x] (offsets in order)
 *   relu(src, dst, is_double)                   dst = src < 0 ? 0 : src
 *   relu_backward(grad, out, dst, is_double)    dst = out <= 0 ? 0 : grad
 *   sub_scaled(dst, src, alpha, is_double)       dst -= (T)alpha * src, in place
 *   sgd_momentum(p, g, buf, lr, m, is_double)    buf = buf * m + g; p -= lr * buf, in place
 *   maxpool2_forward(x, vals, code, is_double, dims) 2x2 stride-2 max pooling, NaN flag
 *   maxpool2_backward(g, code, gx, is_double, dims) gradient of 2x2 stride-2 max pooling
 *   add_rows(out, index, rows, is_double)       out[index[i]] += rows[i] for i in order
 *                                               (np.add.at's additions and order: its bits)
 *   spmm_rows(out, rows, cols, vals, dense, width, is_double)
 *                                               out[rows[i]] += vals[i] * dense[cols[i]]
 *   bag_max_rows(weight, entries, starts, counts, best, rows, width, is_double)
 *                                               per bag and column, the first max's row
 *
 * dims = (N, C, H, W, G, KH, KW, OH, OW, SH, SW, DH, DW, PH, PW); strides = (g, n, p, k, c)
 * in elements of dst (im2col) or cols (col2im), k = kh * KW + kw. The caller (ember/_ops/conv.py)
 * checks shapes, dtypes and contiguity; these functions check only that the buffers are
 * large enough for the loops they will run.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_ssize_t n, c, h, w, g, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw;
} Geom;

typedef struct {
    Py_ssize_t g, n, p, k, c;
} Strides;

static int parse_geom(PyObject *dims, PyObject *strides, Geom *gm, Strides *st) {
    if (!PyArg_ParseTuple(dims, "nnnnnnnnnnnnnnn", &gm->n, &gm->c, &gm->h, &gm->w, &gm->g,
                          &gm->kh, &gm->kw, &gm->oh, &gm->ow, &gm->sh, &gm->sw, &gm->dh,
                          &gm->dw, &gm->ph, &gm->pw))
        return -1;
    if (!PyArg_ParseTuple(strides, "nnnnn", &st->g, &st->n, &st->p, &st->k, &st->c))
        return -1;
    if (gm->g <= 0 || gm->c % gm->g != 0) {
        PyErr_SetString(PyExc_ValueError, "_kernels: channels must divide into groups");
        return -1;
    }
    return 0;
}

/* The largest element index a strided layout reaches, plus one. */
static Py_ssize_t extent(const Geom *gm, const Strides *st) {
    Py_ssize_t cg = gm->c / gm->g;
    if (gm->n == 0 || cg == 0 || gm->oh * gm->ow == 0 || gm->kh * gm->kw == 0)
        return 0;
    return 1 + (gm->g - 1) * st->g + (gm->n - 1) * st->n + (gm->oh * gm->ow - 1) * st->p
             + (gm->kh * gm->kw - 1) * st->k + (cg - 1) * st->c;
}

#define IM2COL_LOOP(T)                                                                       \
    do {                                                                                     \
        const T *x = (const T *)src_buf.buf;                                                 \
        T *d = (T *)dst_buf.buf;                                                             \
        for (Py_ssize_t g = 0; g < gm.g; g++)                                                \
        for (Py_ssize_t n = 0; n < gm.n; n++) {                                              \
            if (st.c == 1) { /* channels innermost: positions, offsets, channels */          \
                for (Py_ssize_t oy = 0; oy < gm.oh; oy++)                                    \
                for (Py_ssize_t ox = 0; ox < gm.ow; ox++)                                    \
                for (Py_ssize_t ky = 0; ky < gm.kh; ky++)                                    \
                for (Py_ssize_t kx = 0; kx < gm.kw; kx++) {                                  \
                    Py_ssize_t y = oy * gm.sh - gm.ph + ky * gm.dh;                          \
                    Py_ssize_t xx = ox * gm.sw - gm.pw + kx * gm.dw;                         \
                    T *o = d + g * st.g + n * st.n + (oy * gm.ow + ox) * st.p                \
                           + (ky * gm.kw + kx) * st.k;                                       \
                    if (y < 0 || y >= gm.h || xx < 0 || xx >= gm.w) {                        \
                        for (Py_ssize_t c = 0; c < cg; c++) o[c] = 0;                        \
                        continue;                                                            \
                    }                                                                        \
                    const T *s = x + ((n * gm.c + g * cg) * gm.h + y) * gm.w + xx;           \
                    for (Py_ssize_t c = 0; c < cg; c++) o[c] = s[c * hw];                    \
                }                                                                            \
            } else { /* positions innermost: channels, offsets, rows, columns */             \
                for (Py_ssize_t c = 0; c < cg; c++)                                          \
                for (Py_ssize_t ky = 0; ky < gm.kh; ky++)                                    \
                for (Py_ssize_t kx = 0; kx < gm.kw; kx++)                                    \
                for (Py_ssize_t oy = 0; oy < gm.oh; oy++) {                                  \
                    Py_ssize_t y = oy * gm.sh - gm.ph + ky * gm.dh;                          \
                    T *o = d + g * st.g + n * st.n + oy * gm.ow * st.p                       \
                           + (ky * gm.kw + kx) * st.k + c * st.c;                            \
                    if (y < 0 || y >= gm.h) {                                                \
                        for (Py_ssize_t ox = 0; ox < gm.ow; ox++) o[ox * st.p] = 0;          \
                        continue;                                                            \
                    }                                                                        \
                    const T *s = x + ((n * gm.c + g * cg + c) * gm.h + y) * gm.w;            \
                    for (Py_ssize_t ox = 0; ox < gm.ow; ox++) {                              \
                        Py_ssize_t xx = ox * gm.sw - gm.pw + kx * gm.dw;                     \
                        o[ox * st.p] = (xx < 0 || xx >= gm.w) ? (T)0 : s[xx];                \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)

static PyObject *im2col(PyObject *self, PyObject *args) {
    Py_buffer src_buf, dst_buf;
    int itemsize;
    PyObject *dims, *strides;
    Geom gm;
    Strides st;
    if (!PyArg_ParseTuple(args, "y*w*iO!O!", &src_buf, &dst_buf, &itemsize, &PyTuple_Type,
                          &dims, &PyTuple_Type, &strides))
        return NULL;
    PyObject *result = NULL;
    if (parse_geom(dims, strides, &gm, &st) < 0)
        goto done;
    Py_ssize_t cg = gm.c / gm.g, hw = gm.h * gm.w;
    if ((itemsize != 2 && itemsize != 4 && itemsize != 8)
            || src_buf.len < gm.n * gm.c * hw * itemsize
            || dst_buf.len < extent(&gm, &st) * itemsize) {
        PyErr_SetString(PyExc_ValueError, "_kernels.im2col: buffer too small for the geometry");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (itemsize == 4)  /* a copy: moved as bits, whatever the floating type */
        IM2COL_LOOP(uint32_t);
    else if (itemsize == 8)
        IM2COL_LOOP(uint64_t);
    else
        IM2COL_LOOP(uint16_t);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&src_buf);
    PyBuffer_Release(&dst_buf);
    return result;
}

/* Every input element receives its kernel offsets' terms in order 0, 1, ..., K-1 -- the
 * order of the NumPy path's slab additions, so the sums are the same bits.
 * Channels innermost in the columns (st.c == 1): per sample, the terms are added as runs of
 * channels into a channels-last scratch image, then transposed into dst. Otherwise
 * (positions innermost) they are added along rows straight into dst. */
#define COL2IM_LOOP(T)                                                                       \
    do {                                                                                     \
        const T *cols = (const T *)cols_buf.buf;                                             \
        T *dx = (T *)dst_buf.buf;                                                            \
        if (st.c != 1) {                                                                     \
            memset(dx, 0, (size_t)(gm.n * gm.c * hw) * sizeof(T));                           \
            for (Py_ssize_t ky = 0; ky < gm.kh; ky++)                                        \
            for (Py_ssize_t kx = 0; kx < gm.kw; kx++)                                        \
            for (Py_ssize_t n = 0; n < gm.n; n++)                                            \
            for (Py_ssize_t g = 0; g < gm.g; g++)                                            \
            for (Py_ssize_t c = 0; c < cg; c++)                                              \
            for (Py_ssize_t oy = 0; oy < gm.oh; oy++) {                                      \
                Py_ssize_t y = oy * gm.sh - gm.ph + ky * gm.dh;                              \
                if (y < 0 || y >= gm.h)                                                      \
                    continue;                                                                \
                const T *row = cols + g * st.g + n * st.n + oy * gm.ow * st.p                \
                               + (ky * gm.kw + kx) * st.k + c * st.c;                        \
                T *out = dx + ((n * gm.c + g * cg + c) * gm.h + y) * gm.w;                   \
                for (Py_ssize_t ox = 0; ox < gm.ow; ox++) {                                  \
                    Py_ssize_t xx = ox * gm.sw - gm.pw + kx * gm.dw;                         \
                    if (xx >= 0 && xx < gm.w)                                                \
                        out[xx] += row[ox * st.p];                                           \
                }                                                                            \
            }                                                                                \
            break;                                                                           \
        }                                                                                    \
        T *img = (T *)scratch;                                                               \
        for (Py_ssize_t n = 0; n < gm.n; n++) {                                              \
            memset(img, 0, (size_t)(gm.c * hw) * sizeof(T));                                 \
            for (Py_ssize_t ky = 0; ky < gm.kh; ky++)                                        \
            for (Py_ssize_t kx = 0; kx < gm.kw; kx++)                                        \
            for (Py_ssize_t g = 0; g < gm.g; g++)                                            \
            for (Py_ssize_t oy = 0; oy < gm.oh; oy++) {                                      \
                Py_ssize_t y = oy * gm.sh - gm.ph + ky * gm.dh;                              \
                if (y < 0 || y >= gm.h)                                                      \
                    continue;                                                                \
                const T *row = cols + g * st.g + n * st.n + oy * gm.ow * st.p                \
                               + (ky * gm.kw + kx) * st.k;                                   \
                T *out = img + y * gm.w * gm.c + g * cg;                                     \
                for (Py_ssize_t ox = 0; ox < gm.ow; ox++) {                                  \
                    Py_ssize_t xx = ox * gm.sw - gm.pw + kx * gm.dw;                         \
                    if (xx < 0 || xx >= gm.w)                                                \
                        continue;                                                            \
                    const T *s = row + ox * st.p;                                            \
                    T *o = out + xx * gm.c;                                                  \
                    for (Py_ssize_t c = 0; c < cg; c++)                                      \
                        o[c] += s[c];                                                        \
                }                                                                            \
            }                                                                                \
            T *dn = dx + n * gm.c * hw;                                                      \
            for (Py_ssize_t i = 0; i < hw; i++)                                              \
                for (Py_ssize_t c = 0; c < gm.c; c++)                                        \
                    dn[c * hw + i] = img[i * gm.c + c];                                      \
        }                                                                                    \
    } while (0)

static PyObject *col2im(PyObject *self, PyObject *args) {
    Py_buffer cols_buf, dst_buf;
    int is_double;
    PyObject *dims, *strides;
    Geom gm;
    Strides st;
    if (!PyArg_ParseTuple(args, "y*w*pO!O!", &cols_buf, &dst_buf, &is_double, &PyTuple_Type,
                          &dims, &PyTuple_Type, &strides))
        return NULL;
    PyObject *result = NULL;
    if (parse_geom(dims, strides, &gm, &st) < 0)
        goto done;
    Py_ssize_t cg = gm.c / gm.g, hw = gm.h * gm.w;
    Py_ssize_t size = is_double ? 8 : 4;
    if (cols_buf.len < extent(&gm, &st) * size || dst_buf.len < gm.n * gm.c * hw * size) {
        PyErr_SetString(PyExc_ValueError, "_kernels.col2im: buffer too small for the geometry");
        goto done;
    }
    void *scratch = NULL;
    if (st.c == 1 && (scratch = PyMem_RawMalloc((size_t)(gm.c * hw) * size + 1)) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        COL2IM_LOOP(double);
    else
        COL2IM_LOOP(float);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&cols_buf);
    PyBuffer_Release(&dst_buf);
    return result;
}

#define RELU_LOOP(T)                                                                         \
    do {                                                                                     \
        const T *s = (const T *)src_buf.buf;                                                 \
        T *d = (T *)dst_buf.buf;                                                             \
        for (Py_ssize_t i = 0; i < count; i++)                                               \
            d[i] = s[i] < 0 ? (T)0 : s[i];                                                   \
    } while (0)

static PyObject *relu(PyObject *self, PyObject *args) {
    Py_buffer src_buf, dst_buf;
    int is_double;
    if (!PyArg_ParseTuple(args, "y*w*p", &src_buf, &dst_buf, &is_double))
        return NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    Py_ssize_t count = src_buf.len / size;
    PyObject *result = NULL;
    if (dst_buf.len < src_buf.len) {
        PyErr_SetString(PyExc_ValueError, "_kernels.relu: output buffer too small");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        RELU_LOOP(double);
    else
        RELU_LOOP(float);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&src_buf);
    PyBuffer_Release(&dst_buf);
    return result;
}

/* out <= 0 ? +0 : grad: a NaN output passes its gradient, an inf or NaN gradient where the
 * output is <= 0 gives 0 (PyTorch's threshold_backward). */
#define RELU_BACKWARD_LOOP(T)                                                                \
    do {                                                                                     \
        const T *g = (const T *)grad_buf.buf;                                                \
        const T *o = (const T *)out_buf.buf;                                                 \
        T *d = (T *)dst_buf.buf;                                                             \
        for (Py_ssize_t i = 0; i < count; i++) {                                             \
            T gi = g[i]; /* read unconditionally: the select then vectorizes */              \
            d[i] = o[i] <= 0 ? (T)0 : gi;                                                    \
        }                                                                                    \
    } while (0)

static PyObject *relu_backward(PyObject *self, PyObject *args) {
    Py_buffer grad_buf, out_buf, dst_buf;
    int is_double;
    if (!PyArg_ParseTuple(args, "y*y*w*p", &grad_buf, &out_buf, &dst_buf, &is_double))
        return NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    Py_ssize_t count = grad_buf.len / size;
    PyObject *result = NULL;
    if (out_buf.len < grad_buf.len || dst_buf.len < grad_buf.len) {
        PyErr_SetString(PyExc_ValueError, "_kernels.relu_backward: buffers of unequal sizes");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        RELU_BACKWARD_LOOP(double);
    else
        RELU_BACKWARD_LOOP(float);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&grad_buf);
    PyBuffer_Release(&out_buf);
    PyBuffer_Release(&dst_buf);
    return result;
}

/* dst[i] = dst[i] - (T)alpha * src[i]: NumPy's ``dst -= alpha * src`` for a Python float alpha
 * (a weak scalar: cast to the arrays' type first), element by element in one pass and with no
 * temporary; the product is rounded before the subtraction (no fused multiply-add: setup.py
 * builds with -ffp-contract=off), so the bits are NumPy's. */
#define SUB_SCALED_LOOP(T)                                                                   \
    do {                                                                                     \
        T *d = (T *)dst_buf.buf;                                                             \
        const T *x = (const T *)src_buf.buf;                                                 \
        const T a = (T)alpha;                                                                \
        for (Py_ssize_t i = 0; i < count; i++) {                                             \
            T scaled = a * x[i];                                                             \
            d[i] = d[i] - scaled;                                                            \
        }                                                                                    \
    } while (0)

static PyObject *sub_scaled(PyObject *self, PyObject *args) {
    Py_buffer dst_buf, src_buf;
    double alpha;
    int is_double;
    if (!PyArg_ParseTuple(args, "w*y*dp", &dst_buf, &src_buf, &alpha, &is_double))
        return NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    Py_ssize_t count = dst_buf.len / size;
    PyObject *result = NULL;
    if (src_buf.len != dst_buf.len) {
        PyErr_SetString(PyExc_ValueError, "_kernels.sub_scaled: buffers of unequal sizes");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        SUB_SCALED_LOOP(double);
    else
        SUB_SCALED_LOOP(float);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&dst_buf);
    PyBuffer_Release(&src_buf);
    return result;
}

/* SGD with momentum (no dampening, not Nesterov), one pass: b = b * (T)momentum; b = b + g;
 * p = p - (T)lr * b -- NumPy's ``b *= momentum; b += g; p -= lr * b`` element by element, each
 * product rounded before its sum as there (no fused multiply-add), so the bits are NumPy's;
 * one read of p, g, b and one write of p, b instead of three passes. */
#define SGD_MOMENTUM_LOOP(T)                                                                 \
    do {                                                                                     \
        T *pp = (T *)p_buf.buf;                                                              \
        const T *g = (const T *)g_buf.buf;                                                   \
        T *b = (T *)b_buf.buf;                                                               \
        const T m = (T)momentum, a = (T)lr;                                                  \
        for (Py_ssize_t i = 0; i < count; i++) {                                             \
            T kept = b[i] * m;                                                               \
            T v = kept + g[i];                                                               \
            b[i] = v;                                                                        \
            T scaled = a * v;                                                                \
            pp[i] = pp[i] - scaled;                                                          \
        }                                                                                    \
    } while (0)

static PyObject *sgd_momentum(PyObject *self, PyObject *args) {
    Py_buffer p_buf, g_buf, b_buf;
    double lr, momentum;
    int is_double;
    if (!PyArg_ParseTuple(args, "w*y*w*ddp", &p_buf, &g_buf, &b_buf, &lr, &momentum,
                          &is_double))
        return NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    Py_ssize_t count = p_buf.len / size;
    PyObject *result = NULL;
    if (g_buf.len != p_buf.len || b_buf.len != p_buf.len) {
        PyErr_SetString(PyExc_ValueError, "_kernels.sgd_momentum: buffers of unequal sizes");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        SGD_MOMENTUM_LOOP(double);
    else
        SGD_MOMENTUM_LOOP(float);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&p_buf);
    PyBuffer_Release(&g_buf);
    PyBuffer_Release(&b_buf);
    return result;
}

/* The gradient of 2x2 stride-2 max pooling (the NumPy path's tiled_max made the uint8 codes,
 * 2 * ky + kx of each window's first maximum): each 2x2 window of gx = g * (offset == code),
 * as the NumPy path's multiply by the comparison (a product with 1 or 0 from a table: no
 * branch, and a non-finite g gives NaN at the other offsets, as there). 2x faster than the
 * NumPy path's four strided passes; the uncovered tail of gx is left as it is. */
#define MAXPOOL2_GRAD_LOOP(T)                                                                \
    do {                                                                                     \
        static const T tab[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}; \
        const T *g = (const T *)g_buf.buf;                                                   \
        const uint8_t *code = (const uint8_t *)c_buf.buf;                                    \
        T *gx = (T *)x_buf.buf;                                                              \
        for (Py_ssize_t p = 0; p < P; p++)                                                   \
        for (Py_ssize_t oy = 0; oy < OH; oy++) {                                             \
            const T *restrict go = g + (p * OH + oy) * OW;                                   \
            const uint8_t *restrict co = code + (p * OH + oy) * OW;                          \
            T *restrict r0 = gx + (p * H + 2 * oy) * W;                                      \
            T *restrict r1 = r0 + W;                                                         \
            for (Py_ssize_t ox = 0; ox < OW; ox++) {                                         \
                T gv = go[ox];                                                               \
                const T *t = tab[co[ox] & 3];                                                \
                r0[2 * ox] = gv * t[0];                                                      \
                r0[2 * ox + 1] = gv * t[1];                                                  \
                r1[2 * ox] = gv * t[2];                                                      \
                r1[2 * ox + 1] = gv * t[3];                                                  \
            }                                                                                \
        }                                                                                    \
    } while (0)

/* Whether buffers of in_len, out_len (values) and code_len bytes hold P planes of H x W
 * inputs and OH x OW outputs of 2x2 pooling; else sets a ValueError naming the kernel. */
static int pool2_fits(Py_ssize_t P, Py_ssize_t H, Py_ssize_t W, Py_ssize_t OH, Py_ssize_t OW,
                      Py_ssize_t in_len, Py_ssize_t out_len, Py_ssize_t code_len,
                      Py_ssize_t size, const char *name) {
    if (P < 0 || OH < 0 || OW < 0 || 2 * OH > H || 2 * OW > W || in_len < P * H * W * size
            || out_len < P * OH * OW * size || code_len < P * OH * OW) {
        PyErr_Format(PyExc_ValueError, "_kernels.%s: bad geometry", name);
        return 0;
    }
    return 1;
}

static PyObject *maxpool2_backward(PyObject *self, PyObject *args) {
    Py_buffer g_buf, c_buf, x_buf;
    int is_double;
    Py_ssize_t P, H, W, OH, OW;
    if (!PyArg_ParseTuple(args, "y*y*w*p(nnnnn)", &g_buf, &c_buf, &x_buf, &is_double, &P, &H,
                          &W, &OH, &OW))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    if (!pool2_fits(P, H, W, OH, OW, x_buf.len, g_buf.len, c_buf.len, size,
                    "maxpool2_backward"))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        MAXPOOL2_GRAD_LOOP(double);
    else
        MAXPOOL2_GRAD_LOOP(float);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&g_buf);
    PyBuffer_Release(&c_buf);
    PyBuffer_Release(&x_buf);
    return result;
}

/* 2x2 stride-2 max pooling: vals = each window's maximum, code = 2 * ky + kx of its first
 * maximum, as the NumPy path's running maximum over the offsets in order (v = maximum(v, s),
 * code = s > v ? j : code; np.maximum returns its second operand on a tie, so a -0/+0 tie
 * takes the later offset's zero there and here). A NaN anywhere only sets the returned flag:
 * the caller then takes the general path, which picks the NaN's own index. The NumPy path
 * makes a transposed copy and runs 9 passes over it; this is one pass (5x faster). With SSE2
 * four windows at a time: two rows of eight floats split into even and odd columns. */
#define MAXPOOL2_STEP(v, k, s, j)                                                             \
    do {                                                                                     \
        if ((s) > (v)) (k) = (j);                                                            \
        (v) = (v) > (s) ? (v) : (s);                                                         \
    } while (0)

/* Windows from..OW-1 of one output row (r0, r1: its two input rows); returns "saw a NaN". */
#define MAXPOOL2_ROW_TAIL(T)                                                                 \
    do {                                                                                     \
        for (Py_ssize_t ox = from; ox < OW; ox++) {                                          \
            T a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];        \
            nan |= (a != a) | (b != b) | (c != c) | (d != d);                                \
            T v = a;                                                                         \
            uint8_t k = 0;                                                                   \
            MAXPOOL2_STEP(v, k, b, 1);                                                       \
            MAXPOOL2_STEP(v, k, c, 2);                                                       \
            MAXPOOL2_STEP(v, k, d, 3);                                                       \
            vo[ox] = v;                                                                      \
            co[ox] = k;                                                                      \
        }                                                                                    \
    } while (0)

#if defined(__SSE2__)
#include <emmintrin.h>
static inline __m128i maxpool2_select(__m128i code, __m128 gt, int j) {
    __m128i m = _mm_castps_si128(gt);
    return _mm_or_si128(_mm_andnot_si128(m, code), _mm_and_si128(m, _mm_set1_epi32(j)));
}
#endif

static int maxpool2_row_float(const float *restrict r0, const float *restrict r1,
                              float *restrict vo, uint8_t *restrict co, Py_ssize_t OW) {
    int nan = 0;
    Py_ssize_t from = 0;
#if defined(__SSE2__)
    __m128 nanv = _mm_setzero_ps();
    for (Py_ssize_t ox = 0; ox < OW && OW >= 4; ox += 4) {
        /* the last block overlaps the one before rather than leave a tail: the same
         * windows' results written twice */
        const Py_ssize_t at = ox + 4 <= OW ? ox : OW - 4;
        const float *p0 = r0 + 2 * at, *p1 = r1 + 2 * at;
        __m128 lo0 = _mm_loadu_ps(p0), hi0 = _mm_loadu_ps(p0 + 4);
        __m128 lo1 = _mm_loadu_ps(p1), hi1 = _mm_loadu_ps(p1 + 4);
        __m128 a = _mm_shuffle_ps(lo0, hi0, _MM_SHUFFLE(2, 0, 2, 0));
        __m128 b = _mm_shuffle_ps(lo0, hi0, _MM_SHUFFLE(3, 1, 3, 1));
        __m128 c = _mm_shuffle_ps(lo1, hi1, _MM_SHUFFLE(2, 0, 2, 0));
        __m128 d = _mm_shuffle_ps(lo1, hi1, _MM_SHUFFLE(3, 1, 3, 1));
        nanv = _mm_or_ps(nanv, _mm_or_ps(_mm_cmpunord_ps(a, b), _mm_cmpunord_ps(c, d)));
        /* _mm_max_ps(v, s) returns s on a tie, as np.maximum(v, s) does */
        __m128 v = a;
        __m128i k = _mm_setzero_si128();
        k = maxpool2_select(k, _mm_cmpgt_ps(b, v), 1);
        v = _mm_max_ps(v, b);
        k = maxpool2_select(k, _mm_cmpgt_ps(c, v), 2);
        v = _mm_max_ps(v, c);
        k = maxpool2_select(k, _mm_cmpgt_ps(d, v), 3);
        v = _mm_max_ps(v, d);
        _mm_storeu_ps(vo + at, v);
        __m128i k16 = _mm_packs_epi32(k, k);
        int32_t k8 = _mm_cvtsi128_si32(_mm_packus_epi16(k16, k16));
        memcpy(co + at, &k8, 4);
    }
    nan = _mm_movemask_ps(nanv) != 0;
    if (OW >= 4)
        return nan;
#endif
    MAXPOOL2_ROW_TAIL(float);
    return nan;
}

static int maxpool2_row_double(const double *restrict r0, const double *restrict r1,
                               double *restrict vo, uint8_t *restrict co, Py_ssize_t OW) {
    int nan = 0;
    Py_ssize_t from = 0;
    MAXPOOL2_ROW_TAIL(double);
    return nan;
}

#define MAXPOOL2_LOOP(T)                                                                     \
    do {                                                                                     \
        const T *x = (const T *)x_buf.buf;                                                   \
        T *vals = (T *)v_buf.buf;                                                            \
        uint8_t *code = (uint8_t *)c_buf.buf;                                                \
        for (Py_ssize_t p = 0; p < P; p++)                                                   \
        for (Py_ssize_t oy = 0; oy < OH; oy++) {                                             \
            const T *r0 = x + (p * H + 2 * oy) * W;                                          \
            nan |= maxpool2_row_##T(r0, r0 + W, vals + (p * OH + oy) * OW,                   \
                                    code + (p * OH + oy) * OW, OW);                          \
        }                                                                                    \
    } while (0)

static PyObject *maxpool2_forward(PyObject *self, PyObject *args) {
    Py_buffer x_buf, v_buf, c_buf;
    int is_double, nan = 0;
    Py_ssize_t P, H, W, OH, OW;
    if (!PyArg_ParseTuple(args, "y*w*w*p(nnnnn)", &x_buf, &v_buf, &c_buf, &is_double, &P, &H,
                          &W, &OH, &OW))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    if (!pool2_fits(P, H, W, OH, OW, x_buf.len, v_buf.len, c_buf.len, size,
                    "maxpool2_forward"))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        MAXPOOL2_LOOP(double);
    else
        MAXPOOL2_LOOP(float);
    Py_END_ALLOW_THREADS
    result = PyBool_FromLong(nan);
done:
    PyBuffer_Release(&x_buf);
    PyBuffer_Release(&v_buf);
    PyBuffer_Release(&c_buf);
    return result;
}

/* out[index[i], :] += rows[i, :] for i = 0, 1, ... in order: the additions np.add.at makes,
 * in its order (so its bits), without its per-element dispatch. index is int64; a value
 * outside [0, rows of out) stops the loop with an IndexError (the callers check first). */
#define ADD_ROWS_LOOP(T)                                                                     \
    do {                                                                                     \
        T *o = (T *)out_buf.buf;                                                             \
        const T *r = (const T *)rows_buf.buf;                                                \
        for (Py_ssize_t i = 0; i < count; i++) {                                             \
            int64_t t = idx[i];                                                              \
            if (t < 0 || t >= targets) { bad = i; break; }                                   \
            T *dst = o + t * width;                                                          \
            const T *src = r + i * width;                                                    \
            for (Py_ssize_t c = 0; c < width; c++) dst[c] = dst[c] + src[c];                 \
        }                                                                                    \
    } while (0)

static PyObject *add_rows(PyObject *self, PyObject *args) {
    Py_buffer out_buf, index_buf, rows_buf;
    int is_double;
    if (!PyArg_ParseTuple(args, "w*y*y*p", &out_buf, &index_buf, &rows_buf, &is_double))
        return NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    Py_ssize_t count = index_buf.len / 8;
    Py_ssize_t width = count ? rows_buf.len / size / count : 0;
    Py_ssize_t targets = width ? out_buf.len / size / width : 0;
    const int64_t *idx = (const int64_t *)index_buf.buf;
    Py_ssize_t bad = -1;
    PyObject *result = NULL;
    if (count && (rows_buf.len != count * width * size || out_buf.len != targets * width * size)) {
        PyErr_SetString(PyExc_ValueError, "_kernels.add_rows: buffers of mismatched sizes");
        goto done;
    }
    if (width) {
        Py_BEGIN_ALLOW_THREADS
        if (is_double)
            ADD_ROWS_LOOP(double);
        else
            ADD_ROWS_LOOP(float);
        Py_END_ALLOW_THREADS
    }
    if (bad >= 0) {
        PyErr_Format(PyExc_IndexError, "_kernels.add_rows: index %lld out of range",
                     (long long)idx[bad]);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&out_buf);
    PyBuffer_Release(&index_buf);
    PyBuffer_Release(&rows_buf);
    return result;
}

/* out[rows[i], :] += vals[i] * dense[cols[i], :] for i = 0, 1, ... in order: a sparse (COO)
 * matrix times a dense one, without the (nnz, F) products laid out. Indices are int64; one
 * outside out's or dense's rows stops the loop with an IndexError. */
#define SPMM_ROWS_LOOP(T)                                                                    \
    do {                                                                                     \
        T *o = (T *)out_buf.buf;                                                             \
        const T *d = (const T *)dense_buf.buf;                                               \
        const T *v = (const T *)vals_buf.buf;                                                \
        for (Py_ssize_t i = 0; i < count; i++) {                                             \
            int64_t r = ri[i], c = ci[i];                                                    \
            if (r < 0 || r >= out_rows || c < 0 || c >= dense_rows) { bad = i; break; }      \
            T *dst = o + r * width;                                                          \
            const T *src = d + c * width;                                                    \
            const T a = v[i];                                                                \
            for (Py_ssize_t k = 0; k < width; k++) dst[k] = dst[k] + a * src[k];             \
        }                                                                                    \
    } while (0)

static PyObject *spmm_rows(PyObject *self, PyObject *args) {
    Py_buffer out_buf, rows_buf, cols_buf, vals_buf, dense_buf;
    int is_double;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "w*y*y*y*y*np", &out_buf, &rows_buf, &cols_buf, &vals_buf,
                          &dense_buf, &width, &is_double))
        return NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    Py_ssize_t count = rows_buf.len / 8;
    Py_ssize_t out_rows = width ? out_buf.len / size / width : 0;
    Py_ssize_t dense_rows = width ? dense_buf.len / size / width : 0;
    const int64_t *ri = (const int64_t *)rows_buf.buf, *ci = (const int64_t *)cols_buf.buf;
    Py_ssize_t bad = -1;
    PyObject *result = NULL;
    if (width < 0 || cols_buf.len != rows_buf.len || vals_buf.len != count * size ||
            out_buf.len != out_rows * width * size || dense_buf.len != dense_rows * width * size) {
        PyErr_SetString(PyExc_ValueError, "_kernels.spmm_rows: buffers of mismatched sizes");
        goto done;
    }
    if (width && count) {
        Py_BEGIN_ALLOW_THREADS
        if (is_double)
            SPMM_ROWS_LOOP(double);
        else
            SPMM_ROWS_LOOP(float);
        Py_END_ALLOW_THREADS
    }
    if (bad >= 0) {
        PyErr_Format(PyExc_IndexError, "_kernels.spmm_rows: index pair (%lld, %lld) out of "
                     "range", (long long)ri[bad], (long long)ci[bad]);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&out_buf);
    PyBuffer_Release(&rows_buf);
    PyBuffer_Release(&cols_buf);
    PyBuffer_Release(&vals_buf);
    PyBuffer_Release(&dense_buf);
    return result;
}

/* Per bag b (entries starts[b] .. starts[b] + counts[b] - 1 of entries) and column c, the
 * weight row holding the bag's first maximum: a running maximum that replaces only on ">",
 * so the first of equal values wins, a NaN later in a bag is passed over and a NaN opening
 * it stays (ATen's embedding_bag max). best (bags, D) receives the maxima, rows (bags, D)
 * the rows; empty bags are left as they are. Entries are checked against weight's rows. */
#define BAG_MAX_LOOP(T)                                                                      \
    do {                                                                                     \
        const T *w = (const T *)w_buf.buf;                                                   \
        T *best = (T *)best_buf.buf;                                                         \
        int64_t *out = (int64_t *)rows_buf.buf;                                              \
        for (Py_ssize_t b = 0; b < bags && bad < 0; b++) {                                   \
            int64_t s = st[b], n = ct[b];                                                    \
            if (n <= 0) continue;                                                            \
            if (s < 0 || s + n > count) { bad = b; break; }                                  \
            T *mx = best + b * width;                                                        \
            int64_t *arg = out + b * width;                                                  \
            for (int64_t i = s; i < s + n; i++) {                                            \
                int64_t r = ent[i];                                                          \
                if (r < 0 || r >= targets) { bad = b; break; }                               \
                const T *row = w + r * width;                                                \
                if (i == s) {                                                                \
                    for (Py_ssize_t c = 0; c < width; c++) { mx[c] = row[c]; arg[c] = r; }   \
                } else {                                                                     \
                    for (Py_ssize_t c = 0; c < width; c++)                                   \
                        if (row[c] > mx[c]) { mx[c] = row[c]; arg[c] = r; }                  \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)

static PyObject *bag_max_rows(PyObject *self, PyObject *args) {
    Py_buffer w_buf, ent_buf, st_buf, ct_buf, best_buf, rows_buf;
    int is_double;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*np", &w_buf, &ent_buf, &st_buf, &ct_buf,
                          &best_buf, &rows_buf, &width, &is_double))
        return NULL;
    Py_ssize_t size = is_double ? 8 : 4;
    Py_ssize_t count = ent_buf.len / 8, bags = st_buf.len / 8;
    Py_ssize_t targets = width ? w_buf.len / size / width : 0;
    const int64_t *ent = (const int64_t *)ent_buf.buf, *st = (const int64_t *)st_buf.buf,
                  *ct = (const int64_t *)ct_buf.buf;
    Py_ssize_t bad = -1;
    PyObject *result = NULL;
    if (width <= 0 || ct_buf.len != st_buf.len || w_buf.len != targets * width * size ||
            best_buf.len != bags * width * size || rows_buf.len != bags * width * 8) {
        PyErr_SetString(PyExc_ValueError, "_kernels.bag_max_rows: buffers of mismatched sizes");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        BAG_MAX_LOOP(double);
    else
        BAG_MAX_LOOP(float);
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        PyErr_Format(PyExc_IndexError, "_kernels.bag_max_rows: bag %lld out of range",
                     (long long)bad);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&w_buf);
    PyBuffer_Release(&ent_buf);
    PyBuffer_Release(&st_buf);
    PyBuffer_Release(&ct_buf);
    PyBuffer_Release(&best_buf);
    PyBuffer_Release(&rows_buf);
    return result;
}

static PyMethodDef kernel_functions[] = {
    {"bag_max_rows", bag_max_rows, METH_VARARGS,
     "bag_max_rows(weight, entries, starts, counts, best, rows, width, is_double)\n--\n\n"
     "Per bag and column the weight row of the bag's first maximum (ATen's running max)."},
    {"spmm_rows", spmm_rows, METH_VARARGS,
     "spmm_rows(out, rows, cols, vals, dense, width, is_double)\n--\n\nout[rows[i]] += "
     "vals[i] * dense[cols[i]] for each i in order (C-contiguous float arrays, int64 "
     "indices)."},
    {"add_rows", add_rows, METH_VARARGS,
     "add_rows(out, index, rows, is_double)\n--\n\nout[index[i]] += rows[i] for each i in "
     "order (C-contiguous float rows, int64 index), np.add.at's bits."},
    {"maxpool2_forward", maxpool2_forward, METH_VARARGS,
     "maxpool2_forward(x, vals, code, is_double, (P, H, W, OH, OW))\n--\n\n"
     "2x2 stride-2 max pooling of x into vals and the uint8 first-argmax codes; True when x "
     "held a NaN (the results are then not to be used)."},
    {"maxpool2_backward", maxpool2_backward, METH_VARARGS,
     "maxpool2_backward(g, code, gx, is_double, (P, H, W, OH, OW))\n--\n\n"
     "Each 2x2 window of gx = g * (offset == code); the uncovered tail is left as it is."},
    {"im2col", im2col, METH_VARARGS,
     "im2col(src, dst, itemsize, dims, strides)\n--\n\nConvolution columns of the "
     "C-contiguous (N, C, H, W) src written into dst (see the module source)."},
    {"col2im", col2im, METH_VARARGS,
     "col2im(cols, dst, is_double, dims, strides)\n--\n\nThe adjoint of im2col: dst "
     "(N, C, H, W) = sum of the columns' terms, offsets added in order."},
    {"relu", relu, METH_VARARGS,
     "relu(src, dst, is_double)\n--\n\ndst = src < 0 ? 0 : src (float32 or float64)."},
    {"sgd_momentum", sgd_momentum, METH_VARARGS,
     "sgd_momentum(p, g, buf, lr, momentum, is_double)\n--\n\nbuf = buf * momentum + g; "
     "p -= lr * buf, in place in one pass, NumPy's bits."},
    {"sub_scaled", sub_scaled, METH_VARARGS,
     "sub_scaled(dst, src, alpha, is_double)\n--\n\ndst -= (T)alpha * src in place, NumPy's bits."},
    {"relu_backward", relu_backward, METH_VARARGS,
     "relu_backward(grad, out, dst, is_double)\n--\n\ndst = out <= 0 ? 0 : grad."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef kernels_module = {
    PyModuleDef_HEAD_INIT, "_kernels",
    "Compiled loops of ember's convolutions and ReLU (see ember/backend/kernels.py).",
    -1, kernel_functions, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__kernels(void) {
    return PyModule_Create(&kernels_module);
}
