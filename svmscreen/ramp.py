"""The ramp-loss (robust) SVM, trained by CCCP.

    min_{w,b}  J(w, b) = 1/2 ||w||^2 + sum_i C_i R_s(y_i f(x_i)),
    R_s(z) = H_1(z) - H_s(z) = min(1 - s, max(0, 1 - z)),   s <= 0

(Collobert, Sinz, Weston & Bottou 2006; paper 001, eqs. 3-7, as corrected in
notes/seed_001_rsvm_cccp.md), with the per-sample weights of the hinge SVM,
C_i = C * class_weight[y_i] * sample_weight_i (paper 001's eq. 3 has one C;
its derivation holds sample by sample, C becoming C_i).  CCCP linearises the
concave part at the current model: mu_i = C_i * [z_i < s] (strict <, so a
tie gives 0), and each convex inner problem (CIL) is, in LIBSVM's form
(notes §1 "LIBSVM form"),

    min_beta 1/2 beta'Q beta + p'beta,  p = -1 - Q mu,  y'beta = y'mu,
    0 <= beta_i <= C_i,

with w = sum_i y_i (beta_i - mu_i) phi(x_i).  The box does not depend on mu:
from one step to the next only p and the right-hand side of the equality
change, so a step warm-starts from the last beta (equality repaired) and its
gradient is updated by the columns of the samples whose mu or beta changed.
The loop stops when mu no longer changes.
"""
import numbers
import sys
import time
import warnings

import numpy as np

from svmscreen._rules import gradient_floor, quadratic_roundoff
from svmscreen._validation import (ConvergenceWarning, binary_signs, check_box_overflow,
                                   check_labels, check_flag, check_parameters,
                                   check_precomputed, check_X, class_bounds, resolve_gamma,
                                   stopped_short)
from svmscreen.model import BinaryModel
from svmscreen.objective import gap_at
from svmscreen.path import (WARM_FIRST_SHRINK, _Problem, _progress_printer, check_C_grid,
                            make_screening, repair_equality, run_path, screening_applies)
from svmscreen.reduced import solve_reduced
from svmscreen.screening import gap_rule_allowances


def ramp_loss(z, s):
    """R_s(z) = min(1 - s, max(0, 1 - z)) (paper 001, eq. 2, typo fixed)."""
    return np.minimum(1.0 - s, np.maximum(0.0, 1.0 - z))


def outlier_weights(margins, C_i, s, slack=0.0):
    """mu_i = C_i [z_i < s - slack] (paper 001, eq. 5; ties give 0).

    The tie rule of CCCP (``cccp`` passes slack = tol): a margin within tol
    of s, or above it, gives 0.  At z_i = s both 0 and C_i are supergradients
    of C_i H_s (notes/seed_001 sec. 1), and exact ties are not rare: where
    the hinge optimum has w = 0 (e.g. one class weighing far more)
    every margin is +-b, and with b = 1 and s = -1 a whole class sits at s.
    With a strict z < s, solver noise put such ties on either side, and
    screening on and off, or a path and a single C, took different outlier
    sequences.

    The slack alone does not cover the noise: LIBSVM's stopping rule bounds
    the free samples' gradients to tol, but a sample at its bound sees their
    errors through the kernel, amplified (up to 30 tol at ties on random
    problems).  ``cccp`` therefore re-solves a step whose margins lie near
    the edge s - tol (``_refine_near_ties``, at tol <= 1e-6) before it
    calls this."""
    return np.where(margins < s - slack, C_i, 0.0)


# The tie rule needs margins whose error is below their distance to the
# edge s - tol.  tol does not bound that error: LIBSVM's stopping rule bounds
# the free samples' gradients, and a sample at its bound sees their residuals
# through the kernel, amplified (at most 30 tol at ties, and 110 tol at 99%
# of the steps, against exact CCCP on 1500 random problems).  The gap-safe
# ball bounds it, but by sqrt(gap) ||phi_i||, with a gap first order in tol:
# 1e3-1e7 times too wide to serve as the tie band or as the reason to
# re-solve (docs/ramp_screening.md, "Ties at s").  So the edge stays at
# s - tol in every run, and a step with margins within TIE_WINDOW tol of it
# is re-solved 10 times tighter, at most TIE_ROUNDS times, each margin's
# change serving as its error (about 9 times the error left when SMO
# converges linearly).  Only at tol <= TIE_REFINE_TOL, where the window is
# small against the margins' unit and a re-solve is rare (1 step of 138 on
# bench_ramp's grid at 1000 rows, tol 1e-6): at train_ramp's default 1e-3
# nearly every step was re-solved (+16-20% time at 5000 rows), for decisions
# that a solve to 1e-3 does not promise.
TIE_WINDOW = 100.0
TIE_ROUNDS = 3
TIE_REFINE_TOL = 1e-6


