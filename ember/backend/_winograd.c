/* ember.backend._winograd: the transforms of Winograd's F(2x2, 3x3) convolution.
 *
 * A 3x3 convolution of stride 1 computes each 2x2 block ("tile") of its output from a 4x4
 * patch of its input. Winograd's minimal filtering does it with 16 products per (input
 * channel, output channel) pair instead of 36:
 *
 *     Y = A^T [ (G g G^T) . (B^T d B) ] A        (. elementwise, summed over channels)
 *
 * with d the 4x4 input patch, g the 3x3 kernel and
 *
 *     B^T = | 1  0 -1  0 |     G = | 1    0    0   |     A^T = | 1  1  1  0 |
 *           | 0  1  1  0 |         | 1/2  1/2  1/2 |           | 0  1 -1 -1 |
 *           | 0 -1  1  0 |         | 1/2 -1/2  1/2 |
 *           | 0  1  0 -1 |         | 0    0    1   |
 *
 * The sum over channels of the 16 elementwise products is 16 matrix products
 * (tiles x C) @ (C x O), which BLAS does; these loops do the transforms around them:
 *
 *   input_transform(x, v, is_double, dims)   v[e, t, c] = (B^T d B)[e] of channel c's
 *                                            patch of tile t (zeros outside the image)
 *   output_transform(m, y, bias, is_double, dims)
 *                                            y's tile t of channel o = A^T m[:, t, o] A
 *                                            (+ bias[o]), cropped to the output's size
 *   grad_transform(gy, z, is_double, dims)   z[e, t, o] = (A g A^T)[e] of channel o's 2x2
 *                                            tile of gy (zeros outside): the weight
 *                                            gradient is G^T (sum_t v^T z) G
 *   input_adjoint(m, gx, is_double, dims)    input_transform's adjoint: gx = the sum over
 *                                            tiles of B m[:, t, c] B^T, each added where
 *                                            the tile's patch was read (m = z U^T gives
 *                                            the input gradient)
 *
 * e = 4 * row + column of the 4x4 transformed tile; tiles run over samples, then tile rows,
 * then tile columns. dims = (N, C, H, W, PH, PW, TH, TW) for input_transform and
 * input_adjoint (the image, the padding before it, the tiles per column and row),
 * (N, O, OH, OW, TH, TW) for the other two. Arrays are C-contiguous, float32 or float64, checked by the caller
 * (ember/backend/winograd.py) except for their sizes, checked here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* One plane of the transformed patches, along contiguous channels (vectorized by the
 * compiler): o = (a0 + sr*b0) + sc*(a1 + sr*b1), the signs +-1 (exact), i.e. a row
 * combination of B^T at two columns combined by B's column. */
#define CELL(T)                                                                              \
    static void cell_##T(T *restrict o, const T *restrict a0, const T *restrict b0,          \
                         const T *restrict a1, const T *restrict b1, T sr, T sc,             \
                         Py_ssize_t n) {                                                     \
        for (Py_ssize_t i = 0; i < n; i++)                                                   \
            o[i] = (a0[i] + sr * b0[i]) + sc * (a1[i] + sr * b1[i]);                         \
    }
CELL(float)
CELL(double)

/* rows (or columns) k and l of the patch combined by row r of B^T: d_k + sign * d_l */
static const int COMB_K[4] = {0, 1, 2, 1}, COMB_L[4] = {2, 2, 1, 3};
static const double COMB_SIGN[4] = {-1.0, 1.0, -1.0, -1.0};

/* Per sample, the image is first laid out channels-last in a zero-padded scratch covering
 * every tile's patch (rows 2*TH + 2, columns 2*TW + 2); then each of a tile's 16 outputs
 * is one pass along contiguous channels. */
