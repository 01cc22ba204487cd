"""Safe sample screening rules as typed loops: centre and radius, then the
shared bound routine of the rule's geometry (``_bounds``).

Notation (LIBSVM scale, per-sample boxes): a reference alpha (feasible at
hi_ref), its scores qa = Q alpha (qa_i = z_i'w_ref, z_i = y_i phi(x_i)), the
target box hi = q hi_ref (q = C / C_ref), W = alpha'Q alpha = ||w_ref||^2.
Each geometry routine bounds v_i'w* for per-sample vectors v_i that the
caller describes by their dot products with the centres and their norms:
v_i = z_i for the bias-free margin, v_i = phi_i - c for the intercept
(bias_screening.md, sec. 2.4a).

Rules (the derivations, including the inexact-reference and intercept
extensions, are in docs/screening.md):
- DVI = BT1 with one reference = gap-DVI at gap 0
  (paper 003, Cor. 11-12; paper 000, Thm 6 and eq. 34; bias_screening Thm 4);
- BT2 (paper 000, Thm 7; NC1 + NC3), with the intercept term of
  docs/screening.md sec. 4;
- IT = BT1 cap BT2 (paper 000, Thm 8);
- SSNSV and ESSNSV domes (paper 002, Thm 2 as corrected in seed_002 note;
  paper 003, Thm 19);
- the intercept counting interval (bias_screening.md, Thm 2, sec. 2.5) and
  the pairwise count (sec. 2.4b).

Trusts its caller (``svmscreen.screening``): arrays are float64, contiguous,
of equal length n >= 1; boxes are positive; the scores belong to a feasible
reference.  No Python objects inside the nogil blocks.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport ceil, floor, sqrt, fabs, fmax, fmin, INFINITY, NAN
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from svmscreen._kernels cimport dense_dot
from svmscreen._solver cimport QMatrix
from svmscreen._bounds cimport (ball_bounds_loop, two_ball_bounds_loop,
                                dome_bounds_loop)

cnp.import_array()

# Relative slack of the weighted count's float comparisons
# (bias_screening.md, sec. 2.5: "compare with C_N (1 +- 1e-12)").
cdef double COUNT_EPS = 1e-12
# Relative round-off allowance added to squared radii that are differences of
# larger terms (r2^2 of BT2, the reference's duality gap).
cdef double ROUNDOFF = 1e-13


# ---------------------------------------------------------------------------
# small typed helpers
# ---------------------------------------------------------------------------

cdef inline double _dot(const double[::1] a, const double[::1] b) noexcept nogil:
    cdef Py_ssize_t i
    cdef double s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


cdef inline Py_ssize_t _partition_less(double* work, Py_ssize_t lo, Py_ssize_t hi,
                                        double pivot, bint or_equal) noexcept nogil:
    """Move the entries of work[lo:hi] below pivot (at or below, with
    ``or_equal``) to the front; returns where the rest starts.  Branch-free
    (Lomuto with the swap done unconditionally): the comparisons of a
    selection are unpredictable, and along a path, where every step
    selects in new data, the mispredicted branches of a Hoare partition
    made the count cost twice as much."""
    cdef Py_ssize_t i, store = lo
    cdef double v
    for i in range(lo, hi):
        v = work[i]
        work[i] = work[store]
        work[store] = v
        store += (v <= pivot) if or_equal else (v < pivot)
    return store


cdef inline double _median_of_three(const double* work, Py_ssize_t lo,
                                    Py_ssize_t hi) noexcept nogil:
    """The median of work[lo], work[(lo + hi) / 2] and work[hi - 1], a
    quickselect pivot: max(min(a, b), min(max(a, b), c)), by selects."""
    cdef double a = work[lo], b = work[lo + (hi - lo) // 2], c = work[hi - 1]
    cdef double pivot = b if a < b else a
    pivot = c if c < pivot else pivot
    a = a if a < b else b
    return pivot if pivot > a else a


cdef double _select(double* work, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """k-th smallest (0-based) of work[0:n], by quickselect with a
    median-of-three pivot; permutes work.  NaN entries, never expected,
    give NaN."""
    cdef Py_ssize_t lo = 0, hi = n, below, through
    cdef double pivot
    while hi - lo > 1:
        pivot = _median_of_three(work, lo, hi)
        below = _partition_less(work, lo, hi, pivot, False)
        if k < below:
            hi = below
        elif below > lo:
            lo = below
        else:
            # Nothing below the pivot (it is the least value): split off the
            # entries equal to it, so that ties cannot stall the loop.
            through = _partition_less(work, lo, hi, pivot, True)
            if through == lo:           # the pivot matched nothing: a NaN
                return NAN
            if k < through:
                return pivot
            lo = through
    return work[k]


cdef int _count_interval(double* beta_lo, double* beta_hi,
                         const double* y, const double* weight, Py_ssize_t n,
                         bint weighted, double target, double* b_lo,
                         double* b_hi) noexcept nogil:
    """Safe interval for b* from per-sample threshold intervals.

    bias_screening.md, Thm 2 (unweighted):
        b_lo = beta_lo_(n_P)  (n_P-th smallest),  b_hi = beta_hi_(n_P + 1).
    Weighted boxes 0 <= a_i <= C_i (sec. 2.5):
        b_lo = min{v : sum_i C_i [beta_lo_i >  v] <= C_N}
        b_hi = max{v : sum_i C_i [beta_hi_i >= v] >= C_N}
    with C_N = sum_{y_i < 0} C_i, compared with C_N +/- 1e-12 sum_i C_i so
    that round-off can only widen the interval.  An empty class gives an infinite
    end.  Returns 0, or -1 if out of memory.

    With the equality y'a = target instead of 0 (a CCCP step of the ramp
    loss: y'beta = y'mu), sum_{y>0} a_i + sum_{y<0} (C_i - a_i) =
    C_N + target, so C_N becomes C_N + target; the count then always runs
    weighted (target is a sum of C_i, not a number of samples).

    Both counts select in place, in O(n) (``_select``,
    ``_weighted_lower_quantile``): they permute beta_lo and beta_hi, and the
    weighted one negates beta_hi (callers pass scratch).
    """
    cdef Py_ssize_t i, n_pos = 0
    cdef double total = 0.0, c_neg = 0.0
    cdef double* scratch
    if target != 0.0:
        weighted = True
    if not weighted:
        # the order statistics need only n_P: a count, without the sums of
        # the weighted case and their branch on the sign of y (most of this
        # call's own time on a path step)
        for i in range(n):
            n_pos += y[i] > 0
        b_lo[0] = -INFINITY if n_pos == 0 else _select(&beta_lo[0], n, n_pos - 1)
        b_hi[0] = INFINITY if n_pos == n else _select(&beta_hi[0], n, n_pos)
        return 0
    # selects, not branches: the signs of y, in sample order, are as
    # unpredictable as coin flips
    for i in range(n):
        total += weight[i]
        c_neg += 0.0 if y[i] > 0 else weight[i]
    c_neg += target
    scratch = <double*> malloc(n * sizeof(double)) if n > 0 else NULL
    if n > 0 and scratch == NULL:
        return -1
    # b_lo: the least v whose strict tail weight is <= C_N (1 + eps), i.e.
    # whose weight at or below reaches total - C_N (1 + eps)
    if total <= c_neg + COUNT_EPS * total:
        b_lo[0] = -INFINITY
    else:
        for i in range(n):
            scratch[i] = weight[i]
        b_lo[0] = _weighted_lower_quantile(beta_lo, scratch, n,
                                           total - (c_neg + COUNT_EPS * total))
    # b_hi: the largest v whose weight at or above reaches C_N (1 - eps): the
    # same quantile of -beta_hi
    if c_neg <= 0.0:
        b_hi[0] = INFINITY
    else:
        for i in range(n):
            scratch[i] = weight[i]
            beta_hi[i] = -beta_hi[i]
        b_hi[0] = -_weighted_lower_quantile(beta_hi, scratch, n,
                                            c_neg - COUNT_EPS * total)
    free(scratch)
    return 0


# ---------------------------------------------------------------------------
# gap-safe rule on a solver's movable variables (called by _solver, in its loop)
# ---------------------------------------------------------------------------

cdef void _equal_weight_interval(double* beta_lo, double* beta_hi,
                                 const double[::1] y, Py_ssize_t m, double weight,
                                 double target, double* b_lo, double* b_hi) noexcept nogil:
    """_count_interval's weighted count (bias_screening.md sec. 2.5, C_N
    shifted by the right-hand side) when every weight is the same: the
    counts become order statistics, found by quickselect in O(m) instead of
    two sorts (permutes beta_lo and beta_hi).

        b_lo = min{v : #{beta_lo > v} <= K_lo},  K_lo = floor(C_N' / w + eps m)
             = the (m - 1 - K_lo)-th smallest beta_lo (-inf if K_lo >= m)
        b_hi = max{v : #{beta_hi >= v} >= K_hi}, K_hi = ceil(C_N' / w - eps m)
             = the (m - K_hi)-th smallest beta_hi (+inf if C_N' <= 0)
    with C_N' = sum_{y<0} w + target and eps = COUNT_EPS."""
    cdef double c_neg = target, slack = COUNT_EPS * m
    cdef Py_ssize_t i, k_lo, k_hi
    for i in range(m):
        if y[i] < 0:
            c_neg += weight
    k_lo = <Py_ssize_t> floor(c_neg / weight + slack)
    if k_lo >= m:
        b_lo[0] = -INFINITY
    else:
        b_lo[0] = _select(beta_lo, m, m - 1 - max(k_lo, 0))
    if c_neg <= 0.0:
        b_hi[0] = INFINITY
    else:
        k_hi = <Py_ssize_t> ceil(c_neg / weight - slack)
        k_hi = min(max(k_hi, 1), m)
        b_hi[0] = _select(beta_hi, m, m - k_hi)


cdef double _gap_at(const double* alpha, const double* G, const double* lo,
                    const double* hi, const double* y, Py_ssize_t n,
                    double b) noexcept nogil:
    """h(b) = sum_i (a_i - lo_i) [G_i + y_i b]_+ + (hi_i - a_i) [G_i + y_i b]_-,
    the duality gap of a feasible a at the intercept b (objective.py, its
    module docstring; y NULL: bias-free, b unused)."""
    cdef Py_ssize_t i
    cdef double gap = 0.0, margin
    for i in range(n):
        margin = G[i] + (y[i] * b if y != NULL else 0.0)
        if margin > 0.0:
            gap += (alpha[i] - lo[i]) * margin
        else:
            gap -= (hi[i] - alpha[i]) * margin
    return gap


def gap_at(const double[::1] alpha, const double[::1] grad, const double[::1] lo,
           const double[::1] hi, y, double b):
    """h(b) (``_gap_at``) for Python callers (``objective.gap_at``); y None:
    bias-free.  Trusts its caller: equal lengths."""
    cdef const double[::1] sign
    if alpha.shape[0] == 0:
        return 0.0
    if y is None:
        return _gap_at(&alpha[0], &grad[0], &lo[0], &hi[0], NULL, alpha.shape[0], 0.0)
    sign = y
    return _gap_at(&alpha[0], &grad[0], &lo[0], &hi[0], &sign[0], alpha.shape[0], b)


cdef double _weighted_lower_quantile(double* value, double* weight, Py_ssize_t n,
                                     double target) noexcept nogil:
    """The least v among value[0:n] with sum_{value_j <= v} weight_j >= target
    (weights >= 0), by quickselect with a three-way partition, O(n)
    expected; the largest value if no v reaches the target (round-off; -inf
    for n = 0).  Permutes value and weight together.  NaN values, never
    expected, can give NaN.

    The sums are taken in a different order at each level, so a target that
    equals a partial sum (as the gap's does: n_P C with equal boxes) can be
    reached by the sum below a pivot and missed by the sums within that part.
    The part's largest value is then the answer: its sum reached the target.
    (Without it the search ran on past every value to the largest.)"""
    cdef Py_ssize_t lo = 0, hi = n, i, less, more
    # cap: the answer if the search runs out, the largest value of the last
    # part whose sum reached the target (of all values at first)
    cdef double below = 0.0, w_less, w_equal, pivot, v, w, cap = -INFINITY, most_less
    for i in range(n):
        cap = value[i] if value[i] > cap else cap
    while hi > lo:
        pivot = _median_of_three(value, lo, hi)
        # [lo, less): below the pivot, [less, more): equal, [more, hi): above
        less, more, i = lo, hi, lo
        w_less = w_equal = 0.0
        most_less = -INFINITY
        while i < more:
            v, w = value[i], weight[i]
            if v < pivot:
                value[i], weight[i] = value[less], weight[less]
                value[less], weight[less] = v, w
                w_less += w
                most_less = v if v > most_less else most_less
                less += 1
                i += 1
            elif v > pivot:
                more -= 1
                value[i], weight[i] = value[more], weight[more]
                value[more], weight[more] = v, w
            else:
                w_equal += w
                i += 1
        if below + w_less >= target and less > lo:
            hi = less
            cap = most_less
        elif below + w_less + w_equal >= target:
            return pivot
        else:
            below += w_less + w_equal
            lo = more
    return cap


def gap_terms(const double[::1] alpha, const double[::1] grad, const double[::1] p,
              const double[::1] lo, const double[::1] hi, y):
    """(h(b), b, dual) of ``objective.gap_of`` in typed loops: the dual
    -(1/2 a'Qa + p'a) = -1/2 a'(G + p), and the b minimising h (0 without
    ``y``).  h is convex and piecewise linear, with a kink at
    b_i = -y_i G_i; right of it sample i adds r_i to the slope (a_i - lo_i
    for y_i > 0, hi_i - a_i for y_i < 0), left of it -l_i (the other one),
    so the slope right of v is sum_{b_i <= v} (r_i + l_i) - sum_i l_i and
    the minimum is the least kink where sum_{b_i <= v} (hi_i - lo_i)
    reaches sum_i l_i.  Trusts its caller (objective.gap_of): equal
    lengths, a feasible a."""
    cdef Py_ssize_t i, n = alpha.shape[0]
    cdef const double[::1] sign
    cdef double dual = 0.0, b = 0.0, left = 0.0, gap
    cdef double* kink
    cdef double* width
    for i in range(n):
        dual -= 0.5 * alpha[i] * (grad[i] + p[i])
    if n == 0:
        return 0.0, 0.0, dual
    if y is None:
        return fmax(_gap_at(&alpha[0], &grad[0], &lo[0], &hi[0], NULL, n, 0.0), 0.0), 0.0, dual
    sign = y
    kink = <double*> malloc(2 * n * sizeof(double))
    if kink == NULL:
        raise MemoryError("gap_terms")
    width = kink + n
    with nogil:
        for i in range(n):
            kink[i] = -sign[i] * grad[i]
            width[i] = hi[i] - lo[i]
            left += (hi[i] - alpha[i]) if sign[i] > 0 else (alpha[i] - lo[i])
        b = _weighted_lower_quantile(kink, width, n, left)
        free(kink)
        gap = fmax(_gap_at(&alpha[0], &grad[0], &lo[0], &hi[0], &sign[0], n, b), 0.0)
    return gap, b, dual


cdef Py_ssize_t _gap_safe_flags(const double[::1] G, const double[::1] y,
                                const double[::1] alpha, const double[::1] lo,
                                const double[::1] hi, const double[::1] QD,
                                Py_ssize_t m, double b, double tau, double roundoff,
                                signed char[::1] flag) noexcept nogil:
    """Gap-safe screening of a C-SVC-shaped box QP at a feasible point,
    on entries 0..m-1 of the arrays:

        min 1/2 a'Qa + p'a,  lo <= a <= hi,  y'a = const,
        Q_ij = y_i y_j K_ij (QD = diag K),  margins z_i = G_i + 1 + y_i b,

    i.e. p = -1 - Q shift (a CCCP step of the ramp loss; the SVM at shift
    0); G = Qa + p.  A solver's movable variables form such a QP when its
    fixed ones are correctly fixed (paper 001, eq. 15: their values go into
    p and into the right-hand side of the equality).

    * The duality gap of a at the intercept ``b`` (any b is valid; the
      solver passes its estimate -rho) is h(b) of objective.py (its module
      docstring; ``objective.gap_at``), i.e. paper 001 eq. 16 in its
      corrected per-sample form (notes/seed_001 sec. 2.1).
    * ||w(a) - w(a*)|| <= sqrt(h(b) + roundoff) for w(a) = sum_j a_j y_j
      phi_j (the primal is 1-strongly convex in w, the dual concave;
      notes/seed_001 sec. 2.2, bias_screening.md Thm 4 at q = 1), hence
      |G*_i - G_i| <= sqrt(h + roundoff) ||phi_i|| (paper 001, eqs. 20-21).
    * b* lies in the counting interval of bias_screening.md Thm 2 /
      sec. 2.5 (_count_interval), with weights hi - lo and C_N shifted by
      the right-hand side sum_i y_i (a_i - lo_i) (notes/seed_001 sec. 2.3).
    * z*_i > 1 + tau gives a*_i = lo_i, z*_i < 1 - tau gives a*_i = hi_i
      (paper 001, eqs. 10-14; notes/seed_001 sec. 3, eq. 24 with the sign
      fixed).

    ``roundoff`` (added to the squared radius) and the round-off share of
    ``tau`` come from screening.gap_rule_allowances.  Writes flag[i] = -1
    (certified at lo_i), +1 (at hi_i) or 0, and returns the number of
    non-zero flags, or -1 if out of memory.  Deciding what to freeze is the
    caller's (pitfall 6: only a variable already at its certified bound).
    """
    cdef Py_ssize_t i, found = 0
    cdef double gap, radius, weight, target = 0.0, g_max = 0.0, box_sum = 0.0, floor
    cdef double score, width, z_lo, z_hi, b_lo = 0.0, b_hi = 0.0
    cdef bint to_lower, to_upper, equal = True
    cdef double* beta_lo
    cdef double* beta_hi
    cdef double* box
    if m <= 0:          # (<= : gcc then sees box[0] written before it is read)
        return 0
    beta_lo = <double*> malloc(3 * m * sizeof(double))
    if beta_lo == NULL:
        return -1
    beta_hi = beta_lo + m
    box = beta_lo + 2 * m
    gap = _gap_at(&alpha[0], &G[0], &lo[0], &hi[0], &y[0], m, b)
    for i in range(m):
        if fabs(G[i]) > g_max:
            g_max = fabs(G[i])
        box_sum += hi[i] - lo[i]
    # G's own floor, in the gap (a sum over the boxes) and in the margins
    # (a score and the intercept thresholds)
    floor = _gradient_floor(g_max)
    radius = sqrt(fmax(gap, 0.0) + roundoff + box_sum * floor)
    tau += 2.0 * floor
    # intercept interval from the score bounds w*'phi_i in
    # [s_i - r ||phi_i||, s_i + r ||phi_i||], s_i = y_i (G_i + 1)
    for i in range(m):
        score = y[i] * (G[i] + 1.0)
        width = radius * sqrt(fmax(QD[i], 0.0))
        beta_lo[i] = y[i] - (score + width)
        beta_hi[i] = y[i] - (score - width)
        target += y[i] * (alpha[i] - lo[i])
        box[i] = hi[i] - lo[i]
        if box[i] != box[0]:
            equal = False
    if equal and box[0] > 0.0:
        _equal_weight_interval(beta_lo, beta_hi, y, m, box[0], target, &b_lo, &b_hi)
    elif _count_interval(beta_lo, beta_hi, &y[0], box, m, True, target, &b_lo, &b_hi):
        free(beta_lo)
        return -1
    for i in range(m):
        score = y[i] * (G[i] + 1.0)
        width = radius * sqrt(fmax(QD[i], 0.0))
        if y[i] > 0:
            z_lo = score - width + b_lo
            z_hi = score + width + b_hi
        else:
            z_lo = -(score + width) - b_hi
            z_hi = -(score - width) - b_lo
        to_lower = z_lo > 1.0 + tau
        to_upper = z_hi < 1.0 - tau
        flag[i] = 0
        if to_lower and not to_upper:
            flag[i] = -1
            found += 1
        elif to_upper and not to_lower:
            flag[i] = 1
            found += 1
    free(beta_lo)
    return found


# ---------------------------------------------------------------------------
# intercept: thresholds -> interval -> margins   (bias_screening.md, sec. 2)
# ---------------------------------------------------------------------------

cdef int _scores_to_margins(const double[::1] score_lo, const double[::1] score_hi,
                            const double[::1] y, const double[::1] weight,
                            bint weighted, double target, double[::1] beta_lo,
                            double[::1] beta_hi, double[::1] lower, double[::1] upper,
                            double* b_lo, double* b_hi, bint margins=True) noexcept nogil:
    """score_lo_i <= w*'v_i <= score_hi_i  ->  the intercept interval and
    (if ``margins``) the margin bounds (bias_screening.md, Thm 2 and sec.
    2.3), tightening lower/upper in place.  beta_lo/beta_hi are scratch of
    length n.  Returns 0, or -1 if out of memory."""
    cdef Py_ssize_t i, n = y.shape[0]
    for i in range(n):
        beta_lo[i] = y[i] - score_hi[i]
        beta_hi[i] = y[i] - score_lo[i]
    if _count_interval(&beta_lo[0], &beta_hi[0], &y[0], &weight[0], n, weighted, target,
                       b_lo, b_hi):
        return -1
    if margins:
        _margins_loop(score_lo, score_hi, y, b_lo[0], b_hi[0], lower, upper)
    return 0


cdef void _margins_loop(const double[::1] score_lo, const double[::1] score_hi,
                        const double[::1] y, double b_lo, double b_hi,
                        double[::1] lower, double[::1] upper) noexcept nogil:
    """Bounds of the margin y_i (w*'v_i + b*) over the box
    [score_lo, score_hi] x [b_lo, b_hi] (bias_screening.md, sec. 2.3):
        y = +1:  l = score_lo + b_lo,   u = score_hi + b_hi
        y = -1:  l = -score_hi - b_hi,  u = -score_lo - b_lo
    keeping the tighter of the new and the old values."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef double lo, up
    # Selects rather than branches (the compiler makes these conditional
    # moves; fmax/fmin would be libm calls): the signs of y, in sample
    # order, are as unpredictable as coin flips.
    for i in range(n):
        lo = (score_lo[i] + b_lo) if y[i] > 0 else (-score_hi[i] - b_hi)
        up = (score_hi[i] + b_hi) if y[i] > 0 else (-score_lo[i] - b_lo)
        # the tighter of the two (a NaN bound, never expected, is ignored)
        lower[i] = lo if lo > lower[i] else lower[i]
        upper[i] = up if up < upper[i] else upper[i]


def intercept_interval(const double[::1] score_lo, const double[::1] score_hi,
                       const double[::1] y, const double[::1] weight,
                       bint weighted, double target=0.0):
    """Safe interval [b_lo, b_hi] for the intercept from bounds of the scores.

    score_lo_i <= w*'v_i <= score_hi_i; the thresholds are
    beta_lo = y - score_hi and beta_hi = y - score_lo (bias_screening.md,
    Thm 2), counted with weights C_i if ``weighted`` (sec. 2.5).

    Returns
    -------
    (b_lo, b_hi) : tuple of float
    """
    cdef Py_ssize_t i, n = y.shape[0]
    beta_lo_arr = np.empty(n)
    beta_hi_arr = np.empty(n)
    cdef double[::1] beta_lo = beta_lo_arr, beta_hi = beta_hi_arr
    cdef double b_lo = 0.0, b_hi = 0.0
    cdef int err
    with nogil:
        for i in range(n):
            beta_lo[i] = y[i] - score_hi[i]
            beta_hi[i] = y[i] - score_lo[i]
        err = _count_interval(&beta_lo[0], &beta_hi[0], &y[0], &weight[0], n, weighted,
                              target, &b_lo, &b_hi)
    if err:
        raise MemoryError("intercept_interval")
    return b_lo, b_hi


def margins_with_intercept(const double[::1] score_lo, const double[::1] score_hi,
                           const double[::1] y, double b_lo, double b_hi,
                           double[::1] lower, double[::1] upper):
    """``_margins_loop`` for Python callers: writes into lower/upper, keeping
    the tighter of the new and the old values (so callers can combine
    several valid boxes)."""
    with nogil:
        _margins_loop(score_lo, score_hi, y, b_lo, b_hi, lower, upper)


cdef inline bint _proved_zero(double lower, double tau) noexcept nogil:
    """i in R' (a_i = 0): l_i > 1 + tau (paper 000, eqs. 7-9, with the
    safety margin of pitfall 5)."""
    return lower > 1.0 + tau


cdef inline bint _proved_bound(double upper, double tau) noexcept nogil:
    """i in L' (a_i = C_i): u_i < 1 - tau (paper 000, eqs. 7-9)."""
    return upper < 1.0 - tau


cdef void _classify_loop(const double[::1] lower, const double[::1] upper, double tau,
                         unsigned char[::1] screened_zero,
                         unsigned char[::1] screened_bound) noexcept nogil:
    """R' = {l_i > 1 + tau} (a_i = 0), L' = {u_i < 1 - tau} (a_i = C_i)
    (``_proved_zero``, ``_proved_bound``); ORs into the masks."""
    cdef Py_ssize_t i, n = lower.shape[0]
    for i in range(n):
        screened_zero[i] |= _proved_zero(lower[i], tau)
        screened_bound[i] |= _proved_bound(upper[i], tau)


cdef Py_ssize_t _drop_conflicts_loop(unsigned char[::1] screened_zero,
                                     unsigned char[::1] screened_bound) noexcept nogil:
    """A sample certified both ways means inconsistent inputs (only possible
    through round-off): screen it neither way.  Returns how many."""
    cdef Py_ssize_t i, n = screened_zero.shape[0], conflicts = 0
    for i in range(n):
        if screened_zero[i] and screened_bound[i]:
            screened_zero[i] = 0
            screened_bound[i] = 0
            conflicts += 1
    return conflicts


cdef Py_ssize_t _classify_masks_loop(const double[::1] lower, const double[::1] upper,
                                     double tau, unsigned char[::1] screened_zero,
                                     unsigned char[::1] screened_bound,
                                     Py_ssize_t* screened) noexcept nogil:
    """``_classify_loop`` then ``_drop_conflicts_loop`` on zeroed masks, in
    one pass without branches (the three passes were half of ``_ball``'s
    own time on a path step); returns the number of conflicts dropped, and
    |R'| + |L'| in ``screened`` (a path skips the screened solve's set-up
    when it is 0: ``path.make_screening``)."""
    cdef Py_ssize_t i, conflicts = 0, count = 0
    cdef bint zero, bound, both
    for i in range(lower.shape[0]):
        zero = _proved_zero(lower[i], tau)
        bound = _proved_bound(upper[i], tau)
        both = zero & bound
        screened_zero[i] = zero & (not both)
        screened_bound[i] = bound & (not both)
        conflicts += both
        count += (zero | bound) & (not both)
    screened[0] = count
    return conflicts


# ---------------------------------------------------------------------------
# centring of the intercept count (bias_screening.md, sec. 2.4a)
# ---------------------------------------------------------------------------

def q_row_means(QMatrix qmatrix, const double[::1] y, centre_index):
    """mean_{j in S} K_ij for every i, S = ``centre_index`` (ascending), from
    the solver's cached columns: y_i sum_{j in S} y_j Q_ij / |S|, the columns
    added in the order of S (``QMatrix.add_columns``' sums, in one typed
    call: the Python and numpy steps around them were most of a small
    one-vs-one pair's centring).  Returns a new array."""
    cdef const Py_ssize_t[::1] index = np.ascontiguousarray(centre_index, dtype=np.intp)
    cdef Py_ssize_t i, k, n = qmatrix.n, m = index.shape[0]
    cdef double[::1] block, coef, out
    if y.shape[0] != n:
        raise ValueError(f"q_row_means: y has {y.shape[0]} entries, Q has {n} variables")
    for k in range(m):
        if not 0 <= index[k] < n:
            raise IndexError("q_row_means: centre_index out of range")
    # the n sums, then the m coefficients y_S: a block of (2, n) gave y_S n
    # slots, and a centre_index with repeats longer than n (in range, so
    # past the check above) wrote past the block's end (AddressSanitizer)
    block = np.zeros(n + m)
    out, coef = block[:n], block[n:]
    with nogil:
        for k in range(m):
            coef[k] = y[index[k]]
        if m:
            qmatrix.add_columns_into(&index[0], &coef[0], m, &out[0])
        for i in range(n):
            out[i] = y[i] * out[i] / <double> m
    return np.asarray(out)


def centred_norms(const double[::1] kernel_diag, row_mean, centre_index):
    """||phi_i - c||, c = mean of phi over S = ``centre_index`` (ascending),
    from K_ii and ``row_mean`` = mean_{j in S} K_ij (bias_screening.md, sec.
    2.4a):

        ||phi_i - c||^2 = K_ii - 2 mean_{j in S} K_ij + mean_{S x S} K,

    the last term numpy's mean of row_mean over S, and a negative square
    (round-off) taken as 0.  Returns a new array."""
    cdef Py_ssize_t i, n = kernel_diag.shape[0]
    cdef const double[::1] means = row_mean
    cdef double mean_all, sq
    if means.shape[0] != n:
        raise ValueError("centred_norms: inconsistent lengths")
    # S is all samples when it is as long (ascending, without repeats): the
    # same entries in the same order, without the copy
    mean_all = float(row_mean.mean() if len(centre_index) == n
                     else row_mean[centre_index].mean())
    out = np.empty(n)
    cdef double[::1] norms = out
    with nogil:
        for i in range(n):
            sq = kernel_diag[i] - 2.0 * means[i] + mean_all
            # numpy's maximum(sq, 0.0): sq itself when sq >= 0 or nan
            if not (sq >= 0.0 or sq != sq):
                sq = 0.0
            norms[i] = sqrt(sq)
    return out


def classify(const double[::1] lower, const double[::1] upper, double tau,
             unsigned char[::1] screened_zero, unsigned char[::1] screened_bound):
    """``_classify_loop`` (ORs into the masks).  Returns (number in R',
    number in L')."""
    cdef Py_ssize_t i, n = lower.shape[0], n_zero = 0, n_bound = 0
    with nogil:
        _classify_loop(lower, upper, tau, screened_zero, screened_bound)
        for i in range(n):
            n_zero += screened_zero[i]
            n_bound += screened_bound[i]
    return n_zero, n_bound


def drop_conflicts(unsigned char[::1] screened_zero, unsigned char[::1] screened_bound):
    """``_drop_conflicts_loop``; returns the number of conflicts dropped."""
    cdef Py_ssize_t conflicts
    with nogil:
        conflicts = _drop_conflicts_loop(screened_zero, screened_bound)
    return conflicts


# ---------------------------------------------------------------------------
# DVI / BT1 / gap-DVI: one ball
# ---------------------------------------------------------------------------

cdef inline double _gap_dvi_radius(double q, double W, double gap0,
                                   double roundoff) noexcept nogil:
    """Radius of the gap-DVI ball (bias_screening.md, Thm 4):
        r^2 = 1/4 (q - 1)^2 ||w_ref||^2 + q gap_0,   q = C / C_ref.
    At gap_0 = 0 this is DVI's |C - C_ref| / (2 C_ref) ||w_ref|| (paper 003,
    Cor. 12 with |.|, seed_003 note obs. (a); paper 000, eq. 16 one-reference
    case).  ``roundoff`` (an absolute bound on the round-off of W and gap_0,
    which are sums with cancellation) widens both; pass 0 for a reference
    declared exact."""
    return sqrt(fmax(0.25 * (q - 1.0) * (q - 1.0) * (W + roundoff)
                     + q * (fmax(gap0, 0.0) + roundoff), 0.0))


def gap_dvi_radius(double q, double W, double gap0, double roundoff=0.0):
    """``_gap_dvi_radius`` (bias_screening.md, Thm 4)."""
    return _gap_dvi_radius(q, W, gap0, roundoff)


cdef double _dots_shift(const double[::1] qvec, const double[::1] y, bint fit_intercept,
                        const Py_ssize_t[::1] centre_index) noexcept nogil:
    """v_i'w = y_i qvec_i - shift for the w whose Q-products are qvec
    (qvec_i = z_i'w), with the intercept: v_i = phi_i gives shift 0 and
    v_i = phi_i - c, c the mean of phi over the centring subsample S
    (``centre_index``, not empty), shift = mean_{j in S} w'phi_j
    (bias_screening.md, sec. 2.4a).  Bias-free, v_i = z_i: v_i'w = qvec_i
    (shift 0, no y)."""
    cdef Py_ssize_t i, m = centre_index.shape[0]
    cdef double mean = 0.0
    if not fit_intercept or m == 0:
        return 0.0
    for i in range(m):
        mean += y[centre_index[i]] * qvec[centre_index[i]]
    return mean / m


# Rows of the scratch ``work`` of the fused routines below.
cdef enum:
    W_DOT_W = 0      # the thresholds beta_lo
    W_DOT_S = 1      # the thresholds beta_hi
    W_CENTRE1 = 2    # v_i'm1
    W_CENTRE2 = 3    # v_i'm2
    W_LO = 4         # score bounds
    W_HI = 5
    N_WORK_ROWS = 6
WORK_ROWS = N_WORK_ROWS


# The v-sets of ``_fused_margins`` (bias_screening.md sec. 2.4a), as bits.
cdef enum:
    V_PLAIN = 1      # v_i = phi_i
    V_CENTRED = 2    # v_i = phi_i - c
    V_BOTH = 3


cdef int _fused_margins(const double[::1] qa, const double[::1] qs, const double[::1] y,
                        const double[::1] hi, double q, double r1, double r2,
                        double phi_norm, int geometry, const double[::1] norms,
                        const double[::1] centred_norms,
                        const Py_ssize_t[::1] centre_index, bint fit_intercept,
                        bint weighted, double target, double[::1] lower,
                        double[::1] upper, double[:, ::1] work, double* b,
                        int* statuses, int sets=V_BOTH, bint margins=True,
                        double vu_error=0.0, double u_sq_rel=0.0) noexcept nogil:
    """The margin bounds of every sample over one region, in typed loops:
    per v-set (bias-free: z_i; intercept: phi_i, and phi_i - c
    when ``centre_index`` is not empty), the score bounds over the region,
    then the intercept count and the margins, the tightest kept (all are
    valid: bias_screening.md, sec. 2.3-2.4a).

    geometry 0: the (gap-)DVI / BT1 ball B((1 + q)/2 w_ref, r1)
                (paper 003 Cor. 12, paper 000 eq. 16, bias_screening Thm 4);
             1: the BT2 ball B(m2, r2), v'm2 = 1/2 (v'w_ref + v'(sum s_j C_j z_j))
                (paper 000, Thm 7);
             2: BT1 cap BT2 (paper 000, Thm 8), phi_norm = ||m1 - m2||;
             3, 4: the SSNSV / ESSNSV dome {-w_a'w <= d'} cap B(o, r)
                (``dome_shape``), qa = Q alpha_a, qs = Q alpha_b, r1 = r,
                r2 = d', phi_norm = ||w_a||; o = 0 (3) or w_b / 2 (4);
                each (Q alpha_a)_i within ``vu_error`` and ||w_a||^2 within
                a factor 1 + ``u_sq_rel`` of phi_norm^2 (``_cap_min``).
    b[0:2] = plain interval, b[2:4] = centred one; statuses[0:2] the
    geometry statuses of the sets.  ``sets`` (V_PLAIN, V_CENTRED, V_BOTH)
    limits the v-sets (a set left out gets the interval (-inf, inf));
    without ``margins`` only the intervals are computed (intercept only:
    lower and upper are left alone).  Returns 0, or -1 out of memory.
    """
    cdef Py_ssize_t i, k, n = qa.shape[0]
    cdef const Py_ssize_t[::1] no_index = centre_index[:0]
    cdef const Py_ssize_t[::1] index
    cdef double[::1] d_w = work[W_DOT_W], d_s = work[W_DOT_S]
    cdef double[::1] c1 = work[W_CENTRE1], c2 = work[W_CENTRE2]
    cdef double[::1] s_lo = work[W_LO], s_hi = work[W_HI]
    cdef double[::1] out_lo, out_hi
    cdef double t = 0.5 * (1.0 + q), shift_w, shift_s, dw, ds
    cdef int n_sets = 1 if (not fit_intercept or centre_index.shape[0] == 0) else 2
    if n_sets == 1:
        sets = V_PLAIN
    if margins:
        for i in range(n):
            lower[i] = -INFINITY
            upper[i] = INFINITY
    for k in range(n_sets):
        if not (sets & (V_PLAIN if k == 0 else V_CENTRED)):
            b[2 * k] = -INFINITY
            b[2 * k + 1] = INFINITY
            continue
        index = no_index if k == 0 else centre_index
        out_lo = s_lo if fit_intercept else lower
        out_hi = s_hi if fit_intercept else upper
        shift_w = _dots_shift(qa, y, fit_intercept, index)
        shift_s = _dots_shift(qs, y, fit_intercept, index) if geometry != 0 else 0.0
        for i in range(n):
            dw = (y[i] * qa[i] if fit_intercept else qa[i]) - shift_w      # v_i'w_ref
            if geometry >= 3:
                ds = (y[i] * qs[i] if fit_intercept else qs[i]) - shift_s  # v_i'w_b
                c1[i] = -dw                          # v'u, u = -w_a (paper 002, eq. 11)
                c2[i] = 0.5 * ds if geometry == 4 else 0.0                 # v'o
                continue
            # v'm1, m1 = (1 + q)/2 w_ref: the DVI / BT1 / gap-DVI centre
            # (paper 003 Cor. 12, paper 000 eq. 16, bias_screening Thm 4)
            c1[i] = t * dw
            if geometry != 0:
                ds = (y[i] * qs[i] if fit_intercept else qs[i]) - shift_s  # v_i' sum s_j C_j z_j
                # v'm2, m2 = 1/2 (w_ref + sum_j s_j C_j z_j) (paper 000, Thm 7)
                c2[i] = 0.5 * (dw + ds)
        if geometry >= 3:
            # v_i'u = -(y_i qa_i - shift_w): twice qa's error in the centred set
            statuses[k] = dome_bounds_loop(c2, c1, norms if k == 0 else centred_norms, r1,
                                           phi_norm, r2, out_lo, out_hi,
                                           vu_error * (1.0 if k == 0 else 2.0), u_sq_rel)
        elif geometry == 0:
            ball_bounds_loop(c1, norms if k == 0 else centred_norms, r1, out_lo, out_hi)
            statuses[k] = 0
        elif geometry == 1:
            ball_bounds_loop(c2, norms if k == 0 else centred_norms, r2, out_lo, out_hi)
            statuses[k] = 0
        else:
            statuses[k] = two_ball_bounds_loop(c1, c2, norms if k == 0 else centred_norms,
                                               r1, r2, phi_norm, out_lo, out_hi)
        if fit_intercept:
            # d_w, d_s are scratch for the thresholds
            if _scores_to_margins(s_lo, s_hi, y, hi, weighted, target, d_w, d_s,
                                  lower, upper, &b[2 * k], &b[2 * k + 1], margins):
                return -1
    return 0


def fused_margins(const double[::1] qa, const double[::1] qs, const double[::1] y,
                  const double[::1] hi, double q, double r1, double r2, double phi_norm,
                  int geometry, const double[::1] norms, const double[::1] centred_norms,
                  const Py_ssize_t[::1] centre_index, bint fit_intercept, bint weighted,
                  double target, double[::1] lower, double[::1] upper,
                  double[:, ::1] work):
    """``_fused_margins`` (geometry 0 DVI ball, 1 BT2 ball, 2 IT) for
    Python: the margin bounds of every sample in one call, O(n) given
    Q alpha_ref (and Q s for BT2/IT; pass qa for qs with geometry 0).
    ``work`` is scratch of shape (WORK_ROWS, n); lower/upper are overwritten.

    Returns
    -------
    (b_lo, b_hi, b_lo_centred, b_hi_centred, status, status_centred):
        intercept intervals (0 bias-free; the centred one nan without
        centring) and the geometry statuses.
    """
    cdef Py_ssize_t n = qa.shape[0]
    cdef double b[4]
    cdef int statuses[2]
    cdef int err
    if (work.shape[0] < N_WORK_ROWS or work.shape[1] != n or qs.shape[0] != n
            or y.shape[0] != n or hi.shape[0] != n or norms.shape[0] != n
            or lower.shape[0] != n or upper.shape[0] != n
            or (centre_index.shape[0] > 0 and centred_norms.shape[0] != n)):
        raise ValueError("fused_margins: inconsistent lengths")
    b[0] = b[1] = 0.0
    b[2] = b[3] = NAN
    statuses[0] = statuses[1] = 0
    with nogil:
        err = _fused_margins(qa, qs, y, hi, q, r1, r2, phi_norm, geometry, norms,
                             centred_norms, centre_index, fit_intercept, weighted, target,
                             lower, upper, work, b, statuses)
    if err:
        raise MemoryError("fused_margins")
    return b[0], b[1], b[2], b[3], statuses[0], statuses[1]


# ---------------------------------------------------------------------------
# BT2 and IT
# ---------------------------------------------------------------------------

cdef void _choose_shat(const double[::1] qa, const double[::1] y,
                       const double[::1] hi, double q, double b_lo, double b_hi,
                       bint fit_intercept, unsigned char[::1] shat) noexcept nogil:
    """The s-hat of NC3 (paper 000, sec. IV-C, eq. 25).

    Bias-free: s_i = 1 iff 1 - t (Q alpha_ref)_i > 0, t = (1 + q)/2, the exact
    argmax of ||m1 - m2||^2 - r2^2 (linear in s; seed_000 note 2.8).  With the
    intercept the objective becomes
        min_{b in {b_lo, b_hi}} sum_i s_i C_i (1 - t qa_i - y_i b)
    (docs/screening.md, sec. 4), a max-min; we take the best of the argmaxes
    for b = b_lo, b_hi and their midpoint (any s is safe; only the strength
    depends on it).  Ties (terms within 1e-12 of 0; systematic at the
    midpoint, which is often one sample's centre threshold) give s_i = 0, so
    the choice does not depend on round-off in Q alpha.
    """
    cdef Py_ssize_t i, k, n = qa.shape[0]
    cdef double t = 0.5 * (1.0 + q), best = -INFINITY, val, b, centre, size
    cdef double term_lo, term_hi
    cdef double cand[3]
    cdef double v_lo[3]
    cdef double v_hi[3]
    cdef int best_k = 0
    if not fit_intercept or not (b_lo > -INFINITY and b_hi < INFINITY):
        for i in range(n):
            shat[i] = (1.0 - t * qa[i]) > COUNT_EPS * (1.0 + fabs(t * qa[i]))
        return
    cand[0] = b_lo
    cand[1] = b_hi
    cand[2] = 0.5 * (b_lo + b_hi)
    for k in range(3):
        v_lo[k] = v_hi[k] = 0.0
    # the three candidates' sums in one pass over the data (gcc compiles the
    # tests to branches; written as selects they measured no faster)
    for i in range(n):
        centre = 1.0 - t * qa[i]
        size = 1.0 + fabs(t * qa[i])
        term_lo = hi[i] * (centre - y[i] * b_lo)
        term_hi = hi[i] * (centre - y[i] * b_hi)
        for k in range(3):
            if centre - y[i] * cand[k] > COUNT_EPS * (size + fabs(cand[k])):
                v_lo[k] += term_lo
                v_hi[k] += term_hi
    for k in range(3):
        val = fmin(v_lo[k], v_hi[k])
        if val > best + COUNT_EPS * (1.0 + fabs(best)) or k == 0:
            best = val
            best_k = k
    b = cand[best_k]
    for i in range(n):
        shat[i] = (1.0 - t * qa[i] - y[i] * b) > COUNT_EPS * (1.0 + fabs(t * qa[i]) + fabs(b))


def choose_shat(const double[::1] qa, const double[::1] y,
                const double[::1] hi, double q, double b_lo, double b_hi,
                bint fit_intercept, unsigned char[::1] shat):
    """``_choose_shat`` into ``shat`` (tests)."""
    if y.shape[0] != qa.shape[0] or hi.shape[0] != qa.shape[0] or shat.shape[0] != qa.shape[0]:
        raise ValueError("choose_shat: inconsistent lengths")
    with nogil:
        _choose_shat(qa, y, hi, q, b_lo, b_hi, fit_intercept, shat)


cdef void _bt2_ball(const double[::1] alpha, const double[::1] qa,
                    const double[::1] qs, const unsigned char[::1] shat,
                    const double[::1] y, const double[::1] hi, double q,
                    double b_ref, double b_lo, double b_hi, bint fit_intercept,
                    double roundoff, double* r2, double* phi_norm,
                    double* r2_squared_raw) noexcept nogil:
    """Centre and radius of the BT2 ball and its distance to the BT1 centre.

    m2 = 1/2 (w_ref + sum_j s_j C_j z_j)                (paper 000, Thm 7)
    r2^2 = ||m2||^2 + sum_i C_i (xi_i - s_i) [+ max(T b_lo, T b_hi)]
        xi_i = [1 - y_i (g_i + b_ref)]_+ (the reference's slacks at its best
        intercept b_ref; b_ref = 0 bias-free), T = sum_i s_i C_i y_i; the
        bracket is the intercept term (docs/screening.md, sec. 4).
    ||m2||^2 = 1/4 (W + 2 alpha'Qs + (s C)'Qs)           (paper 000, sec. IV-D)
    phi = m1 - m2 = 1/2 sum_j beta_j z_j, beta = q alpha - s C,
    ||phi||^2 = 1/4 beta'(q Q alpha - Qs)  (seed_000 note sec. 3: through beta,
    no cancellation), with Qs = Q (s C) given as ``qs``.  ``roundoff``: an
    absolute bound on the round-off of the inputs' quadratic forms, added to
    r2^2 (with 1e-13 times the size of the summed terms).

    Out: r2, phi_norm and r2_squared_raw; r2_squared_raw < 0 beyond
    round-off flags an inconsistent input (r2 is then clipped at 0).
    """
    cdef Py_ssize_t i, n = qa.shape[0]
    cdef double W = 0.0, a_qs = 0.0, s_qs = 0.0, slack = 0.0, s_sum = 0.0
    cdef double r2sq_safe
    cdef double T = 0.0, m2sq, r2sq, phisq = 0.0, beta, margin, sc, magnitude = 0.0
    for i in range(n):
        sc = hi[i] if shat[i] else 0.0
        W += alpha[i] * qa[i]
        a_qs += alpha[i] * qs[i]
        s_qs += sc * qs[i]
        margin = 1.0 - qa[i] - (y[i] * b_ref if fit_intercept else 0.0)
        if margin > 0.0:
            slack += hi[i] * margin
        s_sum += sc
        T += sc * y[i]
        beta = q * alpha[i] - sc
        phisq += beta * (q * qa[i] - qs[i])
        magnitude += fabs(alpha[i] * qa[i]) + fabs(alpha[i] * qs[i]) + fabs(sc * qs[i])
    m2sq = 0.25 * (W + 2.0 * a_qs + s_qs)
    r2sq = m2sq + slack - s_sum
    magnitude = 0.25 * magnitude + slack + s_sum
    if fit_intercept:
        r2sq += fmax(T * b_lo, T * b_hi)
        magnitude += fabs(T) * fmax(fabs(b_lo), fabs(b_hi))
    phisq *= 0.25
    # r2^2 is a difference of O(magnitude) terms: widen it by its
    # round-off so that a tangent pair of balls (typical at q = 1, where
    # NC3 is tight at the optimum) is never declared disjoint.
    r2sq_safe = r2sq + ROUNDOFF * magnitude + roundoff
    if r2sq_safe != r2sq_safe:
        # nan from inf - inf (C / C_ref ~ 1e300): the BT2 ball is then the
        # whole space, which proves nothing (fmax would have made it a point)
        r2[0] = INFINITY
    else:
        r2[0] = sqrt(fmax(r2sq_safe, 0.0))
    phi_norm[0] = sqrt(fmax(phisq, 0.0))
    r2_squared_raw[0] = r2sq


# ---------------------------------------------------------------------------
# SSNSV / ESSNSV: domes
# ---------------------------------------------------------------------------

def _distance_to_optimum(double gap, str name):
    """sqrt(2 gap), the distance of a reference's w to the optimum's: the
    primal is 1-strongly convex in w, so ||w - w*||^2 <= 2 gap (with or
    without the intercept).  ``gap`` (named ``name``) must be finite and >= 0."""
    if not 0.0 <= gap < INFINITY:
        raise ValueError(f"{name} must be finite and >= 0, got {gap}")
    return sqrt(2.0 * gap)


cdef inline void _dome_shape(double gamma_a, double gamma_b, double cross_ab, bint enhanced,
                             double roundoff, double rho_a, double rho_b, double* radius,
                             double* d_prime) noexcept nogil:
    """The dome's ball radius and half-space offset (``dome_shape``), widened
    by ``roundoff``, the error bound of gamma_a, gamma_b and cross_ab, and by
    the references' distances rho_a, rho_b to the optima (docs/screening.md,
    sec. 7: gap-inflated domes)."""
    cdef double gamma_b_up = fmax(gamma_b + roundoff, 0.0)
    cdef double norm_bound = sqrt(gamma_b_up) + rho_b       # R >= ||w*(C)||
    # The half-space's loosening t: w_a'w*(C) >= ||w_a||^2 - t (dome_shape),
    # increasing in ||w_a||, so taken at its upper bound
    cdef double norm_a = sqrt(gamma_a + roundoff) if gamma_a + roundoff > 0.0 else 0.0
    cdef double loosen = (rho_a * norm_a if norm_a >= rho_a
                          else 0.5 * (norm_a * norm_a + rho_a * rho_a))
    if enhanced:        # ESSNSV: paper 003, eq. 57, Thm 19
        # w*(C)'(w*_b - w*(C)) >= 0 with ||w*_b - w_b|| <= rho_b:
        # ||w - w_b/2||^2 <= ||w_b||^2/4 + rho_b R
        radius[0] = sqrt(0.25 * gamma_b_up + rho_b * norm_bound)
        d_prime[0] = -gamma_a + 0.5 * cross_ab + 2.0 * roundoff + loosen
    else:               # SSNSV: paper 002, eq. 12; ||w*(C)|| <= ||w*_b|| <= R
        radius[0] = norm_bound
        d_prime[0] = -gamma_a + 2.0 * roundoff + loosen


def dome_shape(double gamma_a, double gamma_b, double cross_ab, bint enhanced,
               double roundoff=0.0, double rho_a=0.0, double rho_b=0.0):
    """The SSNSV or ESSNSV dome {u'w <= d'} cap B(o, r), u = -w_a, as
    ``fused_margins`` takes it (geometry 3 / 4: r1 = r, r2 = d',
    phi_norm = ||w_a||): returns (r, d').

    w_a optimal at C_a <= C, w_b optimal at C_b >= C (or, at rho_b = 0, any
    w_b with H(w_b) <= s(C)); gamma_a = ||w_a||^2, gamma_b = ||w_b||^2,
    cross_ab = w_a'w_b (paper 002, eq. 11, Lemma 1):
      SSNSV  (paper 002, eq. 12): o = 0, r = ||w_b||;  d' = -gamma_a
      ESSNSV (paper 003, eq. 57, Thm 19): o = w_b / 2, r = ||w_b|| / 2;
             d' = -gamma_a + 1/2 w_a'w_b
    and Lemma 20 of paper 003 gives the bounds (``_bounds.dome_bounds``;
    corrected branch of paper 000 Thm 11 / paper 002 Thm 2 per seed_000
    note 2.9).  ``roundoff`` bounds the absolute error of gamma_a, gamma_b
    and cross_ab (sums with cancellation): r^2 is widened by it and the
    half-space loosened by 2 roundoff, so the region only grows (near
    tangency, e.g. w_a = w_b on a saturated path, round-off is amplified by
    a square root).

    Inexact references (docs/screening.md, sec. 7): when w_a, w_b are only
    known to lie within rho_a, rho_b of the optima (rho = sqrt(2 gap), the
    primal being 1-strongly convex in w), with R = ||w_b|| + rho_b >= ||w*(C)||:
      SSNSV:  r = R;
      ESSNSV: r^2 = ||w_b||^2/4 + rho_b R;
      both:   d' grows by t = rho_a ||w_a|| (||w_a|| >= rho_a),
              else (||w_a||^2 + rho_a^2) / 2.
    At rho_a = rho_b = 0 these are the rules above.  The half-space, from
    the dual: for alpha_a feasible at C_a (w_a = w(alpha_a)) and every (w, b),
    C_a H(w, b) >= sum_i alpha_a,i (1 - y_i (w'x_i + b)) = sum alpha_a - w_a'w
    (alpha_a,i <= C_a,i and y'alpha_a = 0).  At w = w*(C), H = s(C) <= s(C_a),
    and C_a s(C_a) = P*_a - ||w*_a||^2/2 <= D_a(alpha_a) + gap_a - ||w*_a||^2/2
    with D_a(alpha_a) = sum alpha_a - ||w_a||^2/2, so
        w_a'w*(C) >= ||w_a||^2/2 + ||w*_a||^2/2 - gap_a,
    and ||w*_a|| >= (||w_a|| - rho_a)_+ gives t.  (At gap 0 this is paper
    002's w_a'(w - w_a) >= 0.)  The balls: ||w*(C)|| <= ||w*_b|| <= R
    (paper 002, Lemma 3), and for ESSNSV w*(C)'(w*_b - w*(C)) >= 0 with
    (w*_b - w_b)'w*(C) <= rho_b R.
    """
    cdef double radius, d_prime
    if not (rho_a >= 0.0 and rho_b >= 0.0):
        raise ValueError("rho_a and rho_b must be >= 0")
    _dome_shape(gamma_a, gamma_b, cross_ab, enhanced, roundoff, rho_a, rho_b, &radius,
                &d_prime)
    return radius, d_prime


# ---------------------------------------------------------------------------
# pairwise count (bias_screening.md, sec. 2.4b)
# ---------------------------------------------------------------------------

cdef inline Py_ssize_t _set_flag(unsigned char* flag) noexcept nogil:
    """Sets *flag; returns 1 if it was not set before."""
    if flag[0]:
        return 0
    flag[0] = 1
    return 1


def pairwise_certify(const Py_ssize_t[::1] candidates,
                     const double[:, ::1] kernel_rows,
                     const double[::1] kernel_diag,
                     const double[::1] beta_centre, const double[::1] y,
                     const double[::1] weight, double radius,
                     unsigned char[::1] screened_zero,
                     unsigned char[::1] screened_bound, double slack=0.0):
    """Pairwise count for the candidates (row r of kernel_rows is K[cand_r, :]).

    With beta_j = y_j - w*'phi_j and w* in B(m, r):
        beta_j - beta_i in (bc_j - bc_i) +/- r ||phi_j - phi_i||,
        bc = y - m'phi,  ||phi_j - phi_i||^2 = K_ii + K_jj - 2 K_ij.
    From Lemma 2 (weighted form, sec. 2.5):
        sum_{j: beta_j > beta_i certified} C_j > C_N  =>  b* > beta_i
        sum_{j: beta_j < beta_i certified} C_j > C_P  =>  b* < beta_i
    and b* > beta_i puts a positive in R (a = 0), a negative in L (a = C);
    b* < beta_i the other way round.  A difference is certified only beyond
    ``slack`` (the round-off of two centre thresholds; at w_ref = 0 and large
    q every beta_j - beta_i may be an exact 0 computed as +-1e-12).  ORs into
    the masks; returns the number of newly screened candidates.
    """
    cdef Py_ssize_t r, i, j, n = y.shape[0], m = candidates.shape[0], added = 0
    cdef double c_neg = 0.0, c_pos = 0.0, above, below, diff, spread, d2
    with nogil:
        for j in range(n):
            if y[j] > 0:
                c_pos += weight[j]
            else:
                c_neg += weight[j]
        for r in range(m):
            i = candidates[r]
            above = 0.0
            below = 0.0
            for j in range(n):
                if j == i:
                    continue
                d2 = kernel_diag[i] + kernel_diag[j] - 2.0 * kernel_rows[r, j]
                spread = radius * sqrt(fmax(d2, 0.0))
                diff = beta_centre[j] - beta_centre[i]
                if diff - spread > slack + 1e-12 * (1.0 + fabs(diff)):
                    above += weight[j]
                elif diff + spread < -slack - 1e-12 * (1.0 + fabs(diff)):
                    below += weight[j]
            # b* > beta_i puts a positive sample at 0 and a negative one at
            # its bound; b* < beta_i the other way round.
            if above > c_neg * (1.0 + COUNT_EPS):           # b* > beta_i
                added += _set_flag(&screened_zero[i] if y[i] > 0 else &screened_bound[i])
            elif below > c_pos * (1.0 + COUNT_EPS):         # b* < beta_i
                added += _set_flag(&screened_bound[i] if y[i] > 0 else &screened_zero[i])
    return added


# ---------------------------------------------------------------------------
# linear kernel on CSR data: explicit w at O(nnz)   (paper 003, sec. 3)
# ---------------------------------------------------------------------------

cdef void _csr_transpose_times(const int[::1] indptr, const int[::1] indices,
                               const double[::1] data, const double[::1] coef,
                               double[::1] w) noexcept nogil:
    """w = X' coef (w = sum_i coef_i x_i), O(nnz of the rows with coef_i != 0)."""
    cdef Py_ssize_t i, p, n = indptr.shape[0] - 1
    cdef double c
    for i in range(w.shape[0]):
        w[i] = 0.0
    for i in range(n):
        c = coef[i]
        if c != 0.0:
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += c * data[p]


cdef void _csr_times(const int[::1] indptr, const int[::1] indices,
                     const double[::1] data, const double[::1] w,
                     double[::1] out) noexcept nogil:
    """out = X w, O(nnz)."""
    cdef Py_ssize_t i, p, n = indptr.shape[0] - 1
    cdef double s
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * w[indices[p]]
        out[i] = s


cdef void _dense_transpose_times(const double[:, ::1] X, const double[::1] coef,
                                 double[::1] w) noexcept nogil:
    """w = X' coef for a dense X, over the rows with coef_i != 0."""
    cdef Py_ssize_t i, k, d = X.shape[1]
    cdef double c
    for k in range(d):
        w[k] = 0.0
    for i in range(X.shape[0]):
        c = coef[i]
        if c != 0.0:
            for k in range(d):
                w[k] += c * X[i, k]


cdef void _dense_times(const double[:, ::1] X, const double[::1] w,
                       double[::1] out) noexcept nogil:
    """out = X w for a dense X."""
    cdef Py_ssize_t i
    for i in range(X.shape[0]):
        out[i] = dense_dot(&X[i, 0], &w[0], X.shape[1])


def csr_transpose_times(const int[::1] indptr, const int[::1] indices,
                        const double[::1] data, const double[::1] coef,
                        Py_ssize_t n_features):
    """w = X' coef  (w = sum_i coef_i x_i), O(nnz)."""
    w_arr = np.empty(n_features)
    cdef double[::1] w = w_arr
    with nogil:
        _csr_transpose_times(indptr, indices, data, coef, w)
    return w_arr


def csr_times(const int[::1] indptr, const int[::1] indices,
              const double[::1] data, const double[::1] w):
    """X w, O(nnz)."""
    out_arr = np.empty(indptr.shape[0] - 1)
    cdef double[::1] out = out_arr
    with nogil:
        _csr_times(indptr, indices, data, w, out)
    return out_arr


def csr_centred_sq_norms(const int[::1] indptr, const int[::1] indices,
                         const double[::1] data, const double[::1] centre):
    """||x_i - c||^2 = ||x_i||^2 - 2 x_i'c + ||c||^2, O(nnz)."""
    cdef Py_ssize_t i, p, n = indptr.shape[0] - 1
    cdef double cc = _dot(centre, centre), s, xc
    out_arr = np.empty(n)
    cdef double[::1] out = out_arr
    with nogil:
        for i in range(n):
            s = 0.0
            xc = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                s += data[p] * data[p]
                xc += data[p] * centre[indices[p]]
            out[i] = fmax(s - 2.0 * xc + cc, 0.0)
    return out_arr


# ---------------------------------------------------------------------------
# the scalars of a reference, in one pass (the path screens at every C)
# ---------------------------------------------------------------------------

cdef struct Summary:
    double q            # hi = q hi_ref
    bint weighted       # the box differs between samples
    double W            # alpha'Q alpha = ||w_ref||^2
    double alpha_l1     # ||alpha||_1
    double hi_sum       # sum_i hi_i
    double g_max        # max_i |(Q alpha)_i - 1|, the gradient's size (_gradient_floor)


cdef int _reference_summary(const double[::1] alpha, const double[::1] qa,
                            const double[::1] hi_ref, const double[::1] hi,
                            Summary* out) noexcept nogil:
    """The scalars of a reference, in one typed pass, with the boxes checked:
        q = hi_0 / hi_ref_0 (the boxes must be proportional, hi = q hi_ref:
            bias_screening.md, sec. 2.5),
        weighted = the box differs between samples (then the weighted count),
        W = alpha'Q alpha = ||w_ref||^2 (paper 000, eq. 16),
        ||alpha||_1 and sum_i hi_i (round-off bounds, docs/screening.md sec. 8).
    Returns 0, or -1 when a box is not positive and finite, the boxes are
    not proportional, or the lengths differ."""
    cdef Py_ssize_t i, n = alpha.shape[0]
    if n == 0 or qa.shape[0] != n or hi_ref.shape[0] != n or hi.shape[0] != n:
        return -1
    out.q = _box_ratio(hi, hi_ref)
    if not out.q > 0.0:
        return -1
    # Sums in locals, in sample order (stores through ``out`` in the loop,
    # which gcc must keep as it may alias the inputs, took a third of the
    # loop's time).
    cdef bint weighted = False
    cdef double W = 0.0, alpha_l1 = 0.0, hi_sum = 0.0, g_max = 0.0, g
    for i in range(n):
        weighted |= hi[i] != hi[0]
        W += alpha[i] * qa[i]
        alpha_l1 += fabs(alpha[i])
        hi_sum += hi[i]
        # a select, not fmax: gcc keeps fmax's nan rule as a libm call
        g = fabs(qa[i] - 1.0)
        g_max = g if g > g_max else g_max
    out.weighted = weighted
    out.W = W
    out.alpha_l1 = alpha_l1
    out.hi_sum = hi_sum
    out.g_max = g_max
    return 0


def reference_summary(const double[::1] alpha, const double[::1] qa,
                      const double[::1] hi_ref, const double[::1] hi):
    """``_reference_summary``: (q, weighted, W, alpha_l1, hi_sum), or None
    when the boxes are not positive, finite and proportional (the caller
    then reports which)."""
    cdef Summary s
    cdef int err
    with nogil:
        err = _reference_summary(alpha, qa, hi_ref, hi, &s)
    if err:
        return None
    return s.q, s.weighted, s.W, s.alpha_l1, s.hi_sum


# Round-off bounds (docs/screening.md sec. 8; bias_screening.md sec. 7, the
# 'round-off' remark): a quadratic form a'Qb summed as sum_i a_i (Qb)_i errs
# by about eps n max|Q| ||a||_1 ||b||_1; we use 1e-15 M ||a||_1 ||b||_1, with
# M = ``Kernel.roundoff_scale()`` >= |K_ij| (max K_ii for the linear kernel;
# it also covers the kernel values' own round-off, large for RBF on data with
# large feature offsets).  The margin centres (1+q)/2 (Q alpha)_i err by at
# most 1e-15 M (1 + q) (||alpha||_1 + sum_i hi_i).
cdef inline double _quadratic_roundoff(double roundoff_scale, double a_l1,
                                       double b_l1) noexcept nogil:
    return 1e-15 * roundoff_scale * a_l1 * b_l1


cdef inline double _margin_roundoff(double roundoff_scale, double q, double alpha_l1,
                                    double hi_sum) noexcept nogil:
    return 1e-15 * roundoff_scale * (1.0 + q) * (alpha_l1 + hi_sum)


# The gradient's own floor: G = Q alpha + p is stored to about eps (|G_i| + 1)
# (p = -1) whatever the size of Q alpha, and Q alpha is recovered as G + 1.
# Where Q alpha is tiny (C_ref ~ 1e-9: alpha ~ 1e-9, Q alpha ~ 1e-10) the
# terms above, in units of M ||alpha||_1, are far below it: W came out 0
# instead of 3e-26 and DVI put free support vectors in R' (a bug hunt,
# session 19; tests/test_screening.py).  Each recovered (Q alpha)_i is
# within this of its value, so W and the gap err by at most ||alpha||_1
# (resp. sum_i box_i) times it, and the centres (1+q)/2 (Q alpha)_i with
# the intercept thresholds built from them by (1 + q) times it.
cdef inline double _gradient_floor(double g_abs_max) noexcept nogil:
    return 1e-15 * (1.0 + g_abs_max)


def gradient_floor(double g_abs_max):
    """``_gradient_floor``: the absolute round-off of each (Q alpha)_i
    recovered from a gradient whose entries are at most g_abs_max."""
    return _gradient_floor(g_abs_max)


def quadratic_roundoff(double roundoff_scale, double a_l1, double b_l1):
    """``_quadratic_roundoff``: bound on the round-off of a'Qb."""
    return _quadratic_roundoff(roundoff_scale, a_l1, b_l1)


def margin_roundoff(double roundoff_scale, double q, double alpha_l1, double hi_sum):
    """``_margin_roundoff``: bound on the round-off of the margin centres."""
    return _margin_roundoff(roundoff_scale, q, alpha_l1, hi_sum)


cdef struct BallStep:
    Summary s            # the reference's scalars
    double r1            # the ball's radius
    double tau_eff       # tau + the round-off of the margin centres
    double b[4]          # plain and centred intercept intervals
    int statuses[2]      # geometry statuses of the two v-sets
    Py_ssize_t conflicts
    Py_ssize_t screened  # |R'| + |L'| (0 when the masks are not filled)


cdef int _ball_step(const double[::1] alpha, const double[::1] qa, const double[::1] y,
                    const double[::1] hi_ref, const double[::1] hi, double gap0,
                    bint exact_reference, double roundoff_scale, double tau,
                    const double[::1] norms, const double[::1] centred_norms,
                    const Py_ssize_t[::1] centre_index, bint fit_intercept,
                    double[::1] lower, double[::1] upper, double[:, ::1] work,
                    unsigned char[::1] screened_zero, unsigned char[::1] screened_bound,
                    BallStep* out, int sets=V_BOTH, bint margins=True) noexcept nogil:
    """The (gap-)DVI step, O(n) given qa = Q alpha_ref and the reference's
    duality gap gap0 (lengths checked by the callers):

        the reference's scalars (``_reference_summary``),
        r1^2 = 1/4 (q - 1)^2 ||w_ref||^2 + q gap0   (bias_screening.md Thm 4;
            DVI at gap0 = 0: paper 003 Cor. 12, paper 000 eq. 16), both terms
            widened by the round-off of W and gap0 unless ``exact_reference``,
        the margins over the ball with the intercept count
            (``_fused_margins``, geometry 0),
        and, if the masks are not empty, R' = {l > 1 + tau'}, L' = {u < 1 - tau'}
            with conflicts dropped, tau' = tau + the round-off of the centres.
    ``sets`` and ``margins`` as ``_fused_margins``: BT2 and IT take only the
    ball's plain intercept interval (bias-free, nothing of the margins).

    Returns 0, -1 when the boxes are not positive, finite and proportional,
    -2 out of memory."""
    cdef Py_ssize_t i, n = alpha.shape[0]
    cdef double roundoff, floor
    out.r1 = 0.0
    out.tau_eff = tau
    out.b[0] = out.b[1] = 0.0
    out.b[2] = out.b[3] = NAN
    out.statuses[0] = out.statuses[1] = 0
    out.conflicts = 0
    out.screened = 0
    if _reference_summary(alpha, qa, hi_ref, hi, &out.s):
        return -1
    floor = _gradient_floor(out.s.g_max)
    # W = alpha'(Q alpha) and the gap (a sum over the reference's boxes,
    # sum hi / q) from the recovered Q alpha
    roundoff = 0.0 if exact_reference else (
        _quadratic_roundoff(roundoff_scale, out.s.alpha_l1, out.s.alpha_l1)
        + (out.s.alpha_l1 + out.s.hi_sum / out.s.q) * floor)
    out.r1 = _gap_dvi_radius(out.s.q, out.s.W, gap0, roundoff)
    out.tau_eff = (tau + _margin_roundoff(roundoff_scale, out.s.q, out.s.alpha_l1, out.s.hi_sum)
                   + (1.0 + out.s.q) * floor)
    if not (margins or fit_intercept):
        return 0
    if _fused_margins(qa, qa, y, hi, out.s.q, out.r1, 0.0, 0.0, 0, norms, centred_norms,
                      centre_index, fit_intercept, out.s.weighted, 0.0, lower, upper, work,
                      out.b, out.statuses, sets, margins):
        return -2
    if screened_zero.shape[0] > 0:
        out.conflicts = _classify_masks_loop(lower, upper, out.tau_eff, screened_zero,
                                             screened_bound, &out.screened)
    return 0


cdef bint _ball_lengths_ok(Py_ssize_t n, const double[::1] y, const double[::1] norms,
                           const double[::1] centred_norms,
                           const Py_ssize_t[::1] centre_index, const double[::1] lower,
                           const double[::1] upper, double[:, ::1] work) noexcept:
    return not (y.shape[0] != n or norms.shape[0] != n
                or lower.shape[0] != n or upper.shape[0] != n
                or work.shape[0] < N_WORK_ROWS or work.shape[1] != n
                or (centre_index.shape[0] > 0 and centred_norms.shape[0] != n))


cdef class _PathStep:
    """What the path's typed steps share: the per-dataset vectors, the
    scratch kept between steps and the outputs of the last call (the masks
    R', L', the margin bounds, the intercept intervals, the geometry
    statuses), which each call overwrites."""
    cdef const double[::1] y, norms, centred_norms
    cdef const Py_ssize_t[::1] centre_index
    cdef bint fit_intercept
    cdef double roundoff_scale, tau
    cdef double[::1] qa, lower, upper
    cdef double[::1] alpha, hi_ref, hi    # the call's inputs (``_load_inputs``)
    cdef double[:, ::1] work
    cdef unsigned char[::1] zero, bound
    cdef object masks
    cdef double b[4]              # plain and centred intercept intervals of the region
    cdef int statuses[2]          # its geometry statuses, per v-set
    cdef Py_ssize_t conflicts     # samples certified both ways, dropped
    cdef BallStep ball            # the (gap-)DVI ball of the last call (DVI, BT2, IT)
    # |R'| + |L'| of the last call's masks: a path skips the screened solve's
    # set-up when it is 0 (``path.make_screening``)
    cdef readonly Py_ssize_t n_screened

    def _setup(self, y, norms, centred_norms, centre_index, bint fit_intercept,
               double roundoff_scale, double tau):
        n = len(y)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.norms = np.ascontiguousarray(norms, dtype=np.float64)
        self.centred_norms = np.ascontiguousarray(centred_norms, dtype=np.float64)
        self.centre_index = np.ascontiguousarray(centre_index, dtype=np.intp)
        self.fit_intercept = fit_intercept
        self.roundoff_scale = roundoff_scale
        self.tau = tau
        # the scratch as rows of two blocks (a new array and its typed view
        # cost about 0.4 us each, and a one-vs-one path builds a step for
        # each of hundreds of small pairs)
        cdef double[:, ::1] block = np.empty((6 + N_WORK_ROWS, n))
        self.qa, self.lower, self.upper = block[0], block[1], block[2]
        self.alpha, self.hi_ref, self.hi = block[3], block[4], block[5]
        self.work = block[6:]
        masks = np.empty((2, n), dtype=np.uint8)
        self.zero, self.bound = masks[0], masks[1]
        self.masks = (masks[0].view(bool), masks[1].view(bool))
        if not _ball_lengths_ok(n, self.y, self.norms, self.centred_norms,
                                self.centre_index, self.lower, self.upper, self.work):
            raise ValueError(f"{type(self).__name__}: inconsistent lengths")

    def details(self):
        """The margin bounds of the last call's region, its intercept
        intervals (plain, centred), geometry statuses and conflicts dropped
        (``screening.screen`` and ``screen_dome`` report them)."""
        return dict(lower=np.asarray(self.lower), upper=np.asarray(self.upper),
                    b=(self.b[0], self.b[1], self.b[2], self.b[3]),
                    statuses=(self.statuses[0], self.statuses[1]),
                    conflicts=self.conflicts)

    cdef dict _ball_details(self):
        """The ball's scalars and intercept intervals (``details``)."""
        return dict(q=self.ball.s.q, alpha_l1=self.ball.s.alpha_l1,
                    hi_sum=self.ball.s.hi_sum, r1=self.ball.r1, tau=self.ball.tau_eff,
                    ball_b=(self.ball.b[0], self.ball.b[1], self.ball.b[2], self.ball.b[3]),
                    ball_statuses=(self.ball.statuses[0], self.ball.statuses[1]))

    cdef int _ball(self, alpha, grad, hi_ref, hi, double gap0, bint exact_reference,
                   bint classify, int sets=V_BOTH, bint margins=True) except -1:
        """The call's inputs into the step (``_load_inputs``) and the
        (gap-)DVI step (``_ball_step``) into ``ball``, with R' and
        L' into the masks if ``classify``."""
        cdef int err
        cdef unsigned char[::1] zero = self.zero if classify else self.zero[:0]
        cdef unsigned char[::1] bound = self.bound if classify else self.bound[:0]
        self._load_inputs(alpha, grad, hi_ref, hi)
        with nogil:
            err = _ball_step(self.alpha, self.qa, self.y, self.hi_ref, self.hi, gap0,
                             exact_reference, self.roundoff_scale, self.tau, self.norms,
                             self.centred_norms, self.centre_index, self.fit_intercept,
                             self.lower, self.upper, self.work, zero, bound, &self.ball,
                             sets, margins)
        if err == -1:
            raise ValueError("hi and hi_ref must be positive, finite and proportional")
        if err:
            raise MemoryError(type(self).__name__)
        self.n_screened = self.ball.screened
        return 0

    cdef cnp.ndarray _load_inputs(self, alpha, grad, hi_ref, hi):
        """qa = grad + 1 and copies of alpha, hi_ref and hi in the step's own
        vectors; returns grad as a float64 vector (``_float_vector``).  A
        typed memoryview argument costs about 0.4 us to acquire (a Python
        object and a check of the buffer's format): four were a sixth of a
        DVI call at n = 270.  A copy costs n doubles."""
        cdef Py_ssize_t i, n = self.y.shape[0]
        cdef cnp.ndarray grad_array = _float_vector(grad, n, INPUT_NAMES)
        cdef const double* G = <const double*> cnp.PyArray_DATA(grad_array)
        _copy_vector(_float_vector(alpha, n, INPUT_NAMES), self.alpha)
        _copy_vector(_float_vector(hi_ref, n, INPUT_NAMES), self.hi_ref)
        _copy_vector(_float_vector(hi, n, INPUT_NAMES), self.hi)
        with nogil:
            for i in range(n):
                self.qa[i] = G[i] + 1.0
        return grad_array


# The vectors of a path step's call (``_float_vector``'s error names them).
INPUT_NAMES = "alpha, grad, hi_ref and hi"


cdef cnp.ndarray _float_vector(value, Py_ssize_t n, str names):
    """``value`` as a float64 vector of length n that is C-contiguous,
    aligned and in native byte order: ``value`` itself when it is one, else
    a converted copy.  ``names`` (for the error) are the arguments that
    must have length n."""
    cdef cnp.ndarray array
    if not (cnp.PyArray_Check(value)
            and cnp.PyArray_TYPE(<cnp.ndarray> value) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray> value) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray> value)
            and cnp.PyArray_ISBEHAVED_RO(<cnp.ndarray> value)):
        value = np.ascontiguousarray(value, dtype=np.float64)
    array = <cnp.ndarray> value
    if cnp.PyArray_NDIM(array) != 1 or cnp.PyArray_DIM(array, 0) != n:
        raise ValueError(f"{names} must have length {n}")
    return array


