/* SPDX-License-Identifier: MIT */
/*
 * fnprof._fnprof: the per-call path of the Python package. Python frames go onto fnprof's
 * own per-thread tree (libfnprof's fnprof_frame_* calls), beside the native calls of
 * instrumented extensions, keyed as cProfile keys them: a function by (co_filename,
 * co_firstlineno, co_name), a builtin by ('~', 0, name) with the name _lsprof's
 * normalizeUserObj gives it. Everything else (Profile, the command) is Python: fnprof/.
 *
 * A code object's key is interned once and kept in its extra slot, a builtin's in a table
 * by its PyMethodDef (as _lsprof keys it), so that an event costs a lookup and a push.
 *
 * Python 3.11: the C profile hook of every thread (_PyEval_SetProfile; new threads through
 * threading.setprofile, fnprof/__init__.py). 3.12+: sys.monitoring with a tool id of its
 * own, so that cProfile (PROFILER_ID) can run beside it. Every entry point runs with the
 * GIL held: the tables here need no lock.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "fnprof.h"

#if PY_VERSION_HEX >= 0x030C0000
#define FNP_MONITORING 1
#define code_get_extra PyUnstable_Code_GetExtra
#define code_set_extra PyUnstable_Code_SetExtra
#define request_extra PyUnstable_Eval_RequestCodeExtraIndex
#else
#define FNP_MONITORING 0
#define code_get_extra _PyCode_GetExtra
#define code_set_extra _PyCode_SetExtra
#define request_extra _PyEval_RequestCodeExtraIndex
#endif

static Py_ssize_t extra_index = -1; /* the code objects' slot for their key */
static int enabled;                 /* the hooks are installed */

/* The strings of s as UTF-8; "?" when it has none (lone surrogates). Clears the error. */
static const char *utf8(PyObject *s)
{
    const char *u = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
    if (!u) {
        PyErr_Clear();
        return "?";
    }
    return u;
}

/* ---- keys ---------------------------------------------------------------------------- */

/* A code object's extra slot when it has no key (PROF_FILTER leaves it out, or the table
 * is full): kept, so that its calls do not ask again. */
static char no_key;

static uintptr_t intern_code(PyCodeObject *co)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    uintptr_t key = fnprof_frame_key(utf8(co->co_filename), co->co_firstlineno, utf8(co->co_name));
    code_set_extra((PyObject *)co, extra_index, key ? (void *)key : &no_key);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return key;
}

static inline uintptr_t code_key(PyCodeObject *co)
{
    void *extra = NULL;
    if (code_get_extra((PyObject *)co, extra_index, &extra) < 0) {
        PyErr_Clear();
        extra = NULL;
    }
    if (extra == &no_key)
        return 0;
    return extra ? (uintptr_t)extra : intern_code(co);
}

/* _lsprof's normalizeUserObj for a builtin: "<built-in method ...>", "<module.name>",
 * "<len>" or the repr of the method descriptor ("<method 'join' of 'str' objects>").
 * New reference, or NULL with no error set. */
static PyObject *builtin_name(PyCFunctionObject *fn)
{
    const char *ml_name = fn->m_ml->ml_name;
    if (fn->m_self == NULL) {
        PyObject *mod = fn->m_module, *modname = NULL;
        if (mod && PyUnicode_Check(mod)) {
            modname = Py_NewRef(mod);
        } else if (mod && PyModule_Check(mod)) {
            modname = PyModule_GetNameObject(mod);
            if (!modname)
                PyErr_Clear();
        }
        if (modname) {
            PyObject *r = NULL;
            if (PyUnicode_CompareWithASCIIString(modname, "builtins") != 0)
                r = PyUnicode_FromFormat("<%U.%s>", modname, ml_name);
            Py_DECREF(modname);
            if (r)
                return r;
        }
        return PyUnicode_FromFormat("<%s>", ml_name);
    }
    PyObject *name = PyUnicode_FromString(ml_name);
    if (name) {
        PyObject *mo = _PyType_Lookup(Py_TYPE(fn->m_self), name);
        Py_XINCREF(mo);
        Py_DECREF(name);
        if (mo) {
            PyObject *r = PyObject_Repr(mo);
            Py_DECREF(mo);
            if (r)
                return r;
        }
    }
    PyErr_Clear();
    if (fn->m_module && PyUnicode_Check(fn->m_module))
        return PyUnicode_FromFormat("<built-in method %S.%s>", fn->m_module, ml_name);
    return PyUnicode_FromFormat("<built-in method %s>", ml_name);
}

