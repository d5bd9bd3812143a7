/* ember.backend._pool: what ember's thread pool (parallel.py) cannot do in Python.
 *
 * 1. Event: a post/wait signal whose waiter spins before it sleeps, with the GIL released.
 *    On a (virtual) machine, a core whose threads all sleep is given back; waking a thread
 *    there costs ~50-100 us and its first ~half millisecond of work runs markedly slower
 *    (measured: a 256x512x512 sgemm took 1.45x as long on a worker woken after a 1 ms sleep
 *    as on one kept busy). OpenBLAS and OpenMP runtimes let idle workers spin for a while;
 *    Python threads cannot spin without holding the GIL, so the waiting happens here: spin
 *    (pause instruction) on a sequence number for up to `spin_us` microseconds, then sleep on
 *    a condition variable until the next post.
 *
 *      Event.post()              bump the sequence number, wake a sleeper if there is one
 *      Event.wait(seen, spin_us) block (GIL released) until the number differs from `seen`;
 *                                returns the number
 *      Event.seq                 the current number
 *
 *    Lost wake-ups cannot happen: a waiter announces itself (sleepers += 1) before its last
 *    look at the number, under the mutex; a poster bumps the number before looking at the
 *    sleepers, and broadcasts under the mutex. Both sides use sequentially consistent
 *    atomics, so at least one of them sees the other's write.
 *
 * 2. pin(cpu) / unpin() / current_cpu(): keep a pool worker off the CPU of the thread that
 *    hands it work. The threads of a pass hand the GIL to each other, i.e. wake each other
 *    many times a millisecond, and Linux then tends to place the woken thread on the
 *    waker's CPU -- in a virtual machine always when the other virtual CPU was idle long
 *    enough for the host to take it back (it counts as "preempted", not idle). Both threads
 *    then share one core until the load balancer separates them, tens of milliseconds later
 *    (measured: the first CNN training step after a 0.15 s pause took 40-45 ms instead of
 *    28, the two threads on one CPU for most of it). pin() narrows the calling thread's
 *    affinity to one CPU, moving it there at once and remembering the mask (no system call
 *    when already pinned there: setting the affinity costs tens of microseconds in a VM,
 *    too much for every pass); unpin() restores the mask, and so does Event.wait before it
 *    sleeps, so an idle worker is free again. Linux only; elsewhere pin() returns False.
 *
 * 3. gemm(...): a matrix product of NumPy's OpenBLAS cut into bands of rows or columns that
 *    the threads spinning in Event.wait take a share of, with no Python on the way. A pass of
 *    the Python pool costs ~30 us (the GIL handed to each worker and back), as much as half
 *    of a 20x256x1024 sgemm (~115 us on one core): the LSTM's per-step products did not gain
 *    from it. Here the calling thread publishes the product in one atomic word,
 *
 *      word = generation << 32 | pieces << 16 | next piece
 *
 *    and every thread (caller included) claims pieces by compare-and-swap until none is left,
 *    then the caller spins until `done` counts them all. Only threads already spinning help
 *    (`helpers` counts them; none: the caller computes the whole product), and a thread that
 *    ran a piece starts its spin anew, so the workers stay with a run of products. A second
 *    thread calling gemm while a pass is under way computes its product alone. The BLAS
 *    entry points come from Python (set_gemm: addresses found with ctypes), so this file
 *    needs no BLAS headers; the bands are the slices np.matmul would pass to the same
 *    single-threaded cblas_?gemm, as ember/backend/gemm.py's Python bands are.
 */
#define _GNU_SOURCE  /* sched_getcpu, CPU_SET */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

typedef struct {
    PyObject_HEAD
    atomic_ulong seq;
    atomic_int sleepers;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} EventObject;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int current_cpu(void) {
#ifdef __linux__
    return sched_getcpu();  /* vDSO: a few ns */
#else
    return -1;
#endif
}

