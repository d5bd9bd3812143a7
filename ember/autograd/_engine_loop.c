/* The backward engine's inner loop in C: ember.autograd.engine's _walk (dependency counts)
 * and _drain (run the ready nodes, deliver their outputs) for the plain case -- no
 * ``inputs``, no create_graph, no anomaly check, no dispatch.
 *
 * It does exactly what the Python loop in engine.py does, in the same order, and knows
 * nothing of specific ops: a node is anything with ``next_functions``, ``_sequence_nr``,
 * ``_output_meta``, ``_has_hooks``, ``_accepts_arrays``, ``_fresh_outputs``, ``_apply`` and
 * ``_release``. A node with hooks goes through engine.py's own ``_run_node``; summing two
 * gradients that are not same-shaped, same-dtype NumPy arrays goes through ``task.add``.
 * Why C: the loop costs ~1 us of interpreter time per node in Python, as much as a small
 * op's backward formula; here it is a few dozen attribute reads and dict operations.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *AccumulateGrad, *OwnedGrads, *run_node_py, *is_fresh_py, *as_tensors_py;
static PyObject *ndarray_type, *heappush, *heappop, *heapreplace;
static PyObject *s_next_functions, *s_sequence_nr, *s_output_meta, *s_has_hooks,
    *s_accepts_arrays, *s_fresh_outputs, *s_apply, *s_release, *s_buffers, *s_deps,
    *s_ready, *s_retain_graph, *s_add, *s_shape, *s_dtype;
static int ready_to_run = 0;

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *acc, *owned, *run_node, *is_fresh, *as_tensors, *ndarray, *heapq;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &acc, &owned, &run_node, &is_fresh, &as_tensors,
                          &ndarray, &heapq))
        return NULL;
    PyObject **slots[] = {&AccumulateGrad, &OwnedGrads, &run_node_py, &is_fresh_py,
                          &as_tensors_py, &ndarray_type};
    PyObject *values[] = {acc, owned, run_node, is_fresh, as_tensors, ndarray};
    for (int i = 0; i < 6; i++) {
        Py_XDECREF(*slots[i]);
        Py_INCREF(values[i]);
        *slots[i] = values[i];
    }
    Py_XDECREF(heappush); Py_XDECREF(heappop); Py_XDECREF(heapreplace);
    heappush = PyObject_GetAttrString(heapq, "heappush");
    heappop = PyObject_GetAttrString(heapq, "heappop");
    heapreplace = PyObject_GetAttrString(heapq, "heapreplace");
    if (!heappush || !heappop || !heapreplace) return NULL;
    ready_to_run = 1;
    Py_RETURN_NONE;
}

/* (child, nr) of an edge; borrowed child, nr as a C integer. */
static int unpack_edge(PyObject *edge, PyObject **child, Py_ssize_t *nr) {
    if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2) {
        PyErr_SetString(PyExc_TypeError, "next_functions entries must be (node, nr) pairs");
        return -1;
    }
    *child = PyTuple_GET_ITEM(edge, 0);
    if (*child == Py_None) return 0;
    *nr = PyLong_AsSsize_t(PyTuple_GET_ITEM(edge, 1));
    if (*nr == -1 && PyErr_Occurred()) return -1;
    return 0;
}

static PyObject *next_functions(PyObject *node) {
    PyObject *nf = PyObject_GetAttr(node, s_next_functions);
    if (nf && !PyTuple_Check(nf)) {
        PyObject *t = PySequence_Tuple(nf);
        Py_DECREF(nf);
        return t;
    }
    return nf;
}