cdef inline void _copy_vector(cnp.ndarray source, double[::1] out) noexcept:
    """out[:] = source, a vector of out's length (``_float_vector``)."""
    if out.shape[0]:
        memcpy(&out[0], cnp.PyArray_DATA(source), out.shape[0] * sizeof(double))


cdef class DviPathStep(_PathStep):
    """The (gap-)DVI rule of a path step as one typed call, with the
    per-dataset vectors and the scratch kept between steps (``_ball_step``,
    the same step as ``screening.screen(rule="dvi")``; the path screens
    at every C, and a small problem's solve takes a few hundred
    microseconds, so the per-call Python work matters).

    Parameters
    ----------
    y, norms : ndarray of shape (n,)
        Labels (+1/-1) and ||z_i||.
    centred_norms, centre_index :
        The centring of the intercept count (``centre_index`` empty: none).
    fit_intercept : bool
    roundoff_scale : float
        ``Kernel.roundoff_scale()``, the unit of the round-off bounds.
    tau : float
        Safety margin of the tests l > 1 + tau, u < 1 - tau.
    """
    def __init__(self, y, norms, centred_norms, centre_index, bint fit_intercept,
                 double roundoff_scale, double tau):
        self._setup(y, norms, centred_norms, centre_index, fit_intercept, roundoff_scale, tau)

    def details(self):
        """``_PathStep.details`` (the region is the ball) and the ball's
        scalars."""
        found = _PathStep.details(self)
        found.update(self._ball_details())
        return found

    def __call__(self, alpha, grad, hi_ref, hi, double gap0, bint exact_reference=False):
        """R' and L' at box ``hi`` from the reference (alpha, grad = Q alpha - 1)
        at box ``hi_ref`` with duality gap ``gap0`` (vectors of length n,
        float64 or converted): two bool masks, which
        the next call overwrites (a path uses them within its step).
        ``exact_reference``: gap 0 and no round-off (tests)."""
        self._ball(alpha, grad, hi_ref, hi, gap0, exact_reference, True)
        self.b = self.ball.b
        self.statuses = self.ball.statuses
        self.conflicts = self.ball.conflicts
        return self.masks