#ifdef __linux__
static __thread int pinned_cpu = -1;  /* the CPU pin() put this thread on, -1: none */
static __thread cpu_set_t saved;      /* its affinity before */
#endif

/* Run the calling thread on `cpu` only; 1 when it does (no system call when already so). */
static int pin_to(long cpu) {
#ifdef __linux__
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return 0;
    if (pinned_cpu == cpu)
        return 1;
    if (pinned_cpu < 0) {
        if (sched_getaffinity(0, sizeof saved, &saved) != 0)
            return 0;
    }
    if (!CPU_ISSET(cpu, &saved))
        return 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return 0;
    pinned_cpu = (int)cpu;
    return 1;
#else
    (void)cpu;
    return 0;
#endif
}

static void unpin_self(void) {
#ifdef __linux__
    if (pinned_cpu >= 0) {
        sched_setaffinity(0, sizeof saved, &saved);
        pinned_cpu = -1;
    }
#endif
}

static PyObject *Event_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    EventObject *self = (EventObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    atomic_init(&self->seq, 0);
    atomic_init(&self->sleepers, 0);
    if (pthread_mutex_init(&self->mu, NULL) != 0 || pthread_cond_init(&self->cv, NULL) != 0) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_OSError, "could not create the event's mutex");
        return NULL;
    }
    return (PyObject *)self;
}

static void Event_dealloc(EventObject *self) {
    pthread_cond_destroy(&self->cv);
    pthread_mutex_destroy(&self->mu);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ---- 3. native matrix-product passes ---- */

/* cblas_?gemm with 64-bit (ILP64: OpenBLAS built with INTERFACE64) or 32-bit integers */
typedef void (*sgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, float, const void *,
                           int64_t, const void *, int64_t, float, void *, int64_t);
typedef void (*dgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, double, const void *,
                           int64_t, const void *, int64_t, double, void *, int64_t);
typedef void (*sgemm32_fn)(int, int, int, int, int, int, float, const void *, int,
                           const void *, int, float, void *, int);
typedef void (*dgemm32_fn)(int, int, int, int, int, int, double, const void *, int,
                           const void *, int, double, void *, int);

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112, MAX_PIECES = 256 };

static void *blas_gemm[2];  /* sgemm, dgemm entry points; NULL: not set */
static int blas_ilp64;

typedef struct {
    int dtype;  /* 0 float32, 1 float64 */
    int trans_a, trans_b, by_rows;
    int64_t m, n, k, lda, ldb, ldc;
    char *a, *b, *c;
    int64_t bounds[MAX_PIECES + 1];
} GemmJob;

static GemmJob job;               /* written by the pass's caller before it publishes `word` */
static atomic_uint_fast64_t word;  /* generation << 32 | pieces << 16 | next piece */
static atomic_int done;            /* pieces finished in this generation */
static atomic_int helpers;         /* threads spinning in Event.wait */
static atomic_flag busy = ATOMIC_FLAG_INIT;  /* a pass is under way */
static atomic_ulong helped;        /* pieces run by spinning threads, ever (tests, profiling) */

/* A forked child has none of the parent's threads: no helpers, no pass under way. */
static void reset_in_child(void) {
    atomic_store(&word, atomic_load(&word) & ~(uint_fast64_t)0xffffffff);
    atomic_store(&done, 0);
    atomic_store(&helpers, 0);
    atomic_flag_clear(&busy);
}