/* _walk(roots) without the post-order: {node: number of edges reaching it}. */
static PyObject *walk(PyObject *self, PyObject *roots) {
    PyObject *deps = PyDict_New(), *root_set = PySet_New(roots);
    PyObject *stack = root_set ? PySequence_List(root_set) : NULL;  /* each root once */
    PyObject *one = PyLong_FromLong(1);
    if (!deps || !root_set || !stack) goto fail;
    while (PyList_GET_SIZE(stack)) {
        Py_ssize_t last = PyList_GET_SIZE(stack) - 1;
        PyObject *node = PyList_GET_ITEM(stack, last);
        Py_INCREF(node);
        if (PyList_SetSlice(stack, last, last + 1, NULL) < 0) { Py_DECREF(node); goto fail; }
        PyObject *nf = next_functions(node);
        Py_DECREF(node);
        if (!nf) goto fail;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(nf); i++) {
            PyObject *child; Py_ssize_t nr;
            if (unpack_edge(PyTuple_GET_ITEM(nf, i), &child, &nr) < 0) { Py_DECREF(nf); goto fail; }
            if (child == Py_None) continue;
            PyObject *n = PyDict_GetItemWithError(deps, child);
            if (n == NULL) {
                if (PyErr_Occurred() || PyDict_SetItem(deps, child, one) < 0) { Py_DECREF(nf); goto fail; }
                int is_root = PySet_Contains(root_set, child);
                if (is_root < 0 || (!is_root && PyList_Append(stack, child) < 0)) { Py_DECREF(nf); goto fail; }
            } else {
                PyObject *m = PyNumber_Add(n, one);
                int err = m ? PyDict_SetItem(deps, child, m) : -1;
                Py_XDECREF(m);
                if (err < 0) { Py_DECREF(nf); goto fail; }
            }
        }
        Py_DECREF(nf);
    }
    Py_DECREF(root_set); Py_DECREF(stack); Py_DECREF(one);
    return deps;
fail:
    Py_XDECREF(deps); Py_XDECREF(root_set); Py_XDECREF(stack); Py_XDECREF(one);
    return NULL;
}

/* ``task.add(prev, g)``, with same-shaped, same-dtype NumPy arrays added directly. */
static PyObject *add_grads(PyObject *add, PyObject *prev, PyObject *g) {
    if (Py_TYPE(prev) == (PyTypeObject *)ndarray_type && Py_TYPE(g) == (PyTypeObject *)ndarray_type) {
        PyObject *sa = PyObject_GetAttr(prev, s_shape), *sb = PyObject_GetAttr(g, s_shape);
        PyObject *da = PyObject_GetAttr(prev, s_dtype), *db = PyObject_GetAttr(g, s_dtype);
        int same = (sa && sb && da && db) ? PyObject_RichCompareBool(sa, sb, Py_EQ) : -1;
        if (same == 1) same = PyObject_RichCompareBool(da, db, Py_EQ);
        Py_XDECREF(sa); Py_XDECREF(sb); Py_XDECREF(da); Py_XDECREF(db);
        if (same < 0) return NULL;
        if (same) return PyNumber_Add(prev, g);
    }
    return PyObject_CallFunctionObjArgs(add, prev, g, NULL);
}

static PyObject *heap_entry(PyObject *node) {
    PyObject *seq = PyObject_GetAttr(node, s_sequence_nr);
    if (!seq) return NULL;
    PyObject *neg = PyNumber_Negative(seq);
    Py_DECREF(seq);
    if (!neg) return NULL;
    PyObject *id = PyLong_FromVoidPtr(node);
    if (!id) { Py_DECREF(neg); return NULL; }
    PyObject *entry = PyTuple_Pack(3, neg, id, node);
    Py_DECREF(neg); Py_DECREF(id);
    return entry;
}