def step_margins(result, signs):
    """The margins z_i = y_i f(x_i) of an inner solve's ``result``: Q (beta -
    mu) = G + 1 (the inner problem's p = -1 - Q mu), so z = G + 1 + y b
    with b = -rho."""
    return result.grad + 1.0 - signs * result.rho


# A CCCP step's solver counters, summed over its solve and re-solves
STEP_COUNTERS = ("n_iter", "work_select", "work_reconstruct", "work_gbar", "n_screens",
                 "n_swaps")


def _refine_near_ties(resolve, result, signs, s, tol, budget):
    """The step's solution to decide mu from (``outlier_weights`` with
    slack = tol): ``result`` itself unless tol <= TIE_REFINE_TOL and a
    margin lies within TIE_WINDOW tol of the edge s - tol.  Then it is
    re-solved, ``resolve(result, target, max_iter)`` -> (result, put_back)
    warm from ``result``, 10 times tighter each round, until every such
    margin is farther from the edge than it moved in the last round, after
    TIE_ROUNDS rounds, at the gradient's round-off, or when the ``budget``
    of iterations is spent (None: each re-solve has the solver's own cap).

    Returns (result, runs): the last solution that reached its tolerance,
    and every re-solve's (result, put_back), for the step's counters."""
    runs = []
    if result.status != "optimal" or tol > TIE_REFINE_TOL:
        return result, runs
    margins = step_margins(result, signs)
    edge = s - tol
    near = np.abs(margins - edge) <= TIE_WINDOW * tol
    # below the violation reached (a solve may stop well under tol), so
    # that each round does work and its change estimates the error
    target = min(tol, result.violation)
    while near.any() and len(runs) < TIE_ROUNDS and (budget is None or budget > 0):
        target /= 10.0
        # the gradient's own floor (_rules._gradient_floor), with room
        if target < 100.0 * gradient_floor(float(np.abs(result.grad).max())):
            break
        refined, put_back = resolve(result, target, budget)
        runs.append((refined, put_back))
        if budget is not None:
            budget -= refined.n_iter
        if refined.status != "optimal":
            break
        new_margins = step_margins(refined, signs)
        near &= np.abs(new_margins - edge) <= np.abs(new_margins - margins)
        result, margins = refined, new_margins
    return result, runs