/* C[rows or columns lo:hi] of the job, one single-threaded BLAS call */
static void run_band(const GemmJob *g, int64_t lo, int64_t hi) {
    size_t item = g->dtype ? sizeof(double) : sizeof(float);
    int64_t m = g->m, n = g->n;
    const char *a = g->a, *b = g->b;
    char *c = g->c;
    if (g->by_rows) {
        m = hi - lo;
        a += (g->trans_a ? lo : lo * g->lda) * item;
        c += lo * g->ldc * item;
    } else {
        n = hi - lo;
        b += (g->trans_b ? lo * g->ldb : lo) * item;
        c += lo * item;
    }
    int ta = g->trans_a ? TRANS : NO_TRANS, tb = g->trans_b ? TRANS : NO_TRANS;
    void *fn = blas_gemm[g->dtype];
    if (blas_ilp64) {
        if (g->dtype)
            ((dgemm64_fn)fn)(ROW_MAJOR, ta, tb, m, n, g->k, 1.0, a, g->lda, b, g->ldb, 0.0, c,
                             g->ldc);
        else
            ((sgemm64_fn)fn)(ROW_MAJOR, ta, tb, m, n, g->k, 1.0f, a, g->lda, b, g->ldb, 0.0f,
                             c, g->ldc);
    } else {
        if (g->dtype)
            ((dgemm32_fn)fn)(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)g->k, 1.0, a,
                             (int)g->lda, b, (int)g->ldb, 0.0, c, (int)g->ldc);
        else
            ((sgemm32_fn)fn)(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)g->k, 1.0f, a,
                             (int)g->lda, b, (int)g->ldb, 0.0f, c, (int)g->ldc);
    }
}

/* Claim and run pieces of the published pass until none is left; how many this thread ran.
 * A successful claim of piece i of generation G means G's caller waits for it, so `job` is
 * G's until `done` is bumped. */
static int help_with_pass(void) {
    int ran = 0;
    uint_fast64_t w = atomic_load(&word);
    for (;;) {
        unsigned next = (unsigned)(w & 0xffff), pieces = (unsigned)((w >> 16) & 0xffff);
        if (next >= pieces)
            return ran;
        if (atomic_compare_exchange_weak(&word, &w, w + 1)) {
            run_band(&job, job.bounds[next], job.bounds[next + 1]);
            atomic_fetch_add(&done, 1);
            ran++;
            w = atomic_load(&word);
        }
    }
}

static inline int pass_open(void) {
    uint_fast64_t w = atomic_load_explicit(&word, memory_order_relaxed);
    return (w & 0xffff) < ((w >> 16) & 0xffff);
}

static PyObject *pool_set_gemm(PyObject *mod, PyObject *args) {
    unsigned long long s, d;
    int ilp64;
    if (!PyArg_ParseTuple(args, "KKp", &s, &d, &ilp64))
        return NULL;
    blas_gemm[0] = (void *)(uintptr_t)s;
    blas_gemm[1] = (void *)(uintptr_t)d;
    blas_ilp64 = ilp64;
    Py_RETURN_NONE;
}

static PyObject *pool_helpers(PyObject *mod, PyObject *unused) {
    return PyLong_FromLong(atomic_load(&helpers));
}

static PyObject *pool_helped(PyObject *mod, PyObject *unused) {
    return PyLong_FromUnsignedLong(atomic_load(&helped));
}

