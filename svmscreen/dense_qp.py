"""The solver's dense fallback: a primal-dual interior-point method.

SMO moves two variables a step, each step limited by the curvature of its
pair.  On an ill-conditioned or rank-deficient Q, e.g. a linear kernel on
unscaled features (raw madelon: K_ii about 1.2e8, rank 500 < n = 2000,
docs/madelon_linear.md), the objective then falls by a fixed small amount
an iteration and neither LIBSVM nor our SMO reaches its tolerance within
10 million iterations.  An interior-point method does not care about the
conditioning: on that problem it reaches the optimum in 25-35 Newton
steps, each one Cholesky factorisation of an n x n matrix.

``_solver.solve`` calls ``interior_point`` on its movable variables when
SMO has spent about what the factorisations would cost (and Q's dense
block fits the cache budget), then lets SMO finish from the point it
returns: the answer still meets SMO's own stopping rule, only reached
sooner.  A linear kernel with few features (k) passes Q as its factor
(``LowRankQ``, Q = Z Z'), whose Newton steps cost O(m k^2) instead.

The problem (the solver's contract, on the movable variables):

    min_a  1/2 a'Qa + c'a   s.t.  lo <= a <= hi  (lo < hi),  y'a = delta (if y)

Mehrotra's predictor-corrector (Nocedal & Wright, Numerical Optimization,
2nd ed., 2006, Alg. 16.4, for bounds instead of inequality rows), with
multipliers z_lo, z_hi >= 0 of the two bounds and b of the equality:

    r_d = Q a + c - z_lo + z_hi + b y       (dual residual)
    r_p = y'a - delta                       (primal residual)
    (a - lo) z_lo = mu,  (hi - a) z_hi = mu (complementarity, mu -> 0)

Eliminating the multipliers' steps leaves one system a Newton step,

    (Q + D) da + y db = r,   y'da = -r_p,   D = z_lo/(a - lo) + z_hi/(hi - a),

solved with one Cholesky factorisation of Q + D (positive definite while
the iterate is interior) and two triangular solves.  The O(n^3) and O(n^2)
work is LAPACK's and BLAS's; the O(n) updates are numpy.
"""
import numpy as np

# scipy.linalg is imported where a factorisation runs: it took 100 ms, most
# of the first train_path call (the README's command: 0.13 s), for a
# fallback that few solves reach (path.py imports repair_equality from here)

# A step goes this fraction of the way to the boundary (Nocedal & Wright's
# eta, as in most implementations), so that the iterate stays interior.
STEP_FRACTION = 0.995
# Stop once mu (relative to the linear term's scale) is below MU_FLOOR, when
# STALL_STEPS steps have halved neither mu nor the residuals, or when the
# residuals grow RESIDUAL_BLOWUP-fold over their best (Q + D numerically
# singular).  The residuals stop at round-off's floor (on raw madelon Q a
# carries errors of 1e-5 at C = 1 and 1e-2 at C = 1000, from entries of
# 1e8); mu keeps falling, and it is mu that places the entries at a bound
# within a snap's reach (``snap_to_bounds``).  Mu can fall slowly for a
# while and then fast: breast-cancer_scale, linear, C = 100, every variable
# (the fallback on Q's factor) took 6 steps from 1.5 to 0.94, then 20 more
# to 1e-11; stopped after 5 steps without halving, the method returned a
# point 13% above the optimum's objective, and SMO ran 12 times longer.
MU_FLOOR = 1e-30
STALL_STEPS = 10
RESIDUAL_BLOWUP = 100.0
# A proximal term REGULARIZATION max Q_ii on the Newton matrix's diagonal:
# with more free variables than Q has rank (raw madelon), Q + D turns
# singular as mu -> 0.  With multipliers starting at 1, 1e-14 and 1e-12 both
# reached round-off's floor there up to C = 10, and 1e-10 damped the steps so
# that mu stalled; the final start was measured with 1e-14.
REGULARIZATION = 1e-14
# LowRankQ's Newton solves: at most this many rounds of iterative refinement.
REFINEMENTS = 6