cdef class DomePathStep(_PathStep):
    """The SSNSV / ESSNSV rule of a path step as one typed call
    (``screening.screen_dome`` runs it once), O(n) given the two references'
    gradients (``_fused_margins``, geometry 3 or 4).

    The larger reference (optimal at hi_b) is set once per block of the
    path with ``set_upper``; each call screens a box hi_a <= hi <= hi_b from
    the optimum at hi_a.  Each reference comes with its duality gap, which
    widens the dome (``dome_shape``; 0 for exact references).

    Parameters
    ----------
    y, norms, centred_norms, centre_index, fit_intercept, roundoff_scale, tau :
        As ``DviPathStep``.
    enhanced : bool
        ESSNSV (paper 003, Thm 19) rather than SSNSV (paper 002).
    """
    cdef bint enhanced, has_upper
    cdef double gamma_b, rho_b
    cdef double[::1] qb, alpha_b, hi_b

    def __init__(self, y, norms, centred_norms, centre_index, bint fit_intercept,
                 bint enhanced, double roundoff_scale, double tau):
        self._setup(y, norms, centred_norms, centre_index, fit_intercept, roundoff_scale, tau)
        n = len(y)
        self.enhanced = enhanced
        self.has_upper = False
        self.qb, self.alpha_b, self.hi_b = np.empty(n), np.empty(n), np.empty(n)

    def set_upper(self, const double[::1] alpha_b, const double[::1] grad_b,
                  const double[::1] hi_b, double gap_b):
        """The larger reference: the optimum alpha_b at box hi_b, its
        gradient Q alpha_b - 1 (copied) and its duality gap (>= 0)."""
        cdef Py_ssize_t i, n = self.y.shape[0]
        if alpha_b.shape[0] != n or grad_b.shape[0] != n or hi_b.shape[0] != n:
            raise ValueError(f"alpha_b, grad_b and hi_b must have length {n}")
        self.rho_b = _distance_to_optimum(gap_b, "gap_b")
        self.gamma_b = 0.0
        for i in range(n):
            self.alpha_b[i] = alpha_b[i]
            self.qb[i] = grad_b[i] + 1.0
            self.hi_b[i] = hi_b[i]
            self.gamma_b += alpha_b[i] * self.qb[i]          # ||w_b||^2
        self.has_upper = True

    def __call__(self, alpha, grad, hi_ref, hi, double gap_a):
        """R' and L' at box ``hi`` from the smaller optimum alpha_a =
        ``alpha`` (``grad`` = Q alpha_a - 1) at box hi_a = ``hi_ref``, of
        duality gap ``gap_a`` (>= 0), and the larger reference: two bool
        masks, which the next call overwrites.  The vectors have length n,
        float64 or converted."""
        cdef Py_ssize_t i, n = self.y.shape[0]
        cdef const double[::1] alpha_a, hi_a, hi_in
        cdef cnp.ndarray grad_array
        cdef const double* grad_a
        cdef double gamma_a = 0.0, cross = 0.0, l1 = 0.0, l1_a = 0.0, hi_sum = 0.0
        cdef double g_max = 0.0, roundoff, tau_eff, radius, d_prime, rho_a, floor, qa_error
        cdef bint weighted = False, ordered = True
        cdef int err = 0
        if not self.has_upper:
            raise ValueError("DomePathStep: set_upper first")
        rho_a = _distance_to_optimum(gap_a, "gap_a")
        self.b[0] = self.b[1] = 0.0
        self.b[2] = self.b[3] = NAN
        self.statuses[0] = self.statuses[1] = 0
        grad_array = self._load_inputs(alpha, grad, hi_ref, hi)
        grad_a = <const double*> cnp.PyArray_DATA(grad_array)
        alpha_a, hi_a, hi_in = self.alpha, self.hi_ref, self.hi
        with nogil:
            for i in range(n):
                gamma_a += alpha_a[i] * self.qa[i]           # ||w_a||^2
                cross += alpha_a[i] * self.qb[i]             # w_a'w_b
                l1 += fabs(alpha_a[i] + self.alpha_b[i])
                l1_a += fabs(alpha_a[i])
                hi_sum += hi_in[i]
                if fabs(grad_a[i]) > g_max:
                    g_max = fabs(grad_a[i])
                if fabs(self.qb[i] - 1.0) > g_max:
                    g_max = fabs(self.qb[i] - 1.0)
                weighted = weighted or hi_in[i] != hi_in[0]
                ordered = ordered and hi_a[i] <= hi_in[i] * (1.0 + 1e-12) \
                    and hi_in[i] <= self.hi_b[i] * (1.0 + 1e-12)
            if ordered:
                # The round-off of the quadratic forms widens the dome, that
                # of the centres raises tau (docs/screening.md sec. 8).
                floor = _gradient_floor(g_max)
                roundoff = _quadratic_roundoff(self.roundoff_scale, l1, l1) \
                    + (l1 + hi_sum) * floor
                tau_eff = (self.tau + _margin_roundoff(self.roundoff_scale, 1.0, l1, hi_sum)
                           + 2.0 * floor)
                _dome_shape(gamma_a, self.gamma_b, cross, self.enhanced, roundoff,
                            rho_a, self.rho_b, &radius, &d_prime)
                # The half-space's normal u = -w_a is known only through
                # qa (each entry within qa_error: the kernel's round-off and
                # the gradient's floor, sec. 8) and gamma_a (within
                # l1_a qa_error).  Where w_a is tiny these errors are of
                # its own size (gamma_a 1.6e-19 for 6.3e-19) and the closed
                # form of the cap is no bound; _cap_min then uses its
                # Lagrangian dual, which needs only upper bounds of v'u and
                # ||u||^2 (docs/screening.md sec. 8).
                qa_error = _quadratic_roundoff(self.roundoff_scale, l1_a, 1.0) + floor
                err = _fused_margins(self.qa, self.qb, self.y, hi_in, 1.0, radius, d_prime,
                                     sqrt(fmax(gamma_a, 0.0)), 4 if self.enhanced else 3,
                                     self.norms, self.centred_norms, self.centre_index,
                                     self.fit_intercept, weighted, 0.0, self.lower,
                                     self.upper, self.work, self.b, self.statuses,
                                     V_BOTH, True, qa_error,
                                     l1_a * qa_error / gamma_a if gamma_a > 0.0 else INFINITY)
                if not err:
                    self.conflicts = _classify_masks_loop(self.lower, self.upper, tau_eff,
                                                          self.zero, self.bound,
                                                          &self.n_screened)
        if not ordered:
            raise ValueError("the domes need hi_a <= hi <= hi_b")
        if err:
            raise MemoryError("DomePathStep")
        return self.masks


