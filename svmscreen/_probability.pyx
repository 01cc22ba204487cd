"""Multi-class probabilities from pairwise ones: LIBSVM's coupling, and
the sigmoid that gives the pairwise ones.

svm.cpp's ``multiclass_probability`` (Wu, Lin & Weng 2004, method 2) for
one row at a time: with r_ij = P(i | i or j) it minimises p'Qp subject to
sum p = 1, Q_tt = sum_{j != t} r_jt^2 and Q_tj = -r_jt r_tj, by fixed-point
coordinate updates (each followed by the renormalisation that keeps
sum p = 1) until max_t |(Qp)_t - p'Qp| < 0.005/k, at most max(100, k)
sweeps.  The loops repeat svm.cpp's operations in its order, so the
probabilities are LIBSVM's bit for bit given the same r.

``sigmoid_from_exp`` is the last step of svm.cpp's ``sigmoid_predict``
(and of ``sigmoid_train``'s p and q), given e = exp(-|A f + B|) from
numpy's exp.

Trusts its caller (``svmscreen.libsvm.model``): k >= 1, the arrays
C-contiguous with matching shapes (R is (n, k, k), r is (n, k(k-1)/2),
P is (n, k); fApB, e and q of one length).
"""
import numpy as np

from libc.math cimport fabs


cdef bint couple_row(Py_ssize_t k, const double* r, double* Q, double* Qp,
                     double* p) noexcept nogil:
    """svm.cpp's multiclass_probability on one k x k matrix r (row-major,
    r[i*k + j] = r_ij, diagonal unread) into p; Q (k*k) and Qp (k) are
    scratch.  Returns whether max(100, k) sweeps ended without reaching
    the tolerance ("Exceeds max_iter in multiclass_prob")."""
    cdef Py_ssize_t t, j, it
    cdef Py_ssize_t max_iter = k if k > 100 else 100
    cdef double eps = 0.005 / k
    cdef double pQp, diff, scale, error, max_error, Qtt
    cdef double* Qt
    for t in range(k):
        p[t] = 1.0 / k
        # Q_tt summed over j in increasing order, as svm.cpp's two loops
        Qtt = 0.0
        for j in range(k):
            if j != t:
                Qtt += r[j * k + t] * r[j * k + t]
                Q[t * k + j] = -r[j * k + t] * r[t * k + j]
        Q[t * k + t] = Qtt
    for it in range(max_iter):
        # the stopping test recomputes Qp and p'Qp, which the updates only
        # track, for accuracy (svm.cpp's comment)
        pQp = 0.0
        for t in range(k):
            Qt = Q + t * k
            Qp[t] = 0.0
            for j in range(k):
                Qp[t] += Qt[j] * p[j]
            pQp += p[t] * Qp[t]
        max_error = 0.0
        for t in range(k):
            error = fabs(Qp[t] - pQp)
            # a NaN error is skipped, as svm.cpp's `error > max_error`
            if error > max_error:
                max_error = error
        if max_error < eps:
            return False
        for t in range(k):
            Qt = Q + t * k
            diff = (-Qp[t] + pQp) / Qt[t]
            p[t] += diff
            scale = 1 + diff
            # two divisions, not one by scale^2: svm.cpp's rounding
            pQp = (pQp + diff * (diff * Qt[t] + 2 * Qp[t])) / scale / scale
            for j in range(k):
                Qp[j] = (Qp[j] + diff * Qt[j]) / scale
                p[j] /= scale
    return True


def couple_matrices(const double[:, :, ::1] R, double[:, ::1] P):
    """P[n] = the coupling of the k x k matrix R[n] (R[n, i, j] = r_ij).

    Returns the number of rows that stopped at max(100, k) sweeps.
    """
    cdef Py_ssize_t n_rows = R.shape[0], k = R.shape[1], row
    cdef Py_ssize_t exceeded = 0
    cdef double[:, ::1] Q = np.empty((k, k))
    cdef double[::1] Qp = np.empty(k)
    if n_rows == 0:
        return 0
    with nogil:
        for row in range(n_rows):
            exceeded += couple_row(k, &R[row, 0, 0], &Q[0, 0], &Qp[0], &P[row, 0])
    return exceeded


def couple_pairs(const double[:, ::1] r, double[:, ::1] P):
    """P[n] = the coupling of row n's pairwise estimates r[n, m] = r_ij of
    the m-th pair (i, j), i < j, in LIBSVM's order, with r_ji = 1 - r_ij
    (svm_predict_probability's ``pairwise_prob``).

    Returns the number of rows that stopped at max(100, k) sweeps.
    """
    cdef Py_ssize_t n_rows = P.shape[0], k = P.shape[1], row, i, j, m
    cdef Py_ssize_t exceeded = 0
    cdef double[:, ::1] full = np.zeros((k, k))
    cdef double[:, ::1] Q = np.empty((k, k))
    cdef double[::1] Qp = np.empty(k)
    if n_rows == 0:
        return 0
    with nogil:
        for row in range(n_rows):
            m = 0
            for i in range(k):
                for j in range(i + 1, k):
                    full[i, j] = r[row, m]
                    full[j, i] = 1 - r[row, m]
                    m += 1
            exceeded += couple_row(k, &full[0, 0], &Q[0, 0], &Qp[0], &P[row, 0])
    return exceeded


def sigmoid_from_exp(const double[::1] fApB, double[::1] e, double[::1] q=None):
    """p = 1/(1 + exp(fApB)) written over e = exp(-|fApB|), and q = 1 - p
    into q unless None, without cancellation: svm.cpp's two branches,
    p = e/(1+e), q = 1/(1+e) for fApB >= 0, else p = 1/(1+e), q = e/(1+e)
    (a nan fApB takes the second).  One pass and no temporaries: on a
    predict's n x k(k-1)/2 values numpy's selects and divisions cost 6
    times its exp."""
    cdef Py_ssize_t i, n = fApB.shape[0]
    cdef double denominator
    # selects, not branches: the sign of fApB is not predictable, and
    # without branches the compiler vectorises the loop
    with nogil:
        if q is None:
            for i in range(n):
                e[i] = (e[i] if fApB[i] >= 0 else 1.0) / (1.0 + e[i])
        else:
            for i in range(n):
                denominator = 1.0 + e[i]
                q[i] = (1.0 if fApB[i] >= 0 else e[i]) / denominator
                e[i] = (e[i] if fApB[i] >= 0 else 1.0) / denominator