def repair_equality(alpha, y, lo, hi, movable, target):
    """Move as few movable entries as possible so that y'alpha = target.

    Greedy by capacity: the largest movers go first, so the gradient can be
    updated with few kernel columns.  Returns None if no movable point can
    absorb the residual (then the fixed values are inconsistent).
    """
    alpha = alpha.copy()
    residual = float(y @ alpha) - target
    # The sum's own round-off: a residual within it is no violation, and
    # moving an entry by it would leave that entry a few ulps off its bound,
    # a "free" variable that decides the intercept when no real one exists
    # (a CCCP step then took the end of the optimal interval for b, not its
    # midpoint, and screening on and off parted ways).
    roundoff = 4.0 * np.finfo(np.float64).eps * (float(np.abs(alpha).sum()) + abs(target))
    if abs(residual) <= roundoff:
        return alpha
    # residual > 0: lower y_i a_i, i.e. decrease a_i (y=+1) or increase it (y=-1).
    direction = -np.sign(residual) * y
    capacity = np.where(direction > 0, hi - alpha, alpha - lo)
    capacity[~movable] = 0.0
    order = np.argsort(-capacity, kind="stable")
    need = abs(residual)
    for i in order:
        if need <= roundoff or capacity[i] <= 0:
            break
        if capacity[i] <= need:
            alpha[i] = hi[i] if direction[i] > 0 else lo[i]     # exactly at the bound
            need -= capacity[i]
        else:
            alpha[i] += direction[i] * need
            need = 0.0
    if need > 1e-12 * max(1.0, float(np.abs(hi).sum())):
        return None
    return alpha


def _factor(M, diagonal_scale):
    """Cholesky of M (overwritten), with a small ridge if round-off left
    Q + D indefinite; None if even the largest ridge fails."""
    from scipy.linalg import LinAlgError, cho_factor
    for ridge in (0.0, 1e-14, 1e-12, 1e-10):
        if ridge:
            M[np.diag_indices_from(M)] += ridge * diagonal_scale
        try:
            return cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
        except LinAlgError:
            continue
    return None


def _dense_newton(Q, diagonal_scale):
    """``newton(d)`` for a dense Q: a solve with Q + diag(d) by its
    Cholesky factor, or None if that fails (``_factor``)."""
    from scipy.linalg import cho_solve
    M = np.empty(Q.shape, order="F")   # LAPACK's order: factored in place, not copied

    def newton(d):
        np.copyto(M, Q)
        M[np.diag_indices_from(M)] += d
        factor = _factor(M, diagonal_scale)
        if factor is None:
            return None
        return lambda rhs: cho_solve(factor, rhs, check_finite=False)
    return newton


class LowRankQ:
    """Q = Z Z', held as Z of shape (m, k) with k below m: a linear kernel's
    block (Z_t = s_t x_t, ``QMatrix.low_rank_block``).  It offers what
    ``interior_point`` and ``snap_to_bounds`` ask of Q (products, the
    diagonal, solves with Q + D) in O(m k) and O(m k^2) work where the dense
    block takes O(m^2) and O(m^3): on svmguide1 (m = 3089, k = 4) the
    method took 42-58 ms, and 9-12 s on the dense block."""

    def __init__(self, Z):
        self.Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.shape = (self.Z.shape[0], self.Z.shape[0])

    def __matmul__(self, v):
        return self.Z @ (self.Z.T @ v)

    def diagonal(self):
        return np.einsum("ij,ij->i", self.Z, self.Z)

    def newton(self, d):
        """A solve with Q + diag(d) (d > 0), by the Sherman-Morrison-Woodbury
        identity (as Ferris and Munson, Interior-point methods for massive
        support vector machines, SIAM J. Optim. 13(3), 2003):

            (D + Z Z')^-1 r = D^-1 (r - Z u),  (I + Z' D^-1 Z) u = Z' D^-1 r,

        one Cholesky factorisation of a k x k matrix.  Where d is small (the
        free variables' z / s near the optimum, down to the method's
        regularisation) D^-1 (r - Z u) cancels digits: with one variable,
        z^2 = 1e14 d, it kept 2.  Iterative refinement, with the residual by
        the exact product, wins them back (about as many a round), for at
        most REFINEMENTS rounds, while the residual still halves and is
        above the round-off of its terms.
        None if the factorisation fails."""
        from scipy.linalg import cho_solve
        inverse = 1.0 / d
        scaled = self.Z * inverse[:, None]
        M = self.Z.T @ scaled
        M[np.diag_indices_from(M)] += 1.0
        factor = _factor(M, 1.0)
        if factor is None:
            return None

        def once(rhs):
            scaled_rhs = inverse * rhs
            return scaled_rhs - scaled @ cho_solve(factor, self.Z.T @ scaled_rhs,
                                                   check_finite=False)

        def solve(rhs):
            x = once(rhs)
            best, best_size = x, np.inf
            for _ in range(REFINEMENTS + 1):
                dx, qx = d * x, self @ x
                residual = rhs - dx - qx
                size = np.abs(residual).max(initial=0.0)
                if not size <= 0.5 * best_size:        # no longer halving (or nan)
                    break
                best, best_size = x, size
                if size <= 1e-14 * np.max(np.abs(dx) + np.abs(qx) + np.abs(rhs), initial=0.0):
                    break                               # round-off of its terms
                x = x + once(residual)
            return best
        return solve