cdef enum:
    # How Q (s hi) is formed (``TwoBallPathStep``); on equal cost the first.
    QS_BETA = 0
    QS_SCRATCH = 1
    QS_STATE = 2
QS_WAYS = {"beta": QS_BETA, "scratch": QS_SCRATCH, "state": QS_STATE}


cdef class TwoBallPathStep(_PathStep):
    """BT2 (paper 000, Thm 7) or the Intersection Test (BT1 cap BT2, Thm 8)
    of a path step, with the s-hat of BT2 and Q (s hi) carried from one call
    to the next (paper 000, sec. IV-E, Table I).  ``screening.screen`` runs
    the same step for rule "bt2" / "it".  A call is

        the (gap-)DVI ball (``_ball_step``) and its intercept interval,
        s-hat (``_choose_shat``), moved from the previous s by at most
            ``budget`` changes, those whose NC3 term
            hi_i |1 - t qa_i - y_i b| is largest (t = (1 + q)/2, b the
            midpoint of the ball's intercept interval, 0 bias-free or
            unbounded): any s is safe for BT2, only its strength depends on s,
        Q (s hi) by the cheapest of three equal expressions (kernel form;
            one kernel column per nonzero coefficient):
            * from the previous call: columns of the changed s_j;
            * through the reference: Q (s hi) = q Q alpha - Q beta with
              beta = q alpha - s hi (docs/screening.md sec. 4), nonzero only
              where alpha_j is not at the bound s predicts, mostly the free
              support vectors;
            * from scratch: columns of s;
          the linear kernel recomputes it as y * X (X' (y s hi)), O(nnz),
          in typed loops (``linear_X``),
        the BT2 ball (``_bt2_ball``), the margins over the region
            (``_fused_margins``, geometry 1 or 2), R' and L'.

    Parameters
    ----------
    y, norms, centred_norms, centre_index, fit_intercept, roundoff_scale, tau :
        As ``DviPathStep``.
    intersect : bool
        IT (True) or BT2 alone.
    add_columns : callable
        ``add_columns(index, coef, out)``: out += Q[:, index] coef, in place
        (kernel form).
    linear_X : ndarray, scipy CSR matrix or None
        The data, for the linear kernel (dense float64 C-ordered, or CSR with
        int32 indices); None for the kernel form.
    budget : int
        At most this many changes of s-hat a call (kernel form); -1 none.
    """
    cdef int geometry
    cdef Py_ssize_t budget
    cdef object add_columns
    cdef QMatrix qmatrix                 # add_columns' QMatrix, called typed; or None
    cdef bint linear                     # Q s through linear_X, no budget
    cdef const int[::1] x_indptr, x_indices
    cdef const double[::1] x_data
    cdef const double[:, ::1] x_dense
    cdef bint x_sparse
    cdef double[::1] w                   # X' (y s hi), scratch of the linear form
    cdef bint has_state                 # shat_prev, qs, hi_state hold a previous call's
    cdef unsigned char[::1] shat, shat_prev   # shat_prev: all zeros without a state
    cdef double[::1] qs, hi_state
    cdef Py_ssize_t[::1] index
    cdef double[::1] coef
    cdef object index_array, coef_array, shat_array, qs_array, hi_state_array
    cdef double r2, phi_norm, r2_squared
    # A bound on |qs_i - (Q (s hi))_i| beyond the kernel's round-off: the
    # beta way's q (G_i + 1) carries q times the gradient's floor
    # (_gradient_floor), and the state way scales what the state carried.
    # A step's allowances cover (1 + q) floor (_bt2_ball's, the centres'
    # tau); a state that carries more is not reused (_update_qs).
    cdef double qs_error

    def __init__(self, y, norms, centred_norms, centre_index, bint fit_intercept,
                 double roundoff_scale, double tau, bint intersect, add_columns, linear_X,
                 Py_ssize_t budget):
        self._setup(y, norms, centred_norms, centre_index, fit_intercept, roundoff_scale, tau)
        n = len(y)
        self.geometry = 2 if intersect else 1
        self.add_columns = add_columns
        # the solver's own add_columns: call its typed core (a Python call
        # with its argument conversions was a quarter of an IT step at n = 270)
        owner = getattr(add_columns, "__self__", None)
        self.qmatrix = None
        if isinstance(owner, QMatrix) and add_columns == owner.add_columns:
            if (<QMatrix> owner).n != n:
                raise ValueError(f"add_columns' QMatrix has {(<QMatrix> owner).n} "
                                 f"variables, y has {n}")
            self.qmatrix = owner
        self.linear = linear_X is not None
        self.budget = -1 if self.linear else budget
        if self.linear:
            self.x_sparse = hasattr(linear_X, "indptr")
            if self.x_sparse:
                self.x_indptr = np.ascontiguousarray(linear_X.indptr, dtype=np.int32)
                self.x_indices = np.ascontiguousarray(linear_X.indices, dtype=np.int32)
                self.x_data = np.ascontiguousarray(linear_X.data, dtype=np.float64)
            else:
                self.x_dense = np.ascontiguousarray(linear_X, dtype=np.float64)
            if linear_X.shape[0] != n:
                raise ValueError(f"linear_X has {linear_X.shape[0]} rows, y has {n}")
            self.w = np.empty(linear_X.shape[1])
        self.has_state = False
        self.qs_error = 0.0
        self.shat_array = np.zeros(n, dtype=np.uint8)
        self.shat = self.shat_array
        self.shat_prev = np.zeros(n, dtype=np.uint8)
        self.qs_array, self.hi_state_array = np.zeros(n), np.zeros(n)
        self.qs, self.hi_state = self.qs_array, self.hi_state_array
        self.index_array, self.coef_array = np.empty(n, dtype=np.intp), np.empty(n)
        self.index, self.coef = self.index_array, self.coef_array

    def set_budget(self, Py_ssize_t budget):
        """At most ``budget`` changes of s-hat from the next call on (kernel
        form; -1 none; the linear form recomputes Q s and has no budget)."""
        if not self.linear:
            self.budget = budget

    def set_state(self, shat, qs, hi, double error=0.0):
        """Start from a previous step's s-hat, Q (s hi) and box (copied);
        ``error`` bounds the error of qs beyond the kernel's round-off
        (``state_error``)."""
        cdef Py_ssize_t n = self.y.shape[0]
        cdef const unsigned char[::1] given_shat = np.ascontiguousarray(shat, dtype=np.uint8)
        cdef const double[::1] given_qs = np.ascontiguousarray(qs, dtype=np.float64)
        cdef const double[::1] given_hi = np.ascontiguousarray(hi, dtype=np.float64)
        if given_shat.shape[0] != n or given_qs.shape[0] != n or given_hi.shape[0] != n:
            raise ValueError(f"shat, qs and hi must have length {n}")
        self.shat_prev[:] = given_shat
        self.qs[:] = given_qs
        self.hi_state[:] = given_hi
        self.qs_error = error
        self.has_state = True

    def state_error(self):
        """A bound on |qs_i - (Q (s hi))_i| of ``state`` beyond the kernel's
        round-off (q times the gradient's floor where Q s came from the
        reference's gradient, scaled along by the steps that reused it)."""
        return self.qs_error

    def state(self):
        """(shat as bool, Q (s hi), hi) of the last call (copies)."""
        return (np.array(self.shat_array, dtype=bool), np.array(self.qs_array),
                np.array(self.hi_state_array))

    def details(self):
        """``_PathStep.details`` (of the two-ball region) and the ball's
        scalars and intercept intervals, the BT2 radius and r2^2."""
        found = _PathStep.details(self)
        found.update(self._ball_details())
        found.update(r2=self.r2, phi_norm=self.phi_norm, r2_squared=self.r2_squared)
        return found

    cdef void _limit_changes(self, const double[::1] qa, const double[::1] hi) noexcept nogil:
        """Keep at most ``budget`` changes of s-hat from the previous s
        (``shat_prev``, all zeros before the first call): the largest NC3
        terms, ties to the lower index."""
        cdef Py_ssize_t i, k, m = 0, ties, n = self.y.shape[0]
        cdef double t = 0.5 * (1.0 + self.ball.s.q), b = 0.0, threshold
        cdef double* term = &self.work[W_LO, 0]
        cdef double* scratch = &self.work[W_HI, 0]
        if self.fit_intercept and fabs(self.ball.b[0] + self.ball.b[1]) < INFINITY:
            b = 0.5 * (self.ball.b[0] + self.ball.b[1])
        for i in range(n):
            if self.shat[i] != self.shat_prev[i]:
                self.index[m] = i
                term[m] = hi[i] * fabs(1.0 - t * qa[i] - (self.y[i] * b if self.fit_intercept
                                                           else 0.0))
                m += 1
        if m <= self.budget:
            return
        for k in range(m):
            scratch[k] = term[k]
        # the budget-th largest term; the larger ones are kept, then ties
        threshold = _select(scratch, m, m - self.budget) if self.budget > 0 else INFINITY
        ties = self.budget
        for k in range(m):
            ties -= term[k] > threshold
        for k in range(m):
            if term[k] > threshold:
                continue
            if term[k] == threshold and ties > 0:
                ties -= 1
                continue
            i = self.index[k]
            self.shat[i] = self.shat_prev[i]

    cdef object _update_qs(self, const double[::1] alpha, const double[::1] qa, double q,
                           const double[::1] hi, int how, double floor):
        """Q (s hi) into ``qs`` (``how`` < 0: the cheapest way), then s and
        hi become the state.  ``floor``: the absolute round-off of each qa_i
        (``_gradient_floor``).  The state is reused only while the error it
        carries, scaled to this box, is within the (1 + q) floor that this
        step's allowances cover: after a step of q ~ 1e19 (a path's first
        C far below the next) q (G_i + 1) had left Q s O(1) off, and the next
        steps, which scaled it, screened free samples (put back)."""
        cdef Py_ssize_t i, m = 0, n = self.y.shape[0]
        cdef Py_ssize_t n_beta = 0, n_scratch = 0, n_state = n + 1
        cdef double beta, scale = NAN, s_hi
        if self.linear and how < 0:
            with nogil:
                for i in range(n):
                    self.coef[i] = self.y[i] * hi[i] if self.shat[i] else 0.0
                if self.x_sparse:
                    _csr_transpose_times(self.x_indptr, self.x_indices, self.x_data,
                                         self.coef, self.w)
                    _csr_times(self.x_indptr, self.x_indices, self.x_data, self.w, self.qs)
                else:
                    _dense_transpose_times(self.x_dense, self.coef, self.w)
                    _dense_times(self.x_dense, self.w, self.qs)
                for i in range(n):
                    self.qs[i] *= self.y[i]
            self.qs_error = 0.0             # from X itself: the kernel's round-off only
        else:
            with nogil:
                if self.has_state:
                    scale = _box_ratio(hi, self.hi_state)
                for i in range(n):
                    s_hi = hi[i] if self.shat[i] else 0.0
                    beta = q * alpha[i] - s_hi
                    n_beta += fabs(beta) > 1e-15 * hi[i]    # alpha exactly at the predicted bound
                    n_scratch += self.shat[i] != 0
                if scale > 0.0 and scale * self.qs_error <= (1.0 + q) * floor:
                    n_state = 0
                    for i in range(n):
                        n_state += self.shat[i] != self.shat_prev[i]
            if how < 0:
                how = QS_BETA
                if n_scratch < n_beta:
                    how = QS_SCRATCH
                if n_state < min(n_beta, n_scratch):
                    how = QS_STATE
            if how == QS_STATE and not scale > 0.0:
                raise ValueError("Q s from the previous state needs a previous box "
                                 "proportional to hi")
            with nogil:
                for i in range(n):
                    s_hi = hi[i] if self.shat[i] else 0.0
                    if how == QS_BETA:
                        beta = q * alpha[i] - s_hi
                        self.qs[i] = q * qa[i]
                        if fabs(beta) > 1e-15 * hi[i]:
                            self.index[m] = i
                            self.coef[m] = -beta
                            m += 1
                    elif how == QS_SCRATCH:
                        self.qs[i] = 0.0
                        if self.shat[i]:
                            self.index[m] = i
                            self.coef[m] = s_hi
                            m += 1
                    else:
                        self.qs[i] *= scale
                        if self.shat[i] != self.shat_prev[i]:
                            self.index[m] = i
                            self.coef[m] = s_hi if self.shat[i] else -hi[i]
                            m += 1
            if m and self.qmatrix is not None:
                with nogil:
                    self.qmatrix.add_columns_into(&self.index[0], &self.coef[0], m,
                                                  &self.qs[0])
            elif m:
                self.add_columns(self.index_array[:m], self.coef_array[:m], self.qs_array)
            if how == QS_BETA:
                self.qs_error = q * floor
            elif how == QS_SCRATCH:
                self.qs_error = 0.0
            else:
                self.qs_error *= scale
        with nogil:
            for i in range(n):
                self.shat_prev[i] = self.shat[i]
                self.hi_state[i] = hi[i]
        self.has_state = True

    def update_q_shat(self, shat, const double[::1] alpha, const double[::1] qa, double q,
                      const double[::1] hi, how):
        """Q (shat hi) by way ``how`` ("beta", "scratch", "state"; tests),
        which becomes the state; returns a copy."""
        cdef const unsigned char[::1] given = np.ascontiguousarray(shat, dtype=np.uint8)
        cdef Py_ssize_t i
        cdef double g_max = 0.0
        self.shat[:] = given
        for i in range(qa.shape[0]):
            g_max = fmax(g_max, fabs(qa[i] - 1.0))
        self._update_qs(alpha, qa, q, hi, QS_WAYS[how], _gradient_floor(g_max))
        return np.array(self.qs_array)

    def __call__(self, alpha, grad, hi_ref, hi, double gap0, double b_ref,
                 bint exact_reference=False):
        """R' and L' at box ``hi`` from the reference (alpha, grad = Q alpha - 1)
        at box ``hi_ref`` (vectors of length n, float64 or converted), with
        duality gap ``gap0`` and best intercept
        ``b_ref`` (for its slacks): two bool masks, which the next call
        overwrites.  ``exact_reference``: gap 0 and no round-off (tests)."""
        cdef Py_ssize_t i, n = self.y.shape[0]
        cdef double l1 = 0.0
        cdef int err
        cdef const double[::1] alpha_in, hi_in      # the inputs, as loaded by _ball
        # Of the ball, s-hat and BT2 need only the intercept interval for b*
        # itself, the plain v-set's (the centred set bounds b* + w*'c); the
        # region's margins below are tighter than the ball's.
        self._ball(alpha, grad, hi_ref, hi, gap0, exact_reference, False, V_PLAIN, False)
        alpha_in, hi_in = self.alpha, self.hi
        with nogil:
            _choose_shat(self.qa, self.y, hi_in, self.ball.s.q, self.ball.b[0], self.ball.b[1],
                         self.fit_intercept, self.shat)
            if self.budget >= 0:
                self._limit_changes(self.qa, hi_in)
        self._update_qs(alpha_in, self.qa, self.ball.s.q, hi_in, -1,
                        _gradient_floor(self.ball.s.g_max))
        with nogil:
            for i in range(n):
                l1 += fabs(alpha_in[i] + (hi_in[i] if self.shat[i] else 0.0))
            _bt2_ball(alpha_in, self.qa, self.qs, self.shat, self.y, hi_in, self.ball.s.q, b_ref,
                      self.ball.b[0], self.ball.b[1], self.fit_intercept,
                      0.0 if exact_reference else
                      _quadratic_roundoff(self.roundoff_scale, l1, l1)
                      + (1.0 + self.ball.s.q) * (l1 + self.ball.s.hi_sum)
                      * _gradient_floor(self.ball.s.g_max),
                      &self.r2, &self.phi_norm, &self.r2_squared)
            self.b[0] = self.b[1] = 0.0
            self.b[2] = self.b[3] = NAN
            err = _fused_margins(self.qa, self.qs, self.y, hi_in, self.ball.s.q, self.ball.r1,
                                 self.r2, self.phi_norm, self.geometry, self.norms,
                                 self.centred_norms, self.centre_index, self.fit_intercept,
                                 self.ball.s.weighted, 0.0, self.lower, self.upper,
                                 self.work, self.b, self.statuses)
            if not err:
                self.conflicts = _classify_masks_loop(self.lower, self.upper,
                                                      self.ball.tau_eff, self.zero, self.bound,
                                                      &self.n_screened)
        if err:
            raise MemoryError("TwoBallPathStep")
        return self.masks


