/* ``Primitive.apply`` in C for the plain case: what ember/_ops/primitive.py's ``apply``
 * closure and ``_connect`` do when no override, vmap, dispatch mode, forward-AD level,
 * anomaly mode or saved-tensor hook is active -- call the op's ``forward(ctx, *args)``,
 * wrap the array as a Tensor and, when an input requires grad, record the node.
 *
 * Anything else (views, several outputs, dtype casts, dropped non-tensor arguments, a
 * view among the inputs, complex results' nodes, an exception in forward) is handed to the
 * Python code, so the two paths cannot disagree on anything but speed. Why C: an op's
 * bookkeeping costs ~2 us of interpreter time, ten times the NumPy call on small tensors.
 *
 * An ``Apply`` object stands in for the Python ``apply`` function: it binds as a method,
 * and reads and writes of its attributes (``__name__``, ``_tf_report``, ...) go to that
 * function, which ``__wrapped__`` returns.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* set once by setup() */
static PyTypeObject *Tensor;
static PyObject *ndarray_type, *as_array, *connect_py, *gradient_edge, *sequence,
    *tf_active, *batching_hooks, *dispatch_active, *fw_active, *grad_state, *anomaly_state,
    *saved_hooks_state, *no_edge, *float_kinds, *empty_tuple, *scalar_type, *scalar_to_array;
static Py_ssize_t off_data, off_requires_grad, off_grad_fn, off_output_nr, off_vc, off_base;
static PyObject *s_enabled, *s_hooks, *s_dtype, *s_kind, *s_accumulator, *s_needs_input_grad,
    *s_next_functions, *s_sequence_nr, *s_saved, *s_versions, *s_out_data, *s_out_vc,
    *s_out_version, *s_plain_grads, *s_tensor_mask, *s_input_meta;
static int ready = 0, enabled = 1;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* a tensor's _requires_grad as a C truth value (a bool in practice; anything is allowed) */
static int requires_grad(PyObject *t) {
    PyObject *v = SLOT(t, off_requires_grad);
    if (v == Py_True) return 1;
    if (v == Py_False || v == NULL) return 0;
    return PyObject_IsTrue(v) > 0;
}

typedef struct {
    PyObject_HEAD
    PyObject *slow;        /* the Python apply: every case this one hands on */
    PyObject *failed;      /* failed(args, error): an entry point's answer when forward raised */
    PyObject *finish;      /* finish(ctx, args, out): the Python steps after forward */
    PyObject *forward, *node_cls, *op_cls;
    int scalar_edges, saves_output, differentiable;
    vectorcallfunc vectorcall;
} Apply;

static Py_ssize_t member_offset(PyObject *name) {
    PyObject *descr = PyDict_GetItemWithError(Tensor->tp_dict, name);
    if (!descr || Py_TYPE(descr) != &PyMemberDescr_Type) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "Tensor slot %R not found", name);
        return -1;
    }
    return ((PyMemberDescrObject *)descr)->d_member->offset;
}

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *tensor;
    PyObject **slots[] = {&ndarray_type, &as_array, &connect_py, &gradient_edge, &sequence,
                          &tf_active, &batching_hooks, &dispatch_active, &fw_active,
                          &grad_state, &anomaly_state, &saved_hooks_state, &no_edge,
                          &scalar_type, &scalar_to_array};
    PyObject *v[15];
    if (!PyArg_ParseTuple(args, "O!OOOOOOOOOOOOOOO", &PyType_Type, &tensor, &v[0], &v[1], &v[2],
                          &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
                          &v[13], &v[14]))
        return NULL;
    for (int i = 0; i < 15; i++) {
        Py_INCREF(v[i]);
        Py_XSETREF(*slots[i], v[i]);
    }
    Py_INCREF(tensor);
    Py_XSETREF(Tensor, (PyTypeObject *)tensor);
    const char *names[] = {"_data", "_requires_grad", "_grad_fn", "_output_nr", "_vc", "_base"};
    Py_ssize_t *offs[] = {&off_data, &off_requires_grad, &off_grad_fn, &off_output_nr, &off_vc,
                          &off_base};
    for (int i = 0; i < 6; i++) {
        PyObject *name = PyUnicode_InternFromString(names[i]);
        if (!name) return NULL;
        *offs[i] = member_offset(name);
        Py_DECREF(name);
        if (*offs[i] < 0) return NULL;
    }
    if (!float_kinds && !(float_kinds = PyDict_New())) return NULL;
    if (!empty_tuple && !(empty_tuple = PyTuple_New(0))) return NULL;
    ready = 1;
    Py_RETURN_NONE;
}