def _step_to_boundary(values, steps):
    """The largest t <= 1 with values + t steps >= 0 (values > 0)."""
    shrinking = steps < 0
    if not shrinking.any():
        return 1.0
    return min(1.0, float(np.min(-values[shrinking] / steps[shrinking])))


# Iterates that overflow end the method (found is then None): numpy's
# warnings of each step said so once per dense step, thousands in a solve.
@np.errstate(over="ignore", invalid="ignore")
def interior_point(Q, c, lo, hi, y=None, delta=0.0, *, max_steps=60):
    """Minimise 1/2 a'Qa + c'a over lo <= a <= hi (and y'a = delta).

    Parameters
    ----------
    Q : ndarray of shape (m, m) or LowRankQ
        Symmetric positive semi-definite (not modified).
    c, lo, hi : ndarray of shape (m,)
        lo < hi, finite.
    y : ndarray of shape (m,) or None
        The equality's coefficients (+1/-1), or None for none.
    delta : float
    max_steps : int
        At most this many Newton steps.

    Returns
    -------
    a : ndarray of shape (m,) or None
        Of the iterates whose scaled residuals are within 10 times the
        best, the one with the smallest mu, clipped to the box: an
        approximate minimiser for the caller to finish, not an exact one.
        None when no factorisation succeeded or an iterate was not finite.
    side : int8 ndarray of shape (m,) or None
        -1 (+1) where the lower (upper) bound's multiplier exceeds its
        slack, both relative to their scales (1 + |c|, the box width): the
        entries the method places at that bound, for ``snap_to_bounds``.
    n_steps : int
    """
    m = c.shape[0]
    width = hi - lo
    a = lo + 0.5 * width
    b = 0.0
    s_lo, s_hi = a - lo, hi - a
    # Multipliers that make the start dual feasible (z_lo - z_hi = Q a + c,
    # b = 0), both kept off 0 by the gradient's typical size: the midpoint
    # can be far from the optimum, and multipliers of 1 there left a dual
    # residual that short steps removed slowly (C = 1000 on raw madelon,
    # where Q a is 1e11; a rank-deficient Q of scale 1e6).
    gradient = Q @ a + c
    typical = max(1.0, float(np.mean(np.abs(gradient))))
    z_lo = np.maximum(gradient, 0.0) + typical
    z_hi = np.maximum(-gradient, 0.0) + typical
    diagonal_scale = max(1.0, float(np.abs(Q.diagonal()).max(initial=0.0)))
    regularization = REGULARIZATION * diagonal_scale
    dual_scale = 1.0 + float(np.abs(c).max(initial=0.0))
    primal_scale = 1.0 + abs(delta)
    kept = []                                # (residual, mu, a, side) per iterate
    best_residual = np.inf
    top_floor = 0.0                          # the largest round-off floor so far
    progress = [np.inf, np.inf, 0]           # residual, mu and step of the last halving
    factor_newton = Q.newton if isinstance(Q, LowRankQ) else _dense_newton(Q, diagonal_scale)
    step = 0
    for step in range(max_steps):
        r_d = Q @ a + c - z_lo + z_hi
        if y is not None:
            r_d += b * y
        r_p = float(y @ a) - delta if y is not None else 0.0
        residual = max(float(np.abs(r_d).max()) / dual_scale, abs(r_p) / primal_scale)
        mu = float(s_lo @ z_lo + s_hi @ z_hi) / (2 * m) / dual_scale
        if not (np.isfinite(residual) and np.isfinite(mu)):
            break
        # the residual's round-off floor: Q a carries errors of about
        # eps max_ij |Q_ij| ||a||_1, and z_hi - z_lo of eps (z_lo + z_hi),
        # which near a narrow box's bound are mu / slack (a box of 1e-5
        # beside boxes of 1e3: 1.6e9 each at the second step, whose dual
        # residual of 1e-7 read as a blow-up and ended the method there)
        floor = np.finfo(float).eps * (diagonal_scale * float(np.abs(a).sum())
                                       + float((z_lo + z_hi).max())) / dual_scale
        # (against the largest floor so far: an iterate keeps the round-off
        # of the steps that made it, and boxes 1e-6 C beside 1e3 C gave
        # multipliers, and a floor, that fell faster than the residual it
        # had left, which read as a blow-up at step 3 on every try)
        top_floor = max(top_floor, floor)
        if residual > RESIDUAL_BLOWUP * max(best_residual, top_floor):
            break
        best_residual = min(best_residual, max(residual, floor))
        side = np.zeros(m, dtype=np.int8)
        side[s_hi / width < z_hi / dual_scale] = 1
        side[s_lo / width < z_lo / dual_scale] = -1
        kept.append((residual, mu, a.copy(), side))
        if residual <= 0.5 * progress[0] or mu <= 0.5 * progress[1]:
            progress = [min(residual, progress[0]), min(mu, progress[1]), step]
        if mu <= MU_FLOOR or step - progress[2] >= STALL_STEPS:
            break
        solve = factor_newton(z_lo / s_lo + z_hi / s_hi + regularization)
        if solve is None:
            break
        solved_y = solve(y) if y is not None else None

        def newton(target_lo, target_hi):
            # complementarity targets (s_lo + da)(z_lo + dz_lo) = target_lo,
            # (s_hi - da)(z_hi + dz_hi) = target_hi, linearised
            rhs = -r_d + (target_lo / s_lo - z_lo) - (target_hi / s_hi - z_hi)
            da = solve(rhs)
            db = 0.0
            if y is not None:
                db = (float(y @ da) + r_p) / float(y @ solved_y)
                da -= db * solved_y
            dz_lo = (target_lo - z_lo * da) / s_lo - z_lo
            dz_hi = (target_hi + z_hi * da) / s_hi - z_hi
            return da, db, dz_lo, dz_hi

        def longest(da, dz_lo, dz_hi):
            return min(_step_to_boundary(s_lo, da), _step_to_boundary(s_hi, -da),
                       _step_to_boundary(z_lo, dz_lo), _step_to_boundary(z_hi, dz_hi))

        # predictor (affine scaling), then the centred corrector
        zeros = np.zeros(m)
        da, db, dz_lo, dz_hi = newton(zeros, zeros)
        t = longest(da, dz_lo, dz_hi)
        mu_affine = float((s_lo + t * da) @ (z_lo + t * dz_lo)
                          + (s_hi - t * da) @ (z_hi + t * dz_hi)) / (2 * m)
        mu_now = mu * dual_scale
        sigma = (mu_affine / mu_now) ** 3 if mu_now > 0 else 0.0
        da, db, dz_lo, dz_hi = newton(sigma * mu_now - da * dz_lo,
                                      sigma * mu_now + da * dz_hi)
        t = STEP_FRACTION * longest(da, dz_lo, dz_hi)
        a = a + t * da
        b += t * db
        z_lo = z_lo + t * dz_lo
        z_hi = z_hi + t * dz_hi
        # The slacks by their own steps (not recomputed as a - lo, which
        # round-off can make 0): positive, since t stops short of the boundary.
        s_lo = s_lo + t * da
        s_hi = s_hi - t * da
    candidates = [k for k in kept if k[0] <= 10.0 * best_residual]
    if not candidates:
        return None, None, step
    _, _, found, side = min(candidates, key=lambda k: k[1])
    return np.clip(found, lo, hi), side, step


