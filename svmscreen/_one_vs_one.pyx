"""One-vs-one helpers: a pair's rows from its two classes' (``merge_rows``),
and the prediction of the LIBSVM layer: the pairs' decision values from
per-class partial sums, and svm_predict's vote.

With k classes, classifier m = (i, j) of the k(k-1)/2 pairs (i < j, in
LIBSVM's order) is f_ij(x) = sum over class i's SVs of sv_coef[j-1] K +
sum over class j's SVs of sv_coef[i] K - rho_m.  Its two sums are read
from ``parts[c] = K[:, class c] @ sv_coef[:, class c].T`` (one product per
class, by BLAS), so the O(n k^2) assembly and the vote are the only loops
over pairs, and they run here per row instead of per pair in Python.

Trusts its callers: for the prediction (``svmscreen.libsvm.model``),
k >= 2, the arrays C-contiguous with matching shapes (parts is
(k, n, k-1), neg_rho is (k(k-1)/2,), dec is (n, k(k-1)/2), winner is (n,));
for ``merge_rows`` (``one_vs_one.pair_rows``), ascending row lists.
"""
import numpy as np

cimport numpy as cnp

cnp.import_array()


def merge_rows(const Py_ssize_t[::1] first, const Py_ssize_t[::1] second):
    """(rows, signs): two ascending lists of distinct rows merged in
    ascending order, and each row's sign, +1 if it came from ``first``,
    -1 from ``second``.  One typed pass for each of the k(k-1)/2 pairs of
    classes: np.sort of the concatenation and np.where over the labels
    cost about 5 us a pair (100 classes: 4950 pairs)."""
    cdef Py_ssize_t a = first.shape[0], b = second.shape[0], p = 0, q = 0, k
    cdef cnp.npy_intp length = a + b
    # written through numpy's C API: typed views of new arrays cost more
    # than this merge of a few dozen rows
    rows = cnp.PyArray_EMPTY(1, &length, cnp.NPY_INTP, 0)
    signs = cnp.PyArray_EMPTY(1, &length, cnp.NPY_DOUBLE, 0)
    cdef Py_ssize_t* rows_at = <Py_ssize_t*> cnp.PyArray_DATA(<cnp.ndarray> rows)
    cdef double* signs_at = <double*> cnp.PyArray_DATA(<cnp.ndarray> signs)
    with nogil:
        for k in range(a + b):
            if q == b or (p < a and first[p] < second[q]):
                rows_at[k] = first[p]
                signs_at[k] = 1.0
                p += 1
            else:
                rows_at[k] = second[q]
                signs_at[k] = -1.0
                q += 1
    return rows, signs


def combine_pairs(const double[:, :, ::1] parts, const double[::1] neg_rho,
                  double[:, ::1] dec):
    """dec[r, m] = -rho_m + (parts[i, r, j-1] + parts[j, r, i]) for the
    m-th pair (i, j).

    The operands and their order are the numpy expression's this replaced
    (``dec[:] = -rho; dec += parts[i][:, j-1] + parts[j][:, i]``), so the
    values are the same bit for bit, inf and nan included (C's arithmetic
    raises nothing, as numpy's under ``errstate(ignore)``).
    """
    cdef Py_ssize_t k = parts.shape[0], n_rows = parts.shape[1], row, i, j, m
    with nogil:
        for row in range(n_rows):
            m = 0
            for i in range(k):
                for j in range(i + 1, k):
                    dec[row, m] = neg_rho[m] + (parts[i, row, j - 1] + parts[j, row, i])
                    m += 1


def vote(const double[:, ::1] dec, Py_ssize_t k, Py_ssize_t[::1] winner):
    """winner[r] = the class with the most votes of row r's pairs, the
    first such class on ties: pair (i, j) votes for i if dec > 0, else for
    j (a nan value too), as svm.cpp's svm_predict_values."""
    cdef Py_ssize_t n_rows = dec.shape[0], row, i, j, m, best, win, wins
    cdef Py_ssize_t[::1] votes = np.zeros(k, dtype=np.intp)
    with nogil:
        for row in range(n_rows):
            for i in range(k):
                votes[i] = 0
            m = 0
            for i in range(k):
                # class i's votes in a register, and no branch: the sign of
                # a value is no better predicted than the vote it gives
                wins = votes[i]
                for j in range(i + 1, k):
                    win = dec[row, m] > 0
                    wins += win
                    votes[j] += 1 - win
                    m += 1
                votes[i] = wins
            best = 0
            for i in range(1, k):
                if votes[i] > votes[best]:
                    best = i
            winner[row] = best