static int push_ready(PyObject *ready, PyObject *node) {
    PyObject *entry = heap_entry(node);
    if (!entry) return -1;
    PyObject *r = PyObject_CallFunctionObjArgs(heappush, ready, entry, NULL);
    Py_DECREF(entry);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

/* 1 if a's _sequence_nr > b's, 0 if not, -1 on error. */
static int later(PyObject *a, PyObject *b) {
    PyObject *sa = PyObject_GetAttr(a, s_sequence_nr);
    PyObject *sb = sa ? PyObject_GetAttr(b, s_sequence_nr) : NULL;
    int r = sb ? PyObject_RichCompareBool(sa, sb, Py_GT) : -1;
    Py_XDECREF(sa); Py_XDECREF(sb);
    return r;
}

static int truthy_attr(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* engine._deliver: outputs into the children's buffers; *held gets the next node to run. */
static int deliver(PyObject *buffers, PyObject *deps, PyObject *ready, PyObject *add,
                   PyObject *node, PyObject *outputs, PyObject *grads, PyObject **held) {
    PyObject *nf = next_functions(node), *outs = NULL;
    int fresh_outputs = -2, grads_given = -2, status = -1;
    if (!nf) return -1;
    int has_outputs = PyObject_IsTrue(outputs);
    if (has_outputs < 0) goto done;
    if (has_outputs && !(outs = PySequence_Fast(outputs, "node outputs must be a sequence")))
        goto done;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(nf); i++) {
        PyObject *child; Py_ssize_t nr;
        if (unpack_edge(PyTuple_GET_ITEM(nf, i), &child, &nr) < 0) goto done;
        if (child == Py_None) continue;
        int is_acc = (PyObject *)Py_TYPE(child) == AccumulateGrad;
        PyObject *g = outs && i < PySequence_Fast_GET_SIZE(outs) ? PySequence_Fast_GET_ITEM(outs, i) : NULL;
        if (outs && !g) { PyErr_SetString(PyExc_IndexError, "tuple index out of range"); goto done; }
        if (g != NULL && g != Py_None) {
            PyObject *buf = PyDict_GetItemWithError(buffers, child);
            if (!buf && PyErr_Occurred()) goto done;
            if (!buf) {
                PyObject *meta = PyObject_GetAttr(child, s_output_meta);
                if (!meta) goto done;
                Py_ssize_t n = PyObject_Length(meta);
                Py_DECREF(meta);
                if (n < 0) goto done;
                if (nr < 0 || nr >= n) { PyErr_SetString(PyExc_IndexError, "list assignment index out of range"); goto done; }
                PyObject *fresh = PyList_New(n);
                if (!fresh) goto done;
                for (Py_ssize_t k = 0; k < n; k++) { Py_INCREF(Py_None); PyList_SET_ITEM(fresh, k, Py_None); }
                Py_INCREF(g);
                PyList_SetItem(fresh, nr, g);
                int err = PyDict_SetItem(buffers, child, fresh);
                if (err < 0) { Py_DECREF(fresh); goto done; }
                if (is_acc) {
                    if (fresh_outputs == -2) fresh_outputs = truthy_attr(node, s_fresh_outputs);
                    if (fresh_outputs < 0) { Py_DECREF(fresh); goto done; }
                    if (fresh_outputs) {
                        if (grads_given == -2) grads_given = PyObject_IsTrue(grads);
                        if (grads_given < 0) { Py_DECREF(fresh); goto done; }
                    }
                    if (fresh_outputs && grads_given) {
                        PyObject *ok = PyObject_CallFunctionObjArgs(is_fresh_py, g, grads, outputs, NULL);
                        int own = ok ? PyObject_IsTrue(ok) : -1;
                        Py_XDECREF(ok);
                        if (own < 0) { Py_DECREF(fresh); goto done; }
                        if (own) {
                            PyObject *owned = PyObject_CallOneArg(OwnedGrads, fresh);
                            err = owned ? PyDict_SetItem(buffers, child, owned) : -1;
                            Py_XDECREF(owned);
                            if (err < 0) { Py_DECREF(fresh); goto done; }
                        }
                    }
                }
                Py_DECREF(fresh);
            } else {
                if (!PyList_Check(buf)) { PyErr_SetString(PyExc_TypeError, "gradient buffer is not a list"); goto done; }
                if (nr < 0 || nr >= PyList_GET_SIZE(buf)) { PyErr_SetString(PyExc_IndexError, "list index out of range"); goto done; }
                PyObject *prev = PyList_GET_ITEM(buf, nr);
                if (prev == Py_None) {
                    Py_INCREF(g);
                    PyList_SetItem(buf, nr, g);
                } else {
                    Py_INCREF(buf);  /* a replacement below may drop the dict's reference */
                    PyObject *sum = add_grads(add, prev, g);
                    if (!sum) { Py_DECREF(buf); goto done; }
                    PyList_SetItem(buf, nr, sum);
                    if (is_acc) {  /* a sum just made: the engine owns it */
                        PyObject *owned = PyObject_CallOneArg(OwnedGrads, buf);
                        int err = owned ? PyDict_SetItem(buffers, child, owned) : -1;
                        Py_XDECREF(owned);
                        if (err < 0) { Py_DECREF(buf); goto done; }
                    }
                    Py_DECREF(buf);
                }
            }
        }
        PyObject *count = PyDict_GetItemWithError(deps, child);
        if (!count) { if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, child); goto done; }
        long left = PyLong_AsLong(count) - 1;
        if (left == -2 && PyErr_Occurred()) goto done;
        PyObject *left_obj = PyLong_FromLong(left);
        int err = left_obj ? PyDict_SetItem(deps, child, left_obj) : -1;
        Py_XDECREF(left_obj);
        if (err < 0) goto done;
        if (!left) {
            if (*held == NULL) {
                Py_INCREF(child);
                *held = child;
            } else {
                int newer = later(child, *held);
                if (newer < 0) goto done;
                if (newer) {
                    if (push_ready(ready, *held) < 0) goto done;
                    Py_DECREF(*held);
                    Py_INCREF(child);
                    *held = child;
                } else if (push_ready(ready, child) < 0) {
                    goto done;
                }
            }
        }
    }
    status = 0;
done:
    Py_DECREF(nf);
    Py_XDECREF(outs);
    return status;
}

