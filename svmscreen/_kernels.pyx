"""Kernel functions with LIBSVM's definitions, on dense, CSR and precomputed data.

    linear       K(u, v) = u'v
    polynomial   K(u, v) = (gamma u'v + coef0)^degree
    rbf          K(u, v) = exp(-gamma ||u - v||^2)
    sigmoid      K(u, v) = tanh(gamma u'v + coef0)
    precomputed  K(i, j) read from a Gram matrix (training) or from a
                 test-by-training kernel matrix (prediction)

Every kernel value in the package comes from `kernel_from_dot`, the single
definition of these formulas: training evaluates it on scalar dot products,
prediction on blocks of dot products computed by BLAS.  RBF values at
prediction also come from squared distances summed from the differences
(`row_sq_distance`, svm.cpp's sum) through `rbf_from_distance`: for every
pair in the LIBSVM layer (`_rbf_by_differences`), and elsewhere where the
expanded distance cancels (`rbf_from_dots`).

Trusts its caller (``_validation``): dense arrays are float64 C-contiguous,
CSR matrices have float64 data, int32 sorted unique indices, and the
parameters are valid.
"""
import numpy as np
import scipy.sparse as sp

cimport cython
from libc.math cimport exp, isfinite, tanh

KERNEL_NAMES = ("linear", "poly", "rbf", "sigmoid", "precomputed")


cdef inline double int_power(double base, int times) noexcept nogil:
    # Power by squaring, as LIBSVM's powi, so polynomial kernels round alike.
    cdef double tmp = base, ret = 1.0
    cdef int t = times
    while t > 0:
        if t % 2 == 1:
            ret *= tmp
        tmp *= tmp
        t //= 2
    return ret


# exp(t) rounds to 0.0 for every t below this (e^-745.14 is half the least
# subnormal), and glibc's exp takes its slow error path (errno) on each such
# t: skipping the call returns the same 0.0.  RBF on unscaled data meets it
# often (svmguide1: 80% of the kernel values).
cdef double EXP_ZERO_BELOW = -746.0


cdef inline double rbf_from_distance(double sq_distance, double gamma) noexcept nogil:
    """exp(-gamma ||a - b||^2), a computed distance below zero read as 0."""
    cdef double t = -gamma * max(sq_distance, 0.0)
    return 0.0 if t < EXP_ZERO_BELOW else exp(t)


cdef double kernel_from_dot(int kernel_type, double dot, double sq_a,
                            double sq_b, double gamma, double coef0,
                            int degree) noexcept nogil:
    """K(a, b) from the dot product a'b and the squared norms of a and b."""
    if kernel_type == LINEAR:
        return dot
    if kernel_type == POLY:
        return int_power(gamma * dot + coef0, degree)
    if kernel_type == RBF:
        # ||a||^2 + ||b||^2 - 2a'b can round below zero for a ~ b
        return rbf_from_distance(sq_a + sq_b - 2.0 * dot, gamma)
    if kernel_type == SIGMOID:
        return tanh(gamma * dot + coef0)
    return dot  # PRECOMPUTED: the "dot" is already the kernel value


cdef inline double dense_dot_in_order(const double* u, const double* v,
                                      Py_ssize_t d) noexcept nogil:
    """u'v summed term by term in index order, as svm.cpp's dot over the
    nonzeros (a zero term adds nothing): LIBSVM's rounding."""
    cdef double s = 0.0
    cdef Py_ssize_t k
    for k in range(d):
        s += u[k] * v[k]
    return s


def kernel_code(name):
    """Integer code of a kernel name."""
    return KERNEL_NAMES.index(name)