class RampResult:
    """A trained ramp-loss SVM and the trace of its CCCP loop.

    Attributes
    ----------
    model : BinaryModel
        f(x) = sum_j dual_coef_j K(x_j, x) + intercept.
    n_outer : int
        CCCP steps (inner problems solved).
    converged : bool
        True when mu stopped changing before max_outer, at an inner solve
        that reached the tolerance (a solve stopped at max_iter or by
        round-off certifies no fixed point).
    objective : ndarray
        J(w, b) after each step: non-increasing up to each inner problem's
        duality gap (the inner solves stop at tol; a rise beyond it stops
        the loop with a warning).
    model_step : int
        The step whose solution is ``model``: the last one, except when the
        loop stopped on a rise of J or on a cycle of outlier sets, where it
        is the step of the lowest J.
    status : ndarray of str
        Per step, the inner solve's status ("optimal", "max_iter" or
        "round_off", as ``_solver.SolveResult.status``).
    n_outliers : ndarray
        #{mu_i > 0} used by each step: samples, not weights (a sample of
        weight k counts once; one of weight 0 has mu_i = C_i = 0 and is
        never an outlier).
    screened_zero, screened_bound, frozen, put_back, n_iter : ndarray of int
        Per step: samples fixed at beta = 0 / beta = C_i by screening at the
        warm start, samples frozen by screening during the solve (with
        re-solves, the most frozen during one of them), samples put back (0
        when the rules are right), SMO iterations (``max_iter`` bounds
        them, re-solves included).
    n_refine : ndarray of int
        Per step, the re-solves that CCCP's tie rule asked for: 10 times
        tighter each, when tol <= 1e-6 and a margin lay within 100 tol of
        s - tol (``outlier_weights``, ``_refine_near_ties``).  Their
        iterations and work are in the step's counters, and the step's
        solution is the last of them that reached its tolerance (one that
        reached max_iter is dropped, with a warning).
    screen_seconds, solve_seconds : ndarray
    work_select, work_reconstruct, work_gbar, n_screens, kernel_evals, n_swaps : ndarray of int
        Per step, diagnostics of the solve: the solver's work counters
        (``SolveResult``), rule evaluations, kernel values computed, position
        swaps (each reorders the cached kernel columns).
    mu : ndarray
        The final outlier weights, mu_i = C_i or 0.
    outlier_history : list of ndarray
        Per step, the indices of the samples treated as outliers (mu_i > 0).
    """

    def __init__(self, model, trace, converged, mu, model_step):
        self.model = model
        self.converged = converged
        self.model_step = model_step
        self.mu = mu
        self.outlier_history = [step["outliers"] for step in trace]
        for name in ("objective", "n_outliers", "screened_zero", "screened_bound", "frozen",
                     "put_back", "n_iter", "screen_seconds", "solve_seconds",
                     "work_select", "work_reconstruct", "work_gbar", "n_screens",
                     "kernel_evals", "n_swaps", "status", "n_refine"):
            setattr(self, name, np.array([step[name] for step in trace]))
        self.n_outer = len(trace)

    def __repr__(self):
        # the returned model's step: after a rise of J or a cycle it is not
        # the last one, whose J the loop rejected
        k = self.model_step
        return (f"RampResult(n_outer={self.n_outer}, converged={self.converged}, "
                f"model_step={k}, objective={float(self.objective[k])!r}, "
                f"n_outliers={self.n_outliers[k]})")


def next_step_start(Q, beta, grad, mu, new_mu, q_mu, signs, lo, C_i, start=None,
                    movable=None):
    """The warm start of the CCCP step at outlier weights ``new_mu``, after
    the step at ``mu`` that ended at ``beta`` with gradient ``grad``.

    ``start`` (default: beta) with the equality y'beta = y'new_mu restored
    by moving as few ``movable`` entries as possible (default: all).  In
    place, by the columns of the entries that changed: ``grad`` becomes the
    start's gradient, G' = G + Q (d_beta - d_mu) (skipped if None: the
    solver computes it), and ``q_mu`` becomes Q new_mu.  Returns the start.
    """
    movable = np.ones(beta.shape[0], dtype=bool) if movable is None else movable
    repaired = repair_equality(beta if start is None else start, signs, lo, C_i, movable,
                               float(signs @ new_mu))
    if repaired is None:
        raise RuntimeError("CCCP: no feasible point for the next step "
                           "(cannot happen for valid outlier weights)")
    delta_beta, delta_mu = repaired - beta, new_mu - mu
    if grad is not None:
        changed = np.flatnonzero((delta_beta != 0) | (delta_mu != 0))
        Q.add_columns(changed, delta_beta[changed] - delta_mu[changed], grad)
    flipped = np.flatnonzero(delta_mu)
    Q.add_columns(flipped, delta_mu[flipped], q_mu)
    return repaired


