/* A small C extension for examples/python/area.py: integrate(f, a, b, n) adds up n slices
 * of a Python function f with Simpson's rule, calling f back for every point. Built with
 * -finstrument-functions, so fnprof shows integrate, its C helpers and the Python f under
 * it in one stack (README's Python section; docs/python.md). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Simpson's weight of point i of n */
static double weight(long i, long n)
{
    if (i == 0 || i == n)
        return 1.0;
    return i % 2 ? 4.0 : 2.0;
}

/* f(x) through the interpreter: the callback fnprof nests under sample */
static int sample(PyObject *f, double x, double *y)
{
    PyObject *r = PyObject_CallFunction(f, "d", x);
    if (!r)
        return -1;
    *y = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *integrate(PyObject *self, PyObject *args)
{
    PyObject *f;
    double a, b, sum = 0.0;
    long n;
    if (!PyArg_ParseTuple(args, "Oddl", &f, &a, &b, &n))
        return NULL;
    n += n % 2; /* Simpson's rule wants an even count */
    double h = (b - a) / (double)n;
    for (long i = 0; i <= n; i++) {
        double y;
        if (sample(f, a + (double)i * h, &y) < 0)
            return NULL;
        sum += weight(i, n) * y;
    }
    return PyFloat_FromDouble(sum * h / 3.0);
}

static PyMethodDef methods[] = {
    {"integrate", integrate, METH_VARARGS, "integrate(f, a, b, n): Simpson's rule"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "shapes", .m_size = -1,
                                    .m_methods = methods};

PyMODINIT_FUNC PyInit_shapes(void)
{
    return PyModule_Create(&module);
}
/* SPDX-License-Identifier: MIT */
