/*
 * <ember/ffi/EmberTensor.h> -- ember tensors as seen by C code built with ember.utils.ffi.
 *
 * The C side of ember.utils.ffi.create_extension, in the style of the old TH API
 * (THFloatTensor_resizeAs, THFloatTensor_cadd, ...):
 *
 *     #include <ember/ffi/EmberTensor.h>
 *
 *     int my_lib_add_forward(EmberFloatTensor *input1, EmberFloatTensor *input2,
 *                            EmberFloatTensor *output)
 *     {
 *       if (!EmberFloatTensor_isSameSizeAs(input1, input2))
 *         return 0;
 *       EmberFloatTensor_resizeAs(output, input1);
 *       EmberFloatTensor_cadd(output, input1, 1.0, input2);
 *       return 1;
 *     }
 *
 * A struct describes one ember tensor for the duration of one call: `data` points at the tensor's
 * own memory (no copy), laid out C-contiguously (the Python wrapper guarantees it), with `ndim`
 * sizes and strides (in elements). `handle` refers back to the Python tensor; `resize` is set by
 * the wrapper and reallocates the Python tensor's storage, then updates data/ndim/size/stride.
 * Do not keep a struct or its data pointer after the call returns.
 *
 * Types: EmberFloatTensor (float32), EmberDoubleTensor (float64), EmberLongTensor (int64),
 * EmberIntTensor (int32). Every helper is NULL-safe and never writes out of bounds: on
 * mismatched sizes it does nothing and returns 0.
 */
#ifndef EMBER_FFI_EMBER_TENSOR_H
#define EMBER_FFI_EMBER_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define EMBER_FFI_MAX_DIMS 64

/* dtype codes stored in the structs' `dtype` field */
#define EMBER_FFI_FLOAT32 1
#define EMBER_FFI_FLOAT64 2
#define EMBER_FFI_INT64 3
#define EMBER_FFI_INT32 4

/* resize(handle, ndim, sizes): 1 on success, 0 on failure (the error is raised in Python when
 * the C function returns). */
typedef int (*EmberFFIResizeFn)(void *handle, int64_t ndim, const int64_t *sizes);