def cccp(problem, C, s, *, screening, tol, shrinking, max_iter, max_outer,
         beta0=None, grad0=None, progress=None, warning=ConvergenceWarning, stacklevel=3):
    """The CCCP loop on one problem at one C.

    ``beta0``/``grad0`` may carry the hinge SVM's solution at C (the first
    step, mu = 0), e.g. from a path; otherwise the first step starts at 0.
    ``progress(step, objective, n_outliers)``, if given, sees every step.
    ``warning``, ``stacklevel``: the category of its convergence warnings
    (``RampSVC``'s is also scikit-learn's ConvergenceWarning) and the frame
    they name (3: the caller of cccp's caller).
    Returns (beta, mu, intercept, trace, converged, step), ``step`` the
    index in ``trace`` of the step whose solution is returned.
    """
    n = problem.n
    y, Q = problem.signs, problem.Q
    C_i = problem.hi_unit * C
    lo = np.zeros(n)
    mu = np.zeros(n)
    beta = np.zeros(n) if beta0 is None else beta0.copy()
    base_p = -np.ones(n)
    # G = Q beta + p with p = -1 - Q mu; at the start mu = 0.
    grad = None if grad0 is None else grad0.copy()
    trace = []
    previous_J = np.inf
    # (J, beta, mu, intercept, grad, step) of the lowest J
    best = (np.inf, None, None, None, None, None)
    seen = set()                        # the outlier sets used so far
    converged = False
    intercept = 0.0
    # p = -1 - Q mu; Q mu is kept as q_mu, updated by the columns of the
    # samples whose mu flips.
    q_mu = np.zeros(n)
    for step in range(max_outer):
        p = base_p - q_mu
        # Screening runs inside the solver (_rules._gap_safe_flags): Rule A of
        # paper 001 (eqs. 20-21), made safe for the intercept by the count,
        # first at the repaired warm start (the propagation of paper 001
        # sec. 4, in the form notes/seed_001 sec. 2.5 shows dominates eqs.
        # 26-27), then during the solve; only samples already at their
        # certified bound are frozen (pitfall 6).
        # A warm start (the last step's beta, or the hinge optimum handed in)
        # shrinks first after WARM_FIRST_SHRINK iterations, as on the path:
        # only the samples whose mu flipped moved, so most variables can be
        # set aside at once.  bench_ramp's grid, shrink+screen, 200 against
        # LIBSVM's 1000, CPU time, best of 2: geometric mean 0.94 over the
        # 36 cells at 5000 rows (0.96 at 2000), objectives within 2.1e-8
        # relative; the select work fell by up to 3x (letter, gamma 0.05,
        # C 10: 155M -> 50M), kernel values within 0.5% in every cell.
        warm = {} if grad is None else dict(first_shrink=WARM_FIRST_SHRINK)
        rules = screening.solver_options(C_i, mu) if screening else {}
        solve_start = time.perf_counter()
        kernel_evals = Q.kernel_evals
        result, put_back = solve_reduced(
            Q, p, lo, C_i, beta, y=y, grad0=grad, tol=tol, shrinking=shrinking,
            max_iter=max_iter, **warm, **rules)
        screened = (result.start_frozen_lower, result.start_frozen_upper)
        frozen = int(result.n_frozen) - sum(screened)
        counts = {name: getattr(result, name) for name in STEP_COUNTERS}
        screen_seconds = result.screen_seconds

        def resolve(start, target, budget):
            return solve_reduced(Q, p, lo, C_i, start.alpha, y=y, grad0=start.grad,
                                 tol=target, shrinking=shrinking, max_iter=budget,
                                 first_shrink=WARM_FIRST_SHRINK, **rules)

        # max_iter bounds the step, re-solves included.  (A budget scaled
        # by the step's own solve starved the warm steps of a path, which
        # take few iterations: their re-solves were dropped, and the path
        # took other outliers than train_ramp.)
        result, runs = _refine_near_ties(resolve, result, y, s, tol,
                                         None if max_iter is None
                                         else max_iter - counts["n_iter"])
        if runs and runs[-1][0].status != "optimal":
            last = runs[-1][0]
            warnings.warn(f"C={C:g}, CCCP step {step}: the re-solve near the ties at s "
                          f"stopped short ({stopped_short(last.status, last.max_iter)}); "
                          "mu is decided on the margins solved to tol",
                          warning, stacklevel=stacklevel)
        n_refine = 0
        for run, run_put_back in runs:
            n_refine += run.status == "optimal"
            put_back += run_put_back
            # the most frozen by one of the step's solves: each re-solve
            # freezes much of what the one before it had (a sum exceeded n)
            frozen = max(frozen, int(run.n_frozen) - run.start_frozen_lower
                         - run.start_frozen_upper)
            screen_seconds += run.screen_seconds
            for name in STEP_COUNTERS:
                counts[name] += getattr(run, name)
        solve_seconds = time.perf_counter() - solve_start - screen_seconds
        if result.status != "optimal":
            # "round_off" too (1308861), which the warning had called max_iter
            warnings.warn(f"C={C:g}, CCCP step {step}: "
                          f"{stopped_short(result.status, result.max_iter)}",
                          warning, stacklevel=stacklevel)
        beta, grad = result.alpha, result.grad
        intercept = -result.rho
        # ||w||^2 = (beta - mu)'Q(beta - mu) = (beta - mu)'(G + 1)
        coef = beta - mu
        margins = step_margins(result, y)
        J = 0.5 * float(coef @ (grad + 1.0)) + float(np.sum(C_i * ramp_loss(margins, s)))
        trace.append(dict(objective=J, n_outliers=int(np.count_nonzero(mu)),
                          outliers=np.flatnonzero(mu),
                          screened_zero=screened[0], screened_bound=screened[1],
                          frozen=frozen, put_back=put_back, status=result.status,
                          n_refine=n_refine, kernel_evals=Q.kernel_evals - kernel_evals,
                          **counts,
                          screen_seconds=screen_seconds, solve_seconds=solve_seconds))
        if progress is not None:
            progress(step + 1, J, trace[-1]["n_outliers"])
        if not np.isfinite(J):
            raise ValueError(f"C={C:g}: the ramp objective is {J} (||w||^2 overflows float64 "
                             "at this C); use a smaller C")
        # Descent holds up to the inner problem's own duality gap
        # (notes/seed_001 §6, pitfall 12): J_{k+1} <= J_k + gap_{k+1}, the gap
        # taken at the intercept J uses.
        inner_gap = gap_at(intercept, beta, grad, lo, C_i, y)
        if J > previous_J + inner_gap + 1e-12 * max(1.0, abs(previous_J)):
            warnings.warn(f"C={C:g}, CCCP step {step}: the ramp objective rose from "
                          f"{previous_J:.10g} "
                          f"to {J:.10g}, more than the inner duality gap {inner_gap:.3g}; "
                          f"stopping at the lowest objective {best[0]:.10g}",
                          warning, stacklevel=stacklevel)
            _, beta, mu, intercept, grad, chosen = best
            break
        previous_J = J
        chosen = step
        if J < best[0]:
            best = (J, beta, mu, intercept, grad.copy(), step)  # grad is updated in place
        seen.add(np.packbits(mu > 0).tobytes())
        new_mu = outlier_weights(margins, C_i, s, slack=tol)
        if np.array_equal(new_mu, mu):
            converged = result.status == "optimal"
            break
        if np.packbits(new_mu > 0).tobytes() in seen:
            # In exact arithmetic J falls strictly until mu repeats itself;
            # a return to an earlier outlier set is a cycle through solutions
            # equal to the solver's tolerance (each rise within the inner
            # gap, checked above), which would run to max_outer.  End at the
            # cycle's lowest objective.
            warnings.warn(f"C={C:g}, CCCP step {step}: the outliers return to an earlier set "
                          f"(a cycle at tol={tol:g}); ending at the lowest objective "
                          f"{best[0]:.10g}",
                          warning, stacklevel=stacklevel)
            _, beta, mu, intercept, grad, chosen = best
            break
        if step + 1 == max_outer:
            warnings.warn(f"C={C:g}: CCCP did not converge in max_outer={max_outer} steps",
                          warning, stacklevel=stacklevel)
            break
        beta, mu = next_step_start(Q, beta, grad, mu, new_mu, q_mu, y, lo, C_i), new_mu
    # ||w||^2 = (beta - mu)'Q(beta - mu), against its round-off (the
    # quadratic form's and the gradient's, as the rules bound them): compared
    # with the objective, at C = 1e20 (J = 1.3e18) a w with 100 support
    # vectors and decision values from -8 to 8 was called 0
    coef = beta - mu
    w_squared = float(coef @ (grad + 1.0)) if grad is not None else 0.0
    l1 = float(np.abs(coef).sum())
    noise = quadratic_roundoff(problem.kernel.roundoff_scale(), l1, l1) + l1 * gradient_floor(
        float(np.abs(grad).max()) if grad is not None else 0.0)
    if w_squared <= 10.0 * noise:
        why = ("every margin sample is an outlier" if np.any(mu > 0)
               else "the hinge optimum itself")
        # The bound is a worst case over the kernel's inputs (an RBF's
        # 1 + 4 gamma max ||x||^2): on data with large feature offsets a real
        # w can sit below 10 times it, so only w^2 below the bound itself is
        # called 0 outright
        if w_squared <= noise:
            what = f"w = 0 ({why}): the model is constant"
        else:
            what = (f"||w||^2 = {w_squared:.3g}, within 10 times its round-off bound "
                    f"{noise:.3g}: the model may be constant")
        warnings.warn(f"C={C:g}: CCCP ended with {what}", UserWarning, stacklevel=stacklevel)
    return beta, mu, intercept, trace, converged, chosen


