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
 */
#define _GNU_SOURCE  /* sched_getcpu, CPU_SET */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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
        while ((seq = atomic_load(&self->seq)) == seen) {
            cpu_relax();
            if ((++i & 255) == 0) {
                if (now_ns() > deadline)
                    break;
                if ((i & 4095) == 0)
                    sched_yield();  /* let a runnable thread that shares this core go */
            }
        }
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
