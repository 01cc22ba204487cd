"""The one QP solver of svmscreen: SMO over a cached kernel matrix.

Contract (the generalisation of LIBSVM's ``Solver``, svm.cpp, to per-sample
bounds; Fan, Chen & Lin, JMLR 6, 2005):

    min_a   1/2 a'Qa + p'a
    s.t.    lo_i <= a_i <= hi_i            for every i
            y'a = delta                     (only when ``y`` is given)

Q is a ``QMatrix`` (a kernel, a sign vector s and an LRU column cache);
delta is implied by the feasible warm start ``alpha0`` (delta = y'alpha0).

* With the equality, each step updates two variables chosen by LIBSVM's
  second-order working-set selection (WSS2).  The stopping rule is LIBSVM's
  maximal violation  m(a) - M(a) < tol,  m = max_{I_up} -y_t G_t,
  M = min_{I_low} -y_t G_t.
* Without it (the bias-free SVM of the screening papers), i is the
  variable whose clipped Newton step decreases the objective most
  (second-order selection), and a step updates it alone or with the
  partner j whose joint step along e_i +- e_j decreases it more
  (``select_free``: without the pairs, near-duplicates of opposite labels
  took 5 to 50 times the iterations).  The stopping rule is LIBLINEAR's
  PGmax - PGmin < tol on the projected gradient.
* Shrinking (LIBSVM's ``do_shrinking``) moves bounded variables that cannot
  move behind ``active_size``; the gradient of those variables is rebuilt
  before the final optimality check, from ``G_bar`` (LIBSVM) or from a
  snapshot of the gradient plus the columns of the variables that moved
  since, whichever costs fewer kernel values (``reconstruct_gradient``).
* When SMO crawls (50,000 iterations, and work since the start or the
  last fallback about what a dense factorisation of the active block would
  cost, and that block fits the cache budget), an interior-point method
  (``dense_qp.interior_point``) takes the working variables (the free
  ones and those at a bound that could still move) near their optimum,
  the others held, and SMO finishes from there
  (``_SMO.dense_fallback``; docs/madelon_linear.md).  A linear kernel
  with few features gives Q as Z Z' (``dense_qp.LowRankQ``): the method
  then takes every movable variable, at a cost linear in their number,
  and as soon as SMO's work pays for it.  LIBSVM mode
  (``round_float32``) never does, to keep LIBSVM's iterations.
* ``nu=True`` (LIBSVM mode only): svm.cpp's Solver_NU for LIBSVM's nu-SVC
  and nu-SVR, where sum a_t over each sign of y is fixed.  Pairs never mix
  signs (WSS2 within each sign), the stopping rule is the larger of the two
  signs' violations, shrinking tests each sign against its own maxima, and
  rho and r come from the free variables of each sign.
* ``fixed`` variables never enter the problem: they stay at their bound and
  act only through the gradient of the others (in LIBSVM's terms, through
  ``G_bar``, the gradient contribution of every variable at a bound:
  G_bar_i = sum_{j at a bound} a_j Q_ij).  Screening uses this; the
  gradient of a fixed variable is still computed at the end, so callers can
  check its KKT condition.

All arrays are indexed by sample on the way in and out; inside, variables
live in the QMatrix's position order, which shrinking permutes.

Trusts its caller (lengths are checked): finite values, lo <= alpha0 <= hi,
y of +1/-1, fixed variables at a bound, and Q matches the data.
"""
import numpy as np

cimport cython
cimport numpy as cnp
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, fabs, fmax, isfinite
from libc.float cimport DBL_EPSILON
from libc.stdlib cimport free, malloc, qsort, realloc
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from svmscreen._cache cimport CacheEntry, ColumnCache
from svmscreen._kernels cimport SIGNAL_WORK, Kernel, signal_raised
from svmscreen._rules cimport _gap_safe_flags

cnp.import_array()

cdef double TAU = 1e-12                # LIBSVM's floor for a non-positive curvature
# QMatrix.follow_positions: smaller CSR data stays in the caches whatever the
# order its rows are read in
cdef Py_ssize_t ORDER_MIN_SAMPLES = 2048
cdef double SNAP = 4.0 * DBL_EPSILON    # a_i this close to a bound, relative to the
                                       # magnitudes that made it, is at the bound
# calculate_rho (not LIBSVM's): a_i within this share of its box of a bound
# is at that bound.  Round-off can leave a variable whose optimum is a bound
# a few ulps inside it (1e-15 of C after a CCCP step's equality repair and one
# pair step); counted as free, it alone set rho to its end of the interval
# of optimal intercepts, where a solve that had it exactly at the bound (a
# screened one) took the midpoint.  Moving it to the bound changes the
# objective by about this share of C times its gradient.
cdef double RHO_SLACK = 256.0 * DBL_EPSILON


cdef inline double _now() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec + 1e-9 * t.tv_nsec


cdef enum Status:
    LOWER = 0
    UPPER = 1
    FREE = 2