def _check_s(s):
    # numbers.Real, as C is checked: a Fraction was refused here only
    if isinstance(s, bool) or not isinstance(s, numbers.Real):
        raise TypeError(f"s must be a real number <= 0, got {s!r}")
    s = float(s)
    if not np.isfinite(s) or s > 0:
        raise ValueError(f"s must be finite and <= 0 (the ramp's cut-off), got {s!r}")
    return s


def _build(X, y, kernel, gamma, coef0, degree, tol, cache_size, max_iter, class_weight,
           sample_weight):
    _, kernel, degree, coef0, tol, cache_size, max_iter = check_parameters(
        C=1.0, kernel=kernel, degree=degree, coef0=coef0, tol=tol, cache_size=cache_size,
        max_iter=max_iter)
    X = check_precomputed(X) if kernel == "precomputed" else check_X(X)
    y = check_labels(y, X.shape[0])
    classes, signs = binary_signs(y)
    gamma = resolve_gamma(gamma, X, kernel)
    # C_i / C = class_weight[y_i] * sample_weight_i, as fit_binary's and
    # train_path's boxes
    hi_unit = class_bounds(y, classes, 1.0, class_weight, sample_weight)
    params = dict(kernel=kernel, gamma=gamma, coef0=coef0, degree=degree,
                  cache_size=cache_size, fit_intercept=True)
    return X, classes, signs, hi_unit, params, tol, max_iter