/* engine._run_node for a task with no captures and no anomaly check. Sets *outputs and
 * *grads_out (new references). */
static int run_node(PyObject *task, PyObject *node, PyObject *grads, int retain,
                    PyObject **outputs, PyObject **grads_out) {
    int hooked = truthy_attr(node, s_has_hooks);
    if (hooked < 0) return -1;
    if (hooked) {
        PyObject *res = PyObject_CallFunctionObjArgs(run_node_py, task, node,
                                                     grads ? grads : Py_None, NULL);
        if (!res) return -1;
        if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
            Py_DECREF(res);
            PyErr_SetString(PyExc_TypeError, "_run_node must return (outputs, grads)");
            return -1;
        }
        *outputs = PyTuple_GET_ITEM(res, 0); Py_INCREF(*outputs);
        *grads_out = PyTuple_GET_ITEM(res, 1); Py_INCREF(*grads_out);
        Py_DECREF(res);
        return 0;
    }
    if (grads == NULL) {
        PyObject *meta = PyObject_GetAttr(node, s_output_meta);
        if (!meta) return -1;
        Py_ssize_t n = PyObject_Length(meta);
        Py_DECREF(meta);
        if (n < 0) return -1;
        grads = PyList_New(n);
        if (!grads) return -1;
        for (Py_ssize_t k = 0; k < n; k++) { Py_INCREF(Py_None); PyList_SET_ITEM(grads, k, Py_None); }
    } else {
        int arrays_ok = truthy_attr(node, s_accepts_arrays);
        if (arrays_ok < 0) return -1;
        if (arrays_ok) {
            Py_INCREF(grads);
        } else if (!(grads = PyObject_CallOneArg(as_tensors_py, grads))) {
            return -1;
        }
    }
    PyObject *call_args[3] = {node, grads, Py_False};
    PyObject *out = PyObject_VectorcallMethod(s_apply, call_args, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    if (!out) { Py_DECREF(grads); return -1; }
    if (!retain) {
        PyObject *r = PyObject_CallMethodNoArgs(node, s_release);
        if (!r) { Py_DECREF(out); Py_DECREF(grads); return -1; }
        Py_DECREF(r);
    }
    *outputs = out;
    *grads_out = grads;
    return 0;
}

