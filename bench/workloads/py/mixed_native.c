/* The mixed workload's extension: spin(n) calls a small C function n times, one Python
 * call reaching many native ones (bench/python.py: the cost per native call). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

__attribute__((noinline)) static long step(long i)
{
    __asm__ volatile("");
    return i & 7;
}

static PyObject *spin(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg), s = 0;
    if (n == -1 && PyErr_Occurred())
        return NULL;
    for (long i = 0; i < n; i++)
        s += step(i);
    return PyLong_FromLong(s);
}

static PyMethodDef methods[] = {{"spin", spin, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "mixed_native", .m_size = -1,
                                    .m_methods = methods};

PyMODINIT_FUNC PyInit_mixed_native(void)
{
    return PyModule_Create(&module);
}
/* SPDX-License-Identifier: MIT */