def squared_row_norms(X):
    """||x_i||^2 for every row of a dense or CSR matrix."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


DENSE_ENOUGH = 0.75


def compute_layout(X):
    """The representation kernel columns are computed on.

    A CSR matrix at least 75% dense is densified: above 2/3 density the dense
    array is also the smaller one (8 bytes a value against 12 per nonzero),
    and contiguous dot products beat index gathers.  Sparser data stays CSR,
    where a column costs a gather over each row's nonzeros.
    """
    if sp.issparse(X) and dense_enough(X.nnz, X.shape[0], X.shape[1]):
        return np.ascontiguousarray(X.toarray(), dtype=np.float64)
    return X


def dense_enough(nnz, n_rows, n_features):
    """Whether ``compute_layout`` densifies a CSR matrix of this shape with
    ``nnz`` stored values (``path.RowSubsets`` asks it of row subsets)."""
    return nnz >= DENSE_ENOUGH * n_rows * n_features


cdef class Kernel:
    """Kernel values between the rows of one training matrix.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or CSR matrix
        Validated training data; for ``kernel="precomputed"`` the square
        Gram matrix.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}
    gamma, coef0 : float
    degree : int
    in_order : bool, default=False
        Sum dense dot products term by term in index order, as LIBSVM (and
        as the CSR layout always does); by default in four partial sums,
        which is faster but rounds differently.
    """

    def __init__(self, X, kernel, double gamma, double coef0, int degree,
                 bint in_order=False):
        cdef Py_ssize_t i
        self.kernel_type = kernel_code(str(kernel))    # numpy.str_ included
        if self.kernel_type == PRECOMPUTED and (sp.issparse(X) or X.shape[0] != X.shape[1]):
            # K(i, i) is read for every i, unchecked (boundscheck off)
            raise ValueError(f"a precomputed kernel must be a square dense array, got "
                             f"shape {X.shape}")
        self.in_order = in_order
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.n_samples = X.shape[0]
        self.n_features = X.shape[1]
        self.sparse = sp.issparse(X)
        self._keepalive = X
        if self.sparse:
            self.csr_data = X.data
            self.csr_indptr = X.indptr
            indices, width = X.indices, self.n_features
            if width > 2 * X.nnz + 4096:
                # Memory O(nnz), as LIBSVM's sparse vectors, not O(largest
                # index): the scatter row gets a slot per column in use.
                used = np.unique(indices)
                indices = np.searchsorted(used, indices).astype(np.int32)
                width = used.shape[0]
                self._keepalive = (X, indices)
            self.csr_indices = indices
            self.scatter = np.zeros(width, dtype=np.float64)
        else:
            self.dense = X
        self.sq_norms = np.zeros(self.n_samples, dtype=np.float64)
        if self.kernel_type != PRECOMPUTED:
            # ||x_i||^2 by the same dot product as the kernel values (svm.cpp's
            # x_square), so that K(x_i, x_i) = exp(0) = 1 exactly for RBF: a
            # norm summed in another order leaves ulps in ||x_i||^2 - x_i'x_i.
            with nogil:
                for i in range(self.n_samples):
                    self.sq_norms[i] = self.dot(i, i)
            for i in range(self.n_samples):
                if not isfinite(self.sq_norms[i]):
                    raise ValueError(f"X: the squared norm of row {i} overflows float64; "
                                     "scale X down")

    def __reduce__(self):
        # Cython's automatic pickling read the typed views that are never
        # set (csr_data of dense data, the ord_ copies) and crashed the
        # interpreter in pickle.dumps, copy.copy and copy.deepcopy
        raise TypeError("a Kernel cannot be pickled or copied (it holds typed views of "
                        "its training data): build a new one from the data")

    cdef inline double dense_pair(self, const double* u, const double* v) noexcept nogil:
        """u'v of two dense rows, in the summation order ``in_order`` asks."""
        if self.in_order:
            return dense_dot_in_order(u, v, self.n_features)
        return dense_dot(u, v, self.n_features)

    @cython.boundscheck(False)
    cdef inline const double* dense_row(self, Py_ssize_t a) noexcept nogil:
        """The address of dense row a.  With 0 features the row is empty and
        its entry 0 does not exist: only the address is taken (the dot
        products then sum nothing), which the debug build's bounds check
        (SVMSCREEN_DEBUG=1) took for an out-of-bounds access."""
        return &self.dense[a, 0]

    cdef double dot(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        cdef Py_ssize_t p, q, p_end, q_end
        cdef double s = 0.0
        if not self.sparse:
            return self.dense_pair(self.dense_row(a), self.dense_row(b))
        # Merge-join of two sorted index lists.
        p = self.csr_indptr[a]
        p_end = self.csr_indptr[a + 1]
        q = self.csr_indptr[b]
        q_end = self.csr_indptr[b + 1]
        while p < p_end and q < q_end:
            if self.csr_indices[p] == self.csr_indices[q]:
                s += self.csr_data[p] * self.csr_data[q]
                p += 1
                q += 1
            elif self.csr_indices[p] < self.csr_indices[q]:
                p += 1
            else:
                q += 1
        return s

    cdef double value(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        """K(x_a, x_b)."""
        if self.kernel_type == PRECOMPUTED:
            return self.dense[a, b]
        return kernel_from_dot(self.kernel_type, self.dot(a, b),
                               self.sq_norms[a], self.sq_norms[b],
                               self.gamma, self.coef0, self.degree)

    cdef void column(self, Py_ssize_t a, const Py_ssize_t* idx,
                     Py_ssize_t count, double* out) noexcept nogil:
        """out[k] = K(x_a, x_idx[k]) for k < count."""
        cdef Py_ssize_t k
        cdef const double* row_a
        if self.kernel_type == PRECOMPUTED:
            for k in range(count):
                out[k] = self.dense[a, idx[k]]
            return
        if self.sparse:
            self.csr_dots(a, idx, count, self.csr_indptr, self.csr_indices, self.csr_data, out)
        else:
            row_a = self.dense_row(a)
            for k in range(count):
                out[k] = self.dense_pair(row_a, self.dense_row(idx[k]))
        self.dots_to_kernel(a, idx, count, self.sq_norms, out)

    cdef void column_rows(self, Py_ssize_t a, const Py_ssize_t* rows,
                          Py_ssize_t count, double* out) noexcept nogil:
        """out[k] = K(x_a, z_rows[k]), z_r the r-th row of the ``follow_order``
        copy (CSR data only; ``ordered`` must be set).  The solver computes
        its columns in position order, and shrinking and fixed samples
        scatter the positions: reading CSR rows out of sequence cost about
        1.9 times as much a kernel value (a9a, 10k rows, linear: 17 against
        9 ns; mushrooms RBF 32 against 16 ns).  Each dot runs over the same
        entries in the same order as ``column``'s, so the values are the
        same."""
        self.csr_dots(a, rows, count, self.ord_indptr, self.ord_indices, self.ord_data, out)
        self.dots_to_kernel(a, rows, count, self.ord_sq_norms, out)

    cdef void csr_dots(self, Py_ssize_t a, const Py_ssize_t* rows, Py_ssize_t count,
                       const int[::1] indptr, const int[::1] indices,
                       const double[::1] data, double* out) noexcept nogil:
        """out[k] = x_a'z_rows[k], z the CSR rows (indptr, indices, data).
        x_a is scattered once; each dot is then a gather over z's nonzeros,
        branch-free, instead of a merge-join per pair."""
        cdef Py_ssize_t k, b, p
        cdef double s
        for p in range(self.csr_indptr[a], self.csr_indptr[a + 1]):
            self.scatter[self.csr_indices[p]] = self.csr_data[p]
        for k in range(count):
            b = rows[k]
            s = 0.0
            for p in range(indptr[b], indptr[b + 1]):
                s += self.scatter[indices[p]] * data[p]
            out[k] = s
        for p in range(self.csr_indptr[a], self.csr_indptr[a + 1]):
            self.scatter[self.csr_indices[p]] = 0.0

    cdef void dots_to_kernel(self, Py_ssize_t a, const Py_ssize_t* rows,
                             Py_ssize_t count, const double[::1] sq_norms,
                             double* out) noexcept nogil:
        """out[k] = K from the dot x_a'z_rows[k] in out[k], ||z_r||^2 = sq_norms[r]."""
        cdef Py_ssize_t k
        if self.kernel_type == LINEAR:
            return
        for k in range(count):
            out[k] = kernel_from_dot(self.kernel_type, out[k], self.sq_norms[a],
                                     sq_norms[rows[k]], self.gamma, self.coef0, self.degree)

    def follow_order(self, order):
        """Copy the CSR rows in ``order`` (a permutation of the samples) for
        ``column_rows``, replacing any earlier copy; returns whether a copy
        is kept (never for dense data or a precomputed kernel, where reading
        rows out of sequence costs little: splice, svmguide1 RBF the same,
        australian_scale linear 6.8 against 5.8 ns).  O(nnz) time, and nnz
        more entries of memory."""
        cdef const Py_ssize_t[::1] rows = np.ascontiguousarray(order, dtype=np.intp)
        cdef Py_ssize_t i, r, p, n = self.n_samples
        cdef int q
        cdef int[::1] indptr, indices
        cdef double[::1] data, sq
        if not self.sparse:
            return False
        if rows.shape[0] != n or not np.array_equal(np.sort(rows), np.arange(n)):
            raise ValueError(f"order must be a permutation of the {n} samples")
        indptr = np.empty(n + 1, dtype=np.int32)       # nnz fits, as in the data
        indices = np.empty(self.csr_data.shape[0], dtype=np.int32)
        data = np.empty(self.csr_data.shape[0], dtype=np.float64)
        sq = np.empty(n, dtype=np.float64)
        with nogil:
            indptr[0] = q = 0
            for r in range(n):
                i = rows[r]
                sq[r] = self.sq_norms[i]
                for p in range(self.csr_indptr[i], self.csr_indptr[i + 1]):
                    indices[q] = self.csr_indices[p]
                    data[q] = self.csr_data[p]
                    q += 1
                indptr[r + 1] = q
        self.ord_indptr, self.ord_indices, self.ord_data, self.ord_sq_norms = (
            indptr, indices, data, sq)
        self.ordered = True
        self.order_version += 1
        return True

    def diagonal(self):
        """K(x_i, x_i) for every sample, as an ndarray."""
        cdef Py_ssize_t i
        out = np.empty(self.n_samples, dtype=np.float64)
        cdef double[::1] view = out
        with nogil:
            for i in range(self.n_samples):
                view[i] = self.value(i, i)
        return out

    def feature_width(self):
        """The width of a linear kernel's feature rows (``feature_rows``):
        the columns of X, or of the CSR columns in use; -1 for any other
        kernel, whose K has no such factor."""
        if self.kernel_type != LINEAR:
            return -1
        return self.scatter.shape[0] if self.sparse else self.n_features

    def feature_rows(self, rows):
        """The rows x_r of X as a new dense array (``feature_width``
        columns), so that K[rows][:, rows] = F F' for F = feature_rows(rows):
        the dense fallback's low-rank factor (``dense_qp.LowRankQ``); linear
        kernel only."""
        if self.kernel_type != LINEAR:
            raise ValueError("feature_rows: the kernel is not linear")
        rows = np.ascontiguousarray(rows, dtype=np.intp)
        if self.sparse:
            X = sp.csr_matrix((np.asarray(self.csr_data), np.asarray(self.csr_indices),
                               np.asarray(self.csr_indptr)),
                              shape=(self.n_samples, self.scatter.shape[0]))
            return X[rows].toarray()
        return np.asarray(self.dense)[rows]

    def roundoff_scale(self):
        """A magnitude M of the computed kernel values: |K_ij| <= M, and
        each K_ij is within about 1e-15 M of its formula's exact value.
        The screening rules' round-off allowances are in this unit
        (``_rules._quadratic_roundoff``; docs/screening.md sec. 8).  A sum of
        terms of size s rounds by about 1e-15 s, so M is the size of the
        terms each formula sums (m = max_i ||x_i||^2):

        * linear: m (a dot product's terms; = max K_ii);
        * rbf: exp(-gamma d), d = ||u||^2 + ||v||^2 - 2 u'v, whose terms
          sum to at most 4 m; an error delta in d moves K <= 1 by at most
          gamma |delta|: M = 1 + 4 gamma m.  On data with large feature
          offsets d cancels, and M is far above max K_ii = 1 (features near
          1e4, gamma = 1: K_ij off by 4e-8, and the computed K had an
          eigenvalue of -6e-8);
        * poly: (gamma u'v + coef0)^degree, whose derivative in u'v is at
          most degree gamma (gamma m + |coef0|)^(degree - 1):
          M = max(1, degree) (gamma m + |coef0|)^degree;
        * sigmoid: tanh' <= 1: M = 1 + gamma m + |coef0|;
        * precomputed: max_i |K_ii| (the given values are the problem's).
        """
        cdef Py_ssize_t i
        cdef double m
        if self.n_samples == 0:
            return 0.0
        if self.kernel_type == PRECOMPUTED:
            return float(np.max(np.abs(self.diagonal())))
        # max ||x_i||^2 (finite, checked in __init__) in a typed loop: numpy's
        # max on the view cost more than the rest of a small pair's set-up
        m = self.sq_norms[0]
        for i in range(1, self.n_samples):
            if self.sq_norms[i] > m:
                m = self.sq_norms[i]
        if self.kernel_type == LINEAR:
            return m
        if self.kernel_type == RBF:
            return 1.0 + 4.0 * self.gamma * m
        if self.kernel_type == POLY:
            return max(1, self.degree) * (self.gamma * m + abs(self.coef0)) ** self.degree
        return 1.0 + self.gamma * m + abs(self.coef0)

    def rows(self, rows, cols=None):
        """The block K[rows][:, cols] (all columns by default) as an ndarray."""
        cdef Py_ssize_t[::1] row_idx = np.ascontiguousarray(rows, dtype=np.intp)
        cdef Py_ssize_t[::1] col_idx
        if cols is None:
            col_idx = np.arange(self.n_samples, dtype=np.intp)
        else:
            col_idx = np.ascontiguousarray(cols, dtype=np.intp)
        for name, index in (("rows", row_idx), ("cols", col_idx)):
            if len(index) and (np.min(index) < 0 or np.max(index) >= self.n_samples):
                raise IndexError(f"{name} out of range [0, {self.n_samples})")
        out = np.empty((row_idx.shape[0], col_idx.shape[0]), dtype=np.float64)
        cdef double[:, ::1] view = out
        cdef Py_ssize_t r
        if col_idx.shape[0] == 0:
            return out
        with nogil:
            for r in range(row_idx.shape[0]):
                self.column(row_idx[r], &col_idx[0], col_idx.shape[0], &view[r, 0])
        return out


def apply_kernel_to_dots(double[:, ::1] dots, const double[::1] sq_a,
                         const double[::1] sq_b, str kernel, double gamma,
                         double coef0, int degree):
    """Turn a block of dot products a_i'b_j into kernel values, in place."""
    cdef int kernel_type = kernel_code(kernel)
    cdef Py_ssize_t i, j
    if kernel_type == LINEAR or kernel_type == PRECOMPUTED:
        return
    with nogil:
        for i in range(dots.shape[0]):
            for j in range(dots.shape[1]):
                dots[i, j] = kernel_from_dot(kernel_type, dots[i, j], sq_a[i],
                                             sq_b[j], gamma, coef0, degree)


# ||a||^2 + ||b||^2 - 2 a'b loses every digit where a ~ b: the norms and
# the block's BLAS products round differently, so a training row met again
# at prediction (a support vector's own) got exp(-gamma * round-off), not 1
# (features near 1e8, gamma = 1: a training point's decision value -3e-4,
# LIBSVM's -1).  Below this fraction of ||a||^2 + ||b||^2 the distance is
# summed from a - b itself, as LIBSVM's k_function does at prediction.
CANCELLING = 1e-7


cdef class _Rows:
    """Dense or CSR rows (sorted indices), read by ``row_sq_distance``;
    with ``transposed``, dense rows also as columns (``_rbf_by_differences``).
    Made once per matrix: the rows of B serve every block of A."""
    cdef bint sparse
    cdef Py_ssize_t n, width
    cdef const double[:, ::1] dense
    cdef const double[:, ::1] dense_t
    cdef const double[::1] data
    cdef const Py_ssize_t[::1] indices
    cdef const Py_ssize_t[::1] indptr

    def __init__(self, M, bint transposed=False):
        self.sparse = sp.issparse(M)
        self.n, self.width = M.shape
        if self.sparse:
            M = sp.csr_matrix(M)
            if not M.has_sorted_indices:
                M = M.sorted_indices()
            self.data = np.ascontiguousarray(M.data, dtype=np.float64)
            self.indices = np.ascontiguousarray(M.indices, dtype=np.intp)
            self.indptr = np.ascontiguousarray(M.indptr, dtype=np.intp)
        else:
            self.dense = np.ascontiguousarray(M, dtype=np.float64)
            if transposed:
                self.dense_t = np.ascontiguousarray(np.asarray(self.dense).T)

    def __reduce__(self):
        # as Kernel's: Cython's automatic pickling read the unset views
        raise TypeError("_Rows cannot be pickled or copied")


cdef double dense_csr_sq_distance(const double* u, Py_ssize_t width, const double[::1] data,
                                  const Py_ssize_t[::1] indices, Py_ssize_t p,
                                  Py_ssize_t p_end) noexcept nogil:
    """||u - v||^2, u dense, v the CSR entries p..p_end (ascending indices)."""
    cdef double s = 0.0, diff
    cdef Py_ssize_t k
    for k in range(width):
        diff = u[k]
        if p < p_end and indices[p] == k:
            diff -= data[p]
            p += 1
        s += diff * diff
    while p < p_end:              # v's columns beyond u's
        s += data[p] * data[p]
        p += 1
    return s


cdef double row_sq_distance(_Rows A, Py_ssize_t i, _Rows B, Py_ssize_t j) noexcept nogil:
    """||A_i - B_j||^2 summed from the differences in feature order, as
    svm.cpp's k_function (zeros, which it does not store, add exactly 0)."""
    cdef double s = 0.0, diff
    cdef Py_ssize_t k, p, p_end, q, q_end
    if not A.sparse and not B.sparse:
        for k in range(min(A.width, B.width)):
            diff = A.dense[i, k] - B.dense[j, k]
            s += diff * diff
        for k in range(B.width, A.width):       # the wider row's own columns
            s += A.dense[i, k] * A.dense[i, k]
        for k in range(A.width, B.width):
            s += B.dense[j, k] * B.dense[j, k]
        return s
    if not A.sparse:
        return dense_csr_sq_distance(&A.dense[i, 0], A.width, B.data, B.indices,
                                     B.indptr[j], B.indptr[j + 1])
    if not B.sparse:
        return dense_csr_sq_distance(&B.dense[j, 0], B.width, A.data, A.indices,
                                     A.indptr[i], A.indptr[i + 1])
    # svm.cpp's merge of the two rows' nonzeros, then the longer one's tail
    # (one loop with both tails in its conditions took twice the time)
    p, p_end = A.indptr[i], A.indptr[i + 1]
    q, q_end = B.indptr[j], B.indptr[j + 1]
    while p < p_end and q < q_end:
        if A.indices[p] == B.indices[q]:
            diff = A.data[p] - B.data[q]
            p += 1
            q += 1
        elif A.indices[p] < B.indices[q]:
            diff = A.data[p]
            p += 1
        else:
            diff = B.data[q]
            q += 1
        s += diff * diff
    while p < p_end:
        s += A.data[p] * A.data[p]
        p += 1
    while q < q_end:
        s += B.data[q] * B.data[q]
        q += 1
    return s


def rbf_from_dots(double[:, ::1] dots, const double[::1] sq_a, const double[::1] sq_b,
                  A, _Rows rows_b, double gamma):
    """Turn a block of dot products a_i'b_j into RBF values, in place,
    where the expanded distance cancels (``CANCELLING``) from the rows of
    A and B themselves (dense or CSR; ``rows_b``: all of B's columns)."""
    cdef _Rows rows_a = _Rows(A)
    cdef Py_ssize_t i, j
    cdef double norms
    cdef double cancelling = CANCELLING
    with nogil:
        for i in range(dots.shape[0]):
            for j in range(dots.shape[1]):
                norms = sq_a[i] + sq_b[j]
                if norms - 2.0 * dots[i, j] <= cancelling * norms:
                    dots[i, j] = rbf_from_distance(row_sq_distance(rows_a, i, rows_b, j),
                                                   gamma)
                else:
                    dots[i, j] = kernel_from_dot(RBF, dots[i, j], sq_a[i], sq_b[j],
                                                 gamma, 0.0, 0)


def take_rows(X, const Py_ssize_t[::1] rows):
    """X[rows] for an array of row indices (in range, as the caller's own
    index arrays are): the same matrix scipy's row indexing builds for CSR
    (float64 data, int32 indices and indptr), a numpy take for an array.
    A one-vs-one path takes the rows of each pair of classes and of each
    CV fold's part of it; scipy's indexing checked and converted the index
    array each time, 30 us of a 80-row pair's 0.7 ms (letter, 26 classes)."""
    cdef Py_ssize_t k, r, start, count, n_rows = rows.shape[0]
    if not sp.issparse(X):
        return X[np.asarray(rows)]
    cdef const int[::1] indptr = X.indptr
    cdef const int[::1] indices = X.indices
    cdef const double[::1] data = X.data
    out_indptr = np.empty(n_rows + 1, dtype=np.int32)
    cdef int[::1] new_indptr = out_indptr
    cdef Py_ssize_t nnz = 0
    new_indptr[0] = 0
    for k in range(n_rows):
        r = rows[k]
        nnz += indptr[r + 1] - indptr[r]
        new_indptr[k + 1] = <int> nnz
    out_indices = np.empty(nnz, dtype=np.int32)
    out_data = np.empty(nnz, dtype=np.float64)
    cdef int[::1] new_indices = out_indices
    cdef double[::1] new_data = out_data
    with nogil:
        for k in range(n_rows):
            start = indptr[rows[k]]
            count = new_indptr[k + 1] - new_indptr[k]
            new_indices[new_indptr[k]:new_indptr[k + 1]] = indices[start:start + count]
            new_data[new_indptr[k]:new_indptr[k + 1]] = data[start:start + count]
    return sp.csr_matrix((out_data, out_indices, out_indptr), shape=(n_rows, X.shape[1]),
                         copy=False)


def _keep_columns(M, used):
    """The CSR matrix M restricted to the columns ``used`` (sorted), which
    become columns 0, 1, ...; O(nnz)."""
    M = sp.csr_matrix(M)
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
    position = np.searchsorted(used, M.indices)
    keep = position < used.size
    keep[keep] = used[position[keep]] == M.indices[keep]
    return sp.csr_matrix((M.data[keep], (rows[keep], position[keep])),
                         shape=(M.shape[0], used.size))


cdef extern from "Python.h":
    # PyErr_CheckSignals without Cython's except -1 check: signal_raised's
    # callers report the exception it sets after freeing what they hold.
    int _check_signals "PyErr_CheckSignals" ()


cdef bint signal_raised(long long* counter, long long work) noexcept nogil:
    """Add ``work`` to ``*counter``; every SIGNAL_WORK of it, look for
    Ctrl-C.  True when a signal handler raised (KeyboardInterrupt is set):
    the caller returns its error value."""
    counter[0] += work
    if counter[0] < SIGNAL_WORK:
        return False
    counter[0] = 0
    with gil:
        return _check_signals() != 0


cdef int check_signals(long long* counter, long long work) except -1 nogil:
    """``signal_raised`` for a loop with nothing to free: -1 propagates the
    KeyboardInterrupt."""
    return -1 if signal_raised(counter, work) else 0


def _rbf_by_differences(A, _Rows rows_b, double gamma):
    """K(A, B) for the RBF kernel with every ||a - b||^2 summed from the
    differences in feature order, as svm.cpp's ``k_function`` does at
    prediction.  ||a||^2 + ||b||^2 - 2a'b cancels for rows far from the
    origin: at features near 1e6 it moved LIBSVM models' decision values by
    1e-3.  A dense or CSR; ``rows_b``: B CSR, or dense (of A's width, made
    with ``transposed``)."""
    cdef Py_ssize_t n_a = A.shape[0], n_b = rows_b.n, i, j, k, p
    cdef _Rows rows_a
    cdef const double* a_row
    cdef const double* b_col
    cdef double* k_row
    cdef double a_k, diff
    cdef bint a_sparse = sp.issparse(A)
    cdef const double[:, ::1] da, db
    cdef double[::1] row
    cdef const double[::1] a_data
    cdef const Py_ssize_t[::1] a_ind, a_ptr
    cdef long long work = 0, a_cost, b_cost
    out = np.empty((n_a, n_b))
    if n_a == 0 or n_b == 0:
        return out
    cdef double[:, ::1] K = out
    if rows_b.sparse:
        rows_a = _Rows(A)
        b_cost = rows_b.indptr[n_b]
        with nogil:
            for i in range(n_a):
                a_cost = (rows_a.indptr[i + 1] - rows_a.indptr[i] if rows_a.sparse
                          else rows_a.width)
                check_signals(&work, n_b * (1 + a_cost) + b_cost)
                for j in range(n_b):
                    K[i, j] = rbf_from_distance(row_sq_distance(rows_a, i, rows_b, j), gamma)
        return out
    if A.shape[1] != rows_b.width:
        raise ValueError(f"A has {A.shape[1]} columns and B {rows_b.width}")
    # B dense: row_sq_distance's sums, each still in feature order, but
    # run for all of B's rows at once over B transposed, so that the
    # innermost loop vectorises (on a9a's 123 features, half the time of
    # one scalar sum per pair)
    db = rows_b.dense_t
    if a_sparse:
        a_data = np.asarray(A.data, dtype=np.float64)
        a_ind = np.asarray(A.indices, dtype=np.intp)
        a_ptr = np.asarray(A.indptr, dtype=np.intp)
        row = np.zeros(max(db.shape[0], 1))
    else:
        da = np.ascontiguousarray(A, dtype=np.float64)
    with nogil:
        for i in range(n_a):
            check_signals(&work, n_b * (1 + db.shape[0]))
            if a_sparse:        # scattered into a dense row: its zeros add 0
                for p in range(a_ptr[i], a_ptr[i + 1]):
                    row[a_ind[p]] = a_data[p]
                a_row = &row[0]
            else:
                a_row = &da[i, 0] if da.shape[1] else NULL
            k_row = &K[i, 0]
            for j in range(n_b):
                k_row[j] = 0.0
            for k in range(db.shape[0]):
                a_k = a_row[k]
                b_col = &db[k, 0]
                for j in range(n_b):
                    diff = a_k - b_col[j]
                    k_row[j] += diff * diff
            for j in range(n_b):
                k_row[j] = rbf_from_distance(k_row[j], gamma)
            if a_sparse:
                for p in range(a_ptr[i], a_ptr[i + 1]):
                    row[a_ind[p]] = 0.0
    return out


def cross_kernel(A, B, str kernel, double gamma, double coef0, int degree,
                 Py_ssize_t max_block=1 << 22, bint rbf_by_differences=False):
    """Yield (start, stop, K(A[start:stop], B)) blocks of at most ~max_block
    values, so prediction on many rows never builds one huge matrix.

    For ``kernel="precomputed"`` A already holds K(test, train) and B is the
    array of training indices to keep.  ``rbf_by_differences``: RBF values
    as LIBSVM predicts them (``_rbf_by_differences``), not from BLAS dot
    products and norms.
    """
    n_a = A.shape[0]
    n_b = B.shape[0]
    step = max(1, max_block // max(n_b, 1))
    if kernel == "precomputed":
        for start in range(0, n_a, step):
            stop = min(n_a, start + step)
            yield start, stop, np.ascontiguousarray(A[start:stop][:, B], dtype=np.float64)
        return
    if kernel == "rbf" and rbf_by_differences:
        if sp.issparse(B) and not sp.issparse(A):
            A = sp.csr_matrix(A)      # a merge over nonzeros, not every column
        rows_b = _Rows(B, transposed=True)
        for start in range(0, n_a, step):
            stop = min(n_a, start + step)
            yield start, stop, _rbf_by_differences(A[start:stop], rows_b, gamma)
        return
    sq_b = squared_row_norms(B) if kernel == "rbf" else np.zeros(n_b)
    # all of B's columns, for the distances rbf_from_dots sums
    rows_b = _Rows(B) if kernel == "rbf" else None
    used = None
    if sp.issparse(A) and sp.issparse(B) and B.shape[1] > 2 * B.nnz + 4096:
        # Memory O(nnz), not O(largest feature index), as ``Kernel``: the
        # dot products meet only B's columns, so both sides keep those
        # (scipy's product otherwise allocates an index array per column:
        # 7.5 GB for one feature at index 2e9).
        used = np.unique(B.indices)
        B = _keep_columns(B, used)
    BT = B.T
    for start in range(0, n_a, step):
        stop = min(n_a, start + step)
        block = rows = A[start:stop]
        sq_a = squared_row_norms(block) if kernel == "rbf" else np.zeros(stop - start)
        if used is not None:
            block = _keep_columns(block, used)
        dots = block @ BT
        if sp.issparse(dots):
            dots = dots.toarray()
        dots = np.ascontiguousarray(dots, dtype=np.float64)
        if kernel == "rbf":
            rbf_from_dots(dots, sq_a, sq_b, rows, rows_b, gamma)
        else:
            apply_kernel_to_dots(dots, sq_a, sq_b, kernel, gamma, coef0, degree)
        yield start, stop, dots