/* 1 when the array's dtype is a real floating type (kind "f", or ml_dtypes' bfloat16, whose
 * kind is "V": backend.dtypes.is_float_np), 0 otherwise; -2 for complex ("c"). Cached per
 * dtype. */
static int float_kind(PyObject *array, PyObject **dtype_out) {
    PyObject *dtype = PyObject_GetAttr(array, s_dtype);
    if (!dtype) return -1;
    PyObject *kind = PyDict_GetItemWithError(float_kinds, dtype);  /* borrowed */
    if (!kind) {
        if (PyErr_Occurred()) { Py_DECREF(dtype); return -1; }
        PyObject *k = PyObject_GetAttr(dtype, s_kind);
        if (!k) { Py_DECREF(dtype); return -1; }
        int is_f = PyUnicode_CompareWithASCIIString(k, "f") == 0;
        int is_c = PyUnicode_CompareWithASCIIString(k, "c") == 0;
        int is_v = PyUnicode_CompareWithASCIIString(k, "V") == 0;
        Py_DECREF(k);
        if (is_v) {  /* bfloat16 and the float8 types (ml_dtypes) count as floating, as in PyTorch */
            PyObject *name = PyObject_GetAttrString(dtype, "name");
            if (!name) { Py_DECREF(dtype); return -1; }
            PyObject *prefix = PyUnicode_FromString("float8_");
            if (!prefix) { Py_DECREF(name); Py_DECREF(dtype); return -1; }
            is_f = PyUnicode_Check(name) &&
                (PyUnicode_CompareWithASCIIString(name, "bfloat16") == 0 ||
                 PyUnicode_Tailmatch(name, prefix, 0, 7, -1) == 1);
            Py_DECREF(prefix);
            Py_DECREF(name);
        }
        kind = PyLong_FromLong(is_f ? 1 : (is_c ? -2 : 0));
        if (!kind || PyDict_SetItem(float_kinds, dtype, kind) < 0) {
            Py_XDECREF(kind); Py_DECREF(dtype); return -1;
        }
        Py_DECREF(kind);  /* the dict holds it */
    }
    int r = (int)PyLong_AsLong(kind);
    if (dtype_out) *dtype_out = dtype; else Py_DECREF(dtype);
    return r;
}

static int is_true_item0(PyObject *list) {  /* list[0] is truthy */
    return PyObject_IsTrue(PyList_GET_ITEM(list, 0));
}

/* Whether the plain path may run at all (no override, vmap, dispatch, forward AD). */
static int plain_call(void) {
    if (!ready || !enabled) return 0;
    if (PyList_GET_ITEM(tf_active, 0) != Py_False && is_true_item0(tf_active)) return 0;
    if (PyList_GET_ITEM(batching_hooks, 0) != Py_None) return 0;
    if (PyList_GET_ITEM(dispatch_active, 0) != Py_False && is_true_item0(dispatch_active)) return 0;
    if (PyList_GET_SIZE(fw_active)) return 0;
    return 1;
}

static int attr_true(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static int attr_is_none(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) return -1;
    int r = v == Py_None;
    Py_DECREF(v);
    return r;
}