cdef double _box_ratio(const double[::1] hi, const double[::1] hi_ref) noexcept nogil:
    """q with hi = q hi_ref, both finite, positive or both 0 (a sample of
    weight 0, fixed at 0), within 1e-12 q (the rules need proportional
    boxes: the theta-box [0, hi/C] is then C-free, bias_screening.md sec.
    2.5); NAN if not, or if every box is 0."""
    cdef Py_ssize_t i, n = hi.shape[0]
    cdef double q = NAN
    if hi_ref.shape[0] != n:
        return NAN
    for i in range(n):
        if hi[i] == 0.0 and hi_ref[i] == 0.0:
            continue
        if not (hi[i] > 0.0 and hi[i] < INFINITY and hi_ref[i] > 0.0
                and hi_ref[i] < INFINITY):
            return NAN
        if q != q:
            q = hi[i] / hi_ref[i]
        elif fabs(hi[i] - q * hi_ref[i]) > 1e-12 * q * hi_ref[i]:
            # |hi / hi_ref - q| > 1e-12 q without a division: a path step
            # calls this on every sample (a tenth of a DVI step's time)
            return NAN
    return q if q > 0.0 else NAN


def box_ratio(const double[::1] hi, const double[::1] hi_ref):
    """``_box_ratio``: q with hi = q hi_ref, or nan."""
    return _box_ratio(hi, hi_ref)