#define INPUT_LOOP(T)                                                                        \
    do {                                                                                     \
        const T *x = (const T *)x_buf.buf;                                                   \
        T *v = (T *)v_buf.buf;                                                               \
        T *pad = (T *)scratch;                                                               \
        Py_ssize_t rows = 2 * TH + 2, cols = 2 * TW + 2;                                     \
        for (Py_ssize_t n = 0; n < N; n++) {                                                 \
            memset(pad, 0, (size_t)(rows * cols * C) * sizeof(T));                           \
            for (Py_ssize_t c = 0; c < C; c++) {                                             \
                const T *img = x + (n * C + c) * H * W;                                      \
                for (Py_ssize_t y = 0; y < H; y++) {                                         \
                    Py_ssize_t py = y + PH;                                                  \
                    if (py < 0 || py >= rows)                                                \
                        continue;                                                            \
                    for (Py_ssize_t xx = 0; xx < W; xx++) {                                  \
                        Py_ssize_t px = xx + PW;                                             \
                        if (px >= 0 && px < cols)                                            \
                            pad[(py * cols + px) * C + c] = img[y * W + xx];                 \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
            for (Py_ssize_t i = 0; i < TH; i++)                                              \
            for (Py_ssize_t j = 0; j < TW; j++) {                                            \
                const T *corner = pad + (2 * i * cols + 2 * j) * C;                          \
                T *out = v + ((n * TH + i) * TW + j) * C;                                    \
                for (int r = 0; r < 4; r++)                                                  \
                for (int s = 0; s < 4; s++) {                                                \
                    const T *rk = corner + COMB_K[r] * cols * C;                             \
                    const T *rl = corner + COMB_L[r] * cols * C;                             \
                    Py_ssize_t ck = COMB_K[s] * C, cl = COMB_L[s] * C;                       \
                    cell_##T(out + (4 * r + s) * plane, rk + ck, rl + ck, rk + cl, rl + cl,  \
                             (T)COMB_SIGN[r], (T)COMB_SIGN[s], C);                           \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)

static PyObject *input_transform(PyObject *self, PyObject *args) {
    Py_buffer x_buf, v_buf;
    int is_double;
    Py_ssize_t N, C, H, W, PH, PW, TH, TW;
    if (!PyArg_ParseTuple(args, "y*w*p(nnnnnnnn)", &x_buf, &v_buf, &is_double, &N, &C, &H,
                          &W, &PH, &PW, &TH, &TW))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t size = is_double ? 8 : 4, tiles = N * TH * TW, plane = tiles * C;
    if (N < 0 || C < 0 || H < 0 || W < 0 || TH < 0 || TW < 0
            || x_buf.len < N * C * H * W * size || v_buf.len < 16 * plane * size) {
        PyErr_SetString(PyExc_ValueError, "_winograd.input_transform: buffer too small");
        goto done;
    }
    void *scratch = PyMem_RawMalloc((size_t)((2 * TH + 2) * (2 * TW + 2) * C) * size + 1);
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        INPUT_LOOP(double);
    else
        INPUT_LOOP(float);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&x_buf);
    PyBuffer_Release(&v_buf);
    return result;
}

/* Tiles outer, output channels inner: the 16 reads per (tile, channel) run along contiguous
 * channels of each transformed plane. */
#define OUTPUT_LOOP(T)                                                                       \
    do {                                                                                     \
        const T *m = (const T *)m_buf.buf;                                                   \
        const T *bias = has_bias ? (const T *)b_buf.buf : NULL;                              \
        T *y = (T *)y_buf.buf;                                                               \
        for (Py_ssize_t n = 0; n < N; n++)                                                   \
        for (Py_ssize_t i = 0; i < TH; i++)                                                  \
        for (Py_ssize_t j = 0; j < TW; j++) {                                                \
            const T *in = m + ((n * TH + i) * TW + j) * O;                                   \
            int rows = OH - 2 * i >= 2 ? 2 : 1, cols = OW - 2 * j >= 2 ? 2 : 1;              \
            T *base = y + n * O * OH * OW + 2 * i * OW + 2 * j;                              \
            for (Py_ssize_t o = 0; o < O; o++) {                                             \
                T t[2][4];                                                                   \
                for (int s = 0; s < 4; s++) {                                                \
                    T m0 = in[(0 + s) * plane + o], m1 = in[(4 + s) * plane + o];            \
                    T m2 = in[(8 + s) * plane + o], m3 = in[(12 + s) * plane + o];           \
                    t[0][s] = m0 + m1 + m2;                                                  \
                    t[1][s] = m1 - m2 - m3;                                                  \
                }                                                                            \
                T b = bias ? bias[o] : (T)0;                                                 \
                T *dst = base + o * OH * OW;                                                 \
                for (int r = 0; r < rows; r++) {                                             \
                    T y0 = t[r][0] + t[r][1] + t[r][2];                                      \
                    T y1 = t[r][1] - t[r][2] - t[r][3];                                      \
                    dst[r * OW] = bias ? y0 + b : y0;                                        \
                    if (cols == 2)                                                           \
                        dst[r * OW + 1] = bias ? y1 + b : y1;                                \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)

static PyObject *output_transform(PyObject *self, PyObject *args) {
    Py_buffer m_buf, y_buf, b_buf = {0};
    PyObject *bias;
    int is_double, has_bias = 0;
    Py_ssize_t N, O, OH, OW, TH, TW;
    if (!PyArg_ParseTuple(args, "y*w*Op(nnnnnn)", &m_buf, &y_buf, &bias, &is_double, &N, &O,
                          &OH, &OW, &TH, &TW))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t size = is_double ? 8 : 4, plane = N * TH * TW * O;
    if (bias != Py_None) {
        if (PyObject_GetBuffer(bias, &b_buf, PyBUF_SIMPLE) < 0)
            goto done;
        has_bias = 1;
    }
    if (N < 0 || O < 0 || TH * 2 < OH || TW * 2 < OW || m_buf.len < 16 * plane * size
            || y_buf.len < N * O * OH * OW * size || (has_bias && b_buf.len < O * size)) {
        PyErr_SetString(PyExc_ValueError, "_winograd.output_transform: buffer too small");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        OUTPUT_LOOP(double);
    else
        OUTPUT_LOOP(float);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    if (has_bias)
        PyBuffer_Release(&b_buf);
    PyBuffer_Release(&m_buf);
    PyBuffer_Release(&y_buf);
    return result;
}

#define GRAD_LOOP(T)                                                                         \
    do {                                                                                     \
        const T *gy = (const T *)g_buf.buf;                                                  \
        T *z = (T *)z_buf.buf;                                                               \
        for (Py_ssize_t n = 0; n < N; n++)                                                   \
        for (Py_ssize_t i = 0; i < TH; i++)                                                  \
        for (Py_ssize_t j = 0; j < TW; j++) {                                                \
            int rows = OH - 2 * i >= 2 ? 2 : 1, cols = OW - 2 * j >= 2 ? 2 : 1;              \
            const T *base = gy + n * O * OH * OW + 2 * i * OW + 2 * j;                       \
            T *out = z + ((n * TH + i) * TW + j) * O;                                        \
            for (Py_ssize_t o = 0; o < O; o++) {                                             \
                const T *img = base + o * OH * OW;                                           \
                T g[2][2] = {{0, 0}, {0, 0}}, t[4][2];                                       \
                for (int r = 0; r < rows; r++) {                                             \
                    g[r][0] = img[r * OW];                                                   \
                    if (cols == 2)                                                           \
                        g[r][1] = img[r * OW + 1];                                           \
                }                                                                            \
                for (int s = 0; s < 2; s++) {                                                \
                    t[0][s] = g[0][s];                                                       \
                    t[1][s] = g[0][s] + g[1][s];                                             \
                    t[2][s] = g[0][s] - g[1][s];                                             \
                    t[3][s] = -g[1][s];                                                      \
                }                                                                            \
                for (int r = 0; r < 4; r++) {                                                \
                    out[(4 * r + 0) * plane + o] = t[r][0];                                  \
                    out[(4 * r + 1) * plane + o] = t[r][0] + t[r][1];                        \
                    out[(4 * r + 2) * plane + o] = t[r][0] - t[r][1];                        \
                    out[(4 * r + 3) * plane + o] = -t[r][1];                                 \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)

static PyObject *grad_transform(PyObject *self, PyObject *args) {
    Py_buffer g_buf, z_buf;
    int is_double;
    Py_ssize_t N, O, OH, OW, TH, TW;
    if (!PyArg_ParseTuple(args, "y*w*p(nnnnnn)", &g_buf, &z_buf, &is_double, &N, &O, &OH,
                          &OW, &TH, &TW))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t size = is_double ? 8 : 4, plane = N * TH * TW * O;
    if (N < 0 || O < 0 || OH < 0 || OW < 0 || TH < 0 || TW < 0
            || g_buf.len < N * O * OH * OW * size || z_buf.len < 16 * plane * size) {
        PyErr_SetString(PyExc_ValueError, "_winograd.grad_transform: buffer too small");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        GRAD_LOOP(double);
    else
        GRAD_LOOP(float);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&g_buf);
    PyBuffer_Release(&z_buf);
    return result;
}

/* The adjoint of input_transform: each tile's 16 planes m[:, t, c] go back through
 * B m B^T to a 4x4 patch that is added into the input gradient where input_transform read
 * the patch (tiles in order, so the sums' order is fixed). Per sample the patches are added
 * into a zero-padded channels-last scratch along contiguous channels, whose image part is
 * then copied out channels-first. B m B^T, row r (and likewise column s) of B:
 * r0 = m0, r1 = m1 - m2 + m3, r2 = m1 + m2 - m0, r3 = -m3. */
#define ADJOINT_LOOP(T)                                                                      \
    do {                                                                                     \
        const T *m = (const T *)m_buf.buf;                                                   \
        T *gx = (T *)x_buf.buf;                                                              \
        T *pad = (T *)scratch;                                                               \
        Py_ssize_t rows = 2 * TH + 2, cols = 2 * TW + 2;                                     \
        T *row = pad + rows * cols * C; /* 4 rows of 4 columns of C: one tile's B m */       \
        for (Py_ssize_t n = 0; n < N; n++) {                                                 \
            memset(pad, 0, (size_t)(rows * cols * C) * sizeof(T));                           \
            for (Py_ssize_t i = 0; i < TH; i++)                                              \
            for (Py_ssize_t j = 0; j < TW; j++) {                                            \
                const T *in = m + ((n * TH + i) * TW + j) * C;                               \
                for (int b = 0; b < 4; b++) {  /* B applied down each column b */            \
                    const T *restrict m0 = in + (0 + b) * plane, *restrict m1 = in + (4 + b) * plane; \
                    const T *restrict m2 = in + (8 + b) * plane, *restrict m3 = in + (12 + b) * plane; \
                    T *restrict q0 = row + (0 * 4 + b) * C, *restrict q1 = row + (1 * 4 + b) * C; \
                    T *restrict q2 = row + (2 * 4 + b) * C, *restrict q3 = row + (3 * 4 + b) * C; \
                    for (Py_ssize_t c = 0; c < C; c++) {                                     \
                        q0[c] = m0[c];                                                       \
                        q1[c] = m1[c] - m2[c] + m3[c];                                       \
                        q2[c] = m1[c] + m2[c] - m0[c];                                       \
                        q3[c] = -m3[c];                                                      \
                    }                                                                        \
                }                                                                            \
                for (int r = 0; r < 4; r++) {  /* then B along each row, added in place */   \
                    const T *restrict k0 = row + (r * 4 + 0) * C, *restrict k1 = row + (r * 4 + 1) * C; \
                    const T *restrict k2 = row + (r * 4 + 2) * C, *restrict k3 = row + (r * 4 + 3) * C; \
                    T *base = pad + ((2 * i + r) * cols + 2 * j) * C;                        \
                    T *restrict d0 = base, *restrict d1 = base + C;                          \
                    T *restrict d2 = base + 2 * C, *restrict d3 = base + 3 * C;              \
                    for (Py_ssize_t c = 0; c < C; c++) {                                     \
                        d0[c] += k0[c];                                                      \
                        d1[c] += k1[c] - k2[c] + k3[c];                                      \
                        d2[c] += k1[c] + k2[c] - k0[c];                                      \
                        d3[c] += -k3[c];                                                     \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
            for (Py_ssize_t c = 0; c < C; c++) {                                             \
                T *img = gx + (n * C + c) * H * W;                                           \
                for (Py_ssize_t y = 0; y < H; y++) {                                         \
                    Py_ssize_t py = y + PH;                                                  \
                    for (Py_ssize_t xx = 0; xx < W; xx++) {                                  \
                        Py_ssize_t px = xx + PW;                                             \
                        img[y * W + xx] = (py < rows && px < cols)                           \
                                          ? pad[(py * cols + px) * C + c] : (T)0;            \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)

static PyObject *input_adjoint(PyObject *self, PyObject *args) {
    Py_buffer m_buf, x_buf;
    int is_double;
    Py_ssize_t N, C, H, W, PH, PW, TH, TW;
    if (!PyArg_ParseTuple(args, "y*w*p(nnnnnnnn)", &m_buf, &x_buf, &is_double, &N, &C, &H,
                          &W, &PH, &PW, &TH, &TW))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t size = is_double ? 8 : 4, plane = N * TH * TW * C;
    if (N < 0 || C < 0 || H < 0 || W < 0 || TH < 0 || TW < 0 || PH < 0 || PW < 0
            || x_buf.len < N * C * H * W * size || m_buf.len < 16 * plane * size) {
        PyErr_SetString(PyExc_ValueError, "_winograd.input_adjoint: bad geometry");
        goto done;
    }
    void *scratch = PyMem_RawMalloc(((size_t)((2 * TH + 2) * (2 * TW + 2) * C) + 16 * C) * size
                                    + 1);
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_double)
        ADJOINT_LOOP(double);
    else
        ADJOINT_LOOP(float);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&m_buf);
    PyBuffer_Release(&x_buf);
    return result;
}

static PyMethodDef winograd_functions[] = {
    {"input_adjoint", input_adjoint, METH_VARARGS,
     "input_adjoint(m, gx, is_double, (N, C, H, W, PH, PW, TH, TW))\n--\n\n"
     "gx = the sum of each tile's B m B^T over the patch input_transform read (gx written)."},
    {"input_transform", input_transform, METH_VARARGS,
     "input_transform(x, v, is_double, (N, C, H, W, PH, PW, TH, TW))\n--\n\n"
     "v[e, t, c] = (B^T d B)[e] of each 4x4 input patch (see the module source)."},
    {"output_transform", output_transform, METH_VARARGS,
     "output_transform(m, y, bias, is_double, (N, O, OH, OW, TH, TW))\n--\n\n"
     "Each 2x2 output tile = A^T m A (+ bias), cropped to (OH, OW)."},
    {"grad_transform", grad_transform, METH_VARARGS,
     "grad_transform(gy, z, is_double, (N, O, OH, OW, TH, TW))\n--\n\n"
     "z[e, t, o] = (A g A^T)[e] of each 2x2 tile of the output gradient."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef winograd_module = {
    PyModuleDef_HEAD_INIT, "_winograd",
    "Transforms of Winograd's F(2x2, 3x3) convolution (see ember/backend/winograd.py).",
    -1, winograd_functions, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__winograd(void) {
    return PyModule_Create(&winograd_module);
}