cdef class QMatrix:
    """Cached Q_ij = s_i s_j K(x_i, x_j).

    Parameters
    ----------
    kernel : Kernel
    sign : ndarray of shape (n,) or None
        s_i in {-1, +1} (the labels, for SVC); None means all +1.
    cache_size : float
        Cache budget in MB.
    round_float32 : bool, default=False
        Round every entry of a column to float32, as LIBSVM's cache stores
        Q (``Qfloat`` is ``float`` in svm.cpp; the diagonal QD stays double
        there and here).  The solver then takes LIBSVM's iterations
        (docs/madelon_linear.md: where round-off decides where an
        iteration-capped solve ends).  The cache still holds doubles.
    rows : int ndarray or None
        The kernel row of each variable when variables share rows (SVR's
        2l variables on the l samples, as svm.cpp's SVR_Q): a column then
        computes each row's kernel value once.  None: variable i is row i.

    One QMatrix can serve many solves (a path, CCCP steps): its cache and
    its position order carry over from one solve to the next.
    """

    def __init__(self, Kernel kernel, sign=None, double cache_size=100.0,
                 bint round_float32=False, rows=None):
        self.kernel = kernel
        self.round_float32 = round_float32
        self.cache_mb = cache_size
        self.twins = rows is not None
        if self.twins:
            self.kernel_row = np.array(rows, dtype=np.intp)
            if self.kernel_row.ndim != 1 or not np.all(
                    (np.asarray(self.kernel_row) >= 0)
                    & (np.asarray(self.kernel_row) < kernel.n_samples)):
                raise ValueError(f"rows must index the kernel's {kernel.n_samples} rows")
            self.n = self.kernel_row.shape[0]
            self.stamp = np.zeros(kernel.n_samples, dtype=np.int64)
            self.slot = np.empty(kernel.n_samples, dtype=np.intp)
            self.unique_rows = np.empty(kernel.n_samples, dtype=np.intp)
            self.row_values = np.empty(kernel.n_samples)
            self.epoch = 0
        else:
            self.n = kernel.n_samples
        self.cache = ColumnCache(self.n, cache_size)
        # perm and where, sign and QD: rows of one block each (a typed view
        # of a new array costs about 0.4 us, and one-vs-one builds a
        # QMatrix for each of thousands of small pairs)
        cdef Py_ssize_t[:, ::1] positions = np.empty((2, self.n), dtype=np.intp)
        cdef double[:, ::1] vectors = np.empty((2, self.n))
        self.perm, self.where = positions[0], positions[1]
        self.sign, self.QD = vectors[0], vectors[1]
        cdef Py_ssize_t i, largest = 0
        for i in range(self.n):
            self.perm[i] = i
        if sign is None:
            self.sign[:] = 1.0
        else:
            # the typed loops read sign without bounds checks
            _in_positions(sign, self.perm, "sign", self.sign)
        # Q_ii = K_ii (s_i^2 = 1), and one typed pass to check it (numpy's
        # isfinite and max were a third of the set-up of the small problems
        # one-vs-one solves by thousands)
        for i in range(self.n):
            self.QD[i] = kernel.value(self.kernel_row[i], self.kernel_row[i]) if self.twins \
                else kernel.value(i, i)
            if not isfinite(self.QD[i]):
                raise ValueError(f"kernel values overflow: K(x_{i}, x_{i}) is not finite; "
                                 "scale X down or lower gamma/degree")
            if fabs(self.QD[i]) > fabs(self.QD[largest]):
                largest = i
        if self.n and not isfinite(4.0 * fabs(self.QD[largest])):
            # SMO's step divides by K_ii + K_jj - 2 K_ij, up to 4 max K_ii for
            # a PSD kernel: infinite, every step is 0, and the solve ran to
            # max_iter without a word (a finite precomputed kernel of 1e308)
            raise ValueError(f"kernel values overflow: K(x_{largest}, x_{largest}) = "
                             f"{float(self.QD[largest]):.3g} leaves no room for the solver's "
                             "K_ii + K_jj - 2 K_ij in float64; scale the kernel (or X) down")

    def __reduce__(self):
        # as Kernel's: Cython's automatic pickling read typed views that are
        # never set (the twins' scratch) and crashed the interpreter
        raise TypeError("a QMatrix cannot be pickled or copied (it holds a Kernel and "
                        "its column cache): build a new one from the data")

    cdef double* get_Q(self, Py_ssize_t i, Py_ssize_t length) except NULL nogil:
        """Column i of Q, entries 0..length-1 in position order."""
        cdef double* data
        cdef Py_ssize_t start
        start = self.cache.get_data(i, &data, length)
        if start < 0:
            with gil:
                raise MemoryError("kernel cache: out of memory")
        if start < length:
            self.fill_column(i, start, length, data + start)
        return data

    cdef void fill_column(self, Py_ssize_t i, Py_ssize_t start, Py_ssize_t stop,
                          double* out) noexcept nogil:
        """Entries start..stop-1 of column i (position order) into
        out[0..stop-start), computed, not cached: get_Q's fill, and a
        segment of a column that the cache should not hold."""
        cdef Py_ssize_t k
        cdef double s_i = self.sign[i]
        if self.twins:
            self.fill_twins(i, start, stop, out)
        elif self.reads_copy():
            self.kernel.column_rows(self.perm[i], &self.row_at[start], stop - start, out)
        else:
            self.kernel_evals += stop - start
            self.kernel.column(self.perm[i], &self.perm[start], stop - start, out)
        if self.round_float32:
            for k in range(start, stop):
                out[k - start] = <double> <float> (out[k - start] * s_i * self.sign[k])
        else:
            for k in range(start, stop):
                out[k - start] *= s_i * self.sign[k]

    cdef void fill_twins(self, Py_ssize_t i, Py_ssize_t start, Py_ssize_t stop,
                         double* out) noexcept nogil:
        """fill_column's kernel values with shared rows: each distinct row
        of positions start..stop-1 once, then copied to its positions (the
        same values, computed once: SVR_Q's one kernel row for both signs)."""
        cdef Py_ssize_t t, r, m = 0
        self.epoch += 1
        for t in range(start, stop):
            r = self.kernel_row[t]
            if self.stamp[r] != self.epoch:
                self.stamp[r] = self.epoch
                self.slot[r] = m
                self.unique_rows[m] = r
                m += 1
        self.kernel_evals += m
        self.kernel.column(self.kernel_row[i], &self.unique_rows[0], m, &self.row_values[0])
        for t in range(start, stop):
            out[t - start] = self.row_values[self.slot[self.kernel_row[t]]]

    cdef inline bint reads_copy(self) noexcept nogil:
        """Columns come from the kernel's ordered copy through ``row_at``:
        it was made for these positions and no other QMatrix has replaced it."""
        return self.use_rows and self.kernel.order_version == self.rows_version

    cdef void swap_index(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        self.cache.swap_index(i, j)
        self.swap_positions(i, j)

    cdef void swap_positions(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """swap_index without the kernel cache (a caller that batches the
        cache's swaps: ColumnCache.swap_many)."""
        self.perm[i], self.perm[j] = self.perm[j], self.perm[i]
        if self.twins:
            self.kernel_row[i], self.kernel_row[j] = self.kernel_row[j], self.kernel_row[i]
        if self.use_rows:
            self.row_at[i], self.row_at[j] = self.row_at[j], self.row_at[i]
        self.sign[i], self.sign[j] = self.sign[j], self.sign[i]
        self.QD[i], self.QD[j] = self.QD[j], self.QD[i]

    def follow_positions(self):
        """Have the kernel copy its rows in the position order when more
        than an eighth of the positions read them out of sequence (CSR
        data, n >= ORDER_MIN_SAMPLES).  ``solve`` calls this first, where a
        warm start finds the positions as the earlier solves' shrinking and
        fixed samples left them, and the solver after each shrinking round
        (an O(n) check; a copy is O(nnz)).  On a 10k-row a9a path (linear)
        the kernel values had cost 11-13 ns each in path order, against 9
        in sample order.  Returns whether a copy was made."""
        cdef Py_ssize_t t, moved = 0
        cdef bint current = self.reads_copy()
        if self.n < ORDER_MIN_SAMPLES or not self.kernel.sparse or self.twins:
            return False
        for t in range(self.n):
            moved += (self.row_at[t] != t) if current else (self.perm[t] != t)
        if moved * 8 <= self.n:
            return False
        if not self.kernel.follow_order(np.asarray(self.perm)):
            return False
        self.row_at = np.arange(self.n, dtype=np.intp)
        self.use_rows = True
        self.rows_version = self.kernel.order_version
        return True

    def add_columns(self, samples, coef, out):
        """out += sum_k coef[k] * Q[:, samples[k]], all in sample order.

        Updates a known gradient after a few entries of alpha change (the
        path's warm start), for the price of those columns.
        """
        cdef const Py_ssize_t[::1] sample_idx = np.ascontiguousarray(samples, dtype=np.intp)
        cdef const double[::1] weights = np.ascontiguousarray(coef, dtype=np.float64)
        cdef double[::1] acc = out
        cdef Py_ssize_t k, m = sample_idx.shape[0]
        cdef bint in_range = True
        if acc.shape[0] != self.n or weights.shape[0] != m:
            raise ValueError("add_columns: inconsistent lengths")
        # checked here rather than by numpy: a rule step calls this on a few
        # columns, where numpy's per-call overhead was most of the time
        for k in range(m):
            in_range &= 0 <= sample_idx[k] < self.n
        if not in_range:
            raise IndexError("add_columns: sample index out of range")
        if m:
            with nogil:
                self.add_columns_into(&sample_idx[0], &weights[0], m, &acc[0])
        return out

    cdef int add_columns_into(self, const Py_ssize_t* samples, const double* coef,
                              Py_ssize_t m, double* out) except -1 nogil:
        """``add_columns`` on raw arrays, unchecked: out[0..n) +=
        sum_k coef[k] * Q[:, samples[k]] in sample order, samples[k] in
        [0, n).  A typed caller (``_rules.TwoBallPathStep``'s Q s, once a
        path step) skips the Python call and its argument conversions."""
        cdef Py_ssize_t k, t, pos
        cdef double c
        cdef double* column
        cdef long long work = 0
        for t in range(self.n):
            self.where[self.perm[t]] = t
        for k in range(m):
            c = coef[k]
            if c == 0.0:
                continue
            # a path's warm start can take the columns of every support
            # vector: 5 s at n = 32,561 (a9a, 10,854 columns) without a
            # look for Ctrl-C
            if signal_raised(&work, self.n):
                return -1
            pos = self.where[samples[k]]
            column = self.get_Q(pos, self.n)
            for t in range(self.n):
                out[self.perm[t]] += c * column[t]
        return 0

    def dense_block(self, Py_ssize_t m):
        """Q at positions 0..m-1 as a dense (m, m) array, computed from the
        kernel (the cache neither read nor filled): the dense fallback's
        matrix (``_SMO.dense_fallback``)."""
        cdef double[:, ::1] out = np.empty((m, m))
        cdef Py_ssize_t t
        if not 0 <= m <= self.n:
            raise ValueError(f"dense_block: m={m} outside [0, {self.n}]")
        with nogil:
            for t in range(m):
                self.fill_column(t, 0, m, &out[t, 0])
        return np.asarray(out)

    def low_rank_width(self):
        """k if Q = Z Z' for a Z of k columns that ``low_rank_block`` gives
        (a linear kernel, its entries not rounded to float32), else -1."""
        if self.round_float32:
            return -1
        return self.kernel.feature_width()

    def low_rank_block(self, Py_ssize_t m):
        """Z of shape (m, k) with Q at positions 0..m-1 equal to Z Z'
        (Z_t = s_t x_t, ``low_rank_width``): the dense fallback's matrix
        in O(m k) memory where Q's block takes O(m^2)."""
        if not 0 <= m <= self.n:
            raise ValueError(f"low_rank_block: m={m} outside [0, {self.n}]")
        if self.low_rank_width() < 0:
            raise ValueError("low_rank_block: Q has no low-rank factor")
        rows = np.asarray(self.kernel_row if self.twins else self.perm)[:m]
        Z = self.kernel.feature_rows(rows)      # a new array: scaled in place
        Z *= np.asarray(self.sign)[:m, None]
        return Z

    def diagonal(self):
        """Q_ii in sample order."""
        out = np.empty(self.n, dtype=np.float64)
        out[np.asarray(self.perm)] = np.asarray(self.QD)
        return out


cdef class SolveResult:
    """What one solve returns (arrays in sample order).

    Attributes
    ----------
    alpha : ndarray
        The solution.
    grad : ndarray
        G = Q alpha + p at the solution, for every sample (fixed ones too).
    rho : float or None
        LIBSVM's rho (the decision function is sum_j y_j a_j K(x_j, x) - rho);
        None without the equality.
    objective : float
        1/2 a'Qa + p'a.
    n_iter : int
    status : {"optimal", "max_iter", "round_off"}
        "round_off": stopped above tol because no step representable in
        double precision lowers the objective: each step's change of alpha
        rounds away, and the gradient's round-off exceeds tol (Q of scale
        1e16 and more; with the equality, a pair step that left alpha as it
        was, also after the gradient's rebuild and a dense fallback that
        moved nothing: tol 1e-16 on heart_scale).
        Not in LIBSVM mode, which runs on to max_iter as svm.cpp does.
    violation : float
        The stopping criterion's value at the end (m(a) - M(a), or
        PGmax - PGmin without the equality).
    frozen : bool ndarray
        Samples frozen by dynamic screening (not those fixed on entry).
    max_iter : int
        The iteration cap the solve ran under.
    r : float or None
        Solver_NU's r (``nu=True``).
    progress : str
        LIBSVM mode: the progress marks svm.cpp would have printed.
    work_select, work_reconstruct, work_gbar, n_screens, n_swaps,
    screen_seconds, frozen_lower, frozen_upper, start_frozen_lower,
    start_frozen_upper, n_dense_steps :
        Diagnostics (``_SMO``'s counters).
    fallback_futile : bool
        The last dense fallback moved no alpha, nor has SMO since.  A step
        that changes nothing ends the solve only if this holds or the
        fallback is off (float32 kernel values), and no other way out is
        left (``_SMO.may_leave_loop``).

    A cdef class with declared fields: one-vs-one fits take thousands of
    small solves, and a Python object whose twenty attributes were set one
    by one in its dict cost about a tenth of such a solve.  Callers may
    still add attributes (``reduced.solve_reduced``'s ``n_frozen``).
    """
    cdef public object alpha, grad, rho, objective, n_iter, status, violation, frozen
    cdef public object max_iter, r, progress
    cdef public object work_select, work_reconstruct, work_gbar, n_screens, n_swaps
    cdef public object screen_seconds, frozen_lower, frozen_upper
    cdef public object start_frozen_lower, start_frozen_upper, n_dense_steps
    cdef public object fallback_futile
    cdef dict __dict__

    def __init__(self, alpha, grad, rho, objective, n_iter, status, violation):
        self.alpha = alpha
        self.grad = grad
        self.rho = rho
        self.objective = objective
        self.n_iter = n_iter
        self.status = status
        self.violation = violation

    def __repr__(self):
        return (f"SolveResult(objective={self.objective!r}, rho={self.rho!r}, "
                f"n_iter={self.n_iter}, status={self.status!r})")


cdef inline long long shrink_period(Py_ssize_t l) noexcept nogil:
    """Iterations between two shrinking rounds (svm.cpp: min(l, 1000))."""
    return min(l, 1000)


cdef class _SMO:
    cdef QMatrix Q
    cdef Py_ssize_t l              # all variables, fixed ones included
    cdef Py_ssize_t l_var          # variables that may move: positions < l_var
    cdef Py_ssize_t active_size
    cdef double[::1] alpha, G, G_bar, p, lo, hi, y
    cdef double[::1] alpha_start, G_start   # a snapshot of alpha and G = Q alpha + p
    cdef bint G_bar_valid             # G_bar is built (lazily after a warm start)
    cdef signed char[::1] status
    cdef bint has_equality, shrinking, unshrink
    cdef long long first_shrink      # iterations before the first shrinking round
    cdef bint libsvm_steps           # svm.cpp's pair step arithmetic (LIBSVM mode)
    cdef bint log_events             # keep LIBSVM's progress marks (LIBSVM mode)
    cdef char* events                # the marks: '.', '*', 'W'
    cdef Py_ssize_t n_events, cap_events
    cdef object show_marks           # solve's ``progress``, or None
    cdef Py_ssize_t n_shown          # marks already passed to show_marks

    cdef double eps
    cdef double violation
    cdef double free_sign_i, free_sign_j   # the pair step select_free chose: its
    cdef double free_step                  # direction and its clipped length
    cdef bint nu                     # svm.cpp's Solver_NU (LIBSVM's nu-SVC and nu-SVR)
    cdef double r                    # Solver_NU's r, set by calculate_rho
    cdef bint libsvm_rho             # calculate_rho exactly as svm.cpp's
    cdef long long max_iter, n_iter
    cdef object screen_callback    # dynamic screening hook, or None
    cdef long long screen_every
    cdef Py_ssize_t n_frozen
    # Work counters (diagnostics: how much smaller the solve really is)
    cdef long long work_select       # sum of active_size over selections
    cdef long long work_reconstruct  # multiply-adds of gradient reconstruction
    cdef long long work_gbar         # multiply-adds of G_bar updates
    cdef long long signal_work       # kernel values since the last Ctrl-C check (interrupted)
    # In-loop gap-safe screening (screen_gap)
    cdef long long gap_period        # base iterations between two rule evaluations
    cdef bint whole_gradient         # G was just rebuilt on all movable variables
    cdef bint fixed_rebased          # rebase_snapshot has updated the fixed positions once
    cdef double gap_tau, gap_roundoff  # the rule's margin and radius^2 allowances
    cdef signed char[::1] gap_flag   # the rule's output, length l
    cdef long long n_screens
    cdef long long n_swaps
    cdef double screen_seconds
    cdef Py_ssize_t n_frozen_lower, n_frozen_upper   # frozen by screen_gap, per bound
    cdef Py_ssize_t start_frozen_lower, start_frozen_upper  # ... at the warm start
    # The dense fallback (``dense_fallback``): run() stops when ``crawling``
    # says so (never if not allow_dense), and says so in ``stalled``
    cdef bint allow_dense, stalled
    cdef bint fallback_futile        # the last dense fallback moved no alpha, nor has SMO since
    cdef bint screen_futile          # the last gap screen froze nothing, and no alpha moved since
    cdef long long stall_iter, stall_work    # n_iter, work_select at the start or the last try
    cdef long long fallback_work     # work_select at the last fallback that ran (or 0)
    cdef Py_ssize_t n_dense_steps     # Newton steps of the fallbacks (0: none ran)
    cdef Py_ssize_t low_rank         # k if Q = Z Z' with Z of k columns (linear kernel), else -1

    def __dealloc__(self):
        free(self.events)

    cdef void note(self, char mark) noexcept nogil:
        """Log a progress mark as svm.cpp prints it (LIBSVM mode only): '.'
        every min(l, 1000) iterations, '*' at each gradient rebuild of the
        loop, 'W' for its "using -h 0 may be faster" warning."""
        cdef char* grown
        if not self.log_events:
            return
        if self.n_events == self.cap_events:
            grown = <char*> realloc(self.events, 2 * self.cap_events + 64)
            if grown == NULL:        # the marks are cosmetic: stop logging
                self.log_events = False
                return
            self.events = grown
            self.cap_events = 2 * self.cap_events + 64
        self.events[self.n_events] = mark
        self.n_events += 1

    cdef int pass_marks(self) except -1:
        """Pass the marks logged since the last call to ``show_marks``."""
        if self.show_marks is not None and self.n_events > self.n_shown:
            marks = (<bytes> self.events[self.n_shown:self.n_events]).decode("ascii")
            self.n_shown = self.n_events
            self.show_marks(marks)
        return 0

    cdef bint interrupted(self, long long work) noexcept nogil:
        """Count ``work`` kernel values of a gradient (re)build; every
        SIGNAL_WORK of them, look for Ctrl-C.  True when a signal handler
        raised (KeyboardInterrupt is set): the caller returns -1.  The
        loops of ``run`` check by their selection work; these builds run
        between two such checks, and the initial gradient of a start with
        many nonzero alpha (one-class, nu, a warm start) took 10 s at
        n = 50,000 with Ctrl-C unanswered."""
        return signal_raised(&self.signal_work, work)

    cdef inline bint is_upper(self, Py_ssize_t i) noexcept nogil:
        return self.status[i] == UPPER

    cdef inline bint is_lower(self, Py_ssize_t i) noexcept nogil:
        return self.status[i] == LOWER

    cdef inline bint is_free(self, Py_ssize_t i) noexcept nogil:
        return self.status[i] == FREE

    cdef inline bint in_up(self, Py_ssize_t t) noexcept nogil:
        # y_t a_t may increase (I_up of WSS2)
        # cast: the ternary of two enum values is unsigned to gcc (-Wsign-compare)
        return self.status[t] != <signed char> (UPPER if self.y[t] > 0 else LOWER)

    cdef inline bint in_low(self, Py_ssize_t t) noexcept nogil:
        return self.status[t] != <signed char> (LOWER if self.y[t] > 0 else UPPER)

    cdef inline double bound_value(self, Py_ssize_t i) noexcept nogil:
        # a_i's share of G_bar: a_i at a bound, 0 when free.
        return 0.0 if self.status[i] == FREE else self.alpha[i]

    cdef inline void update_status(self, Py_ssize_t i) noexcept nogil:
        if self.alpha[i] >= self.hi[i]:
            self.status[i] = UPPER
        elif self.alpha[i] <= self.lo[i]:
            self.status[i] = LOWER
        else:
            self.status[i] = FREE

    cdef void swap_index(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        if i != j:
            self.n_swaps += 1
        self.Q.cache.swap_index(i, j)
        self.swap_arrays(i, j)

    cdef void swap_arrays(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """swap_index without the kernel cache."""
        self.Q.swap_positions(i, j)
        self.alpha[i], self.alpha[j] = self.alpha[j], self.alpha[i]
        self.G[i], self.G[j] = self.G[j], self.G[i]
        self.G_bar[i], self.G_bar[j] = self.G_bar[j], self.G_bar[i]
        self.alpha_start[i], self.alpha_start[j] = self.alpha_start[j], self.alpha_start[i]
        self.G_start[i], self.G_start[j] = self.G_start[j], self.G_start[i]
        self.p[i], self.p[j] = self.p[j], self.p[i]
        self.lo[i], self.lo[j] = self.lo[j], self.lo[i]
        self.hi[i], self.hi[j] = self.hi[j], self.hi[i]
        self.y[i], self.y[j] = self.y[j], self.y[i]
        self.status[i], self.status[j] = self.status[j], self.status[i]

    # ---------------------------------------------------------------- setup
    cdef int init_gradient(self, bint have_grad) except -1 nogil:
        """G = Q a + p and G_bar, from the columns of the nonzero a_j.

        With a known gradient (warm start along a path) nothing is built:
        G_bar only serves LIBSVM's way of rebuilding the gradient, and a
        warm-started solve mostly rebuilds it from the start instead
        (``reconstruct_gradient``); ``build_G_bar`` makes it when needed.
        Building it up front cost min(#free, #bounded) kernel columns a
        solve, more than the whole of a short warm-started solve.
        """
        cdef Py_ssize_t i, k
        cdef double* Q_i
        if have_grad:
            self.G_bar_valid = False
            return 0
        for i in range(self.l):
            self.G_bar[i] = 0.0
            self.G[i] = self.p[i]
        for i in range(self.l):
            if self.alpha[i] == 0.0:
                continue
            if self.interrupted(self.l):
                return -1
            Q_i = self.Q.get_Q(i, self.l)
            for k in range(self.l):
                self.G[k] += self.alpha[i] * Q_i[k]
            if not self.is_free(i):
                for k in range(self.l):
                    self.G_bar[k] += self.alpha[i] * Q_i[k]
        self.G_bar_valid = True
        return 0

    cdef int build_G_bar(self) except -1 nogil:
        """G_bar_k = sum_j bound_value(j) Q_jk over every position, now."""
        cdef Py_ssize_t j, k
        cdef double* Q_j
        cdef double v
        for k in range(self.l):
            self.G_bar[k] = 0.0
        for j in range(self.l):
            v = self.bound_value(j)
            if v != 0.0:
                if self.interrupted(self.l):
                    return -1
                self.work_gbar += self.l
                Q_j = self.Q.get_Q(j, self.l)
                for k in range(self.l):
                    self.G_bar[k] += v * Q_j[k]
        self.G_bar_valid = True
        return 0

    cdef int reconstruct_gradient(self, Py_ssize_t stop) except -1 nogil:
        """Rebuild G on positions active_size..stop-1 by the cheaper of two
        equal sums:
          * LIBSVM's reconstruct_gradient: G_i = G_bar_i + p_i
            + sum_{free j} a_j Q_ij;
          * from a snapshot: G_i = G_start_i + sum_j (a_j - a_start_j) Q_ij,
            over the variables that moved since (a_start, G_start) was
            taken: at the start of the solve, at each rebuild this way, and
            at each shrinking round that finds nothing shrunk
            (``rebase_snapshot``).
        A warm-started solve that screened or shrank many variables and
        then took few iterations moves far fewer variables than it has
        free ones: along a path, a screened solve's final check then cost
        more than the iterations (svmguide1, RBF: 2.2M kernel products
        for 68 iterations).

        The snapshot way rebuilds every position from active_size on,
        fixed ones included, whatever ``stop``: G is then whole and becomes
        the new snapshot, so the next rebuild (a solve rebuilds at each
        un-shrink and at the final check) counts only the variables moved
        since.  Rebuilding from the one start each time, a 10k-row a9a
        solve (linear, C = 0.21, 2000 samples screened) fetched 60M kernel
        values, where G_bar would have cost 35M."""
        cdef Py_ssize_t i, j, n_free = 0, n_moved = 0, n_bounded = 0
        cdef Py_ssize_t start = self.active_size
        cdef double* Q_i
        cdef double libsvm_cost
        if start >= stop:
            return 0
        for j in range(start):
            if self.is_free(j):
                n_free += 1
        if 2 * n_free < start:
            self.note(c'W')          # svm.cpp: "using -h 0 may be faster"
        for j in range(self.l):
            n_moved += self.alpha[j] != self.alpha_start[j]
            n_bounded += self.bound_value(j) != 0.0
        # the kernel values each way fetches (counting G_bar's columns if it
        # has to be built first)
        libsvm_cost = min(<double> n_free * stop, 2.0 * start * (stop - start))
        if not self.G_bar_valid:
            libsvm_cost += <double> n_bounded * self.l
        # LIBSVM mode (round_float32) sums as svm.cpp does, whatever it costs:
        # the snapshot's other order left rho off in the last digits
        if not self.Q.round_float32 and <double> n_moved * self.l <= libsvm_cost:
            return self.gradient_from_snapshot(start, True)
        if not self.G_bar_valid:
            self.build_G_bar()
        for j in range(start, stop):
            self.G[j] = self.G_bar[j] + self.p[j]
        self.work_reconstruct += n_free * (stop - start)
        # Whichever loop order fetches fewer kernel values.
        if n_free * stop > 2 * start * (stop - start):
            for i in range(start, stop):
                if self.interrupted(start):
                    return -1
                Q_i = self.Q.get_Q(i, start)
                for j in range(start):
                    if self.is_free(j):
                        self.G[i] += self.alpha[j] * Q_i[j]
        else:
            for i in range(start):
                if self.is_free(i):
                    if self.interrupted(stop):
                        return -1
                    Q_i = self.Q.get_Q(i, stop)
                    for j in range(start, stop):
                        self.G[j] += self.alpha[i] * Q_i[j]
        return 0

    # ------------------------------------------- working-set selection (WSS)
    cdef int select_pair(self, Py_ssize_t* out_i, Py_ssize_t* out_j) except -2 nogil:
        """WSS2 (Fan, Chen & Lin 2005, WSS 2; svm.cpp select_working_set).
        Returns 1 when m(a) - M(a) < eps (optimal), else 0."""
        cdef double Gmax = -INFINITY, Gmax2 = -INFINITY, obj_diff_min = INFINITY
        cdef Py_ssize_t t, Gmax_idx = -1, Gmin_idx = -1, i
        cdef Py_ssize_t active = self.active_size
        cdef double grad_diff, quad_coef, obj_diff, QD_i = 0.0, y_i = 0.0
        cdef double* Q_i = NULL
        # Local pointers: the loops below are the solver's hot path, and
        # indexing through self would reload each view on every access.
        cdef const double* G
        cdef const double* y
        cdef const double* QD
        cdef const signed char* status
        with cython.boundscheck(False):
            # Addresses, not reads: a solve of no variables (LIBSVM's -v with
            # a fold that trains on nothing) reads none of these entries, and
            # the debug build's bounds check (SVMSCREEN_DEBUG=1) stopped it
            # with IndexError, the only failures of the suite in that build.
            G, y, QD, status = &self.G[0], &self.y[0], &self.Q.QD[0], &self.status[0]
        for t in range(active):
            if y[t] > 0:
                if status[t] != UPPER and -G[t] >= Gmax:
                    Gmax = -G[t]
                    Gmax_idx = t
            else:
                if status[t] != LOWER and G[t] >= Gmax:
                    Gmax = G[t]
                    Gmax_idx = t
        i = Gmax_idx
        if i != -1:
            Q_i = self.Q.get_Q(i, active)
            QD_i = QD[i]
            y_i = y[i]
        for t in range(active):
            if y[t] > 0:
                if status[t] != LOWER:
                    grad_diff = Gmax + G[t]
                    if G[t] >= Gmax2:
                        Gmax2 = G[t]
                    if grad_diff > 0:
                        quad_coef = QD_i + QD[t] - 2.0 * y_i * Q_i[t]
                        obj_diff = -(grad_diff * grad_diff) / (quad_coef if quad_coef > 0 else TAU)
                        if obj_diff <= obj_diff_min:
                            Gmin_idx = t
                            obj_diff_min = obj_diff
            else:
                if status[t] != UPPER:
                    grad_diff = Gmax - G[t]
                    if -G[t] >= Gmax2:
                        Gmax2 = -G[t]
                    if grad_diff > 0:
                        quad_coef = QD_i + QD[t] + 2.0 * y_i * Q_i[t]
                        obj_diff = -(grad_diff * grad_diff) / (quad_coef if quad_coef > 0 else TAU)
                        if obj_diff <= obj_diff_min:
                            Gmin_idx = t
                            obj_diff_min = obj_diff
        self.violation = Gmax + Gmax2 if (Gmax_idx != -1 and Gmax2 > -INFINITY) else 0.0
        if self.violation < self.eps or Gmin_idx == -1:
            return 1
        out_i[0] = Gmax_idx
        out_j[0] = Gmin_idx
        return 0

    cdef int select_pair_nu(self, Py_ssize_t* out_i, Py_ssize_t* out_j) except -2 nogil:
        """Solver_NU::select_working_set: WSS2 within each sign (nu-SVC and
        nu-SVR keep sum a_i per sign fixed, so a pair never mixes signs).
        Returns 1 when max over the signs of m(a) - M(a) < eps."""
        cdef double Gmaxp = -INFINITY, Gmaxp2 = -INFINITY
        cdef double Gmaxn = -INFINITY, Gmaxn2 = -INFINITY
        cdef double obj_diff_min = INFINITY, grad_diff, quad_coef, obj_diff
        cdef Py_ssize_t t, ip = -1, jn = -1, Gmin_idx = -1
        cdef Py_ssize_t active = self.active_size
        cdef double* Q_ip = NULL
        cdef double* Q_in = NULL
        cdef const double* G
        cdef const double* y
        cdef const double* QD
        cdef const signed char* status
        with cython.boundscheck(False):
            # addresses, not reads (see select_pair)
            G, y, QD, status = &self.G[0], &self.y[0], &self.Q.QD[0], &self.status[0]
        for t in range(active):
            if y[t] > 0:
                if status[t] != UPPER and -G[t] >= Gmaxp:
                    Gmaxp = -G[t]
                    ip = t
            else:
                if status[t] != LOWER and G[t] >= Gmaxn:
                    Gmaxn = G[t]
                    jn = t
        if ip != -1:
            Q_ip = self.Q.get_Q(ip, active)
        if jn != -1:
            Q_in = self.Q.get_Q(jn, active)
        for t in range(active):
            if y[t] > 0:
                if status[t] != LOWER:
                    grad_diff = Gmaxp + G[t]
                    if G[t] >= Gmaxp2:
                        Gmaxp2 = G[t]
                    if grad_diff > 0:
                        quad_coef = QD[ip] + QD[t] - 2.0 * Q_ip[t]
                        obj_diff = -(grad_diff * grad_diff) / (quad_coef if quad_coef > 0 else TAU)
                        if obj_diff <= obj_diff_min:
                            Gmin_idx = t
                            obj_diff_min = obj_diff
            else:
                if status[t] != UPPER:
                    grad_diff = Gmaxn - G[t]
                    if -G[t] >= Gmaxn2:
                        Gmaxn2 = -G[t]
                    if grad_diff > 0:
                        quad_coef = QD[jn] + QD[t] - 2.0 * Q_in[t]
                        obj_diff = -(grad_diff * grad_diff) / (quad_coef if quad_coef > 0 else TAU)
                        if obj_diff <= obj_diff_min:
                            Gmin_idx = t
                            obj_diff_min = obj_diff
        self.violation = max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2)
        if self.violation < self.eps or Gmin_idx == -1:
            return 1
        out_i[0] = ip if y[Gmin_idx] > 0 else jn
        out_j[0] = Gmin_idx
        return 0

    cdef inline double projected_gradient(self, Py_ssize_t t) noexcept nogil:
        if self.is_lower(t):
            return self.G[t] if self.G[t] < 0.0 else 0.0
        if self.is_upper(t):
            return self.G[t] if self.G[t] > 0.0 else 0.0
        return self.G[t]

    cdef Py_ssize_t count_violators(self) noexcept nogil:
        """Active variables that break the optimality conditions by more
        than 10 eps (LIBSVM's un-shrink threshold): with the equality, -y_t G_t
        beyond the midpoint of m(a) and M(a) (``max_violations``) on the
        wrong side for I_up / I_low; without it, |projected gradient| >
        10 eps.  ``solve`` calls it at the start, where the active set is
        every movable variable."""
        cdef Py_ssize_t t, count = 0
        cdef double Gmax1, Gmax2, v, centre, margin = 10.0 * self.eps
        if not self.has_equality:
            for t in range(self.active_size):
                count += fabs(self.projected_gradient(t)) > margin
            return count
        # m(a) = Gmax1, M(a) = -Gmax2
        self.max_violations(&Gmax1, &Gmax2)
        if Gmax1 == -INFINITY or Gmax2 == -INFINITY:
            return 0
        centre = 0.5 * (Gmax1 - Gmax2)
        for t in range(self.active_size):
            v = -self.y[t] * self.G[t]
            count += ((self.in_up(t) and v > centre + margin)
                      or (self.in_low(t) and v < centre - margin))
        return count

    cdef int select_free(self, Py_ssize_t* out_i, Py_ssize_t* out_j) except -2 nogil:
        """Bias-free selection: i the variable whose clipped Newton step
        lowers the objective most (the largest violator if no single step
        changes alpha), then the partner j, if any, of the best step along
        u = d_i e_i + d_j e_j (d = +-1 each, i in its descent direction),
        clipped to both boxes, when that gains more than i's step alone
        (``free_pair_step`` takes the step chosen; out_j = -1 for a single
        step).  A pair moves
        along directions one coordinate crawls on: a near-duplicate of
        opposite label makes u'Qu ~ 0, and single steps then zigzag (a9a,
        5000 rows, RBF, C = 10: 196k iterations against 3.3k with the
        intercept's pairs).  Returns 1 when PGmax - PGmin < eps, or when no
        step changes alpha in double precision (``solve``: "round_off")."""
        cdef double PGmax = 0.0, PGmin = 0.0, best_gain = 0.0, worst_pg = 0.0
        cdef double pg, g, d, gain, curvature, slope, step, limit_j, sign_j
        cdef double G_i, QD_i, limit_i, sign_i, alpha_i
        cdef Py_ssize_t t, best = -1, worst = -1, i, best_j = -1
        cdef Py_ssize_t active = self.active_size
        cdef int side
        cdef double* Q_i
        cdef const double* G
        cdef const double* QD
        cdef const double* alpha
        cdef const double* lo
        cdef const double* hi
        with cython.boundscheck(False):
            # addresses, not reads (see select_pair)
            G, QD, alpha = &self.G[0], &self.Q.QD[0], &self.alpha[0]
            lo, hi = &self.lo[0], &self.hi[0]
        for t in range(active):
            pg = self.projected_gradient(t)
            if pg == 0.0:
                continue
            if pg > PGmax:
                PGmax = pg
            if pg < PGmin:
                PGmin = pg
            if fabs(pg) > worst_pg:
                worst_pg = fabs(pg)
                worst = t
            g = G[t]
            d = self.clipped_newton(t) - alpha[t]
            gain = -(g * d + 0.5 * QD[t] * d * d)
            if gain > best_gain:
                best_gain = gain
                best = t
        self.violation = PGmax - PGmin
        if self.violation < self.eps or worst == -1:
            return 1
        i = best if best != -1 else worst
        G_i, QD_i, alpha_i = G[i], QD[i], alpha[i]
        sign_i = 1.0 if G_i < 0.0 else -1.0
        limit_i = hi[i] - alpha_i if sign_i > 0.0 else alpha_i - lo[i]
        Q_i = self.Q.get_Q(i, active)
        for t in range(active):
            if t == i:
                continue
            for side in range(2):
                sign_j = 1.0 - 2.0 * side
                limit_j = hi[t] - alpha[t] if sign_j > 0.0 else alpha[t] - lo[t]
                slope = sign_i * G_i + sign_j * G[t]
                if not (limit_j > 0.0 and slope < 0.0):
                    continue
                curvature = QD_i + QD[t] + 2.0 * sign_i * sign_j * Q_i[t]
                # No step along u gains more than slope^2 / (2 curvature) (the
                # unclipped one's): a pair that cannot beat the best so far is
                # passed over without the division (half of a bias-free fit's
                # time is this scan).  The margin keeps the test from passing
                # over a gain that rounding puts a few ulps above the bound.
                if (curvature > 0.0
                        and slope * slope < 2.0 * (1.0 - 1e-9) * curvature * best_gain):
                    continue
                step = -slope / (curvature if curvature > 0.0 else TAU)
                step = min(step, min(limit_i, limit_j))
                gain = -(slope * step + 0.5 * curvature * step * step)
                # A step within rounding of both (a few ulps, SNAP) would be
                # undone by the next one: where tol is below the gradient's
                # round-off, such steps cycled until max_iter (228 -> 200,000
                # iterations), where a "round_off" stop is due.
                if gain > best_gain and step > SNAP * fmax(fabs(alpha_i), fabs(alpha[t])):
                    best_gain = gain
                    best_j = t
                    self.free_sign_j = sign_j
                    self.free_step = step
        if best_j == -1 and best == -1:
            return 1
        self.free_sign_i = sign_i
        out_i[0] = i
        out_j[0] = best_j
        return 0

    cdef inline double clipped_newton(self, Py_ssize_t t) noexcept nogil:
        # TAU stands in for a non-positive curvature only (svm.cpp's rule):
        # flooring a positive Q_tt < TAU at TAU shrank the step by Q_tt / TAU,
        # so a kernel of scale 1e-30 needed C * 1e-12 steps to reach the box
        cdef double curvature = self.Q.QD[t] if self.Q.QD[t] > 0.0 else TAU
        cdef double target = self.alpha[t] - self.G[t] / curvature
        if target <= self.lo[t]:
            return self.lo[t]
        if target >= self.hi[t]:
            return self.hi[t]
        return target

    # -------------------------------------------------------------- updates
    cdef int update_G_bar(self, Py_ssize_t i, double old_bound_value) except -1 nogil:
        cdef double change = self.bound_value(i) - old_bound_value
        cdef double* Q_i
        cdef double* G_bar = &self.G_bar[0]
        cdef Py_ssize_t k
        if change != 0.0 and self.G_bar_valid:
            self.work_gbar += self.l
            Q_i = self.Q.get_Q(i, self.l)
            for k in range(self.l):
                G_bar[k] += change * Q_i[k]
        return 0

    cdef int step_pair(self, Py_ssize_t i, Py_ssize_t j) except -1 nogil:
        """Analytic two-variable step on the line y_i a_i + y_j a_j = const,
        clipped to both boxes (svm.cpp Solve, generalised to [lo, hi])."""
        cdef double* Q_i = self.Q.get_Q(i, self.active_size)
        cdef double* Q_j = self.Q.get_Q(j, self.active_size)
        cdef double old_i = self.alpha[i], old_j = self.alpha[j]
        cdef double old_bv_i = self.bound_value(i), old_bv_j = self.bound_value(j)
        cdef double quad_coef, delta, t, low, high, magnitude
        cdef double sum_or_diff = 0.0
        if self.libsvm_steps:
            self.step_pair_libsvm(i, j, Q_i[j])
        elif self.y[i] != self.y[j]:
            # a_i - a_j = diff stays fixed; both move by delta.
            quad_coef = self.Q.QD[i] + self.Q.QD[j] + 2.0 * Q_i[j]
            delta = (-self.G[i] - self.G[j]) / (quad_coef if quad_coef > 0 else TAU)
            sum_or_diff = old_i - old_j
            t = old_j + delta
            low = max(self.lo[j], self.lo[i] - sum_or_diff)
            high = min(self.hi[j], self.hi[i] - sum_or_diff)
            # Snap to the bound that binds, so that a variable at its
            # bound holds the bound exactly.
            if t <= low:
                if self.lo[j] >= self.lo[i] - sum_or_diff:
                    self.alpha[j] = self.lo[j]
                    self.alpha[i] = self.lo[j] + sum_or_diff
                else:
                    self.alpha[i] = self.lo[i]
                    self.alpha[j] = self.lo[i] - sum_or_diff
            elif t >= high:
                if self.hi[j] <= self.hi[i] - sum_or_diff:
                    self.alpha[j] = self.hi[j]
                    self.alpha[i] = self.hi[j] + sum_or_diff
                else:
                    self.alpha[i] = self.hi[i]
                    self.alpha[j] = self.hi[i] - sum_or_diff
            else:
                self.alpha[j] = t
                self.alpha[i] = t + sum_or_diff
        else:
            # a_i + a_j = sum stays fixed; a_i moves by -delta, a_j by +delta.
            quad_coef = self.Q.QD[i] + self.Q.QD[j] - 2.0 * Q_i[j]
            delta = (self.G[i] - self.G[j]) / (quad_coef if quad_coef > 0 else TAU)
            sum_or_diff = old_i + old_j
            t = old_j + delta
            low = max(self.lo[j], sum_or_diff - self.hi[i])
            high = min(self.hi[j], sum_or_diff - self.lo[i])
            if t <= low:
                if self.lo[j] >= sum_or_diff - self.hi[i]:
                    self.alpha[j] = self.lo[j]
                    self.alpha[i] = sum_or_diff - self.lo[j]
                else:
                    self.alpha[i] = self.hi[i]
                    self.alpha[j] = sum_or_diff - self.hi[i]
            elif t >= high:
                if self.hi[j] <= sum_or_diff - self.lo[i]:
                    self.alpha[j] = self.hi[j]
                    self.alpha[i] = sum_or_diff - self.hi[j]
                else:
                    self.alpha[i] = self.lo[i]
                    self.alpha[j] = sum_or_diff - self.lo[i]
            else:
                self.alpha[j] = t
                self.alpha[i] = sum_or_diff - t
        if not self.libsvm_steps:
            # Rounding in the derived variable must not leave its box, nor
            # stop one float short of a bound (it would then count as free
            # and alone decide rho).  Only rounding: a slack relative to the
            # box width (1e-12 C, before) undid every step smaller than that,
            # and on svmguide1 with a cubic kernel (Q_ii up to 9e14, steps of
            # 1e-15 C) left alpha at 0 through all 10M iterations.
            # (alpha_j is t or a bound, alpha_i is sum_or_diff -/+ alpha_j)
            magnitude = fabs(sum_or_diff) + fabs(self.alpha[j])
            self.snap_to_box(i, magnitude)
            self.snap_to_box(j, magnitude)
        return self.pair_moved(i, j, Q_i, Q_j, old_i, old_j, old_bv_i, old_bv_j)

    cdef int pair_moved(self, Py_ssize_t i, Py_ssize_t j, const double* Q_i,
                        const double* Q_j, double old_i, double old_j, double old_bv_i,
                        double old_bv_j) except -1 nogil:
        """G, the statuses and G_bar after a step moved a_i from old_i and
        a_j from old_j (the bound values ``bound_value`` gave before it)."""
        cdef double d_i = self.alpha[i] - old_i
        cdef double d_j = self.alpha[j] - old_j
        cdef double* G = &self.G[0]
        cdef Py_ssize_t k
        for k in range(self.active_size):
            G[k] += Q_i[k] * d_i + Q_j[k] * d_j
        self.update_status(i)
        self.update_status(j)
        self.update_G_bar(i, old_bv_i)
        self.update_G_bar(j, old_bv_j)
        return 0

    cdef void step_pair_libsvm(self, Py_ssize_t i, Py_ssize_t j, double Q_ij) noexcept nogil:
        """The pair step of svm.cpp's Solver::Solve, operation for operation
        (boxes [0, C_i]; Q_ij = y_i y_j K_ij as cached), so that LIBSVM mode
        takes LIBSVM's iterations: ``step_pair``'s own form rounds
        differently (a_i from a_j and the invariant, snapped to its box),
        which is enough to change later working sets."""
        cdef double C_i = self.hi[i], C_j = self.hi[j]
        cdef double quad_coef, delta, diff, total
        if self.y[i] != self.y[j]:
            quad_coef = self.Q.QD[i] + self.Q.QD[j] + 2 * Q_ij
            if quad_coef <= 0:
                quad_coef = TAU
            delta = (-self.G[i] - self.G[j]) / quad_coef
            diff = self.alpha[i] - self.alpha[j]
            self.alpha[i] += delta
            self.alpha[j] += delta
            if diff > 0:
                if self.alpha[j] < 0:
                    self.alpha[j] = 0
                    self.alpha[i] = diff
            elif self.alpha[i] < 0:
                self.alpha[i] = 0
                self.alpha[j] = -diff
            if diff > C_i - C_j:
                if self.alpha[i] > C_i:
                    self.alpha[i] = C_i
                    self.alpha[j] = C_i - diff
            elif self.alpha[j] > C_j:
                self.alpha[j] = C_j
                self.alpha[i] = C_j + diff
        else:
            quad_coef = self.Q.QD[i] + self.Q.QD[j] - 2 * Q_ij
            if quad_coef <= 0:
                quad_coef = TAU
            delta = (self.G[i] - self.G[j]) / quad_coef
            total = self.alpha[i] + self.alpha[j]
            self.alpha[i] -= delta
            self.alpha[j] += delta
            if total > C_i:
                if self.alpha[i] > C_i:
                    self.alpha[i] = C_i
                    self.alpha[j] = total - C_i
            elif self.alpha[j] < 0:
                self.alpha[j] = 0
                self.alpha[i] = total
            if total > C_j:
                if self.alpha[j] > C_j:
                    self.alpha[j] = C_j
                    self.alpha[i] = total - C_j
            elif self.alpha[i] < 0:
                self.alpha[i] = 0
                self.alpha[j] = total

    cdef inline void snap_to_box(self, Py_ssize_t i, double magnitude) noexcept nogil:
        """a_i to the bound it is within rounding of (a few ulps of
        ``magnitude``, the size of the terms it was computed from); to the
        nearer bound of a box narrower than twice that (a sample weight of
        1e-15 beside weights of 1: every step towards its upper bound had
        been snapped back to 0, and SMO picked the same pair until max_iter)."""
        cdef double slack = SNAP * magnitude
        if self.alpha[i] <= self.lo[i] + slack or self.alpha[i] >= self.hi[i] - slack:
            if self.alpha[i] - self.lo[i] <= self.hi[i] - self.alpha[i]:
                self.alpha[i] = self.lo[i]
            else:
                self.alpha[i] = self.hi[i]

    cdef int step_single(self, Py_ssize_t i) except -1 nogil:
        cdef double* Q_i = self.Q.get_Q(i, self.active_size)
        cdef double old_bv = self.bound_value(i)
        cdef double d = self.clipped_newton(i) - self.alpha[i]
        cdef Py_ssize_t k
        cdef double* G = &self.G[0]
        self.alpha[i] += d
        if d < 0 and self.alpha[i] < self.lo[i]:
            self.alpha[i] = self.lo[i]
        elif d > 0 and self.alpha[i] > self.hi[i]:
            self.alpha[i] = self.hi[i]
        for k in range(self.active_size):
            G[k] += Q_i[k] * d
        self.update_status(i)
        self.update_G_bar(i, old_bv)
        return 0

    cdef int free_pair_step(self, Py_ssize_t i, Py_ssize_t j) except -1 nogil:
        """Bias-free step along u = s_i e_i + s_j e_j by the step
        ``select_free`` chose (the exact minimiser of the objective on that
        line, clipped where the first of the two reaches its bound, which it
        then holds exactly)."""
        cdef double* Q_i = self.Q.get_Q(i, self.active_size)
        cdef double* Q_j = self.Q.get_Q(j, self.active_size)
        cdef double s_i = self.free_sign_i, s_j = self.free_sign_j, step = self.free_step
        cdef double old_i = self.alpha[i], old_j = self.alpha[j]
        cdef double old_bv_i = self.bound_value(i), old_bv_j = self.bound_value(j)
        # the limits select_free clipped the step to, computed alike
        if step == (self.hi[i] - old_i if s_i > 0.0 else old_i - self.lo[i]):
            self.alpha[i] = self.hi[i] if s_i > 0.0 else self.lo[i]
            self.alpha[j] = old_j + s_j * step
        elif step == (self.hi[j] - old_j if s_j > 0.0 else old_j - self.lo[j]):
            self.alpha[j] = self.hi[j] if s_j > 0.0 else self.lo[j]
            self.alpha[i] = old_i + s_i * step
        else:
            self.alpha[i] = old_i + s_i * step
            self.alpha[j] = old_j + s_j * step
        # as step_pair: rounding must neither leave a box nor stop one float
        # short of its bound; relative to the step taken, not the unclipped
        # one (-slope / TAU along a direction without curvature: a slack of
        # a few ulps of 1e12 |slope| snapped the partner back to a bound it
        # had left by far more than rounding)
        self.snap_to_box(i, fabs(old_i) + step)
        self.snap_to_box(j, fabs(old_j) + step)
        return self.pair_moved(i, j, Q_i, Q_j, old_i, old_j, old_bv_i, old_bv_j)

    # ------------------------------------------------------------ shrinking
    cdef bint be_shrunk(self, Py_ssize_t i, double Gmax1, double Gmax2, double Gmax3,
                        double Gmax4) noexcept nogil:
        """Can a_i be left out?  (svm.cpp be_shrunk, Solver_NU's with Gmax3
        and Gmax4, the maxima of the negative samples; for the bias-free
        mode, Gmax1 = PGmax and Gmax2 = -PGmin as in LIBLINEAR's shrinking.)"""
        if self.nu:
            if self.is_upper(i):
                return -self.G[i] > (Gmax1 if self.y[i] > 0 else Gmax4)
            if self.is_lower(i):
                return self.G[i] > (Gmax2 if self.y[i] > 0 else Gmax3)
            return False
        if not self.has_equality:
            if self.is_lower(i):
                return self.G[i] > Gmax1
            if self.is_upper(i):
                return -self.G[i] > Gmax2
            return False
        if self.is_upper(i):
            if self.y[i] > 0:
                return -self.G[i] > Gmax1
            return -self.G[i] > Gmax2
        if self.is_lower(i):
            if self.y[i] > 0:
                return self.G[i] > Gmax2
            return self.G[i] > Gmax1
        return False

    cdef int gradient_from_snapshot(self, Py_ssize_t start, bint through_cache) except -1 nogil:
        """G_i = G_start_i + sum_j (a_j - a_start_j) Q_ij on positions
        start..l-1 (positions below start carry G through the iterations),
        then (a, G) is the new snapshot.  ``through_cache``: fetch the moved
        variables' columns whole through the cache (``get_Q``); else read a
        column only if it is cached whole, and otherwise compute just its
        entries start..l-1, uncached (a few fixed positions)."""
        cdef Py_ssize_t i, j, m = self.l - start
        cdef double change
        cdef double* column
        cdef double* segment = NULL
        cdef CacheEntry* cached
        if m > 0:
            if not through_cache:
                segment = <double*> malloc(m * sizeof(double))
                if segment == NULL:
                    with gil:
                        raise MemoryError("gradient_from_snapshot")
            for i in range(start, self.l):
                self.G[i] = self.G_start[i]
            for j in range(self.l):
                change = self.alpha[j] - self.alpha_start[j]
                if change == 0.0:
                    continue
                if self.interrupted(self.l):
                    free(segment)
                    return -1
                self.work_reconstruct += m
                if through_cache:
                    column = self.Q.get_Q(j, self.l) + start
                else:
                    cached = &self.Q.cache.entries[j]
                    if cached.length >= self.l:
                        column = cached.data + start
                    else:
                        self.Q.fill_column(j, start, self.l, segment)
                        column = segment
                for i in range(m):
                    self.G[start + i] += change * column[i]
            free(segment)
        self.alpha_start[:] = self.alpha
        self.G_start[:] = self.G
        return 0

    cdef int rebase_snapshot(self) except -1 nogil:
        """Make G whole and the snapshot of ``reconstruct_gradient``, at a
        moment when nothing is shrunk (G is exact on the movable positions):
        the fixed positions are brought up to date from the snapshot, with
        only their entries of the moved variables' columns.

        Then the next rebuild counts only the variables that move from here
        on.  Before, a solve that ran past its first shrink rebuilt at the
        end with every variable moved since its start, over all shrunk and
        fixed positions: on ijcnn1 (10k rows, RBF, 100 MB cache) two path
        steps at a breakpoint of the path moved about 1700 variables each,
        and their rebuilds (17M kernel values) missed the cache.

        With fixed positions this is done once a solve (``do_shrinking``):
        a variable that moves again later counts twice for them, and a
        solve whose rounds never shrink anything would pay up to 2000 of
        their columns' segments a round."""
        if self.l_var < self.l:
            self.fixed_rebased = True
        return self.gradient_from_snapshot(self.l_var, False)

    cdef int do_shrinking(self) except -1 nogil:
        cdef double Gmax1, Gmax2, Gmax3 = -INFINITY, Gmax4 = -INFINITY
        if self.active_size == self.l_var and (self.l_var == self.l or not self.fixed_rebased):
            self.rebase_snapshot()
        if self.nu:
            self.max_violations_nu(&Gmax1, &Gmax2, &Gmax3, &Gmax4)
        else:
            self.max_violations(&Gmax1, &Gmax2)
        if not self.unshrink and max(Gmax1 + Gmax2, Gmax3 + Gmax4) <= self.eps * 10:
            # Close to the end: bring everything back once, so that the
            # final iterations see the whole problem.
            self.unshrink = True
            self.reconstruct_gradient(self.l_var)
            self.active_size = self.l_var
            if not self.nu:         # Solver_NU's un-shrink prints no mark
                self.note(c'*')
            self.whole_gradient = True
        self.shrink(Gmax1, Gmax2, Gmax3, Gmax4)
        return 0

    cdef void max_violations(self, double* Gmax1_out, double* Gmax2_out) noexcept nogil:
        """do_shrinking's maximal violations over the active set (svm.cpp)."""
        cdef double Gmax1 = -INFINITY, Gmax2 = -INFINITY, pg
        cdef Py_ssize_t i
        if self.has_equality:
            # Gmax1 = max{-y_t G_t : t in I_up},  Gmax2 = max{y_t G_t : t in I_low}
            for i in range(self.active_size):
                if self.y[i] > 0:
                    if not self.is_upper(i) and -self.G[i] >= Gmax1:
                        Gmax1 = -self.G[i]
                    if not self.is_lower(i) and self.G[i] >= Gmax2:
                        Gmax2 = self.G[i]
                else:
                    if not self.is_upper(i) and -self.G[i] >= Gmax2:
                        Gmax2 = -self.G[i]
                    if not self.is_lower(i) and self.G[i] >= Gmax1:
                        Gmax1 = self.G[i]
        else:
            Gmax1 = 0.0
            Gmax2 = 0.0
            for i in range(self.active_size):
                pg = self.projected_gradient(i)
                if pg > Gmax1:
                    Gmax1 = pg
                if -pg > Gmax2:
                    Gmax2 = -pg
        Gmax1_out[0], Gmax2_out[0] = Gmax1, Gmax2

    cdef void max_violations_nu(self, double* Gmax1_out, double* Gmax2_out, double* Gmax3_out,
                                double* Gmax4_out) noexcept nogil:
        """Solver_NU::do_shrinking's maxima: -G over I_up and G over I_low,
        for the positive (1, 2) and the negative (4, 3) samples."""
        cdef double Gmax1 = -INFINITY, Gmax2 = -INFINITY, Gmax3 = -INFINITY, Gmax4 = -INFINITY
        cdef Py_ssize_t i
        for i in range(self.active_size):
            if not self.is_upper(i):
                if self.y[i] > 0:
                    if -self.G[i] > Gmax1:
                        Gmax1 = -self.G[i]
                elif -self.G[i] > Gmax4:
                    Gmax4 = -self.G[i]
            if not self.is_lower(i):
                if self.y[i] > 0:
                    if self.G[i] > Gmax2:
                        Gmax2 = self.G[i]
                elif self.G[i] > Gmax3:
                    Gmax3 = self.G[i]
        Gmax1_out[0], Gmax2_out[0], Gmax3_out[0], Gmax4_out[0] = Gmax1, Gmax2, Gmax3, Gmax4

    cdef void shrink(self, double Gmax1, double Gmax2, double Gmax3, double Gmax4) noexcept nogil:
        """Move behind active_size the variables be_shrunk sets aside.

        svm.cpp's loop, with the kernel cache's swaps made at the end in
        one pass over its columns (``swap_many``, as ``move_to_tail``):
        one pair at a time walked every cached column per pair, 8% of a
        fit's time on svmguide1 (RBF, the whole Q cached, 516 swaps in 5
        rounds), half that in one pass."""
        cdef Py_ssize_t i = 0, n_pairs = 0, cap = self.active_size // 2 + 1
        # at most one pair for every two positions (i below, active_size above)
        cdef Py_ssize_t* pairs = <Py_ssize_t*> malloc(2 * cap * sizeof(Py_ssize_t))
        while i < self.active_size:
            if self.be_shrunk(i, Gmax1, Gmax2, Gmax3, Gmax4):
                self.active_size -= 1
                while self.active_size > i:
                    if not self.be_shrunk(self.active_size, Gmax1, Gmax2, Gmax3, Gmax4):
                        if pairs == NULL:       # no memory for the list: one at a time
                            self.swap_index(i, self.active_size)
                        else:
                            self.swap_arrays(i, self.active_size)
                            pairs[n_pairs] = i
                            pairs[cap + n_pairs] = self.active_size
                            n_pairs += 1
                        break
                    self.active_size -= 1
            i += 1
        if pairs != NULL:
            self.Q.cache.swap_many(pairs, pairs + cap, n_pairs)
            self.n_swaps += n_pairs
            free(pairs)

    # ----------------------------------------------------------------- main
    cdef int select(self, Py_ssize_t* i, Py_ssize_t* j) except -2 nogil:
        self.work_select += self.active_size
        if self.nu:
            return self.select_pair_nu(i, j)
        if self.has_equality:
            return self.select_pair(i, j)
        return self.select_free(i, j)

    cdef int run(self) except -1 nogil:
        cdef Py_ssize_t i = -1, j = -1
        cdef long long counter = self.first_shrink + 1
        cdef long long next_screen = self.screen_every
        cdef long long next_gap = 0, period = self.gap_period
        cdef long long next_signal = self.work_select + SIGNAL_WORK
        cdef Py_ssize_t before, found
        cdef double old_i, old_j
        while self.n_iter < self.max_iter:
            if self.work_select >= next_signal:
                next_signal = self.work_select + SIGNAL_WORK
                with gil:
                    if PyErr_CheckSignals() != 0:
                        return -1
            # Gap-safe screening needs G on every movable variable: at the
            # warm start, on a schedule while nothing is shrunk, and right
            # after shrinking's one un-shrink (the gap is small there, so it
            # screens most, and what it freezes skips the full-size
            # iterations that follow).  Before shrinking's turn: a screen
            # due at the same iteration would otherwise never run (with
            # n >= 10,000 the doubled period met the first shrink at
            # iteration 1000, and nothing was screened after the warm start).
            if (self.gap_period > 0 and self.active_size == self.l_var
                    and (self.n_iter >= next_gap or self.whole_gradient)):
                self.whole_gradient = False
                before = self.l_var
                found = self.screen_gap()
                # Few found: wait twice as long next time (the rule costs
                # about as much as a few dozen iterations).
                if found * 20 < before:
                    period = 2 * period
                else:
                    period = self.gap_period
                next_gap = self.n_iter + period
            counter -= 1
            if counter == 0:
                counter = shrink_period(self.l)
                if self.allow_dense and self.crawling():
                    self.stalled = True
                    return 0
                if self.shrinking:
                    self.do_shrinking()
                self.note(c'.')
                with gil:
                    if PyErr_CheckSignals() != 0:
                        return -1
                    self.pass_marks()
                    if self.shrinking:
                        # shrinking scatters the positions as it goes
                        self.Q.follow_positions()
                if (self.screen_every > 0 and self.n_iter > 0
                        and self.n_iter >= next_screen):
                    next_screen = self.n_iter + self.screen_every
                    self.screen_dynamically()
            if self.select(&i, &j) != 0:
                # Optimal on the active set: rebuild the whole gradient and
                # check again (svm.cpp Solve, the "*" step).
                if self.active_size < self.l_var:
                    self.reconstruct_gradient(self.l_var)
                    self.active_size = self.l_var
                self.note(c'*')
                if self.select(&i, &j) != 0:
                    return 0
                # Not optimal after all: screen now that G is whole.  Not
                # before this check: at the end of the solve, what it froze
                # would be wasted swaps, and the final rebuild of the fixed
                # variables' gradient would repeat the one just done.
                if (self.gap_period > 0 and self.screen_gap() > 0
                        and self.select(&i, &j) != 0):
                    return 0
                counter = 1  # shrink at the next iteration
            self.n_iter += 1
            if self.has_equality:
                old_i, old_j = self.alpha[i], self.alpha[j]
                self.step_pair(i, j)
                if self.alpha[i] != old_i or self.alpha[j] != old_j:
                    self.fallback_futile = False
                    self.screen_futile = False
                elif not self.libsvm_steps and not self.may_leave_loop():
                    # A step below alpha's ulp changes nothing, G neither, and
                    # the same pair came back until max_iter (heart_scale at
                    # tol 1e-17: 10M iterations, 3 s).  A rebuilt gradient
                    # (other round-off) may select another pair; on the whole
                    # set, the stop is "round_off" (violation >= eps).
                    # LIBSVM mode keeps svm.cpp's loop and its iteration count.
                    if self.active_size == self.l_var:
                        return 0
                    self.reconstruct_gradient(self.l_var)
                    self.active_size = self.l_var
            elif j >= 0:
                self.free_pair_step(i, j)
            else:
                self.step_single(i)
        return 0

    cdef bint may_leave_loop(self) noexcept nogil:
        """Whether the loop of a step that changed nothing can still end
        other than at max_iter: by the dense fallback its crawl starts
        (unless the last one moved nothing and no step has since: heart_scale,
        linear, C = 1e4, tol 1e-11 converged by the second, 50k iterations
        after the first), by shrinking's un-shrink (a rebuilt G), or by a
        gap screen that freezes one of the pair (unless the last one froze
        nothing and no step has moved since; it needs G whole, and with
        variables shrunk the stop's rebuild comes first: shrinking kept it
        from running, and the loop ran on to max_iter).  Then the loop runs
        on as before, and the solve's result stays what it was."""
        return ((self.allow_dense and not self.fallback_futile)
                or (self.shrinking and not self.unshrink and self.violation <= self.eps * 10)
                or (self.gap_period > 0 and not self.screen_futile
                    and self.active_size == self.l_var)
                or self.screen_every > 0)

    cdef bint crawling(self) noexcept nogil:
        """SMO has run work since the start or the last try that pays for
        the fallback (``fallback_price``) on every movable variable, by Q's
        low-rank factor (``takes_all``); or STALL_MIN_ITERATIONS iterations
        and work that pays for it on the active set."""
        cdef double work = self.work_select - self.stall_work
        cdef double price
        if self.takes_all(work):
            return True
        price = self.fallback_price(self.active_size)
        return (self.n_iter - self.stall_iter >= STALL_MIN_ITERATIONS
                and price < INFINITY and work >= price)

    cdef bint takes_all(self, double work) noexcept nogil:
        """SMO's ``work`` pays for the fallback on every movable variable by
        Q's low-rank factor (``uses_low_rank``), without the dense form's
        floor of iterations (its price counts its fixed cost)."""
        return self.uses_low_rank(self.l_var) and work >= self.fallback_price(self.l_var)

    cdef double fallback_price(self, Py_ssize_t m) noexcept nogil:
        """The dense fallback's cost on m variables in units of SMO work
        (the constants' comment): by Q's low-rank factor where it has one
        (``uses_low_rank``), else by its dense block if that fits the cache
        budget (the block and its factor, 16 m^2 bytes); INFINITY if neither,
        or if there is no pair to solve."""
        cdef double k = self.low_rank
        if m < 2:
            return INFINITY
        if self.uses_low_rank(m):
            return m * (LOW_RANK_SQUARE_WORK * k * k + LOW_RANK_ROW_WORK) + LOW_RANK_FIXED_WORK
        if self.fits_cache_budget(16.0 * m * m):
            return STALL_WORK_PER_CUBE * (<double> m) * m * m
        return INFINITY

    cdef bint uses_low_rank(self, Py_ssize_t m) noexcept nogil:
        """The fallback on m variables takes Q as Z Z' (``dense_qp.LowRankQ``):
        Z has at most m / LOW_RANK_RATIO columns, and it and its scaled copy
        (16 m k bytes) fit the cache budget."""
        return (self.low_rank >= 0 and LOW_RANK_RATIO * self.low_rank <= m
                and self.fits_cache_budget(16.0 * m * self.low_rank))

    cdef bint fits_cache_budget(self, double n_bytes) noexcept nogil:
        """The fallback's matrices of ``n_bytes`` fit the cache budget (-m)."""
        return n_bytes <= self.Q.cache_mb * (1 << 20)

    cdef int dense_fallback(self) except -1:
        """Replace alpha on the working variables by the interior-point
        method's approximate minimiser (``dense_qp.interior_point``) of the
        problem on them, the others held at their bounds, with G updated
        exactly on them, and leave the finish to SMO (its un-shrink and
        final check see every variable, as after any iterations).  The
        equality's value y'alpha is kept; the held variables act through
        the linear term c = G - Q_mm alpha_m.  Nothing changes if the
        method fails or the block does not fit the cache budget.

        The working variables: the gradient is rebuilt if shrinking has
        set some aside, and LIBSVM's shrinking test (``be_shrunk``) is
        applied at the current violations (with shrinking off too), so
        they are the free ones and those at a bound that could still
        move.  Factorising all movable variables costs more than the
        iterations it saves where SMO crawls on a few free ones (a linear
        kernel with more free vectors than features: splice, C = 1, tol
        1e-6, 1.4M iterations on about 100 of 1000); the active set alone
        misses the variables the next un-shrink brings back, and SMO
        crawls again on those.  Once SMO's work pays for the method on
        every movable variable by Q's low-rank factor (a linear kernel with
        few features), it takes them all (``takes_all``).  The method works
        on that factor instead of Q's dense block wherever it applies
        (``uses_low_rank``)."""
        from svmscreen.dense_qp import (LowRankQ, interior_point, repair_equality,
                                        snap_to_bounds)
        cdef Py_ssize_t t, m
        cdef double Gmax1, Gmax2, price
        cdef double work = self.work_select - self.fallback_work
        # Also without shrinking (-h 0), where nothing is ever set aside:
        # the block was then every variable, bounded ones that cannot move
        # included (1024 of them, 29 factorisations: 60% of a fit 2.1
        # times LIBSVM's).  What this test sets aside stays so until SMO's
        # next optimality check, which rebuilds the gradient and takes all.
        # Q's low-rank factor costs O(m) in the block: once SMO's work pays
        # for it on every movable variable, it takes them all.  The
        # shrinking test's verdict at a crawl is no proof: a bias-free fit
        # (3 features, 800 rows) that left out 11 variables the test had
        # set aside at iteration 4000 crawled on for 60,000 more, until the
        # next fallback.  Before then, the working set goes in the dense
        # form (svmguide1's path: blocks of 5-15 variables after 50,000
        # iterations each, where waiting for the factor's price on all 3089
        # took up to 380,000).
        with nogil:
            if self.active_size < self.l_var:
                self.reconstruct_gradient(self.l_var)
                self.active_size = self.l_var
            if not self.takes_all(work):
                self.max_violations(&Gmax1, &Gmax2)
                self.shrink(Gmax1, Gmax2, -INFINITY, -INFINITY)
        if self.active_size < self.l_var:
            # shrinking scatters the positions (as in run())
            self.Q.follow_positions()
        m = self.active_size
        # ``crawling`` weighs SMO's work against the cube of the active set;
        # the block is what the un-shrink and the shrinking test leave, and
        # can be far larger: svmguide1, linear, C = 1, shrinking, 5 free SVs,
        # a first block of 1586 variables whose 38 factorisations took 1.6 s
        # of a 1.8 s fit (LIBSVM: 0.65 s).  The block runs once SMO's work
        # since the last one that ran pays for it too; until then SMO goes
        # on, and the next try waits as after any fallback.
        self.stall_iter, self.stall_work = self.n_iter, self.work_select
        price = self.fallback_price(m)
        if price < INFINITY and work < price:
            return 0
        self.fallback_futile = True
        if price == INFINITY:
            return 0
        self.fallback_work = self.work_select
        if self.uses_low_rank(m):
            Q_m = LowRankQ(self.Q.low_rank_block(m))
        else:
            Q_m = self.Q.dense_block(m)
        alpha_m = np.array(self.alpha[:m])
        G_m = np.array(self.G[:m])
        lo_m, hi_m = np.array(self.lo[:m]), np.array(self.hi[:m])
        y_m = np.array(self.y[:m]) if self.has_equality else None
        delta = float(y_m @ alpha_m) if self.has_equality else 0.0
        found, side, steps = interior_point(Q_m, G_m - Q_m @ alpha_m, lo_m, hi_m, y_m, delta)
        self.n_dense_steps += steps
        if found is None:
            return 0
        # The entries the method places at a bound go there (SMO's shrinking
        # and the screening rules see them there), as far as that moves the
        # gradient by a tenth of tol at most; the equality is then restored
        # on the free ones.
        found = snap_to_bounds(found, lo_m, hi_m, side, Q_m, 0.1 * self.eps)
        if self.has_equality:
            found = repair_equality(found, y_m, lo_m, hi_m, (found > lo_m) & (found < hi_m),
                                    delta)
            if found is None:
                return 0
        step = found - alpha_m
        change = Q_m @ step
        # Only a point that lowers the objective replaces SMO's: the method
        # can fail short of its tolerance (boxes 1e-15 and 1e9 wide on
        # heart_scale: it returned a point near its start, the box centres,
        # at an objective of +7e18, where SMO had reached -239).
        gain = -(step @ G_m + 0.5 * (step @ change))
        if not (np.isfinite(gain) and gain >= -1e-12 * (abs(step @ G_m) + abs(step @ change))):
            return 0
        G_m += change
        if not np.all(np.isfinite(G_m)):
            return 0
        cdef double[::1] new_alpha = found, new_G = G_m
        cdef double old_bound_value
        with nogil:
            for t in range(m):
                # G_bar by the columns of the variables that reach or leave
                # a bound, as SMO's steps keep it: rebuilding it costs one
                # column per bounded variable (a9a, 20k rows, linear, C = 1:
                # 7000 columns, a quarter of the solve's time)
                old_bound_value = self.bound_value(t)
                if self.alpha[t] != new_alpha[t]:
                    self.fallback_futile = False
                    self.screen_futile = False
                self.alpha[t] = new_alpha[t]
                self.G[t] = new_G[t]
                self.update_status(t)
                self.update_G_bar(t, old_bound_value)
            # The method saw every variable that could move: no un-shrink
            # (a gradient rebuild) is due before the final check.
            self.unshrink = True
            self.whole_gradient = m == self.l_var
        return 0

    cdef int freeze(self, Py_ssize_t i) except -1 nogil:
        """Move position i (movable, at a bound) into the fixed region."""
        if i < self.active_size:
            self.swap_index(i, self.active_size - 1)
            i = self.active_size - 1
            self.active_size -= 1
        self.swap_index(i, self.l_var - 1)
        self.l_var -= 1
        self.n_frozen += 1
        return 0

    cdef Py_ssize_t screen_gap(self) except -1 nogil:
        """Gap-safe screening of the movable variables, in the loop (needs
        G whole on positions < l_var).  The rule is _rules._gap_safe_flags
        (frozen variables are correctly fixed, by induction, so the movable
        ones form a box QP of the shape it needs); its intercept is LIBSVM's
        estimate b = -rho of the movable variables (any b is valid, this
        one is near the gap's minimiser once the solve is under way).  A
        certified variable already at that bound is frozen (pitfall 6: no
        other is moved).  Returns the number frozen."""
        cdef Py_ssize_t m = self.l_var, i, found = 0
        cdef signed char[::1] flag = self.gap_flag
        cdef double started = _now()
        if m == 0:
            return 0
        self.n_screens += 1
        if _gap_safe_flags(self.G, self.y, self.alpha, self.lo, self.hi, self.Q.QD, m,
                           -self.calculate_rho(m), self.gap_tau, self.gap_roundoff,
                           flag) < 0:
            with gil:
                raise MemoryError("screen_gap")
        for i in range(m):
            if flag[i] < 0 and self.is_lower(i):
                self.n_frozen_lower += 1
                found += 1
            elif flag[i] > 0 and self.is_upper(i):
                self.n_frozen_upper += 1
                found += 1
            else:
                flag[i] = 0
        self.freeze_flagged(flag, found)
        # The same alpha screens the same way again (the loop of a step that
        # changed nothing ran on to max_iter, screening nothing each time)
        self.screen_futile = found == 0
        if self.n_iter == 0:
            self.start_frozen_lower = self.n_frozen_lower
            self.start_frozen_upper = self.n_frozen_upper
        self.screen_seconds += _now() - started
        return found

    cdef int freeze_flagged(self, signed char[::1] flag, Py_ssize_t count) except -1 nogil:
        """Freeze the ``count`` positions < l_var with flag != 0 (needs
        active_size == l_var).  A CCCP step mostly freezes the samples the
        step before froze, which the position order still holds at the
        tail: few swaps (``move_to_tail``)."""
        self.move_to_tail(flag, count)
        self.n_frozen += count
        return 0

    cdef int move_to_tail(self, signed char[::1] flag, Py_ssize_t count) except -1 nogil:
        """Move the ``count`` positions < l_var with flag != 0 behind the
        others and shorten l_var (and active_size) by ``count``: a
        two-pointer partition, so that a flagged variable already in the
        tail does not move, and the kernel cache's swaps in one pass over
        its columns (``swap_many``).  Swapping one pair at a time walks every
        cached column per pair: moving the 961 samples a path step screened
        on mushrooms (RBF, C = 0.013) cost 8 of the solve's 47 ms."""
        cdef Py_ssize_t left = 0, right = self.l_var - 1, n_pairs = 0
        cdef Py_ssize_t* pairs
        if count == 0:
            return 0
        pairs = <Py_ssize_t*> malloc(2 * count * sizeof(Py_ssize_t))
        if pairs == NULL:
            with gil:
                raise MemoryError("move_to_tail")
        while True:
            while left < right and flag[left] == 0:
                left += 1
            while right > left and flag[right] != 0:
                right -= 1
            if left >= right:
                break
            # every array but the kernel cache now; the cache below, in one pass
            self.swap_arrays(left, right)
            pairs[n_pairs] = left
            pairs[count + n_pairs] = right
            n_pairs += 1
            flag[left], flag[right] = flag[right], flag[left]
        self.Q.cache.swap_many(pairs, pairs + count, n_pairs)
        self.n_swaps += n_pairs
        free(pairs)
        self.l_var -= count
        self.active_size = self.l_var
        return 0

    cdef int screen_dynamically(self) except -1 nogil:
        """Dynamic screening (notes/bias_screening.md §4): make the gradient
        whole on the movable variables, ask the hook which samples are
        certified at their bound, and freeze those that already sit there,
        as shrinking would, but for good."""
        cdef Py_ssize_t pos, k
        cdef Py_ssize_t[::1] freeze_positions
        self.reconstruct_gradient(self.l_var)
        with gil:
            order = np.asarray(self.Q.perm)
            n = self.l
            alpha = np.empty(n)
            alpha[order] = np.asarray(self.alpha)
            grad = np.empty(n)
            grad[order] = np.asarray(self.G)
            movable = np.zeros(n, dtype=bool)
            movable[order[:self.l_var]] = True
            proposal = np.asarray(self.screen_callback(alpha, grad, movable), dtype=bool)
            status = np.asarray(self.status)
            at_bound_pos = (status != FREE)
            positions = np.flatnonzero(proposal[order] & at_bound_pos
                                       & (np.arange(n) < self.l_var))
            # Highest positions first, so earlier swaps never move a pending one.
            freeze_positions = np.ascontiguousarray(positions[::-1], dtype=np.intp)
        for k in range(freeze_positions.shape[0]):
            self.freeze(freeze_positions[k])
        return 0

    cdef double calculate_rho_nu(self, Py_ssize_t stop) noexcept nogil:
        """Solver_NU::calculate_rho over positions < stop: r1 and r2, the
        means of G over the free positive and negative samples (else the
        midpoints of their intervals); sets r = (r1 + r2) / 2, returns
        rho = (r1 - r2) / 2."""
        cdef double ub1 = INFINITY, ub2 = INFINITY, lb1 = -INFINITY, lb2 = -INFINITY
        cdef double sum_free1 = 0.0, sum_free2 = 0.0, r1, r2
        cdef Py_ssize_t i, nr_free1 = 0, nr_free2 = 0
        for i in range(stop):
            if self.y[i] > 0:
                if self.is_upper(i):
                    lb1 = max(lb1, self.G[i])
                elif self.is_lower(i):
                    ub1 = min(ub1, self.G[i])
                else:
                    nr_free1 += 1
                    sum_free1 += self.G[i]
            else:
                if self.is_upper(i):
                    lb2 = max(lb2, self.G[i])
                elif self.is_lower(i):
                    ub2 = min(ub2, self.G[i])
                else:
                    nr_free2 += 1
                    sum_free2 += self.G[i]
        r1 = sum_free1 / nr_free1 if nr_free1 > 0 else (ub1 + lb1) / 2
        r2 = sum_free2 / nr_free2 if nr_free2 > 0 else (ub2 + lb2) / 2
        self.r = (r1 + r2) / 2
        return (r1 - r2) / 2

    cdef double calculate_rho(self, Py_ssize_t stop) noexcept nogil:
        """svm.cpp calculate_rho over positions < stop: the mean of y_i G_i
        over free variables, else the midpoint of the interval the KKT
        conditions allow."""
        cdef double ub = INFINITY, lb = -INFINITY, total = 0.0, yG, slack
        cdef Py_ssize_t i, n_free = 0
        cdef bint upper, lower
        for i in range(stop):
            if self.hi[i] <= self.lo[i] and not self.libsvm_rho:
                continue   # cannot move, so it says nothing about rho
            yG = self.y[i] * self.G[i]
            upper = self.is_upper(i)
            lower = self.is_lower(i)
            if not (upper or lower or self.libsvm_rho):
                slack = RHO_SLACK * (self.hi[i] - self.lo[i])
                lower = self.alpha[i] - self.lo[i] <= slack
                upper = not lower and self.hi[i] - self.alpha[i] <= slack
            if upper:
                if self.y[i] < 0:
                    ub = min(ub, yG)
                else:
                    lb = max(lb, yG)
            elif lower:
                if self.y[i] > 0:
                    ub = min(ub, yG)
                else:
                    lb = max(lb, yG)
            else:
                n_free += 1
                total += yG
        if n_free > 0:
            return total / n_free
        if self.libsvm_rho:
            return (ub + lb) / 2
        # A one-sided interval happens when the feasible set is a single
        # point (e.g. a CCCP step where a whole class is "outliers"): take its
        # finite end, so the intercept stays finite and deterministic.
        if ub == INFINITY and lb == -INFINITY:
            return 0.0
        if ub == INFINITY:
            return lb
        if lb == -INFINITY:
            return ub
        return (ub + lb) / 2


# The dense fallback (``_SMO.dense_fallback``) takes over once SMO's work
# on a active variables since the start or the last fallback
# (work_select, the sum of the active-set sizes over its iterations) reaches
# STALL_WORK_PER_CUBE a^3, about what the interior-point method's Cholesky
# factorisations cost (raw madelon, a = 2000: 4.4 ns per unit of SMO work,
# about 0.4 ns per a^3 for Q's dense block and 25-35 Newton steps), so a
# solve that needs it takes at most about twice its time; and not before
# STALL_MIN_ITERATIONS iterations since (``_SMO.crawling``).  The block it
# factorises, m variables once the gradient is rebuilt, must be paid for
# the same way: STALL_WORK_PER_CUBE m^3 of SMO work since the last
# fallback that ran (``dense_fallback``).  With 20,000,
# long RBF solves met it too (diabetes_scale, gamma 10/d, on the path:
# five fallbacks on about 330 variables, 8% fewer iterations, not faster);
# with 50,000, of the path benchmark's 24 small rows only the linear
# kernel on splice and svmguide1 does, where SMO crawls on 5-70 free
# variables.  Its matrices (Q's block and the factor) must fit the
# cache budget, and LIBSVM mode keeps LIBSVM's iterations.
cdef double STALL_WORK_PER_CUBE = 0.1
cdef long long STALL_MIN_ITERATIONS = 50_000
# A linear kernel's Q = Z Z' (Z_t = s_t x_t, k columns): the fallback then
# works on Z (``dense_qp.LowRankQ``), each Newton step a k x k
# factorisation and products with Z, and costs about
# m (LOW_RANK_SQUARE_WORK k^2 + LOW_RANK_ROW_WORK) + LOW_RANK_FIXED_WORK
# units of SMO work, measured over 31-51 steps (4.4 ns a unit, as above;
# the other core running the tests): svmguide1 (m = 3089, k = 4) 42-58 ms,
# where the dense block took 9-12 s; splice (1000, 60) 29-36 ms; a9a's
# first 5000 rows (k = 123) 0.37-0.45 s.  Z' D^-1 Z is the k^2 term, the
# numpy work on vectors of m (refinement included) the row term, and
# numpy's calls, about 0.2 ms a step at any m, the fixed one.  On raw
# madelon (m = 2000, k = 500) the Woodbury solves lost so many digits that
# the method stopped at 23 steps short of the dense method's objective
# (1118.53 against 1118.55): the factor is taken for k <= m / LOW_RANK_RATIO.
cdef double LOW_RANK_SQUARE_WORK = 1.2
cdef double LOW_RANK_ROW_WORK = 3500.0
cdef double LOW_RANK_FIXED_WORK = 2e6
cdef Py_ssize_t LOW_RANK_RATIO = 8


cdef bint _all_finite(const double[::1] values) noexcept:
    cdef Py_ssize_t i
    cdef double total = 0.0
    with nogil:
        for i in range(values.shape[0]):
            total += values[i] * 0.0        # nan for an infinite or nan value
    return total == 0.0


cdef int _in_positions(values, const Py_ssize_t[::1] perm, str name,
                       double[::1] target) except -1:
    """target[k] = values[perm[k]] (the caller's array is never written),
    after checking the shape of values.  A typed gather into rows of one
    block: the numpy calls and typed views it replaces (shape, conversion,
    fancy index, a buffer per array) were most of a small solve's set-up,
    and one-vs-one fits solve thousands of small pairs (100 classes of 5
    samples: 4950 solves of 10 variables)."""
    cdef Py_ssize_t k, n = perm.shape[0], stride
    cdef const char* data
    cdef cnp.ndarray arr
    if (cnp.PyArray_Check(values) and cnp.PyArray_TYPE(<cnp.ndarray> values) == cnp.NPY_DOUBLE
            and cnp.PyArray_ISBEHAVED_RO(<cnp.ndarray> values)):
        # read in place through numpy's C API: a typed view's buffer
        # request parses a format string, about 0.4 us, five times a solve
        arr = <cnp.ndarray> values
    else:
        # a list, another dtype, a byte-swapped or unaligned array
        arr = np.array(values, dtype=np.float64)
    if cnp.PyArray_NDIM(arr) != 1 or cnp.PyArray_DIM(arr, 0) != n:
        raise ValueError(f"{name} has shape {np.shape(arr)}, Q has {n} variables")
    data = <const char*> cnp.PyArray_DATA(arr)
    stride = cnp.PyArray_STRIDE(arr, 0)
    with nogil:
        for k in range(n):
            target[k] = (<const double*> (data + perm[k] * stride))[0]
    return 0


def solve(QMatrix Q, p, lo, hi, alpha0, y=None, fixed=None, grad0=None,
          double tol=1e-3, bint shrinking=True, max_iter=None, screen_callback=None,
          screen_every=0, gap_screening=0, gap_tau=None, gap_roundoff=None,
          first_shrink=None, bint nu=False, bint libsvm_rho=False, progress=None):
    """Solve the box QP of this module's docstring.

    Parameters
    ----------
    Q : QMatrix
    p, lo, hi, alpha0 : ndarray of shape (n,)
        Linear term, bounds and a feasible starting point (sample order).
    y : ndarray of shape (n,) or None
        Signs of the equality y'a = y'alpha0; None for the bias-free problem.
    fixed : bool ndarray of shape (n,) or None
        Variables held at their (bound) value in alpha0.
    grad0 : ndarray of shape (n,) or None
        Q alpha0 + p if already known (saves the kernel columns).
    tol : float
        Stopping tolerance (LIBSVM's -e).
    shrinking : bool
    max_iter : int or None
        Default max(1e7, 100 n), as LIBSVM.
    screen_callback : callable or None
        Dynamic screening: ``screen_callback(alpha, grad, movable)`` (sample
        order, grad whole on the movable variables) returns a bool mask of
        samples certified at their current bound; those are frozen.
    screen_every : int
        Iterations between two calls of ``screen_callback`` (0: never).
    gap_screening : int
        0: off.  Otherwise the solver screens by itself (``_rules._gap_safe_flags``:
        the gap-safe ball with the intercept count, for a box QP whose Q is
        s_i s_j K_ij with s = y, the C-SVC shape, and whose margins are
        G_i + 1 + y_i b, i.e. p = -1 - Q shift as in a CCCP step) at the
        warm start, every ``gap_screening`` iterations while nothing is
        shrunk (doubling the wait after a poor yield), and after each full
        gradient rebuild.  Certified variables at their bound are frozen;
        ``result.frozen`` lists them.  Needs ``y``, ``gap_tau`` and
        ``gap_roundoff``.
    gap_tau, gap_roundoff : float
        The gap rule's safety margin (round-off included) and the round-off
        allowance added to its squared radius, for the caller's problem:
        ``screening.gap_rule_allowances``.
    first_shrink : int or None
        Iterations before the first shrinking round; later rounds follow
        every min(n, 1000), as LIBSVM's.  None: min(n, 1000).  A warm start
        near the optimum gains from an early first round (the path passes
        ``path.WARM_FIRST_SHRINK``); a start that half the movable variables
        violate by more than 10 tol keeps LIBSVM's first round
        (``_SMO.count_violators``).  The result is the same to the
        tolerance, as shrinking only sets variables aside until the final
        check.
    nu : bool
        svm.cpp's Solver_NU, for LIBSVM's nu-SVC and nu-SVR: sum a_i over
        each sign of y stays as in alpha0 (pairs never mix signs), with its
        shrinking and its rho; ``result.r`` is its r.  Needs ``y``, LIBSVM
        mode (Q rounded to float32) and neither screening nor fixed
        variables.
    libsvm_rho : bool
        rho as svm.cpp's calculate_rho computes it (the LIBSVM drop-in):
        without free variables the midpoint of the allowed interval even
        when one end is infinite (a class of weight 0: rho = +-inf), and
        variables with a box [0, 0] counted at their upper bound.  By
        default those say nothing about rho, and a one-sided interval
        gives its finite end.
    progress : callable or None
        LIBSVM mode: ``progress(marks)`` with the marks logged since its
        last call (``result.progress``'s characters), at each shrinking
        round and at the end, so that a long solve shows them as svm.cpp
        prints them, while it runs.

    Returns
    -------
    SolveResult
    """
    cdef _SMO s = _SMO()
    cdef Py_ssize_t n = Q.n, pos, k, n_fixed = 0
    cdef Py_ssize_t[::1] perm = Q.perm
    cdef bint has_fixed = fixed is not None
    cdef signed char[::1] is_fixed
    cdef const unsigned char[:] fixed_at      # fixed, by sample
    # lengths only (the values are the caller's, see the module docstring):
    # the typed loops index them without bounds checks.  fixed's here, the
    # vectors' in _in_positions.
    if has_fixed:
        fixed_mask = np.asarray(fixed, dtype=bool)
        if fixed_mask.shape != (n,):
            raise ValueError(f"fixed has shape {fixed_mask.shape}, Q has {n} variables")
        fixed_at = fixed_mask.view(np.uint8)
    s.Q = Q
    s.l = n
    s.eps = tol
    s.shrinking = shrinking
    s.first_shrink = shrink_period(n) if first_shrink is None else max(int(first_shrink), 1)
    s.has_equality = y is not None
    s.max_iter = max(10_000_000, 100 * n) if max_iter is None else max_iter
    s.n_iter = 0
    s.unshrink = False
    s.screen_callback = screen_callback
    s.screen_every = screen_every if screen_callback is not None else 0
    s.n_frozen = 0
    s.work_select = 0
    s.work_reconstruct = 0
    s.work_gbar = 0
    if gap_screening and y is None:
        raise ValueError("gap_screening needs the equality (y)")
    if nu and (y is None or not Q.round_float32 or gap_screening or fixed is not None
               or screen_callback is not None):
        raise ValueError("nu (Solver_NU) needs y and LIBSVM mode, without screening or "
                         "fixed variables")
    s.nu = nu
    s.r = 0.0
    s.libsvm_rho = libsvm_rho
    if gap_screening and (gap_tau is None or gap_roundoff is None):
        raise ValueError("gap_screening needs gap_tau and gap_roundoff "
                         "(screening.gap_rule_allowances)")
    s.gap_period = int(gap_screening)
    s.whole_gradient = False
    s.n_screens = 0
    s.n_swaps = 0
    s.screen_seconds = 0.0
    s.n_frozen_lower = s.n_frozen_upper = 0
    s.start_frozen_lower = s.start_frozen_upper = 0
    if gap_screening:
        s.gap_tau = gap_tau
        s.gap_roundoff = gap_roundoff
        s.gap_flag = np.zeros(n, dtype=np.int8)
    # the solver's vectors, rows of one block (one buffer, not nine)
    cdef double[:, ::1] block = np.empty((9, n))
    s.p, s.lo, s.hi, s.alpha, s.y = block[0], block[1], block[2], block[3], block[4]
    s.G, s.G_bar, s.alpha_start, s.G_start = block[5], block[6], block[7], block[8]
    _in_positions(p, perm, "p", s.p)
    _in_positions(lo, perm, "lo", s.lo)
    _in_positions(hi, perm, "hi", s.hi)
    _in_positions(alpha0, perm, "alpha0", s.alpha)
    # The values are trusted, but not infinite ones: C * weights overflowing
    # to inf had made SMO loop without end (estimators.SVC, session 21).  A
    # typed loop: np.isfinite on each costs more than a small path step's
    # rule (heart_scale: 4 x 3 us a solve).  Rows 0-3 of block are p, lo,
    # hi and alpha0.
    for k in range(4):
        if not _all_finite(block[k]):
            raise ValueError(f"{('p', 'lo', 'hi', 'alpha0')[k]} must be finite (C times the "
                             "weights overflowing float64?)")
    if y is None:
        s.y[:] = 1.0
    else:
        _in_positions(y, perm, "y", s.y)
    if grad0 is not None:
        _in_positions(grad0, perm, "grad0", s.G)
    s.G_bar[:] = 0.0
    # the int8 vectors, rows of one block too
    cdef signed char[:, ::1] flags = np.zeros((2, n), dtype=np.int8)
    s.status, is_fixed = flags[0], flags[1]
    # LIBSVM mode (Q rounded as LIBSVM's cache): also its step arithmetic,
    # which assumes C-SVC's boxes [0, C_i] and the equality.
    s.libsvm_steps = Q.round_float32 and y is not None
    with nogil:
        for pos in range(n):
            if s.lo[pos] != 0.0:
                s.libsvm_steps = False
            if has_fixed and fixed_at[perm[pos]]:
                # A variable fixed strictly inside its box is pinned there (lo = hi
                # = its value), so that it counts in G_bar like any variable at a bound.
                if s.lo[pos] < s.alpha[pos] < s.hi[pos]:
                    s.lo[pos] = s.hi[pos] = s.alpha[pos]
                is_fixed[pos] = 1
            elif s.hi[pos] <= s.lo[pos] and not libsvm_rho:
                # A variable with lo == hi cannot move: treat it as fixed (svm.cpp
                # keeps it among the active variables, at its upper bound: so
                # does libsvm_rho).
                is_fixed[pos] = 1
            n_fixed += is_fixed[pos]
            s.update_status(pos)
    s.log_events = s.libsvm_steps
    s.show_marks = progress
    with nogil:
        # Fixed variables go to the end, behind every movable one.
        s.l_var = n
        s.active_size = n
        s.move_to_tail(is_fixed, n_fixed)
    # The columns of this solve are computed in this position order.
    Q.follow_positions()
    s.allow_dense = not Q.round_float32
    s.stalled = False
    s.fallback_futile = False
    s.screen_futile = False
    s.stall_iter = s.stall_work = s.fallback_work = 0
    s.signal_work = 0
    s.n_dense_steps = 0
    s.low_rank = Q.low_rank_width() if s.allow_dense else -1
    with nogil:
        s.init_gradient(grad0 is not None)
        # A start that half the variables violate (a new regime along a
        # path) is far from the optimum: an early round would shrink
        # variables that must move, and rebuilding their gradient at the
        # un-shrink costs kernel columns over rows the cache does not hold.
        if s.first_shrink < shrink_period(n) and 2 * s.count_violators() > s.l_var:
            s.first_shrink = shrink_period(n)
        s.alpha_start[:] = s.alpha
        s.G_start[:] = s.G
        s.run()
    s.first_shrink = shrink_period(n)     # the runs after a dense fallback
    while s.stalled:
        s.stalled = False
        s.dense_fallback()
        with nogil:
            s.run()
    with nogil:
        if s.active_size < s.l:      # stopped at max_iter with variables shrunk
            s.reconstruct_gradient(s.l)
            s.active_size = s.l
            s.note(c'*')
    s.pass_marks()

    # select_free also ends when no variable's step changes alpha
    # (best == -1), which the violation tells from optimality
    if s.n_iter >= s.max_iter:
        status = "max_iter"
    elif s.violation < s.eps:
        status = "optimal"
    else:
        status = "round_off"
    perm = Q.perm
    # the results in sample order, allocated and written through numpy's C
    # API (np.empty and a typed view of each cost about 0.4 us a vector)
    cdef cnp.npy_intp length = n
    alpha = cnp.PyArray_EMPTY(1, &length, cnp.NPY_DOUBLE, 0)
    grad = cnp.PyArray_EMPTY(1, &length, cnp.NPY_DOUBLE, 0)
    grad_plus_p = cnp.PyArray_EMPTY(1, &length, cnp.NPY_DOUBLE, 0)
    frozen = cnp.PyArray_ZEROS(1, &length, cnp.NPY_BOOL, 0)
    cdef double* alpha_at = <double*> cnp.PyArray_DATA(<cnp.ndarray> alpha)
    cdef double* grad_at = <double*> cnp.PyArray_DATA(<cnp.ndarray> grad)
    cdef double* grad_plus_p_at = <double*> cnp.PyArray_DATA(<cnp.ndarray> grad_plus_p)
    cdef cnp.npy_bool* frozen_at = <cnp.npy_bool*> cnp.PyArray_DATA(<cnp.ndarray> frozen)
    with nogil:
        for pos in range(n):
            alpha_at[perm[pos]] = s.alpha[pos]
            grad_at[perm[pos]] = s.G[pos]
            # s.p holds the caller's p, permuted: the same sums as grad + p
            grad_plus_p_at[perm[pos]] = s.G[pos] + s.p[pos]
        for pos in range(s.l_var, n):
            frozen_at[perm[pos]] = not (has_fixed and fixed_at[perm[pos]])
    objective = 0.5 * float(np.dot(alpha, grad_plus_p))
    if not _all_finite(s.G):
        i = int(np.flatnonzero(~np.isfinite(grad))[0])
        column = Q.add_columns([i], [1.0], np.zeros(n))
        if not np.all(np.isfinite(column)):
            # the diagonal was checked; an entry off it overflowed (poly with
            # coef0 < 0 can exceed every K_ii)
            raise ValueError("kernel values overflow: some K(x_i, x_j) is not finite (beyond "
                             "3.4e38 where Q is rounded to float, as LIBSVM's and the "
                             "drop-in's); scale the kernel or X down, or lower "
                             "gamma/degree/coef0")
        # finite kernel values times a huge alpha (C = 1e300): blaming the
        # kernel sent the user to the wrong knob
        raise ValueError(f"the gradient overflows float64: alpha up to "
                         f"{float(np.max(np.abs(alpha))):.3g} (the box, C times the weights) "
                         f"times kernel values up to {float(np.max(np.abs(column))):.3g}; "
                         "lower C (or the weights), or scale the kernel or X down")
    if nu:
        rho = s.calculate_rho_nu(s.l)
    else:
        rho = s.calculate_rho(s.l) if s.has_equality else None
    cdef SolveResult result = SolveResult(alpha, grad, rho, objective, int(s.n_iter), status,
                                          float(s.violation))
    result.r = float(s.r) if nu else None
    result.max_iter = int(s.max_iter)
    result.work_select = int(s.work_select)
    result.work_reconstruct = int(s.work_reconstruct)
    result.work_gbar = int(s.work_gbar)
    result.n_screens = int(s.n_screens)
    result.n_swaps = int(s.n_swaps)
    result.screen_seconds = float(s.screen_seconds)
    result.frozen_lower = int(s.n_frozen_lower)
    result.frozen_upper = int(s.n_frozen_upper)
    result.start_frozen_lower = int(s.start_frozen_lower)
    result.start_frozen_upper = int(s.start_frozen_upper)
    result.n_dense_steps = int(s.n_dense_steps)
    result.fallback_futile = bool(s.fallback_futile)
    result.frozen = frozen
    # LIBSVM mode: the progress marks svm.cpp would have printed
    result.progress = (<bytes> s.events[:s.n_events]).decode("ascii") if s.n_events else ""
    return result