#define EMBER_FFI_DEFINE_TENSOR(Real, real_t)                                                      \
  typedef struct Ember##Real##Tensor {                                                             \
    real_t *data;                                                                                  \
    int64_t ndim;                                                                                  \
    int64_t size[EMBER_FFI_MAX_DIMS];                                                              \
    int64_t stride[EMBER_FFI_MAX_DIMS];                                                            \
    int dtype;                                                                                     \
    void *handle;                                                                                  \
    EmberFFIResizeFn resize;                                                                       \
  } Ember##Real##Tensor;                                                                           \
                                                                                                   \
  static inline int64_t Ember##Real##Tensor_nDimension(const Ember##Real##Tensor *t) {             \
    return t ? t->ndim : 0;                                                                        \
  }                                                                                                \
  static inline int64_t Ember##Real##Tensor_size(const Ember##Real##Tensor *t, int64_t dim) {      \
    return (t && dim >= 0 && dim < t->ndim) ? t->size[dim] : -1;                                   \
  }                                                                                                \
  static inline int64_t Ember##Real##Tensor_stride(const Ember##Real##Tensor *t, int64_t dim) {    \
    return (t && dim >= 0 && dim < t->ndim) ? t->stride[dim] : -1;                                 \
  }                                                                                                \
  static inline int64_t Ember##Real##Tensor_nElement(const Ember##Real##Tensor *t) {               \
    int64_t n = 1, i;                                                                              \
    if (!t) return 0;                                                                              \
    for (i = 0; i < t->ndim; i++) n *= t->size[i];                                                 \
    return n;                                                                                      \
  }                                                                                                \
  static inline real_t *Ember##Real##Tensor_data(const Ember##Real##Tensor *t) {                   \
    return t ? t->data : NULL;                                                                     \
  }                                                                                                \
  static inline int Ember##Real##Tensor_isContiguous(const Ember##Real##Tensor *t) {               \
    int64_t expected = 1, i;                                                                       \
    if (!t) return 0;                                                                              \
    for (i = t->ndim - 1; i >= 0; i--) {                                                           \
      if (t->size[i] != 1 && t->stride[i] != expected) return 0;                                   \
      expected *= t->size[i];                                                                      \
    }                                                                                              \
    return 1;                                                                                      \
  }                                                                                                \
  static inline int Ember##Real##Tensor_isSameSizeAs(const Ember##Real##Tensor *a,                 \
                                                     const Ember##Real##Tensor *b) {               \
    int64_t i;                                                                                     \
    if (!a || !b || a->ndim != b->ndim) return 0;                                                  \
    for (i = 0; i < a->ndim; i++)                                                                  \
      if (a->size[i] != b->size[i]) return 0;                                                      \
    return 1;                                                                                      \
  }                                                                                                \
  /* Reallocate t's storage (in ember) to the given sizes; the leading elements are kept. */       \
  static inline int Ember##Real##Tensor_resizeNd(Ember##Real##Tensor *t, int64_t ndim,             \
                                                 const int64_t *sizes) {                           \
    int64_t i;                                                                                     \
    if (!t || ndim < 0 || ndim > EMBER_FFI_MAX_DIMS || (ndim > 0 && !sizes)) return 0;             \
    if (t->ndim == ndim) {                                                                         \
      for (i = 0; i < ndim && t->size[i] == sizes[i]; i++) {}                                      \
      if (i == ndim) return 1; /* already that size */                                             \
    }                                                                                              \
    if (!t->resize) return 0;                                                                      \
    return t->resize(t->handle, ndim, sizes);                                                      \
  }                                                                                                \
  static inline int Ember##Real##Tensor_resize1d(Ember##Real##Tensor *t, int64_t size0) {          \
    return Ember##Real##Tensor_resizeNd(t, 1, &size0);                                             \
  }                                                                                                \
  static inline int Ember##Real##Tensor_resize2d(Ember##Real##Tensor *t, int64_t size0,            \
                                                 int64_t size1) {                                  \
    int64_t sizes[2];                                                                              \
    sizes[0] = size0;                                                                              \
    sizes[1] = size1;                                                                              \
    return Ember##Real##Tensor_resizeNd(t, 2, sizes);                                              \
  }                                                                                                \
  static inline int Ember##Real##Tensor_resizeAs(Ember##Real##Tensor *dst,                         \
                                                 const Ember##Real##Tensor *src) {                 \
    if (!dst || !src) return 0;                                                                    \
    return Ember##Real##Tensor_resizeNd(dst, src->ndim, src->size);                                \
  }                                                                                                \
  static inline void Ember##Real##Tensor_fill(Ember##Real##Tensor *t, real_t value) {              \
    int64_t n = Ember##Real##Tensor_nElement(t), i;                                                \
    for (i = 0; i < n; i++) t->data[i] = value;                                                    \
  }                                                                                                \
  static inline void Ember##Real##Tensor_zero(Ember##Real##Tensor *t) {                            \
    Ember##Real##Tensor_fill(t, (real_t)0);                                                        \
  }                                                                                                \
  /* r = t + value * src (r is resized as t; t and src must have as many elements) */              \
  static inline int Ember##Real##Tensor_cadd(Ember##Real##Tensor *r, const Ember##Real##Tensor *t, \
                                             real_t value, const Ember##Real##Tensor *src) {       \
    int64_t n = Ember##Real##Tensor_nElement(t), i;                                                \
    if (!r || !t || !src || Ember##Real##Tensor_nElement(src) != n) return 0;                      \
    if (!Ember##Real##Tensor_resizeAs(r, t) || Ember##Real##Tensor_nElement(r) != n) return 0;     \
    for (i = 0; i < n; i++) r->data[i] = t->data[i] + value * src->data[i];                        \
    return 1;                                                                                      \
  }                                                                                                \
  /* r = t * src, elementwise */                                                                   \
  static inline int Ember##Real##Tensor_cmul(Ember##Real##Tensor *r, const Ember##Real##Tensor *t, \
                                             const Ember##Real##Tensor *src) {                     \
    int64_t n = Ember##Real##Tensor_nElement(t), i;                                                \
    if (!r || !t || !src || Ember##Real##Tensor_nElement(src) != n) return 0;                      \
    if (!Ember##Real##Tensor_resizeAs(r, t) || Ember##Real##Tensor_nElement(r) != n) return 0;     \
    for (i = 0; i < n; i++) r->data[i] = t->data[i] * src->data[i];                                \
    return 1;                                                                                      \
  }                                                                                                \
  /* r = t * value */                                                                              \
  static inline int Ember##Real##Tensor_mul(Ember##Real##Tensor *r, const Ember##Real##Tensor *t,  \
                                            real_t value) {                                        \
    int64_t n = Ember##Real##Tensor_nElement(t), i;                                                \
    if (!r || !t) return 0;                                                                        \
    if (!Ember##Real##Tensor_resizeAs(r, t) || Ember##Real##Tensor_nElement(r) != n) return 0;     \
    for (i = 0; i < n; i++) r->data[i] = t->data[i] * value;                                       \
    return 1;                                                                                      \
  }                                                                                                \
  /* dst = src (dst is resized as src) */                                                          \
  static inline int Ember##Real##Tensor_copy(Ember##Real##Tensor *dst,                             \
                                             const Ember##Real##Tensor *src) {                     \
    int64_t n = Ember##Real##Tensor_nElement(src), i;                                              \
    if (!dst || !src) return 0;                                                                    \
    if (!Ember##Real##Tensor_resizeAs(dst, src) || Ember##Real##Tensor_nElement(dst) != n)         \
      return 0;                                                                                    \
    for (i = 0; i < n; i++) dst->data[i] = src->data[i];                                           \
    return 1;                                                                                      \
  }

EMBER_FFI_DEFINE_TENSOR(Float, float)
EMBER_FFI_DEFINE_TENSOR(Double, double)
EMBER_FFI_DEFINE_TENSOR(Long, int64_t)
EMBER_FFI_DEFINE_TENSOR(Int, int32_t)

#endif /* EMBER_FFI_EMBER_TENSOR_H */