/* The edge to a tensor that requires grad and is no view (primitive.py's _connect). */
static PyObject *edge_of(PyObject *a) {
    PyObject *fn = SLOT(a, off_grad_fn);
    if (fn && fn != Py_None) {
        PyObject *nr = SLOT(a, off_output_nr);
        return PyTuple_Pack(2, fn, nr ? nr : Py_None);
    }
    PyObject *ref = PyObject_GetAttr(a, s_accumulator);
    if (!ref) return NULL;
    if (ref != Py_None) {
        PyObject *acc = PyObject_CallNoArgs(ref);
        Py_DECREF(ref);
        if (!acc) return NULL;
        if (acc != Py_None) {
            PyObject *zero = PyLong_FromLong(0);
            PyObject *edge = zero ? PyTuple_Pack(2, acc, zero) : NULL;
            Py_XDECREF(zero);
            Py_DECREF(acc);
            return edge;
        }
        Py_DECREF(acc);
    } else {
        Py_DECREF(ref);
    }
    return PyObject_CallOneArg(gradient_edge, a);
}

/* Record the node of output ``t``: returns 1 when done, 0 when the Python _connect must
 * do it (a case kept out of C), -1 on error. */
static int connect_plain(Apply *op, PyObject *ctx, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *t, PyObject *out_dtype) {
    /* cases left to Python */
    int r = attr_true(anomaly_state, s_enabled);
    if (r) return r < 0 ? -1 : 0;
    r = attr_is_none(saved_hooks_state, s_hooks);
    if (r <= 0) return r < 0 ? -1 : 0;
    Py_ssize_t n_tensors = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *a = args[i];
        if (!PyObject_TypeCheck(a, Tensor)) continue;
        n_tensors++;
        PyObject *base = SLOT(a, off_base);
        if (base && base != Py_None && requires_grad(a)) return 0;
        PyObject *data = SLOT(a, off_data);
        PyObject *dt = data ? PyObject_GetAttr(data, s_dtype) : NULL;
        if (!dt) return -1;
        int same = dt == out_dtype ? 1 : PyObject_RichCompareBool(dt, out_dtype, Py_EQ);
        Py_DECREF(dt);
        if (same <= 0) return same < 0 ? -1 : 0;  /* a cast: Python records input dtypes */
    }
    /* Non-tensor arguments get a (None, 0) edge (scalar_edges) or none at all: then the
     * node keeps a tensor mask and its inputs' dtypes to drop their gradients. */
    int dropped = !op->scalar_edges && n_tensors < nargs;
    Py_ssize_t n_edges = dropped ? n_tensors : nargs, e = 0;
    PyObject *needs = PyList_New(nargs), *edges = PyTuple_New(n_edges);
    PyObject *mask = dropped ? PyList_New(nargs) : NULL, *meta = dropped ? PyList_New(n_tensors) : NULL;
    if (!needs || !edges || (dropped && (!mask || !meta))) goto fail;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *a = args[i], *edge;
        int is_tensor = PyObject_TypeCheck(a, Tensor);
        int wants = is_tensor && requires_grad(a);
        PyObject *flag = wants ? Py_True : Py_False;
        Py_INCREF(flag);
        PyList_SET_ITEM(needs, i, flag);
        if (dropped) {
            flag = is_tensor ? Py_True : Py_False;
            Py_INCREF(flag);
            PyList_SET_ITEM(mask, i, flag);
            if (!is_tensor) continue;
            PyObject *dt = PyObject_GetAttr(SLOT(a, off_data), s_dtype);
            if (!dt) goto fail;
            PyList_SET_ITEM(meta, e, dt);
        }
        if (wants) {
            if (!(edge = edge_of(a))) goto fail;
        } else {
            Py_INCREF(no_edge);
            edge = no_edge;
        }
        PyTuple_SET_ITEM(edges, e, edge);
        e++;
    }
    if (dropped && (PyObject_SetAttr(ctx, s_plain_grads, Py_False) < 0 ||
                    PyObject_SetAttr(ctx, s_tensor_mask, mask) < 0 ||
                    PyObject_SetAttr(ctx, s_input_meta, meta) < 0))
        goto fail;
    Py_CLEAR(mask);
    Py_CLEAR(meta);
    if (PyObject_SetAttr(ctx, s_needs_input_grad, needs) < 0 ||
        PyObject_SetAttr(ctx, s_next_functions, edges) < 0)
        goto fail;
    Py_CLEAR(needs);
    Py_CLEAR(edges);
    PyObject *seq = PyIter_Next(sequence);
    if (!seq) goto fail;
    r = PyObject_SetAttr(ctx, s_sequence_nr, seq);
    Py_DECREF(seq);
    if (r < 0) goto fail;
    Py_INCREF(Py_True);
    Py_XSETREF(SLOT(t, off_requires_grad), Py_True);
    Py_INCREF(ctx);
    Py_XSETREF(SLOT(t, off_grad_fn), ctx);
    PyObject *saved = PyObject_GetAttr(ctx, s_saved);
    if (!saved) goto fail;
    if (PyTuple_Check(saved) && PyTuple_GET_SIZE(saved)) {
        Py_ssize_t n = PyTuple_GET_SIZE(saved);
        PyObject *versions = PyList_New(n);
        if (!versions) { Py_DECREF(saved); goto fail; }
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *s = PyTuple_GET_ITEM(saved, k), *v = Py_None;
            if (s != Py_None) {
                PyObject *vc = PyObject_TypeCheck(s, Tensor) ? SLOT(s, off_vc) : NULL;
                if (!vc || !PyList_Check(vc) || PyList_GET_SIZE(vc) < 1) {
                    Py_DECREF(versions); Py_DECREF(saved);
                    PyErr_SetString(PyExc_TypeError, "saved value is not a tensor");
                    goto fail;
                }
                v = PyList_GET_ITEM(vc, 0);
            }
            Py_INCREF(v);
            PyList_SET_ITEM(versions, k, v);
        }
        r = PyObject_SetAttr(ctx, s_versions, versions);
        Py_DECREF(versions);
        if (r < 0) { Py_DECREF(saved); goto fail; }
    } else if (!PyTuple_Check(saved)) {  /* something unusual saved: Python's rules apply */
        int nonempty = PyObject_IsTrue(saved);
        if (nonempty) {
            Py_DECREF(saved);
            if (nonempty < 0) goto fail;
            PyErr_SetString(PyExc_TypeError, "ctx._saved must be a tuple");
            goto fail;
        }
    }
    Py_DECREF(saved);
    if (op->saves_output) {
        PyObject *vc = SLOT(t, off_vc);
        if (PyObject_SetAttr(ctx, s_out_data, SLOT(t, off_data)) < 0 ||
            PyObject_SetAttr(ctx, s_out_vc, vc) < 0 ||
            PyObject_SetAttr(ctx, s_out_version, PyList_GET_ITEM(vc, 0)) < 0)
            goto fail;
    }
    return 1;
