"""Slow, exact references for small problems (n <= 60), used by the tests.

``exact_box_qp`` solves

    min_a  1/2 a'Qa + p'a   s.t.  lo <= a <= hi,  (optional) y'a = delta

by a primal active-set method (Nocedal & Wright, *Numerical Optimization*,
Alg. 16.3) in dense linear algebra: iterates stay feasible, each step solves
the equality-constrained QP on the free variables (KKT system with the
multiplier of y'a = delta), a blocking bound enters the working set, and a
bound with a wrong-signed multiplier leaves it.  A singular Q (linear kernel,
d < n) is handled by stepping along a null-space descent direction until a
bound blocks.  Variables at a bound are set *exactly* to that bound, so the
free set of the returned solution is exact, and the free variables solve a
linear system to machine precision (about 1e-12 relative, not an iterative
tolerance).  The result is checked against the KKT conditions before it is
returned; a failure raises ``RuntimeError`` rather than returning a wrong
reference.

``exact_svc`` builds the C-SVC dual (Q_ij = y_i y_j K_ij, p = -1, box
[0, C_i], equality y'a = 0 when fit_intercept) and also returns the interval
of optimal intercepts (a point when a free support vector exists).

``libsvm_multiclass_probability`` is svm.cpp's ``multiclass_probability``
(LIBSVM 3.37) written out in Python floats, which round as C's doubles: the
package's typed loop must give its probabilities bit for bit.

Trusts: finite inputs, symmetric positive semi-definite Q, finite bounds with
lo <= hi, and a feasible equality.  Nothing here is fast; nothing here is
used by the package.
"""
import numpy as np

__all__ = ["exact_box_qp", "exact_box_qp_full", "exact_svc", "svc_margins",
           "libsvm_multiclass_probability"]


def _feasible_start(lo, hi, y, delta):
    """A point of the box with y'a = delta (greedy: move variables to bounds)."""
    alpha = np.clip(np.zeros_like(lo), lo, hi)
    if y is None:
        return alpha
    residual = delta - y @ alpha
    for i in np.argsort(-np.abs(y)):
        if abs(residual) <= 1e-15 * max(1.0, abs(delta)):
            break
        if y[i] == 0.0:
            continue
        step = residual / y[i]
        new = float(np.clip(alpha[i] + step, lo[i], hi[i]))
        residual -= y[i] * (new - alpha[i])
        alpha[i] = new
    if abs(residual) > 1e-9 * max(1.0, abs(delta), float(np.abs(y) @ (hi - lo))):
        raise ValueError(f"y'a = {delta!r} is infeasible in the box")
    return alpha


def _multiplier_interval(grad, y, at_lo, at_hi):
    """Interval of lam with  grad_i + lam*y_i >= 0 (at_lo), <= 0 (at_hi)."""
    lower, upper = -np.inf, np.inf
    for i in np.flatnonzero(at_lo | at_hi):
        if y[i] == 0.0:
            continue
        bound = -grad[i] / y[i]
        # at_lo: grad + lam*y >= 0  ->  lam >= bound if y > 0 else lam <= bound
        is_lower = (y[i] > 0) == bool(at_lo[i])
        if is_lower:
            lower = max(lower, bound)
        else:
            upper = min(upper, bound)
    return lower, upper


