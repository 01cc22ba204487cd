"""Screened solves: fix what the rules proved, solve the rest, check, put back.

The safety net of DESIGN.md: whatever a rule claims, the returned solution
meets the solver's own stopping rule on the *whole* problem.  After a solve
with some variables fixed, each fixed variable is checked against the
maximal-violation criterion of the free ones; any that would violate it is
released and the solve continues from the current point (the gradient is
already known, so this costs only the extra iterations).
"""
import numpy as np

from svmscreen import _rules
from svmscreen._solver import solve


def kkt_violators(alpha, grad, lo, hi, y, fixed, tol):
    """Fixed variables that break the stopping rule of the free ones.

    A fixed t violates when, added to the free variables, it alone pushes
    the criterion to tol or beyond.  If the whole problem still fails after
    releasing those (two fixed variables violating each other), every fixed
    variable is released.  (The typed loop: ``_rules.fixed_violators``.)
    """
    bad = np.empty(alpha.shape[0], dtype=np.uint8)
    _rules.fixed_violators(np.ascontiguousarray(alpha, dtype=np.float64),
                           np.ascontiguousarray(grad, dtype=np.float64),
                           np.ascontiguousarray(lo, dtype=np.float64),
                           np.ascontiguousarray(hi, dtype=np.float64),
                           None if y is None else np.ascontiguousarray(y, dtype=np.float64),
                           np.ascontiguousarray(fixed).view(np.uint8), tol, bad)
    return bad.view(bool)


def solve_reduced(Q, p, lo, hi, alpha0, *, y=None, fixed=None, grad0=None, tol=1e-3,
                  shrinking=True, max_iter=None, screen_callback=None, screen_every=0,
                  gap_screening=0, gap_tau=None, gap_roundoff=None, first_shrink=None):
    """``solve`` with screened variables fixed, then checked.

    Parameters are those of ``svmscreen._solver.solve``; every fixed variable
    must sit at a bound in ``alpha0``.  Samples frozen by dynamic screening
    (``screen_callback`` or the solver's own ``gap_screening``) are checked
    the same way.

    Returns
    -------
    result : SolveResult
        Its ``n_iter`` sums all rounds.
    n_put_back : int
        Fixed variables released because they violated the KKT conditions
        (0 when the screening rule was right).
    """
    fixed = None if fixed is None else np.array(fixed, dtype=bool)
    result = solve(Q, p, lo, hi, alpha0, y=y, fixed=fixed, grad0=grad0, tol=tol,
                   shrinking=shrinking, max_iter=max_iter, screen_callback=screen_callback,
                   screen_every=screen_every, gap_screening=gap_screening, gap_tau=gap_tau,
                   gap_roundoff=gap_roundoff, first_shrink=first_shrink)
    n_iter = result.n_iter
    work = [result.work_select, result.work_reconstruct, result.work_gbar]
    n_frozen = int(result.frozen.sum())
    # the screening of the first round (the rounds after a put-back screen
    # nothing): its counts are the solve's
    screened = (result.start_frozen_lower, result.start_frozen_upper, result.n_screens,
                result.screen_seconds)
    # (the solve's frozen mask is its own: nothing else holds it)
    fixed = result.frozen if fixed is None else fixed | result.frozen
    n_put_back = 0
    # A "round_off" stop is checked too: it ends where no step moves the
    # variables the solve had, and a wrongly fixed one released can still
    # move (heart_scale at tol 1e-16: a free support vector held at 0 was
    # kept there, 0.4% off the optimum, under a warning that blamed tol).
    # "max_iter" has no iterations left for the put-back.
    while fixed.any() and result.status in ("optimal", "round_off"):
        bad = kkt_violators(result.alpha, result.grad, lo, hi, y, fixed, tol)
        if not bad.any():
            break
        n_put_back += int(bad.sum())
        fixed &= ~bad
        # max_iter bounds the whole screened solve, not each round
        result = solve(Q, p, lo, hi, result.alpha, y=y, fixed=fixed, grad0=result.grad,
                       tol=tol, shrinking=shrinking,
                       max_iter=None if max_iter is None else max(max_iter - n_iter, 1),
                       first_shrink=first_shrink)
        n_iter += result.n_iter
        work[0] += result.work_select
        work[1] += result.work_reconstruct
        work[2] += result.work_gbar
    result.n_iter = n_iter
    result.work_select, result.work_reconstruct, result.work_gbar = work
    result.n_frozen = n_frozen
    (result.start_frozen_lower, result.start_frozen_upper, result.n_screens,
     result.screen_seconds) = screened
    return result, n_put_back