/* Builtins' keys by PyMethodDef: open addressing, at most half full. As in _lsprof, the
 * first function object seen for a PyMethodDef names it. */
static struct builtin_slot {
    const PyMethodDef *ml;
    uintptr_t key;
} * builtins;
static size_t builtins_mask, builtins_count;

static size_t builtin_home(const PyMethodDef *ml)
{
    return (size_t)(((uint64_t)(uintptr_t)ml * 0x9e3779b97f4a7c15ull) >> 20) & builtins_mask;
}

static int builtins_grow(void)
{
    size_t len = builtins ? 2 * (builtins_mask + 1) : 1024;
    struct builtin_slot *fresh = PyMem_RawCalloc(len, sizeof(*fresh)), *old = builtins;
    if (!fresh)
        return -1;
    size_t old_len = old ? builtins_mask + 1 : 0;
    builtins = fresh;
    builtins_mask = len - 1;
    for (size_t i = 0; i < old_len; i++) {
        if (!old[i].ml)
            continue;
        size_t j = builtin_home(old[i].ml);
        while (builtins[j].ml)
            j = (j + 1) & builtins_mask;
        builtins[j] = old[i];
    }
    PyMem_RawFree(old);
    return 0;
}

static uintptr_t intern_builtin(PyCFunctionObject *fn, size_t j)
{
    if ((builtins_count + 1) * 2 > builtins_mask + 1) {
        if (builtins_grow())
            return 0;
        j = builtin_home(fn->m_ml);
        while (builtins[j].ml)
            j = (j + 1) & builtins_mask;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *name = builtin_name(fn);
    uintptr_t key = name ? fnprof_frame_key("~", 0, utf8(name)) : 0;
    int named = name != NULL;
    Py_XDECREF(name);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    if (named) { /* key 0 kept too: left out by PROF_FILTER, or no room */
        builtins[j].ml = fn->m_ml;
        builtins[j].key = key;
        builtins_count++;
    }
    return key;
}

static inline uintptr_t builtin_key(PyCFunctionObject *fn)
{
    if (!builtins && builtins_grow())
        return 0;
    size_t j = builtin_home(fn->m_ml);
    for (; builtins[j].ml; j = (j + 1) & builtins_mask)
        if (builtins[j].ml == fn->m_ml)
            return builtins[j].key;
    return intern_builtin(fn, j);
}

/* This module's own functions and methods are not profiled: a region's enter would
 * otherwise open inside the builtin call that asked for it, and close with it. */
static PyObject *the_module; /* borrowed: it lives as long as the process */
static PyTypeObject RegionType;

static int own(const PyCFunctionObject *fn)
{
    return fn->m_self && (fn->m_self == the_module || Py_IS_TYPE(fn->m_self, &RegionType));
}

/* ---- 3.11: the C profile hook ---------------------------------------------------------- */

#if !FNP_MONITORING
static int profile_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    switch (what) {
    case PyTrace_CALL:
    case PyTrace_RETURN: {
        PyCodeObject *co = PyFrame_GetCode(frame);
        uintptr_t key = code_key(co);
        Py_DECREF(co);
        if (what == PyTrace_CALL)
            fnprof_frame_enter(key);
        else
            fnprof_frame_exit(key);
        break;
    }
    case PyTrace_C_CALL:
        if (PyCFunction_Check(arg) && !own((PyCFunctionObject *)arg))
            fnprof_frame_enter(builtin_key((PyCFunctionObject *)arg));
        break;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
        if (PyCFunction_Check(arg) && !own((PyCFunctionObject *)arg))
            fnprof_frame_exit(builtin_key((PyCFunctionObject *)arg));
        break;
    }
    return 0;
}

static int set_hooks(int on)
{
    PyInterpreterState *interp = PyThreadState_GetInterpreter(PyThreadState_Get());
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(interp); ts; ts = PyThreadState_Next(ts))
        if (_PyEval_SetProfile(ts, on ? profile_hook : NULL, NULL) < 0)
            return -1;
    return 0;
}