def snap_to_bounds(a, lo, hi, side, Q, limit):
    """``a`` with the entries ``side`` places at a bound set to it, as many
    as possible, nearest first, such that Q a moves by at most ``limit`` in
    every entry (on an ill-conditioned Q even a move of 1e-12 shows in the
    gradient: raw madelon's entries are 1e8).  Returns a copy."""
    distance = np.where(side < 0, a - lo, hi - a)
    order = np.flatnonzero(side != 0)
    order = order[np.argsort(distance[order], kind="stable")]
    target = np.where(side < 0, lo, hi)

    move = np.zeros_like(a)

    def change(count):
        # max |Q delta| for the `count` nearest: one matrix-vector product
        # (Q[:, chosen] would copy up to m^2 entries, beyond the fallback's
        # memory allowance of Q and the factor)
        move[:] = 0.0
        chosen = order[:count]
        move[chosen] = target[chosen] - a[chosen]
        return float(np.abs(Q @ move).max(initial=0.0))

    # the largest count within the limit (the change grows with it, as a
    # rule: bisection)
    low, high = 0, order.shape[0]
    if change(high) <= limit:
        low = high
    while high - low > 1:
        middle = (low + high) // 2
        if change(middle) <= limit:
            low = middle
        else:
            high = middle
    out = a.copy()
    chosen = order[:low]
    out[chosen] = target[chosen]
    return out