def _ramp_model(X, classes, signs, beta, mu, intercept, C, params, trace, model_step):
    """The BinaryModel of CCCP's step ``model_step`` (its objective_ is that
    step's ramp objective J, its status_ that step's inner solve's)."""
    coef = signs * (beta - mu)
    support = np.flatnonzero(coef != 0)
    sv = np.empty((0, 0)) if params["kernel"] == "precomputed" else X[support]
    return BinaryModel(
        classes=classes, kernel=params["kernel"], gamma=params["gamma"],
        coef0=params["coef0"], degree=params["degree"], C=C, fit_intercept=True,
        support=support, support_vectors=sv, dual_coef=coef[support], intercept=intercept,
        alpha=coef, objective=trace[model_step]["objective"], duality_gap=np.nan,
        n_iter=int(sum(step["n_iter"] for step in trace)),
        # that inner solve's: "max_iter" if it stopped short of tol
        status=trace[model_step]["status"],
        n_features=X.shape[1])


def _weight_names(sample_weight):
    """The weight arguments an overflow of C_i is named by."""
    return "class_weight" if sample_weight is None else "class_weight and sample_weight"


def _check_max_outer(max_outer):
    if isinstance(max_outer, bool) or not isinstance(max_outer, (int, np.integer)) \
            or max_outer < 1:
        raise ValueError(f"max_outer must be a positive integer, got {max_outer!r}")