def classify_masks(const double[::1] lower, const double[::1] upper, double tau,
                   unsigned char[::1] screened_zero, unsigned char[::1] screened_bound):
    """``_classify_masks_loop``: R' and L' with conflicts dropped; returns
    the number of conflicts dropped."""
    cdef Py_ssize_t conflicts, screened
    with nogil:
        conflicts = _classify_masks_loop(lower, upper, tau, screened_zero, screened_bound,
                                         &screened)
    return conflicts


# ---------------------------------------------------------------------------
# the KKT check of a screened solve (the safety net of DESIGN.md)
# ---------------------------------------------------------------------------

cdef inline bint _in_up(double y_t, double a_t, double lo_t, double hi_t) noexcept nogil:
    """t in I_up: y_t a_t may increase (I_low is I_up with y_t negated)."""
    return a_t < hi_t if y_t > 0 else a_t > lo_t


cdef inline void _stopping_term(bint equality, const double[::1] sign,
                                const double[::1] alpha, const double[::1] grad,
                                const double[::1] lo, const double[::1] hi, Py_ssize_t t,
                                double* v, bint* up, bint* low) noexcept nogil:
    """Sample t's value in the stopping rule and the sides it counts on:
    with the equality v = -y_t G_t, on I_up and/or I_low; without it the
    projected gradient, on both sides."""
    if equality:
        v[0] = -sign[t] * grad[t]
        up[0] = _in_up(sign[t], alpha[t], lo[t], hi[t])
        low[0] = _in_up(-sign[t], alpha[t], lo[t], hi[t])
    else:
        v[0] = _projected_gradient(alpha[t], grad[t], lo[t], hi[t])
        up[0] = low[0] = True