fail:
    Py_XDECREF(needs);
    Py_XDECREF(edges);
    Py_XDECREF(mask);
    Py_XDECREF(meta);
    return -1;
}

static PyObject *args_tuple(PyObject *const *args, Py_ssize_t nargs) {
    PyObject *t = PyTuple_New(nargs);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) { Py_INCREF(args[i]); PyTuple_SET_ITEM(t, i, args[i]); }
    return t;
}

/* The Python _connect records the node: 0 on success, -1 with an exception set. */
static int connect_in_python(Apply *op, PyObject *ctx, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *t) {
    PyObject *argtuple = args_tuple(args, nargs), *outs = PyTuple_Pack(1, t);
    PyObject *r = NULL;
    if (argtuple && outs)
        r = PyObject_CallFunctionObjArgs(connect_py, ctx, op->op_cls, argtuple, outs, NULL);
    Py_XDECREF(argtuple);
    Py_XDECREF(outs);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

static PyObject *wrap_array(PyObject *out) {
    if (Py_TYPE(out) != (PyTypeObject *)ndarray_type) {
        /* a NumPy scalar (what a full reduction returns) straight to a 0-d array; anything
           else through the backend's as_array */
        PyObject *arr = PyObject_CallOneArg(
            PyObject_TypeCheck(out, (PyTypeObject *)scalar_type) ? scalar_to_array : as_array,
            out);
        Py_DECREF(out);
        if (!arr) return NULL;
        out = arr;
    }
    PyObject *t = Tensor->tp_alloc(Tensor, 0);
    if (!t) { Py_DECREF(out); return NULL; }
    PyObject *vc = PyList_New(1), *zero = PyLong_FromLong(0);
    if (!vc || !zero) { Py_XDECREF(vc); Py_XDECREF(zero); Py_DECREF(out); Py_DECREF(t); return NULL; }
    Py_INCREF(zero);
    PyList_SET_ITEM(vc, 0, zero);
    SLOT(t, off_data) = out;  /* the new tensor takes the reference */
    Py_INCREF(Py_False);
    SLOT(t, off_requires_grad) = Py_False;
    Py_INCREF(Py_None);
    SLOT(t, off_grad_fn) = Py_None;
    SLOT(t, off_output_nr) = zero;
    SLOT(t, off_vc) = vc;
    Py_INCREF(Py_None);
    SLOT(t, off_base) = Py_None;
    return t;
}

static PyObject *apply_call(PyObject *self_obj, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames) {
    Apply *op = (Apply *)self_obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames || !plain_call())
        return PyObject_Vectorcall(op->slow, args, nargsf, kwnames);
    PyObject *ctx = PyBaseObject_Type.tp_new((PyTypeObject *)op->node_cls, empty_tuple, NULL);
    if (!ctx) return NULL;
    PyObject *small[8], **stack = small;
    if (nargs + 1 > 8 && !(stack = PyMem_Malloc((nargs + 1) * sizeof(PyObject *)))) {
        Py_DECREF(ctx);
        return PyErr_NoMemory();
    }
    stack[0] = ctx;
    for (Py_ssize_t i = 0; i < nargs; i++) stack[i + 1] = args[i];
    PyObject *out = PyObject_Vectorcall(op->forward, stack, nargs + 1, NULL);
    if (stack != small) PyMem_Free(stack);
    if (!out) {
        Py_DECREF(ctx);
        if (op->failed == Py_None) return NULL;
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb && value) PyException_SetTraceback(value, tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        PyObject *argtuple = args_tuple(args, nargs);
        /* failed() re-raises the error when no override answers */
        PyObject *res = argtuple && value ? PyObject_CallFunctionObjArgs(op->failed, argtuple, value, NULL) : NULL;
        Py_XDECREF(argtuple);
        Py_XDECREF(value);
        return res;
    }
    if (PyTuple_Check(out)) {  /* several outputs: the Python code wraps and connects them */
        PyObject *argtuple = args_tuple(args, nargs);
        PyObject *res = argtuple ? PyObject_CallFunctionObjArgs(op->finish, ctx, argtuple, out, NULL) : NULL;
        Py_XDECREF(argtuple);
        Py_DECREF(ctx);
        Py_DECREF(out);
        return res;
    }
    PyObject *t = wrap_array(out);
    if (!t) { Py_DECREF(ctx); return NULL; }
    if (op->differentiable) {
        int enabled = attr_true(grad_state, s_enabled);
        if (enabled < 0) goto fail;
        if (enabled) {
            PyObject *dtype = NULL;
            int kind = float_kind(SLOT(t, off_data), &dtype);
            if (kind == -1) goto fail;
            int wanted = 0;
            for (Py_ssize_t i = 0; i < nargs; i++) {
                if (PyObject_TypeCheck(args[i], Tensor) && requires_grad(args[i])) {
                    wanted = 1;
                    break;
                }
            }
            if (wanted && kind == 1) {
                int done = connect_plain(op, ctx, args, nargs, t, dtype);
                if (done == 0) {  /* the Python _connect takes this case */
                    if (connect_in_python(op, ctx, args, nargs, t) < 0) {
                        Py_DECREF(dtype);
                        goto fail;
                    }
                } else if (done < 0) {
                    Py_DECREF(dtype);
                    goto fail;
                }
            } else if (wanted && kind == -2) {
                /* complex results: the Python _connect (it refuses ops without complex_grad) */
                if (connect_in_python(op, ctx, args, nargs, t) < 0) {
                    Py_DECREF(dtype);
                    goto fail;
                }
            }
            Py_DECREF(dtype);
        }
    }
    Py_DECREF(ctx);
    return t;
fail:
    Py_DECREF(ctx);
    Py_DECREF(t);
    return NULL;
}