def train_ramp(X, y, C=1.0, s=0.0, *, kernel="rbf", gamma=None, coef0=0.0, degree=3,
               class_weight=None, sample_weight=None, screening="safe", tol=1e-3, shrinking=True,
               cache_size=100.0, max_iter=None, max_outer=50, verbose=False):
    """Fit a ramp-loss SVM (robust to mislabelled points) by CCCP.

    Minimises J(w, b) = 1/2 ||w||^2 + sum_i C_i R_s(y_i f(x_i)) with
    C_i = C * class_weight[y_i] * sample_weight_i, the boxes of
    ``fit_binary``: each sample's hinge and its concave part (CCCP's
    mu_i = C_i where y_i f(x_i) < s) are scaled by its own C_i.

    Parameters
    ----------
    X, y : training data and two-class labels.
    C : float
    s : float <= 0, default=0
        Where the ramp flattens: a sample with margin below s costs
        C_i (1 - s) and stops pulling on the model.
    kernel, gamma, coef0, degree, class_weight, tol, shrinking, cache_size,
    max_iter : as ``fit_binary``.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Per-sample multipliers of C, each finite and >= 0 (as
        ``fit_binary``'s; the array is not modified).  A weight k > 0 counts
        as k copies of the sample; a weight 0 gives the box [0, 0], so the
        sample has no influence on the model (gamma="scale" still reads
        its row of X, as ``fit_binary``'s does).
    screening : {"safe"} or None, default="safe"
        Safe screening inside each inner solve and at each warm start
        (paper 001's rules, made safe for the intercept).
    max_outer : int, default=50
        Cap on CCCP steps; reaching it warns.
    verbose : bool, default=False
        Print a line on stderr after each CCCP step (its objective and the
        number of outliers).

    Returns
    -------
    RampResult
    """
    return _train_ramp(X, y, C, s, kernel=kernel, gamma=gamma, coef0=coef0, degree=degree,
                       class_weight=class_weight, sample_weight=sample_weight,
                       screening=screening, tol=tol,
                       shrinking=shrinking, cache_size=cache_size, max_iter=max_iter,
                       max_outer=max_outer, verbose=verbose, stacklevel=4)


def _train_ramp(X, y, C, s, *, kernel, gamma, coef0, degree, class_weight, sample_weight,
                screening, tol, shrinking, cache_size, max_iter, max_outer, verbose,
                warning=ConvergenceWarning, stacklevel=3):
    """``train_ramp``, its convergence warnings of category ``warning``
    (``cccp``'s ``stacklevel``: 4 names train_ramp's caller)."""
    s = _check_s(s)
    _check_max_outer(max_outer)
    shrinking = check_flag(shrinking, "shrinking")
    verbose = check_flag(verbose, "verbose")
    X, classes, signs, hi_unit, params, tol, max_iter = _build(
        X, y, kernel, gamma, coef0, degree, tol, cache_size, max_iter, class_weight,
        sample_weight)
    if isinstance(C, bool) or not np.ndim(C) == 0:
        raise TypeError(f"C must be one number (train_ramp_path takes a grid), got {C!r}")
    C = float(check_C_grid(C)[0])     # as fit_binary's and the ramp path's C
    # class_bounds saw C = 1: the boxes at this C are checked here
    check_box_overflow(C, hi_unit, _weight_names(sample_weight))
    problem = _Problem(X, signs, hi_unit, **params)
    rule = make_ramp_screening(screening, problem)
    beta, mu, intercept, trace, converged, step = cccp(
        problem, C, s, screening=rule, tol=tol, shrinking=shrinking, max_iter=max_iter,
        max_outer=max_outer, progress=_step_printer(C) if verbose else None, warning=warning,
        stacklevel=stacklevel)
    model = _ramp_model(X, classes, signs, beta, mu, intercept, C, params, trace, step)
    return RampResult(model, trace, converged, mu, step)