/* The loop of engine.run_backward: run nodes until none is ready. */
static PyObject *drain(PyObject *self, PyObject *task) {
    if (!ready_to_run) { PyErr_SetString(PyExc_RuntimeError, "_engine_loop.setup was not called"); return NULL; }
    PyObject *buffers = PyObject_GetAttr(task, s_buffers), *deps = PyObject_GetAttr(task, s_deps);
    PyObject *ready = PyObject_GetAttr(task, s_ready), *add = PyObject_GetAttr(task, s_add);
    PyObject *held = NULL, *result = NULL;
    int retain = -1;
    if (!buffers || !deps || !ready || !add) goto done;
    if (!PyDict_Check(buffers) || !PyDict_Check(deps) || !PyList_Check(ready)) {
        PyErr_SetString(PyExc_TypeError, "unexpected graph task layout");
        goto done;
    }
    if ((retain = truthy_attr(task, s_retain_graph)) < 0) goto done;
    while (held != NULL || PyList_GET_SIZE(ready)) {
        PyObject *node;
        if (held != NULL) {
            node = held;  /* the reference moves to node */
            held = NULL;
            if (PyList_GET_SIZE(ready)) {
                PyObject *entry = heap_entry(node);
                if (!entry) { Py_DECREF(node); goto done; }
                PyObject *top = PyList_GET_ITEM(ready, 0);
                int earlier = PyObject_RichCompareBool(PyTuple_GET_ITEM(top, 0),
                                                       PyTuple_GET_ITEM(entry, 0), Py_LT);
                if (earlier < 0) { Py_DECREF(entry); Py_DECREF(node); goto done; }
                if (earlier) {
                    PyObject *popped = PyObject_CallFunctionObjArgs(heapreplace, ready, entry, NULL);
                    Py_DECREF(entry);
                    Py_DECREF(node);
                    if (!popped) goto done;
                    node = PyTuple_GET_ITEM(popped, 2);
                    Py_INCREF(node);
                    Py_DECREF(popped);
                } else {
                    Py_DECREF(entry);
                }
            }
        } else {
            PyObject *popped = PyObject_CallOneArg(heappop, ready);
            if (!popped) goto done;
            node = PyTuple_GET_ITEM(popped, 2);
            Py_INCREF(node);
            Py_DECREF(popped);
        }
        PyObject *grads = PyDict_GetItemWithError(buffers, node);
        if (grads) {
            Py_INCREF(grads);
            if (PyDict_DelItem(buffers, node) < 0) { Py_DECREF(grads); Py_DECREF(node); goto done; }
        } else if (PyErr_Occurred()) {
            Py_DECREF(node);
            goto done;
        }
        PyObject *outputs, *given;
        int err = run_node(task, node, grads, retain, &outputs, &given);
        Py_XDECREF(grads);
        if (err < 0) { Py_DECREF(node); goto done; }
        err = deliver(buffers, deps, ready, add, node, outputs, given, &held);
        Py_DECREF(outputs);
        Py_DECREF(given);
        Py_DECREF(node);
        if (err < 0) goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    Py_XDECREF(held);
    Py_XDECREF(buffers); Py_XDECREF(deps); Py_XDECREF(ready); Py_XDECREF(add);
    return result;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(AccumulateGrad, OwnedGrads, run_node, is_fresh, as_tensors, ndarray, heapq)"},
    {"walk", walk, METH_O, "walk(roots) -> {node: number of edges reaching it}"},
    {"drain", drain, METH_O, "drain(task): run a graph task's nodes until none is ready"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_engine_loop",
                                    "The backward engine's loop in C (see engine.py).", -1, methods};

PyMODINIT_FUNC PyInit__engine_loop(void) {
    const char *names[] = {"next_functions", "_sequence_nr", "_output_meta", "_has_hooks",
                           "_accepts_arrays", "_fresh_outputs", "_apply", "_release", "buffers",
                           "deps", "ready", "retain_graph", "add", "shape", "dtype"};
    PyObject **slots[] = {&s_next_functions, &s_sequence_nr, &s_output_meta, &s_has_hooks,
                          &s_accepts_arrays, &s_fresh_outputs, &s_apply, &s_release, &s_buffers,
                          &s_deps, &s_ready, &s_retain_graph, &s_add, &s_shape, &s_dtype};
    for (int i = 0; i < 15; i++)
        if (!(*slots[i] = PyUnicode_InternFromString(names[i]))) return NULL;
    return PyModule_Create(&module);
}