def fixed_violators(const double[::1] alpha, const double[::1] grad,
                    const double[::1] lo, const double[::1] hi, y,
                    const unsigned char[::1] fixed, double tol,
                    unsigned char[::1] bad):
    """Fixed variables that break the solver's stopping rule (marks ``bad``).

    With the equality (y given; LIBSVM's rule, Fan, Chen & Lin 2005, eq. 3):
    v_t = -y_t G_t, I_up = {t : y_t a_t may increase}, I_low = {may
    decrease}; m = max_{free, I_up} v, M = min_{free, I_low} v.  A fixed t
    violates when it alone widens m - M, to tol or beyond:
        t in I_up, v_t > m and v_t - M >= tol,  or
        t in I_low, v_t < M and m - v_t >= tol.
    Without it (LIBLINEAR's rule): the projected gradient pg_t, with
    top = max(0, max_free pg), bottom = min(0, min_free pg); t violates when
    pg_t > top and pg_t - bottom >= tol, or pg_t < bottom and
    top - pg_t >= tol.  (Widens: where the free variables alone end at or
    beyond tol, as round-off can leave them at a large C, a fixed variable
    inside their range is not what fails the rule.)
    If none violates alone but the fixed variables widen the criterion to
    tol or beyond together (two fixed variables violating each other),
    every fixed variable is marked.  Returns the number marked.
    """
    cdef Py_ssize_t t, n = alpha.shape[0], n_bad = 0
    cdef bint equality = y is not None, up, low
    cdef const double[::1] sign = y if equality else alpha    # unused without y
    # Without the equality every variable counts on both sides, and the
    # extremes start at 0 (top = max(0, ...), bottom = min(0, ...)).
    cdef double v, m = -INFINITY if equality else 0.0, M = INFINITY if equality else 0.0
    cdef double m_all, M_all
    cdef bint widened
    with nogil:
        for t in range(n):
            if fixed[t]:
                continue
            _stopping_term(equality, sign, alpha, grad, lo, hi, t, &v, &up, &low)
            if up and v > m:
                m = v
            if low and v < M:
                M = v
        m_all = m
        M_all = M
        for t in range(n):
            bad[t] = 0
            if not fixed[t]:
                continue
            _stopping_term(equality, sign, alpha, grad, lo, hi, t, &v, &up, &low)
            if (up and v > m and v - M >= tol) or (low and v < M and m - v >= tol):
                bad[t] = 1
                n_bad += 1
            if up and v > m_all:
                m_all = v
            if low and v < M_all:
                M_all = v
        widened = m_all > m or M_all < M
        if (n_bad == 0 and widened and m_all > -INFINITY and M_all < INFINITY
                and m_all - M_all >= tol):
            n_bad = -1
        if n_bad == -1:
            n_bad = 0
            for t in range(n):
                bad[t] = fixed[t] != 0
                n_bad += bad[t]
    return n_bad