static PyObject *pool_gemm(PyObject *mod, PyObject *args) {
    int dtype, trans_a, trans_b, by_rows;
    int forced = 0;  /* tests: exactly `pieces` bands, whoever spins */
    long long m, n, k, lda, ldb, ldc, align, pieces;
    unsigned long long a, b, c;
    if (!PyArg_ParseTuple(args, "ippLLLKLKLKLpLL|p", &dtype, &trans_a, &trans_b, &m, &n, &k,
                          &a, &lda, &b, &ldb, &c, &ldc, &by_rows, &align, &pieces, &forced))
        return NULL;
    int too_large = !blas_ilp64 && (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX ||
                                    lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX);
    if (dtype < 0 || dtype > 1 || blas_gemm[dtype] == NULL || m <= 0 || n <= 0 || k <= 0 ||
            align <= 0 || pieces <= 0 || too_large)
        return PyLong_FromLong(0);
    GemmJob mine = {dtype, trans_a, trans_b, by_rows, m, n, k, lda, ldb, ldc, (char *)a,
                    (char *)b, (char *)c, {0}};
    int64_t width = by_rows ? m : n;
    Py_BEGIN_ALLOW_THREADS
    long long share = forced ? pieces : atomic_load(&helpers) + 1;
    if (pieces > share * 2)
        pieces = share * 2;  /* two per thread: one that gets less of a core does fewer */
    if (pieces > width / align)
        pieces = width / align;
    if (pieces > MAX_PIECES)
        pieces = MAX_PIECES;
    if ((share < 2 && !forced) || pieces < 2 || atomic_flag_test_and_set(&busy)) {
        pieces = 1;
        run_band(&mine, 0, width);
    } else {
        for (long long i = 0; i < pieces; i++)
            mine.bounds[i] = (width * i / pieces + align - 1) / align * align;
        mine.bounds[pieces] = width;
        job = mine;
        atomic_store(&done, 0);
        uint_fast64_t generation = (atomic_load(&word) >> 32) + 1;
        atomic_store(&word, (generation << 32) | ((uint_fast64_t)pieces << 16));
        help_with_pass();
        unsigned i = 0;
        while (atomic_load(&done) < pieces) {
            cpu_relax();
            if ((++i & 4095) == 0)
                sched_yield();  /* a helper preempted on this core: let it finish */
        }
        atomic_flag_clear(&busy);
    }
    Py_END_ALLOW_THREADS
    return PyLong_FromLongLong(pieces);
}

static PyObject *pool_pin(PyObject *mod, PyObject *arg) {
    long cpu = PyLong_AsLong(arg);
    if (cpu == -1 && PyErr_Occurred())
        return NULL;
    return PyBool_FromLong(pin_to(cpu));
}

static PyObject *pool_unpin(PyObject *mod, PyObject *unused) {
    unpin_self();
    Py_RETURN_NONE;
}

static PyObject *pool_current_cpu(PyObject *mod, PyObject *unused) {
    return PyLong_FromLong(current_cpu());
}

static PyMethodDef pool_functions[] = {
    {"pin", (PyCFunction)pool_pin, METH_O,
     "pin(cpu)\n--\n\nRun the calling thread on `cpu` only (until unpin(), or until it "
     "sleeps in Event.wait); False when it could not (not allowed, not Linux)."},
    {"unpin", (PyCFunction)pool_unpin, METH_NOARGS,
     "unpin()\n--\n\nRestore the calling thread's affinity from before pin()."},
    {"current_cpu", (PyCFunction)pool_current_cpu, METH_NOARGS,
     "current_cpu()\n--\n\nThe CPU the calling thread runs on (-1: unknown)."},
    {"set_gemm", (PyCFunction)pool_set_gemm, METH_VARARGS,
     "set_gemm(sgemm, dgemm, ilp64)\n--\n\nThe addresses of cblas_sgemm and cblas_dgemm "
     "(0: none) and whether they take 64-bit integers."},
    {"helpers", (PyCFunction)pool_helpers, METH_NOARGS,
     "helpers()\n--\n\nThreads spinning in Event.wait now (they take pieces of gemm)."},
    {"helped", (PyCFunction)pool_helped, METH_NOARGS,
     "helped()\n--\n\nPieces of gemm passes run by spinning threads so far."},
    {"gemm", (PyCFunction)pool_gemm, METH_VARARGS,
     "gemm(dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, by_rows, align, "
     "pieces, forced=False)\n--\n\nC = op(A) @ op(B), row-major, dtype 0 float32 / 1 "
     "float64, a/b/c addresses: in up to `pieces` bands of rows (by_rows) or columns, "
     "edges on multiples of `align`, shared with the spinning threads (forced: `pieces` "
     "bands whoever spins). Returns the bands (1: computed alone), 0 when it cannot (no "
     "BLAS set, sizes out of range)."},
    {NULL, NULL, 0, NULL}
};