static PyObject *apply_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"slow", "failed", "finish", "forward", "node_cls", "op_cls",
                         "scalar_edges", "saves_output", "differentiable", NULL};
    PyObject *slow, *failed, *finish, *forward, *node_cls, *op_cls;
    int scalar_edges, saves_output, differentiable;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOppp", kw, &slow, &failed, &finish,
                                     &forward, &node_cls, &op_cls, &scalar_edges, &saves_output,
                                     &differentiable))
        return NULL;
    if (!PyType_Check(node_cls)) {
        PyErr_SetString(PyExc_TypeError, "node_cls must be a class");
        return NULL;
    }
    Apply *op = (Apply *)type->tp_alloc(type, 0);
    if (!op) return NULL;
    Py_INCREF(slow); op->slow = slow;
    Py_INCREF(failed); op->failed = failed;
    Py_INCREF(finish); op->finish = finish;
    Py_INCREF(forward); op->forward = forward;
    Py_INCREF(node_cls); op->node_cls = node_cls;
    Py_INCREF(op_cls); op->op_cls = op_cls;
    op->scalar_edges = scalar_edges;
    op->saves_output = saves_output;
    op->differentiable = differentiable;
    op->vectorcall = apply_call;
    return (PyObject *)op;
}

static int apply_traverse(Apply *op, visitproc visit, void *arg) {
    Py_VISIT(op->slow); Py_VISIT(op->failed); Py_VISIT(op->finish); Py_VISIT(op->forward);
    Py_VISIT(op->node_cls); Py_VISIT(op->op_cls);
    return 0;
}