/* threading.setprofile's function: the first event of a new thread installs the hook. */
static PyObject *thread_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (enabled && _PyEval_SetProfile(PyThreadState_Get(), profile_hook, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}
#else
/* ---- 3.12+: sys.monitoring -------------------------------------------------------------- */

static int tool_id = -1;
static PyObject *missing; /* sys.monitoring.MISSING */

static PyObject *on_start(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n >= 1 && PyCode_Check(args[0]))
        fnprof_frame_enter(code_key((PyCodeObject *)args[0]));
    Py_RETURN_NONE;
}

static PyObject *on_return(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n >= 1 && PyCode_Check(args[0]))
        fnprof_frame_exit(code_key((PyCodeObject *)args[0]));
    Py_RETURN_NONE;
}

/* The builtin a CALL event calls, as _lsprof's get_cfunc_from_callable: a PyCFunction, or
 * a method descriptor bound to its first argument. New reference or NULL. */
static PyObject *cfunc_of(PyObject *callable, PyObject *self_arg)
{
    if (PyCFunction_Check(callable))
        return Py_NewRef(callable);
    if (Py_IS_TYPE(callable, &PyMethodDescr_Type) && self_arg != missing) {
        PyObject *meth =
            Py_TYPE(callable)->tp_descr_get(callable, self_arg, (PyObject *)Py_TYPE(self_arg));
        if (!meth) {
            PyErr_Clear();
            return NULL;
        }
        if (PyCFunction_Check(meth))
            return meth;
        Py_DECREF(meth);
    }
    return NULL;
}

static PyObject *on_call(PyObject *self, PyObject *const *args, Py_ssize_t n, int enter)
{
    PyObject *fn = n >= 4 ? cfunc_of(args[2], args[3]) : NULL;
    if (fn) {
        if (!own((PyCFunctionObject *)fn)) {
            uintptr_t key = builtin_key((PyCFunctionObject *)fn);
            if (enter)
                fnprof_frame_enter(key);
            else
                fnprof_frame_exit(key);
        }
        Py_DECREF(fn);
    }
    Py_RETURN_NONE;
}

static PyObject *on_ccall(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    return on_call(self, args, n, 1);
}

static PyObject *on_creturn(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    return on_call(self, args, n, 0);
}

static PyMethodDef callbacks[] = {
    {"_pystart", (PyCFunction)(void (*)(void))on_start, METH_FASTCALL, NULL},
    {"_pyreturn", (PyCFunction)(void (*)(void))on_return, METH_FASTCALL, NULL},
    {"_ccall", (PyCFunction)(void (*)(void))on_ccall, METH_FASTCALL, NULL},
    {"_creturn", (PyCFunction)(void (*)(void))on_creturn, METH_FASTCALL, NULL},
};

static const struct {
    const char *event;
    int callback;
} events[] = {
    {"PY_START", 0},  {"PY_RESUME", 0}, {"PY_THROW", 0}, {"PY_RETURN", 1}, {"PY_YIELD", 1},
    {"PY_UNWIND", 1}, {"CALL", 2},      {"C_RETURN", 3}, {"C_RAISE", 3},
};

static int set_hooks(int on)
{
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *mon = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
    Py_XDECREF(sys);
    if (!mon)
        return -1;
    int rc = -1;
    PyObject *evs = PyObject_GetAttrString(mon, "events"), *r = NULL;
    if (!evs)
        goto out;
    if (on) {
        if (!missing && !(missing = PyObject_GetAttrString(mon, "MISSING")))
            goto out;
        /* a free id beside cProfile's (2) and the debugger's and coverage's (0, 1) */
        for (int id = 3; id <= 4 && tool_id < 0; id++) {
            r = PyObject_CallMethod(mon, "use_tool_id", "is", id, "fnprof");
            if (r)
                tool_id = id;
            else
                PyErr_Clear();
            Py_XDECREF(r);
        }
        if (tool_id < 0) {
            PyErr_SetString(PyExc_ValueError, "fnprof: no free sys.monitoring tool id");
            goto out;
        }
        long mask = 0;
        for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
            PyObject *ev = PyObject_GetAttrString(evs, events[i].event);
            long bit = ev ? PyLong_AsLong(ev) : -1;
            Py_XDECREF(ev);
            if (bit < 0)
                goto out;
            PyObject *cb = PyCFunction_New(&callbacks[events[i].callback], NULL);
            r = cb ? PyObject_CallMethod(mon, "register_callback", "ilO", tool_id, bit, cb) : NULL;
            Py_XDECREF(cb);
            if (!r)
                goto out;
            Py_DECREF(r);
            mask |= bit;
        }
        r = PyObject_CallMethod(mon, "set_events", "il", tool_id, mask);
    } else if (tool_id >= 0) {
        r = PyObject_CallMethod(mon, "set_events", "il", tool_id, 0L);
        Py_XDECREF(r);
        r = PyObject_CallMethod(mon, "free_tool_id", "i", tool_id);
        tool_id = -1;
    } else {
        r = Py_NewRef(Py_None);
    }
    if (r) {
        Py_DECREF(r);
        rc = 0;
    }