def exact_box_qp_full(Q, p, lo, hi, y=None, delta=0.0, alpha0=None,
                      max_iter=None):
    """Exact solution of the box QP, with its multiplier and working set.

    Parameters
    ----------
    Q : ndarray of shape (n, n)
        Symmetric positive semi-definite.
    p, lo, hi : ndarray of shape (n,)
    y : ndarray of shape (n,) or None
        Coefficients of the equality y'a = delta; None for box only.
    delta : float
    alpha0 : ndarray of shape (n,) or None
        Optional feasible start (e.g. an approximate solver answer); it is
        clipped to the box and used only if it satisfies the equality to 1e-9.
    max_iter : int or None
        Default 50 n + 100.

    Returns
    -------
    alpha : ndarray of shape (n,)
    lam : float
        Multiplier of the equality (0.0 without one), in the convention
        Q a + p + lam y = 0 on the free variables.  For the C-SVC dual this is
        the intercept b (LIBSVM's -rho) when a free variable exists.
    at_lo, at_hi : bool ndarray of shape (n,)
        The final working set (variables held exactly at a bound).
    """
    Q = np.asarray(Q, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    n = p.shape[0]
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (n,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (n,)).copy()
    has_eq = y is not None
    y = np.asarray(y, dtype=np.float64) if has_eq else np.zeros(n)
    max_iter = 50 * n + 100 if max_iter is None else max_iter
    scale = max(1.0, float(np.abs(Q).max(initial=0.0)) * float(np.abs(hi - lo).max(initial=0.0)),
                float(np.abs(p).max(initial=0.0)))
    width = max(1e-300, float(np.abs(hi - lo).max(initial=0.0)))

    alpha = None
    if alpha0 is not None:
        cand = np.clip(np.asarray(alpha0, dtype=np.float64), lo, hi)
        if not has_eq or abs(y @ cand - delta) <= 1e-9 * max(1.0, abs(delta)):
            alpha = cand
            if has_eq:   # remove the remaining residual on a free variable
                free = np.flatnonzero((cand > lo) & (cand < hi) & (y != 0))
                for i in free:
                    new = float(np.clip(alpha[i] + (delta - y @ alpha) / y[i], lo[i], hi[i]))
                    alpha[i] = new
    if alpha is None:
        alpha = _feasible_start(lo, hi, y if has_eq else None, delta)
    fixed_eq = lo == hi
    at_lo = (alpha <= lo) & ~fixed_eq
    at_hi = (alpha >= hi) & ~fixed_eq
    at_lo |= fixed_eq
    alpha[at_lo] = lo[at_lo]
    alpha[at_hi] = hi[at_hi]

    lam = 0.0
    for _ in range(max_iter):
        grad = Q @ alpha + p
        free = np.flatnonzero(~(at_lo | at_hi))
        k = free.size
        direction = np.zeros(n)
        stationary = k == 0
        if k and has_eq and np.any(y[free] != 0):
            # stationary on the working set iff g_f + lam y_f = 0 for some lam
            y_f = y[free]
            lam_ls = -float(y_f @ grad[free]) / float(y_f @ y_f)
            stationary = np.abs(grad[free] + lam_ls * y_f).max() <= 1e-13 * scale
        elif k:
            stationary = np.abs(grad[free]).max() <= 1e-13 * scale
        if k and not stationary:
            Q_ff = Q[np.ix_(free, free)]
            g_f = grad[free]
            y_f = y[free]
            # Null-space method: the steps that keep the equality are Z t
            # (Z an orthonormal basis of y_f's null space), and the Newton
            # step solves Z'QZ t = -Z'g. Solving the KKT system for (d, lam)
            # instead loses d in the round-off of lam when d is tiny: at a
            # gradient residual of 3e-13 it returned noise of 3e-16 and the
            # loop stalled (problem (1, 6, 1, linear, 1.0, 0.3) of
            # tests/test_screening, 9 K, C = 0.01).
            if has_eq and np.any(y_f != 0):
                Z = np.linalg.svd(y_f[None, :], full_matrices=True)[2][1:].T
            else:
                Z = np.eye(k)
            H = Z.T @ Q_ff @ Z
            g_z = Z.T @ g_f
            # null space of H: directions of zero curvature that keep the
            # equality; the objective is linear along them
            _, sing, vt = np.linalg.svd(H, full_matrices=True) if H.size else (None, np.zeros(0),
                                                                            np.zeros((0, 0)))
            rank = int(np.sum(sing > 1e-12 * max(1.0, sing.max(initial=0.0))))
            null = Z @ vt[rank:].T
            d_null = -null @ (null.T @ g_f) if null.size else np.zeros(k)
            if np.linalg.norm(d_null) > 1e-12 * scale:
                d_f = d_null / np.abs(d_null).max()
                unbounded = True
            else:
                d_f = Z @ np.linalg.lstsq(H, -g_z, rcond=None)[0] if H.size else np.zeros(k)
                if null.size:           # minimal-norm: no drift along the null space
                    d_f = d_f - null @ (null.T @ d_f)
                unbounded = False
            direction[free] = d_f
        if stationary or (not unbounded and np.abs(direction).max() <= 1e-14 * width):
            # stationary on the working set: check the bound multipliers
            if has_eq:
                y_free = y[free] if k else np.zeros(0)
                if k and np.any(y_free != 0):
                    lam = -float(y_free @ grad[free]) / float(y_free @ y_free)
                else:
                    lower, upper = _multiplier_interval(grad, y, at_lo, at_hi)
                    if lower <= upper:
                        lam = 0.5 * (lower + upper) if np.isfinite(lower + upper) else (
                            lower if np.isfinite(lower) else (upper if np.isfinite(upper) else 0.0))
                    else:
                        lam = 0.5 * (lower + upper)
            reduced = grad + lam * y
            viol = np.where(at_lo & ~fixed_eq, -reduced, 0.0) + np.where(at_hi, reduced, 0.0)
            worst = int(np.argmax(viol))
            if viol[worst] <= 1e-11 * scale:
                _check_kkt(Q, p, lo, hi, y, delta, has_eq, alpha, lam, at_lo, at_hi, scale)
                return alpha, (lam if has_eq else 0.0), at_lo, at_hi
            at_lo[worst] = False
            at_hi[worst] = False
            continue
        # step along direction (full Newton step 1 unless unbounded) to the first bound
        step = np.inf if unbounded else 1.0
        blocking = -1
        for i in free:
            d = direction[i]
            if d > 0:
                s = (hi[i] - alpha[i]) / d
            elif d < 0:
                s = (lo[i] - alpha[i]) / d
            else:
                continue
            if s < step:
                step, blocking = s, i
        if not np.isfinite(step):
            raise RuntimeError("unbounded QP direction (infinite box?)")
        step = max(step, 0.0)
        alpha[free] += step * direction[free]
        np.clip(alpha, lo, hi, out=alpha)
        if blocking >= 0:
            if direction[blocking] > 0:
                alpha[blocking] = hi[blocking]
                at_hi[blocking] = True
            else:
                alpha[blocking] = lo[blocking]
                at_lo[blocking] = True
    raise RuntimeError(f"exact_box_qp did not converge in {max_iter} iterations")


def _check_kkt(Q, p, lo, hi, y, delta, has_eq, alpha, lam, at_lo, at_hi, scale):
    reduced = Q @ alpha + p + lam * y
    free = ~(at_lo | at_hi)
    bad = max(
        float(np.abs(reduced[free]).max(initial=0.0)),
        float((-reduced[at_lo & (lo < hi)]).max(initial=0.0)),
        float(reduced[at_hi].max(initial=0.0)),
    )
    if bad > 1e-8 * scale:
        raise RuntimeError(f"exact_box_qp: KKT violation {bad:.3g} at the returned point")
    if np.any(alpha < lo) or np.any(alpha > hi):
        raise RuntimeError("exact_box_qp: returned point leaves the box")
    if has_eq and abs(y @ alpha - delta) > 1e-9 * max(1.0, float(np.abs(y) @ np.abs(alpha))):
        raise RuntimeError("exact_box_qp: returned point violates the equality")


def exact_box_qp(Q, p, lo, hi, y=None, delta=0.0, alpha0=None):
    """Exact minimiser of 1/2 a'Qa + p'a over lo <= a <= hi (and y'a = delta).

    Parameters
    ----------
    Q : ndarray of shape (n, n)
    p, lo, hi : ndarray of shape (n,) (lo, hi may be scalars)
    y : ndarray of shape (n,) or None
    delta : float
    alpha0 : ndarray or None
        Optional feasible warm start.

    Returns
    -------
    alpha : ndarray of shape (n,)
        KKT-exact to about 1e-12 relative (raises ``RuntimeError`` otherwise).
    """
    return exact_box_qp_full(Q, p, lo, hi, y, delta, alpha0)[0]


def exact_svc(K, y, C, fit_intercept=True, alpha0=None):
    """Exact C-SVC dual solution and the interval of optimal intercepts.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float or ndarray of shape (n,)
        Box upper bound (per-sample for class weights).
    fit_intercept : bool
        With the equality y'a = 0 (LIBSVM) or bias-free (the papers).
    alpha0 : ndarray of shape (n,) or None
        Optional feasible start, as ``exact_box_qp_full`` takes it.

    Returns
    -------
    alpha : ndarray of shape (n,)
    b_interval : tuple (b_lo, b_hi)
        The set of optimal intercepts b of f(x) = sum_j y_j a_j K(x_j, x) + b
        (b = -rho).  A point when a free support vector exists; (0, 0)
        without an intercept.  It is the same for every dual optimum, since
        every primal optimum is a saddle point with every dual optimum.
    """
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    Q = (y[:, None] * y[None, :]) * K
    return exact_svc_dual(Q, -np.ones(y.shape[0]), C, y, fit_intercept=fit_intercept,
                          alpha0=alpha0)


def exact_svc_dual(Q, p, C, y, delta=0.0, fit_intercept=True, alpha0=None):
    """``exact_svc`` on its dual min 1/2 a'Qa + p'a, 0 <= a <= C, y'a =
    delta (a CCCP step of the ramp loss: p = -1 - Q mu, delta = y'mu):
    (alpha, (b_lo, b_hi)), the intercepts b with y_i b = -G_i at the free
    variables (G = Q a + p)."""
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    hi = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
    alpha, lam, at_lo, at_hi = exact_box_qp_full(
        Q, p, np.zeros(n), hi, y if fit_intercept else None, delta, alpha0)
    if not fit_intercept:
        return alpha, (0.0, 0.0)
    # classify by value: bound values are set exactly, and a working-set-free
    # variable within round-off (1e-13 relative) of a bound is degenerate
    # (zero reduced gradient at a bound): snap it, so that B* is reported as
    # the interval it is rather than the point the round-off suggests
    snap = 1e-13 * hi
    alpha = np.where(alpha <= snap, 0.0, np.where(alpha >= hi - snap, hi, alpha))
    # a box [0, 0] (a sample of weight 0) constrains neither side of b
    weighs = hi > 0
    at_lo = (alpha <= 0.0) & weighs
    at_hi = (alpha >= hi) & weighs
    free = ~(at_lo | at_hi) & weighs
    if np.any(free):
        return alpha, (lam, lam)
    # no free variable: G_i + b y_i >= 0 at 0, <= 0 at C
    grad = Q @ alpha + p
    lower, upper = _multiplier_interval(grad, y, at_lo, at_hi)
    if lower > upper:  # rounding only (the KKT check passed): collapse to a point
        lower = upper = 0.5 * (lower + upper)
    return alpha, (float(lower), float(upper))


def svc_margins(K, y, alpha, b=0.0):
    """y_i f(x_i) = y_i (sum_j y_j a_j K_ij + b) for every sample."""
    y = np.asarray(y, dtype=np.float64)
    return y * (K @ (y * alpha) + b)


def libsvm_multiclass_probability(r):
    """svm.cpp's ``multiclass_probability`` on one k x k list of lists r
    (r[i][j] = P(i | i or j)), statement by statement.

    Returns
    -------
    p : ndarray (k,)
    exceeded : bool, whether it ended at max_iter (LIBSVM's "Exceeds
        max_iter in multiclass_prob").
    """
    k = len(r)
    max_iter, eps = max(100, k), 0.005 / k
    Q = [[0.0] * k for _ in range(k)]
    Qp = [0.0] * k
    p = [1.0 / k] * k
    for t in range(k):
        for j in range(t):
            Q[t][t] += r[j][t] * r[j][t]
            Q[t][j] = Q[j][t]
        for j in range(t + 1, k):
            Q[t][t] += r[j][t] * r[j][t]
            Q[t][j] = -r[j][t] * r[t][j]
    iteration = 0
    while iteration < max_iter:
        pQp = 0.0
        for t in range(k):
            Qp[t] = 0.0
            for j in range(k):
                Qp[t] += Q[t][j] * p[j]
            pQp += p[t] * Qp[t]
        max_error = 0.0
        for t in range(k):
            error = abs(Qp[t] - pQp)
            if error > max_error:
                max_error = error
        if max_error < eps:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t][t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t][t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            for j in range(k):
                Qp[j] = (Qp[j] + diff * Q[t][j]) / (1 + diff)
                p[j] /= 1 + diff
        iteration += 1
    return np.array(p), iteration >= max_iter