static int apply_clear(Apply *op) {
    Py_CLEAR(op->slow); Py_CLEAR(op->failed); Py_CLEAR(op->finish); Py_CLEAR(op->forward);
    Py_CLEAR(op->node_cls); Py_CLEAR(op->op_cls);
    return 0;
}

static void apply_dealloc(Apply *op) {
    PyObject_GC_UnTrack(op);
    apply_clear(op);
    Py_TYPE(op)->tp_free((PyObject *)op);
}

static PyObject *apply_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) { Py_INCREF(self); return self; }
    return PyMethod_New(self, obj);
}

/* Copies are the object itself and pickles refer to it by name, as for a function. */
static PyObject *apply_self(PyObject *self, PyObject *unused) {
    Py_INCREF(self);
    return self;
}

static PyObject *apply_reduce(PyObject *self, PyObject *unused) {
    return PyObject_GetAttrString(self, "__qualname__");  /* pickled as a global, by name */
}

static PyMethodDef apply_methods[] = {
    {"__reduce__", apply_reduce, METH_NOARGS, NULL},
    {"__copy__", apply_self, METH_NOARGS, NULL},
    {"__deepcopy__", apply_self, METH_O, NULL},
    {NULL}};

static int own_attribute(PyObject *name) {
    return PyUnicode_CompareWithASCIIString(name, "__reduce__") == 0 ||
           PyUnicode_CompareWithASCIIString(name, "__reduce_ex__") == 0 ||
           PyUnicode_CompareWithASCIIString(name, "__copy__") == 0 ||
           PyUnicode_CompareWithASCIIString(name, "__deepcopy__") == 0 ||
           PyUnicode_CompareWithASCIIString(name, "__class__") == 0;
}

