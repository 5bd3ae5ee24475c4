/* plotq_exec_arm: the cold path's way to arm the exec filter (sandbox/harness/entry.py).
 *
 * A Python extension of one function, loaded by entry.py with _imp.create_dynamic: importing
 * ctypes and loading libplotq_confine.so (libseccomp, the C++ runtime) would cost a cold job far
 * more CPU before any user code; this module is plain C and needs only libc. The program is the one
 * build_exec_filter() makes with libseccomp (sandbox/seccomp_filter.cpp), written into
 * exec_filter_bpf.h at build time, so both paths install the same filter.
 *
 *   arm() -> (ok: bool, state: str)   state "tsync", or why not: "no_new_privs", "error:<text>",
 *                                      "error:unavailable" (seccomp filters unsupported)
 * Steps, as plotq_arm_exec_filter (sandbox/confine.cpp): PR_SET_DUMPABLE 0 (an exec made the
 * process dumpable again), PR_SET_NO_NEW_PRIVS, seccomp(SET_MODE_FILTER, TSYNC).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec_filter_bpf.h"

static PyObject* arm(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  char state[64];
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return Py_BuildValue("(Os)", Py_False, "no_new_privs");
  struct sock_fprog prog;
  prog.len = (unsigned short)(sizeof plotq_exec_filter / sizeof plotq_exec_filter[0]);
  prog.filter = (struct sock_filter*)plotq_exec_filter;
  long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (rc == 0) return Py_BuildValue("(Os)", Py_True, "tsync");
  if (rc > 0) /* TSYNC: the id of a thread that could not be synchronised */
    snprintf(state, sizeof state, "error:%s", strerror(ESRCH));
  else
    snprintf(state, sizeof state, "error:%s", errno == EINVAL || errno == ENOSYS ? "unavailable" : strerror(errno));
  return Py_BuildValue("(Os)", Py_False, state);
}

static PyMethodDef methods[] = {
    {"arm", arm, METH_NOARGS, "Arms the exec filter: (ok, state)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "plotq_exec_arm", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_plotq_exec_arm(void) { return PyModule_Create(&module); }
