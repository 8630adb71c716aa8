/* SPDX-License-Identifier: MIT */
/* A C extension of the test's own, built with -finstrument-functions: Python calls it, and
 * it calls back into Python (a callback, a key= function) and into its own C helpers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

__attribute__((noinline)) static long helper(long i)
{
    __asm__ volatile("");
    return i * 2;
}

/* native_loop(n, cb): helper(i) and cb(i) for i in range(n) */
static PyObject *native_loop(PyObject *self, PyObject *args)
{
    long n;
    PyObject *cb;
    if (!PyArg_ParseTuple(args, "lO", &n, &cb))
        return NULL;
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += helper(i);
        PyObject *r = PyObject_CallFunction(cb, "l", i);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    return PyLong_FromLong(s);
}

/* native_keys(seq, key): [key(x) for x in seq], through PyObject_CallObject */
static PyObject *native_keys(PyObject *self, PyObject *args)
{
    PyObject *seq, *key;
    if (!PyArg_ParseTuple(args, "OO", &seq, &key))
        return NULL;
    PyObject *out = PyList_New(0);
    Py_ssize_t n = PySequence_Size(seq);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *x = PySequence_GetItem(seq, i);
        PyObject *a = x ? PyTuple_Pack(1, x) : NULL;
        PyObject *k = a ? PyObject_CallObject(key, a) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(x);
        if (!k || PyList_Append(out, k) < 0) {
            Py_XDECREF(k);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(k);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"native_loop", native_loop, METH_VARARGS, NULL},
    {"native_keys", native_keys, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "mixed", .m_size = -1,
                                    .m_methods = methods};

PyMODINIT_FUNC PyInit_mixed(void)
{
    return PyModule_Create(&module);
}