/* Attributes live on the Python function this object stands in for. */
static PyObject *apply_getattro(PyObject *self, PyObject *name) {
    Apply *op = (Apply *)self;
    if (PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
        Py_INCREF(op->slow);
        return op->slow;
    }
    if (own_attribute(name)) return PyObject_GenericGetAttr(self, name);
    PyObject *v = PyObject_GetAttr(op->slow, name);
    if (v || !PyErr_ExceptionMatches(PyExc_AttributeError)) return v;
    PyErr_Clear();
    return PyObject_GenericGetAttr(self, name);
}

static int apply_setattro(PyObject *self, PyObject *name, PyObject *value) {
    return PyObject_SetAttr(((Apply *)self)->slow, name, value);
}

static PyObject *apply_repr(PyObject *self) {
    return PyObject_Repr(((Apply *)self)->slow);
}

static PyMemberDef apply_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Apply, vectorcall), READONLY},
    {NULL}};

static PyTypeObject ApplyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ops._apply.Apply",
    .tp_basicsize = sizeof(Apply),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A built-in op's apply, compiled (see primitive.py's _make_apply).",
    .tp_new = apply_new,
    .tp_dealloc = (destructor)apply_dealloc,
    .tp_traverse = (traverseproc)apply_traverse,
    .tp_clear = (inquiry)apply_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Apply, vectorcall),
    .tp_descr_get = apply_descr_get,
    .tp_getattro = apply_getattro,
    .tp_setattro = apply_setattro,
    .tp_repr = apply_repr,
    .tp_members = apply_members,
    .tp_methods = apply_methods,
};

/* ---- PrimitiveNode._apply ------------------------------------------------------------------
 * The common case of a built-in node's backward (one gradient given, no graph to record, no
 * dispatch, the op has backward_arrays): call ``backward_arrays(node, grad array)`` and hand
 * back its arrays. Anything else -- and nodes whose gradients need filtering or casting --
 * goes to the Python method, which ``slow`` holds. */
typedef struct {
    PyObject_HEAD
    PyObject *slow;
    vectorcallfunc vectorcall;
} NodeApply;

static PyObject *s_forward_cls, *s_backward_arrays;

static PyObject *node_apply_call(PyObject *self_obj, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames) {
    NodeApply *self = (NodeApply *)self_obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames || nargs < 2 || nargs > 3 || !ready || !enabled) goto slow;
    PyObject *node = args[0], *grads = args[1];
    if (nargs == 3 && args[2] != Py_False) goto slow;  /* create_graph */
    if (PyList_GET_ITEM(dispatch_active, 0) != Py_False && is_true_item0(dispatch_active)) goto slow;
    PyObject *grad;
    if (PyList_CheckExact(grads) && PyList_GET_SIZE(grads) == 1) grad = PyList_GET_ITEM(grads, 0);
    else if (PyTuple_CheckExact(grads) && PyTuple_GET_SIZE(grads) == 1) grad = PyTuple_GET_ITEM(grads, 0);
    else goto slow;
    if (grad == Py_None) goto slow;
    int plain = attr_true(node, s_plain_grads);
    if (plain < 0) return NULL;
    if (!plain) goto slow;
    PyObject *cls = PyObject_GetAttr(node, s_forward_cls);
    if (!cls) return NULL;
    PyObject *backward_arrays = PyObject_GetAttr(cls, s_backward_arrays);
    Py_DECREF(cls);
    if (!backward_arrays) return NULL;
    if (backward_arrays == Py_None) { Py_DECREF(backward_arrays); goto slow; }
    PyObject *array = PyObject_TypeCheck(grad, Tensor) ? SLOT(grad, off_data) : grad;
    PyObject *call_args[2] = {node, array};
    PyObject *result = PyObject_Vectorcall(backward_arrays, call_args, 2, NULL);
    Py_DECREF(backward_arrays);
    if (!result || PyTuple_Check(result)) return result;
    PyObject *one = PyTuple_Pack(1, result);
    Py_DECREF(result);
    return one;
slow:
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyObject *node_apply_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *slow;
    if (!PyArg_ParseTuple(args, "O", &slow)) return NULL;
    NodeApply *self = (NodeApply *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Py_INCREF(slow);
    self->slow = slow;
    self->vectorcall = node_apply_call;
    return (PyObject *)self;
}