def train_ramp_path(X, y, C, s=0.0, *, kernel="rbf", gamma=None, coef0=0.0, degree=3,
                    class_weight=None, sample_weight=None, screening="safe", tol=1e-3,
                    shrinking=True, cache_size=100.0, max_iter=None, max_outer=50,
                    verbose=False):
    """``train_ramp`` at every C of an increasing grid, sharing one kernel
    cache (``verbose``: a progress bar over the grid on stderr, tqdm if
    installed).

    CCCP's first step at C is the hinge SVM at C, so the hinge solutions come
    from the warm-started, screened path of ``train_path`` and each CCCP
    loop starts from there (its first step then needs no iteration).  At
    tol <= 1e-6 (``TIE_REFINE_TOL``, where margins near s are re-solved)
    the results equal independent ``train_ramp`` calls to the tolerance:
    the same CCCP steps and outlier sets, solutions within tol (the warm
    starts differ).  At a looser tol a margin within about tol of s can fall
    on either side in the two runs, and the outlier sets may then part (at
    the default 1e-3, diabetes_scale's first 400 rows at C = 1000, s = -1
    ended with 36 outliers on the path and 38 alone).  Not on a symmetric
    precomputed kernel that is indefinite:
    there the hinge problem is not convex, and the path's warm start can
    reach another stationary point (on sigmoid, poly with coef0 < 0 and an
    asymmetric precomputed kernel the path solves each C from 0).

    The parameters are ``train_ramp``'s (``sample_weight`` too: the boxes
    C_i = C * class_weight[y_i] * sample_weight_i at each C of the grid),
    with C an increasing grid.

    Returns
    -------
    list of RampResult, one per C.
    """
    s = _check_s(s)
    _check_max_outer(max_outer)
    shrinking = check_flag(shrinking, "shrinking")
    verbose = check_flag(verbose, "verbose")
    X, classes, signs, hi_unit, params, tol, max_iter = _build(
        X, y, kernel, gamma, coef0, degree, tol, cache_size, max_iter, class_weight,
        sample_weight)
    grid = check_C_grid(C)
    check_box_overflow(grid[-1], hi_unit, _weight_names(sample_weight))
    problem = _Problem(X, signs, hi_unit, **params)
    path_rule = make_screening("it" if screening else None, problem, True)
    ramp_rule = make_ramp_screening(screening, problem)
    results = []
    progress, close = _progress_printer(verbose, len(grid), "ramp path")

    def run_cccp(t, C_t, alpha, grad):
        beta, mu, intercept, trace, converged, step = cccp(
            problem, C_t, s, screening=ramp_rule, tol=tol, shrinking=shrinking,
            max_iter=max_iter, max_outer=max_outer, beta0=alpha, grad0=grad)
        model = _ramp_model(X, classes, signs, beta, mu, intercept, C_t, params, trace, step)
        results.append(RampResult(model, trace, converged, mu, step))
        if progress is not None:
            progress(t + 1, C_t)

    try:
        run_path(problem, grid, screening=path_rule, tol=tol, shrinking=shrinking,
                 max_iter=max_iter, keep="summary", on_solution=run_cccp)
    finally:
        close()
    return results


def _step_printer(C):
    """``cccp``'s progress for ``train_ramp(verbose=True)``: a line a step."""
    def show(step, objective, n_outliers):
        print(f"ramp, C = {C:.3g}: step {step}: objective {objective:.10g}, "
              f"{n_outliers} outliers", file=sys.stderr, flush=True)
    return show


class _RampScreening:
    """Safe screening for the CCCP steps, run by the solver itself
    (``_rules._gap_safe_flags``): the gap-safe ball around the current feasible
    point with the intercept count for y'beta = y'mu.  The paper's own rule
    trusts the solver's current b and screens wrongly (notes seed_001
    §2.3); this one never reuses a b.

    ``period``: iterations between two evaluations of the rule while
    nothing is shrunk (the solver doubles it after a poor yield).  The rule
    costs O(m log m) for m movable samples, about as much as a few dozen
    SMO iterations.
    """

    def __init__(self, problem, period=None):
        self.period = int(period) if period else max(50, problem.n // 20)
        self.roundoff_scale = problem.Q.kernel.roundoff_scale()

    def solver_options(self, C_i, mu):
        """``solve``'s keywords for the CCCP step at outlier weights mu:
        the rule's round-off allowances hold for the whole solve, as
        ||beta||_1 <= sum_i C_i there (coef = beta - mu)."""
        # a sum beyond float64 (C near 1e308) makes the allowances infinite
        # and the rule certifies nothing, which is safe: no overflow warning
        with np.errstate(over="ignore"):
            return dict(gap_screening=self.period,
                        **gap_rule_allowances(self.roundoff_scale,
                                              float(C_i.sum() + mu.sum()), C_i))


def make_ramp_screening(screening, problem):
    if screening is None:
        return None
    if screening != "safe":
        raise ValueError(f"screening must be 'safe' or None, got {screening!r}")
    if not screening_applies(problem, screening):
        return None
    return _RampScreening(problem)