static PyObject *Event_post(EventObject *self, PyObject *unused) {
    atomic_fetch_add(&self->seq, 1);
    if (atomic_load(&self->sleepers) > 0) {
        pthread_mutex_lock(&self->mu);
        pthread_cond_broadcast(&self->cv);
        pthread_mutex_unlock(&self->mu);
    }
    Py_RETURN_NONE;
}

static PyObject *Event_wait(EventObject *self, PyObject *args) {
    unsigned long seen;
    long long spin_us;
    if (!PyArg_ParseTuple(args, "kL", &seen, &spin_us))
        return NULL;
    unsigned long seq;
    Py_BEGIN_ALLOW_THREADS
    seq = atomic_load(&self->seq);
    if (seq == seen && spin_us > 0) {
        long long deadline = now_ns() + spin_us * 1000LL;
        unsigned int i = 0;
        atomic_fetch_add(&helpers, 1);
        while ((seq = atomic_load(&self->seq)) == seen) {
            if (pass_open()) {
                int ran = help_with_pass();
                if (ran > 0) {
                    atomic_fetch_add(&helped, (unsigned long)ran);
                    deadline = now_ns() + spin_us * 1000LL;  /* busy again: spin anew */
                }
            }
            cpu_relax();
            if ((++i & 255) == 0) {
                if (now_ns() > deadline)
                    break;
                if ((i & 4095) == 0)
                    sched_yield();  /* let a runnable thread that shares this core go */
            }
        }
        atomic_fetch_sub(&helpers, 1);
    }
    if (seq == seen) {
        unpin_self();  /* going to sleep: the pool is idle, give the thread back its CPUs */
        pthread_mutex_lock(&self->mu);
        atomic_fetch_add(&self->sleepers, 1);
        while ((seq = atomic_load(&self->seq)) == seen)
            pthread_cond_wait(&self->cv, &self->mu);
        atomic_fetch_sub(&self->sleepers, 1);
        pthread_mutex_unlock(&self->mu);
    }
    Py_END_ALLOW_THREADS
    return PyLong_FromUnsignedLong(seq);
}

static PyObject *Event_get_seq(EventObject *self, void *closure) {
    return PyLong_FromUnsignedLong(atomic_load(&self->seq));
}

static PyMethodDef Event_methods[] = {
    {"post", (PyCFunction)Event_post, METH_NOARGS,
     "post()\n--\n\nBump the sequence number and wake the waiter."},
    {"wait", (PyCFunction)Event_wait, METH_VARARGS,
     "wait(seen, spin_us)\n--\n\nWait, GIL released, until the sequence number differs "
     "from seen: spin up to spin_us microseconds, then sleep. Returns the number."},
    {NULL, NULL, 0, NULL}
};

static PyGetSetDef Event_getset[] = {
    {"seq", (getter)Event_get_seq, NULL, "the sequence number (posts so far)", NULL},
    {NULL, NULL, NULL, NULL, NULL}
};

static PyTypeObject EventType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember.backend._pool.Event",
    .tp_doc = "A post/wait event whose waiter spins before it sleeps (GIL released).",
    .tp_basicsize = sizeof(EventObject),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Event_new,
    .tp_dealloc = (destructor)Event_dealloc,
    .tp_methods = Event_methods,
    .tp_getset = Event_getset,
};

static struct PyModuleDef pool_module = {
    PyModuleDef_HEAD_INIT, "_pool",
    "Native helpers of ember's thread pool: spin-then-sleep events, thread pinning "
    "(see ember/backend/parallel.py).",
    -1, pool_functions, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__pool(void) {
    if (PyType_Ready(&EventType) < 0)
        return NULL;
    pthread_atfork(NULL, NULL, reset_in_child);
    PyObject *m = PyModule_Create(&pool_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&EventType);
    if (PyModule_AddObject(m, "Event", (PyObject *)&EventType) < 0) {
        Py_DECREF(&EventType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