out:
    Py_XDECREF(evs);
    Py_DECREF(mon);
    return rc;
}

static PyObject *thread_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    Py_RETURN_NONE; /* sys.monitoring covers every thread */
}
#endif

/* ---- module functions ---------------------------------------------------------------- */

static PyObject *errno_error(int rc)
{
    errno = -rc;
    return PyErr_SetFromErrno(PyExc_OSError);
}

static PyObject *m_enable(PyObject *self, PyObject *unused)
{
    int rc = fnprof_frame_start();
    if (rc)
        return errno_error(rc);
    if (!enabled) {
        if (set_hooks(1) < 0)
            return NULL;
        enabled = 1;
    }
    Py_RETURN_NONE;
}

static PyObject *m_disable(PyObject *self, PyObject *unused)
{
    if (enabled) {
        enabled = 0;
        if (set_hooks(0) < 0)
            return NULL;
        fnprof_frame_unwind();
    }
    Py_RETURN_NONE;
}

static PyObject *m_dump(PyObject *self, PyObject *arg)
{
    PyObject *bytes = NULL;
    if (arg != Py_None && !PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    int rc = fnprof_dump(bytes ? PyBytes_AS_STRING(bytes) : NULL);
    Py_XDECREF(bytes);
    if (rc == -ENODATA) {
        PyErr_SetString(PyExc_RuntimeError, "fnprof: no call was recorded");
        return NULL;
    }
    return rc ? errno_error(rc) : Py_NewRef(Py_None);
}

static PyObject *m_frame_key(PyObject *self, PyObject *args)
{
    const char *file, *name;
    int line;
    if (!PyArg_ParseTuple(args, "sis", &file, &line, &name))
        return NULL;
    return PyLong_FromSize_t(fnprof_frame_key(file, line, name));
}

static PyObject *m_simple(void (*fn)(void))
{
    fn();
    Py_RETURN_NONE;
}

static PyObject *m_step(PyObject *self, PyObject *unused)
{
    return m_simple(fnprof_step);
}

static PyObject *m_pause(PyObject *self, PyObject *unused)
{
    return m_simple(fnprof_pause);
}

static PyObject *m_resume(PyObject *self, PyObject *unused)
{
    return m_simple(fnprof_resume);
}

static PyObject *m_reset(PyObject *self, PyObject *unused)
{
    return m_simple(fnprof_reset);
}

static PyObject *m_add_metadata(PyObject *self, PyObject *args)
{
    const char *key, *value;
    if (!PyArg_ParseTuple(args, "ss", &key, &value))
        return NULL;
    int rc = fnprof_add_metadata(key, value);
    if (rc == -EINVAL) {
        PyErr_SetString(PyExc_ValueError, "fnprof: empty or too long key, or too long value");
        return NULL;
    }
    return rc ? errno_error(rc) : Py_NewRef(Py_None);
}

static PyObject *m_is_enabled(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(enabled);
}

/* Where libfnprof.so is, for `python3 -m fnprof` to preload it. */
static PyObject *m_library(PyObject *self, PyObject *unused);

static PyMethodDef module_methods[] = {
    {"enable", m_enable, METH_NOARGS, "Starts recording and installs the hooks (all threads)."},
    {"disable", m_disable, METH_NOARGS, "Removes the hooks; closes this thread's open frames."},
    {"dump", m_dump, METH_O, "fnprof_dump(path): writes the profile recorded so far."},
    {"frame_key", m_frame_key, METH_VARARGS, "fnprof_frame_key(file, line, name)."},
    {"step", m_step, METH_NOARGS, "fnprof_step()."},
    {"pause", m_pause, METH_NOARGS, "fnprof_pause()."},
    {"resume", m_resume, METH_NOARGS, "fnprof_resume()."},
    {"reset", m_reset, METH_NOARGS, "fnprof_reset()."},
    {"add_metadata", m_add_metadata, METH_VARARGS, "fnprof_add_metadata(key, value)."},
    {"is_enabled", m_is_enabled, METH_NOARGS, "Whether the hooks are installed."},
    {"thread_hook", (PyCFunction)(void (*)(void))thread_hook, METH_FASTCALL,
     "For threading.setprofile: installs the hook in a new thread."},
    {"library", m_library, METH_NOARGS, "The path of libfnprof.so in this process."},
    {NULL, NULL, 0, NULL},
};

static PyObject *m_library(PyObject *self, PyObject *unused)
{
    Dl_info info;
    if (!dladdr((void *)fnprof_frame_key, &info) || !info.dli_fname)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(info.dli_fname);
}

/* ---- Region: fnprof.region(name), a context manager and a decorator -------------------- */

typedef struct {
    PyObject_HEAD uintptr_t key;
    PyObject *func; /* decorated: the function it wraps */
} Region;

/* Region(name): keyed by the caller's file and line, as FNPROF_REGION is. */
static PyObject *region_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    const char *file = "<unknown>";
    int line = 0;
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    PyCodeObject *co = f ? PyFrame_GetCode(f) : NULL;
    if (co) {
        file = utf8(co->co_filename);
        line = PyFrame_GetLineNumber(f);
    }
    Region *r = (Region *)type->tp_alloc(type, 0);
    if (r)
        r->key = fnprof_frame_key(file, line, name);
    Py_XDECREF(co);
    return (PyObject *)r;
}