cdef inline double _projected_gradient(double a, double g, double lo,
                                       double hi) noexcept nogil:
    """The projected gradient of a box variable (LIBLINEAR's PG); 0 for a
    box [lo, lo] (a sample of weight 0 cannot move)."""
    if lo >= hi:
        return 0.0
    if a <= lo:
        return fmin(g, 0.0)
    if a >= hi:
        return fmax(g, 0.0)
    return g


def fix_screened(const double[::1] alpha0, const double[::1] lo, const double[::1] hi,
                 const unsigned char[::1] screened_zero,
                 const unsigned char[::1] screened_bound, unsigned char[::1] fixed):
    """fixed = R' | L' for a screened solve, in one pass.  Returns
    (n_moved, n_zero, n_bound): n_moved counts the screened entries of the
    warm start alpha0 that are not yet at the bound the rule proved (R' at
    lo, L' at hi); when it is 0, alpha0 and its gradient need no update."""
    cdef Py_ssize_t i, n = alpha0.shape[0], n_moved = 0, n_zero = 0, n_bound = 0
    if (lo.shape[0] != n or hi.shape[0] != n or screened_zero.shape[0] != n
            or screened_bound.shape[0] != n or fixed.shape[0] != n):
        raise ValueError("fix_screened: inconsistent lengths")
    with nogil:
        for i in range(n):
            fixed[i] = screened_zero[i] | screened_bound[i]
            if screened_zero[i]:
                n_zero += 1
                n_moved += alpha0[i] != lo[i]
            if screened_bound[i]:
                n_bound += 1
                n_moved += alpha0[i] != hi[i]
    return n_moved, n_zero, n_bound