static int node_apply_traverse(NodeApply *self, visitproc visit, void *arg) {
    Py_VISIT(self->slow);
    return 0;
}

static int node_apply_clear(NodeApply *self) {
    Py_CLEAR(self->slow);
    return 0;
}

static void node_apply_dealloc(NodeApply *self) {
    PyObject_GC_UnTrack(self);
    node_apply_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *node_apply_getattro(PyObject *self, PyObject *name) {
    NodeApply *na = (NodeApply *)self;
    if (PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
        Py_INCREF(na->slow);
        return na->slow;
    }
    if (own_attribute(name)) return PyObject_GenericGetAttr(self, name);
    PyObject *v = PyObject_GetAttr(na->slow, name);
    if (v || !PyErr_ExceptionMatches(PyExc_AttributeError)) return v;
    PyErr_Clear();
    return PyObject_GenericGetAttr(self, name);
}

static PyMemberDef node_apply_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(NodeApply, vectorcall), READONLY},
    {NULL}};

static PyTypeObject NodeApplyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ops._apply.NodeApply",
    .tp_basicsize = sizeof(NodeApply),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "PrimitiveNode._apply, compiled for the common case (see primitive.py).",
    .tp_new = node_apply_new,
    .tp_dealloc = (destructor)node_apply_dealloc,
    .tp_traverse = (traverseproc)node_apply_traverse,
    .tp_clear = (inquiry)node_apply_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(NodeApply, vectorcall),
    .tp_descr_get = apply_descr_get,
    .tp_getattro = node_apply_getattro,
    .tp_members = node_apply_members,
    .tp_methods = apply_methods,
};

static PyObject *set_enabled(PyObject *self, PyObject *flag) {
    int on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    PyObject *previous = enabled ? Py_True : Py_False;
    enabled = on;
    Py_INCREF(previous);
    return previous;
}

static PyMethodDef methods[] = {
    {"set_enabled", set_enabled, METH_O, "set_enabled(flag) -> previous: run the plain case in C"},
    {"setup", setup, METH_VARARGS, "setup(Tensor, ndarray, as_array, connect, gradient_edge, "
     "sequence, tf_active, batching_hooks, dispatch_active, fw_active, grad_state, "
     "anomaly_state, saved_hooks_state, no_edge, scalar_type, scalar_to_array)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_apply",
                                    "Built-in ops' apply in C (see primitive.py).", -1, methods};

PyMODINIT_FUNC PyInit__apply(void) {
    const char *names[] = {"enabled", "hooks", "dtype", "kind", "_accumulator",
                           "needs_input_grad", "next_functions", "_sequence_nr", "_saved",
                           "_versions", "_out_data", "_out_vc", "_out_version", "_plain_grads",
                           "_tensor_mask", "_input_meta"};
    PyObject **slots[] = {&s_enabled, &s_hooks, &s_dtype, &s_kind, &s_accumulator,
                          &s_needs_input_grad, &s_next_functions, &s_sequence_nr, &s_saved,
                          &s_versions, &s_out_data, &s_out_vc, &s_out_version, &s_plain_grads,
                          &s_tensor_mask, &s_input_meta};
    for (int i = 0; i < 16; i++)
        if (!(*slots[i] = PyUnicode_InternFromString(names[i]))) return NULL;
    if (!(s_forward_cls = PyUnicode_InternFromString("_forward_cls")) ||
        !(s_backward_arrays = PyUnicode_InternFromString("backward_arrays")))
        return NULL;
    if (PyType_Ready(&ApplyType) < 0 || PyType_Ready(&NodeApplyType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ApplyType);
    if (PyModule_AddObject(m, "Apply", (PyObject *)&ApplyType) < 0) return NULL;
    Py_INCREF(&NodeApplyType);
    if (PyModule_AddObject(m, "NodeApply", (PyObject *)&NodeApplyType) < 0) return NULL;
    return m;
}