static void region_dealloc(Region *r)
{
    Py_XDECREF(r->func);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *region_enter(Region *r, PyObject *unused)
{
    fnprof_frame_enter(r->key);
    return Py_NewRef((PyObject *)r);
}

static PyObject *region_exit(Region *r, PyObject *args)
{
    fnprof_frame_exit(r->key);
    Py_RETURN_FALSE;
}

static PyMethodDef region_methods[] = {
    {"__enter__", (PyCFunction)region_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)region_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* Undecorated: region(name)(func) decorates func. Decorated: a call of func inside it. */
static PyObject *region_call(Region *r, PyObject *args, PyObject *kw)
{
    if (!r->func) {
        PyObject *func;
        if (kw || !PyArg_ParseTuple(args, "O:region", &func))
            return NULL;
        Region *d = (Region *)RegionType.tp_alloc(&RegionType, 0);
        if (d) {
            d->key = r->key;
            d->func = Py_NewRef(func);
        }
        return (PyObject *)d;
    }
    fnprof_frame_enter(r->key);
    PyObject *res = PyObject_Call(r->func, args, kw);
    fnprof_frame_exit(r->key);
    return res;
}

/* A decorated method binds as a function does. */
static PyObject *region_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (!obj || !((Region *)self)->func)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyTypeObject RegionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "fnprof.region",
    .tp_basicsize = sizeof(Region),
    .tp_dealloc = (destructor)region_dealloc,
    .tp_call = (ternaryfunc)region_call,
    .tp_descr_get = region_get,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "region(name): a named region of fnprof's, as a context manager or a decorator.",
    .tp_methods = region_methods,
    .tp_new = region_new,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_fnprof",
    .m_doc = "fnprof's per-call path; use the fnprof package.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__fnprof(void)
{
    if (extra_index < 0 && (extra_index = request_extra(NULL)) < 0)
        return NULL;
    if (PyType_Ready(&RegionType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    the_module = m;
    if (PyModule_AddObjectRef(m, "region", (PyObject *)&RegionType) < 0 ||
        PyModule_AddStringConstant(m, "version", fnprof_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
