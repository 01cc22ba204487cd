"""Safe sample screening: the public entry points.

Given a reference solution of the C-SVC dual (any *feasible* alpha_ref, with
its gradient G = Q alpha_ref - 1, at box hi_ref) and a target box
hi = q * hi_ref, ``screen`` returns per-sample bounds
lower_i <= y_i f*(x_i) <= upper_i of the margins at the target optimum, the
samples proved to have alpha*_i = 0 (``screened_zero``, R') or
alpha*_i = hi_i (``screened_bound``, L'), and a safe interval for the
intercept.  ``screen_dome`` does the same for the SSNSV / ESSNSV domes,
which need two references.

Safety, in one line each (derivations in docs/screening.md):
- every rule is safe for an *inexact* feasible reference: the ball radius
  carries the reference's duality gap (bias_screening.md, Thm 4), BT2 needs
  only feasibility (paper 000, NC1 + NC3); the domes, whose papers need
  optimal references (paper 002, Lemma 1), are widened by both references'
  gaps (docs/screening.md sec. 7);
- with an intercept (LIBSVM's model) the rules bound w*'v_i and then the
  intercept by counting (bias_screening.md, sec. 2), weighted when the box
  differs between samples (sec. 2.5); the reference's b is never reused;
- q < 1 (C < C_ref) is allowed for the ball rules (|q - 1|), BT2 and IT.

Trusts: ``ScreeningData`` validates X and y once; the gradients passed with
the references belong to them.  Shapes, the proportionality of the boxes and
the references' feasibility for their box (0 <= alpha <= hi_ref and
y'alpha = 0 with an intercept) are checked here.
"""
import numbers
import time

import numpy as np
import scipy.sparse as sp

from svmscreen._kernels import Kernel, _keep_columns
from svmscreen._validation import (_positive, check_flag, check_parameters, check_precomputed,
                                   check_vector, check_X, resolve_gamma)
from svmscreen import _rules
from svmscreen.objective import Gap, gap_of

__all__ = ["ScreeningData", "ScreeningResult", "ShatState", "screen",
           "screen_dome", "screen_dynamic", "RULES", "DOME_RULES"]

RULES = ("dvi", "bt1", "bt2", "it")
DOME_RULES = ("ssnsv", "essnsv")
# Safety margin of the strict tests l_i > 1 + tau, u_i < 1 - tau (seed_003 note pitfall 5).
DEFAULT_TAU = 1e-9
# Rows of the kernel matrix fetched per block.
ROW_BLOCK = 256


class ScreeningData:
    """Per-dataset quantities every rule reuses (computed once per path).

    Parameters
    ----------
    X : ndarray of shape (n, d), CSR matrix, or (n, n) Gram matrix
        Training data; passed through ``_validation.check_X`` (float64
        C-contiguous, or CSR with int32 sorted indices; copies, never edits).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    kernel, gamma, coef0, degree
        Kernel parameters as for ``Kernel``.  A kernel that need not be
        positive semi-definite (sigmoid, polynomial with coef0 < 0) or a
        precomputed X that is not symmetric is a ValueError: the rules hold
        for PSD kernels only (``train_path`` screens without them).
    fit_intercept : bool
        LIBSVM's model (True) or the bias-free SVM of the papers.
    centre : bool
        Centring tightening of the intercept count (bias_screening.md,
        sec. 2.4a), on by default.  The uncentred box is always used too.
    centre_sample : int
        The centre is the mean of phi over all samples when n <= centre_sample,
        else over a fixed random subsample of that size (equally safe, O(n m)
        kernel values instead of O(n^2)).
    random_state : int
        Seed of that subsample.
    qmatrix : QMatrix or None
        The solver's cached Q of the same data and labels (a path passes
        it): kernel values then come from its column cache, which the solves
        keep warm, instead of being computed again.  X and y are then taken
        as checked (the path's, which ``check_X`` and ``check_labels`` have
        passed).

    Attributes
    ----------
    setup_seconds : float
        Time of the once-per-dataset work (kernel diagonal excluded): the
        centred norms.
    """

    def __init__(self, X, y, kernel="rbf", gamma=1.0, coef0=0.0, degree=3,
                 fit_intercept=True, centre=True, centre_sample=1000,
                 random_state=0, qmatrix=None):
        if qmatrix is None:
            y = np.asarray(y)
            if y.dtype.kind not in "biuf":
                raise TypeError(f"y must be an array of -1/+1 numbers, got dtype {y.dtype}")
            y = np.ascontiguousarray(y, dtype=np.float64)
            if y.ndim != 1 or not np.all((y == 1.0) | (y == -1.0)):
                raise ValueError("y must be a 1-D array of -1/+1 labels")
            _, kernel, degree, coef0, _, _, _ = check_parameters(
                C=1.0, kernel=kernel, degree=degree, coef0=coef0, tol=1.0, cache_size=1.0,
                max_iter=None)
            X = check_precomputed(X) if kernel == "precomputed" else check_X(X)
            gamma = resolve_gamma(gamma, X, kernel)
            _check_psd(X, kernel, coef0)
        else:
            # X and y are the data and signs the solver's QMatrix was built
            # on, checked then (a one-vs-one path builds this once per pair
            # of classes: the checks of y were a tenth of its set-up)
            y = np.ascontiguousarray(y, dtype=np.float64)
        kernel = str(kernel)
        if (isinstance(centre_sample, bool) or not isinstance(centre_sample, numbers.Integral)
                or centre_sample < 1):
            raise ValueError(f"centre_sample must be a positive integer, got {centre_sample!r}")
        self.linear = kernel == "linear"
        # The linear form's w and centre are d-vectors: on the columns in
        # use they cost O(nnz), not O(d) (hashed features, an index at 2e9)
        self.X = _columns_in_use(X) if self.linear and sp.issparse(X) else X
        self.y = y
        self.n = y.shape[0]
        self.kernel_name = kernel
        self.qmatrix = qmatrix
        if qmatrix is not None:
            self.kernel = qmatrix.kernel
        else:
            self.kernel = Kernel(X, kernel, float(gamma), float(coef0), int(degree))
        if self.kernel.n_samples != self.n:
            raise ValueError(f"X has {self.kernel.n_samples} samples, y has {self.n}")
        self.fit_intercept = check_flag(fit_intercept, "fit_intercept")
        self.centre = check_flag(centre, "centre") and self.fit_intercept
        self.kernel_diag = self.kernel.diagonal()
        self.norms = np.sqrt(np.maximum(self.kernel_diag, 0.0))      # ||phi_i|| = ||z_i||
        # >= |K_ij|, and the unit of the rules' round-off allowances
        self.roundoff_scale = self.kernel.roundoff_scale()
        self._centre_sample = int(centre_sample)
        # the generator only when a subsample is drawn (n > centre_sample): a
        # one-vs-one path builds this per pair, and pairs are mostly smaller
        self._random_state = random_state
        self._centre_index = None
        self._centred_norms = None
        start = time.perf_counter()
        if self.centre:
            self.centred_norms                                    # O(n m) once per path
        self.setup_seconds = time.perf_counter() - start
        self.workspace = np.empty((_rules.WORK_ROWS, self.n))   # scratch of fused_margins

    # -- products with Q -----------------------------------------------------
    def scores(self, coef):
        """g_i = sum_j coef_j y_j K(x_j, x_i) = w(coef)'phi_i for every i.

        Linear kernel: explicit w = X'(y coef) and X w, O(nnz) (paper 003,
        sec. 3).  Other kernels: kernel rows of the nonzero coefficients.
        """
        coef = np.asarray(coef, dtype=np.float64)
        signed = self.y * coef
        if self.linear:
            return self.linear_scores(self.weight_vector(coef))
        nz = np.flatnonzero(signed)
        if self.qmatrix is not None:
            # w'phi_i = y_i (Q coef)_i, from the solver's cached columns
            return self.y * self.qmatrix.add_columns(nz, coef[nz], np.zeros(self.n))
        out = np.zeros(self.n)
        for start in range(0, nz.size, ROW_BLOCK):
            rows = nz[start:start + ROW_BLOCK]
            out += self.kernel.rows(rows).T @ signed[rows]
        return out

    def weight_vector(self, coef):
        """Linear kernel only: w = sum_j coef_j y_j x_j (dense d-vector)."""
        signed = self.y * np.asarray(coef, dtype=np.float64)
        if sp.issparse(self.X):
            X = self.X
            return _rules.csr_transpose_times(X.indptr, X.indices, X.data,
                                              signed, X.shape[1])
        return self.X.T @ signed

    def linear_scores(self, w):
        """Linear kernel only: X w, O(nnz)."""
        if sp.issparse(self.X):
            X = self.X
            return _rules.csr_times(X.indptr, X.indices, X.data,
                                    np.ascontiguousarray(w, dtype=np.float64))
        return self.X @ w

    def q_times(self, coef):
        """(Q coef)_i = y_i g_i(coef)."""
        return self.y * self.scores(coef)

    def add_q_columns(self, index, coef, out):
        """out += sum_k coef[k] Q[:, index[k]] (in place; returns out): the
        solver's cached columns when there are any (kernel form), else
        ``q_times`` of the scattered coefficients."""
        if self.qmatrix is not None and not self.linear:
            return self.qmatrix.add_columns(index, coef, out)
        full = np.zeros(self.n)
        full[index] = coef
        out += self.q_times(full)
        return out

    def refresh_grad(self, alpha, grad, rows):
        """``grad`` (= Q alpha - 1) with the entries ``rows`` recomputed.

        After a screened solve the solver's gradient is stale for the samples
        it dropped; the next rule needs Q alpha for all of them (seed_003
        note sec. 3 caveat).  Cost: |rows| x #SV kernel values (O(nnz) for
        the linear kernel, which recomputes everything).
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        out = np.array(grad, dtype=np.float64)
        rows = np.asarray(rows, dtype=np.intp)
        if rows.size == 0:
            return out
        if self.linear:
            out[rows] = self.q_times(alpha)[rows] - 1.0
            return out
        signed = self.y * alpha
        support = np.flatnonzero(signed)
        scores = np.zeros(rows.size)
        for start in range(0, rows.size, ROW_BLOCK):
            block = rows[start:start + ROW_BLOCK]
            if support.size:
                scores[start:start + block.size] = self.kernel.rows(block, support) @ signed[support]
        out[rows] = self.y[rows] * scores - 1.0
        return out

    # -- centring (bias_screening.md, sec. 2.4a) -------------------------------
    @property
    def centre_index(self):
        if self._centre_index is None:
            if self.n <= self._centre_sample:
                self._centre_index = np.arange(self.n)
            else:
                self._centre_index = np.sort(np.random.default_rng(self._random_state).choice(
                    self.n, self._centre_sample, replace=False))
        return self._centre_index

    @property
    def centred_norms(self):
        """||phi_i - c||, c = mean of phi over ``centre_index``:
        ||phi_i - c||^2 = K_ii - 2 mean_{j in S} K_ij + mean_{S x S} K."""
        if self._centred_norms is None:
            S = self.centre_index
            if self.linear:
                X = self.X
                c = np.asarray(X[S].mean(axis=0)).ravel()
                if sp.issparse(X):
                    sq = _rules.csr_centred_sq_norms(X.indptr, X.indices, X.data, c)
                else:
                    sq = np.einsum("ij,ij->i", X - c, X - c)
                self._centred_norms = np.sqrt(np.maximum(sq, 0.0))
            else:
                if self.qmatrix is not None:
                    # sum_{j in S} K_ij = y_i sum_j y_j Q_ij from the solver's
                    # columns, which its first solve then finds cached (the
                    # ~150-row pairs of a one-vs-one path spent a fifth of
                    # their time here, computing the kernel apart)
                    row_mean = _rules.q_row_means(self.qmatrix, self.y, S)
                else:
                    row_sum = np.zeros(self.n)
                    for start in range(0, S.size, ROW_BLOCK):
                        rows = S[start:start + ROW_BLOCK]
                        row_sum += self.kernel.rows(rows).sum(axis=0)
                    row_mean = row_sum / S.size
                self._centred_norms = _rules.centred_norms(self.kernel_diag, row_mean, S)
        return self._centred_norms

    @property
    def centring(self):
        """(centred_norms, centre_index) as the typed routines take them: the
        centred set, or (norms, empty index) when centring is off."""
        if self.centre:
            return self.centred_norms, self.centre_index
        return self.norms, _NO_INDEX

    def reference_gap(self, alpha, grad, hi):
        """The duality gap (``objective.Gap``) of a feasible reference alpha
        at box hi, grad = Q alpha - 1 (the rules' C-SVC: p = -1, lo = 0)."""
        n = self.n
        return gap_of(alpha, grad, -np.ones(n), np.zeros(n), hi,
                      self.y if self.fit_intercept else None)

    def dvi_path_step(self, tau=DEFAULT_TAU):
        """The (gap-)DVI rule of a path step as one typed call
        (``_rules.DviPathStep``, the step of ``screen(rule="dvi")``)."""
        centred_norms, centre_index = self.centring
        return _rules.DviPathStep(self.y, self.norms, centred_norms, centre_index,
                                  self.fit_intercept, self.roundoff_scale, tau)

    def dome_path_step(self, rule, tau=DEFAULT_TAU):
        """The SSNSV / ESSNSV rule of a path step as one typed call
        (``_rules.DomePathStep``; ``screen_dome`` runs it once)."""
        if rule not in DOME_RULES:
            raise ValueError(f"rule must be one of {DOME_RULES}, got {rule!r}")
        centred_norms, centre_index = self.centring
        return _rules.DomePathStep(self.y, self.norms, centred_norms, centre_index,
                                   self.fit_intercept, rule == "essnsv", self.roundoff_scale, tau)

    def two_ball_path_step(self, rule, tau=DEFAULT_TAU, budget=None):
        """The BT2 / IT rule of a path step as one typed call
        (``_rules.TwoBallPathStep``, which carries s-hat and Q s from one call
        to the next; ``screen(rule="bt2" | "it")`` runs it once).
        ``budget``: at most this many changes of s-hat a step (kernel form),
        None for the argmax s."""
        if rule not in ("bt2", "it"):
            raise ValueError(f"rule must be 'bt2' or 'it', got {rule!r}")
        centred_norms, centre_index = self.centring
        # the solver's columns directly when there are any (kernel form): the
        # step calls this once per C, and a Python-level dispatch is per call
        add_columns = (self.qmatrix.add_columns if self.qmatrix is not None and not self.linear
                       else self.add_q_columns)
        return _rules.TwoBallPathStep(
            self.y, self.norms, centred_norms, centre_index, self.fit_intercept,
            self.roundoff_scale, tau, rule == "it", add_columns,
            self.X if self.linear else None,
            # n changes are all there are; a larger int would overflow Py_ssize_t
            -1 if budget is None else min(int(budget), self.n))


def _check_psd(X, kernel, coef0):
    """Refuse what ``train_path`` screens without (``path.screening_applies``):
    a kernel that need not be positive semi-definite (sigmoid, polynomial
    with coef0 < 0) or a precomputed one that is not symmetric.  The rules
    bound w* in the kernel's feature space, which such a kernel does not
    have: on sigmoid kernels they screened samples onto the wrong side of the
    global optimum.  A symmetric precomputed kernel is taken to be PSD, as
    on the path (testing it costs an eigendecomposition)."""
    # path imports this module inside a function; importing it here, at
    # the top, would load the path for every user of the rules' helpers
    from svmscreen.path import SYMMETRY_RTOL, _asymmetry, may_be_indefinite
    if may_be_indefinite(kernel, coef0):
        raise ValueError(f"kernel: safe screening needs a positive semi-definite kernel, "
                         f"which kernel={kernel!r} with coef0={coef0:g} need not be")
    if kernel == "precomputed":
        asymmetry = _asymmetry(X)
        if asymmetry > SYMMETRY_RTOL:
            raise ValueError(f"X: safe screening needs a symmetric kernel matrix; the "
                             f"precomputed X differs from its transpose by {asymmetry:.3g} "
                             "of its largest entry")


def _columns_in_use(X):
    """CSR X on the columns that hold a nonzero (``_keep_columns``, as the
    kernels do for wide data): X'v, X w and ||x_i - c|| are the same on
    those columns alone (a dropped column adds exact zeros to each sum)."""
    used = np.unique(X.indices)
    if used.size == X.shape[1]:
        return X
    return _keep_columns(X, used)


class ShatState:
    """s-hat of BT2/IT and Q (s-hat * hi), carried along a path so that Qs is
    updated by the columns whose s_j changed (paper 000, sec. IV-E, Table I).

    Attributes
    ----------
    shat : bool ndarray of shape (n,)
    qs : ndarray of shape (n,)
        Q (shat * hi).
    hi : ndarray of shape (n,)
        The box ``qs`` was computed for.
    error : float
        A bound on the error of ``qs`` beyond the kernel's round-off
        (``_rules.TwoBallPathStep.state_error``); a step does not reuse a
        state whose error its allowances do not cover.
    """

    def __init__(self, shat, qs, hi, error=0.0):
        self.shat = shat
        self.qs = qs
        self.hi = hi
        self.error = error


class ScreeningResult:
    """Output of one screening step.

    Attributes
    ----------
    lower, upper : ndarray of shape (n,)
        Bounds of the margin y_i f*(x_i) at the target optimum.
    screened_zero : bool ndarray
        R': alpha*_i = 0 in every optimum (drop the sample).
    screened_bound : bool ndarray
        L': alpha*_i = hi_i in every optimum (fix the sample at its bound).
    b_interval : tuple of float
        Safe interval for the intercept b* (b = -rho); (0, 0) bias-free.
    seconds : float
        Wall time of the rule (everything after the reference's Q alpha).
    rule : str
    radius : float
        Radius of the (gap-)DVI ball (0 for the domes).
    gap_ref : float
        Duality gap of the reference used in the radius (the domes: of the
        smaller reference, alpha_a).
    status : dict
        Geometry statuses and flags (e.g. ``"disjoint"``: the inputs were
        inconsistent and a looser fallback was used).
    shat_state : ShatState or None
        For BT2/IT: pass it to the next step of a path.
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    @property
    def n_screened(self):
        return int(self.screened_zero.sum() + self.screened_bound.sum())

    def __repr__(self):
        return (f"ScreeningResult(rule={self.rule!r}, zero={int(self.screened_zero.sum())}, "
                f"bound={int(self.screened_bound.sum())}, b_interval={self.b_interval}, "
                f"seconds={self.seconds:.3g})")


def _box_ratio(hi, hi_ref, name="hi", name_ref="hi_ref"):
    """q with hi = q hi_ref (the rules need proportional boxes: the theta-box
    [0, hi/C] is then C-free, bias_screening.md sec. 2.5)."""
    ratio = hi / hi_ref
    q = float(ratio[0])
    if not np.all(np.abs(ratio - q) <= 1e-12 * q):
        raise ValueError(f"{name} must be a constant multiple of {name_ref}")
    if not q > 0:
        raise ValueError(f"{name} / {name_ref} must be positive, got {q!r}")
    return q


def _check_data(data):
    """The rules' first argument: a ScreeningData (an array here had been an
    AttributeError about ``n``)."""
    if not isinstance(data, ScreeningData):
        raise TypeError(f"data must be a ScreeningData of X and y, got {type(data).__name__}")


def _check_tau(tau):
    return _positive("tau", tau, allow_zero=True)


def _vector(value, n, name):
    """A box as a float64 contiguous (n,) array: ``value`` itself when it
    already is one.  Its values are checked by the typed rule, which takes a
    box [0, 0] for a sample of weight 0 (``_raise_box_error`` says what it
    refused)."""
    if (type(value) is np.ndarray and value.dtype == np.float64 and value.shape == (n,)
            and value.flags.c_contiguous):
        return value
    if np.asarray(value).dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a float or an array of real numbers, got {value!r}")
    try:
        return np.ascontiguousarray(np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)))
    except ValueError:
        raise ValueError(f"{name} must be a float or an array of shape ({n},)") from None


def _as_vector(value, n, name):
    """A box that must be positive everywhere (``screen_dynamic``'s)."""
    arr = _vector(value, n, name)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be positive and finite")
    return arr


def _check_feasible(data, alpha, box, name, box_name, target=0.0):
    """Refuse a reference that is not feasible for its box: 0 <= alpha_i <=
    box_i (to 1e-12 of the box, so a box [0, 0] takes only 0) and, with an
    intercept, y'alpha = target (to 1e-10 of sum_i box_i, as
    ``fit_binary``'s alpha0).  The rules' proofs hold for feasible references only (the gap
    bounds the distance to the optimum only there): an alpha above its box
    had given a too small ball and screened true support vectors."""
    if not np.all(np.isfinite(box)) or np.any(box < 0):
        raise ValueError(f"{box_name} must be non-negative and finite")
    if np.any(alpha < -1e-12 * box) or np.any(alpha > box * (1.0 + 1e-12)):
        raise ValueError(f"{name} must be feasible for {box_name}: "
                         f"0 <= {name}_i <= {box_name}_i for every sample")
    if data.fit_intercept and abs(float(data.y @ alpha) - target) > 1e-10 * max(
            float(box.sum()), abs(target)):
        raise ValueError(f"{name} must be feasible for {box_name}: sum_i y_i {name}_i = "
                         f"{target:g} (the model has an intercept)")


def _raise_box_error(hi_ref, hi, n, name_ref="hi_ref", name="hi"):
    """Say what is wrong with the boxes a typed rule refused (it takes
    proportional boxes, a box [0, 0] in both for a sample of weight 0)."""
    boxes = []
    for value, label in ((hi_ref, name_ref), (hi, name)):
        arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (n,))
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"{label} must be non-negative and finite")
        boxes.append(arr)
    weighted = (boxes[0] > 0) | (boxes[1] > 0)
    if not np.any(weighted):
        raise ValueError(f"{name} and {name_ref} are 0 for every sample")
    if np.any((boxes[0] > 0) != (boxes[1] > 0)):
        raise ValueError(f"{name} and {name_ref} must be 0 at the same samples")
    _box_ratio(boxes[1][weighted], boxes[0][weighted], name, name_ref)
    raise ValueError(f"{name} and {name_ref} must be positive, finite and proportional")


def _statuses(data, status, status_centred):
    """The geometry statuses of the v-sets, named."""
    if not data.fit_intercept:
        return {"margin": status}
    if data.centre:
        return {"plain": status, "centred": status_centred}
    return {"plain": status}


def _intervals(data, b_lo, b_hi, bc_lo, bc_hi):
    """(b_interval, b_interval_centred) as ScreeningResult reports them:
    (0, 0) bias-free, None without centring."""
    return ((b_lo, b_hi) if data.fit_intercept else (0.0, 0.0),
            (bc_lo, bc_hi) if data.centre else None)


def _ball_margins(data, qa, q, radius, hi, weighted, target=0.0):
    """The margin bounds over the ball B((1 + q)/2 w, radius) (w with
    Q-products qa), per v-set (bias-free: z_i; intercept: phi_i, and
    phi_i - c with centring), turned into margins with the intercept count
    and the tightest kept (all are valid), in one typed call
    (``_rules.fused_margins``, geometry 0).  O(n) given Q alpha.
    Returns (lower, upper, b_interval, b_centred, statuses)."""
    n = data.n
    lower, upper = np.empty(n), np.empty(n)
    centred_norms, centre_index = data.centring
    b_lo, b_hi, bc_lo, bc_hi, geo, geo_c = _rules.fused_margins(
        qa, qa, data.y, hi, q, radius, 0.0, 0.0, 0, data.norms, centred_norms,
        centre_index, data.fit_intercept, weighted, target, lower, upper, data.workspace)
    return (lower, upper, *_intervals(data, b_lo, b_hi, bc_lo, bc_hi),
            _statuses(data, geo, geo_c))


_NO_INDEX = np.empty(0, dtype=np.intp)


def screen(data, alpha_ref, grad_ref, hi_ref, hi, rule="it", *, tau=DEFAULT_TAU,
           pairwise=False, shat_state=None, exact_reference=False, gap_ref=None,
           shat_budget=None):
    """Screen for the target box ``hi`` from a reference at ``hi_ref``.

    Parameters
    ----------
    data : ScreeningData
    alpha_ref : ndarray of shape (n,)
        A feasible point of the dual at ``hi_ref`` (an optimum along a path,
        or the current SMO iterate for dynamic screening); an infeasible one
        is a ValueError.
    grad_ref : ndarray of shape (n,) or None
        Q alpha_ref - 1 (the solver's gradient, p = -1) for every sample;
        None computes it (O(nnz) linear, O(n #SV) kernel values otherwise).
    hi_ref, hi : float or ndarray of shape (n,)
        Boxes of the reference and of the target; per-sample boxes (class
        weights) must be proportional: hi = q hi_ref.  hi = hi_ref gives the
        dynamic gap-safe ball B(w, sqrt(gap)) (bias_screening.md, sec. 4).
    rule : {"dvi", "bt1", "bt2", "it"}
        "dvi" and "bt1" are the same ball (paper 000, App. C); "it" is the
        intersection of that ball with BT2 (paper 000, Thm 8).
    tau : float
        Safety margin of the tests l > 1 + tau, u < 1 - tau.
    pairwise : bool
        Add the O(n^2) pairwise intercept count (bias_screening.md 2.4b) for
        the samples the box test leaves undecided (intercept only).
    shat_state : ShatState or None
        The previous step's ``result.shat_state`` (BT2/IT, kernel form): Q s
        is then updated by the changed columns only.
    exact_reference : bool
        Treat the reference as exactly optimal (gap 0): the papers' rules.
        Unsafe for an inexact reference; for tests and reproductions.
    gap_ref : objective.Gap or None
        ``duality_gap(alpha_ref, grad_ref, -1, 0, hi_ref, y)``, with y None
        for a bias-free ``data`` (the gap with an intercept can be smaller,
        and the ball too small), if the caller already has it (a path
        computes it for its result); None computes it.
    shat_budget : int or None
        BT2/IT, kernel form: change at most this many entries of s-hat from
        ``shat_state.shat`` (all zeros without a state), those whose term in
        the NC3 objective is largest, so that Q s costs at most that many
        kernel columns.  BT2 holds for any s (paper 000, Thm 7; only its
        strength depends on s), so this trades strength for cost, safely.
        None: the argmax s of ``_rules.choose_shat``.

    Returns
    -------
    ScreeningResult
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    _check_data(data)
    n = data.n
    alpha = check_vector(alpha_ref, n, "alpha_ref")
    hi_ref = _vector(hi_ref, n, "hi_ref")
    hi = _vector(hi, n, "hi")
    _check_feasible(data, alpha, hi_ref, "alpha_ref", "hi_ref")
    tau = _check_tau(tau)
    pairwise = check_flag(pairwise, "pairwise")
    exact_reference = check_flag(exact_reference, "exact_reference")
    if shat_state is not None and not isinstance(shat_state, ShatState):
        raise TypeError(f"shat_state must be a ShatState (a result's shat_state) or None, got "
                        f"{type(shat_state).__name__}")
    if gap_ref is not None and not isinstance(gap_ref, Gap):
        raise TypeError(f"gap_ref must be None or the objective.Gap of the reference "
                        f"(duality_gap's result), got {type(gap_ref).__name__}")
    if gap_ref is not None and not (np.isfinite(gap_ref.gap) and np.isfinite(gap_ref.b)):
        # max(nan, 0) is nan, which the typed step's comparisons read as
        # a gap of 0: an exact reference, the unsafe papers' radius
        raise ValueError(f"gap_ref must have a finite gap and b, got {gap_ref!r}")
    if shat_budget is not None and (isinstance(shat_budget, bool)
                                    or not isinstance(shat_budget, numbers.Integral)
                                    or shat_budget < 0):
        # the typed step reads a negative budget as none, int() truncates
        raise ValueError(f"shat_budget must be None or an integer >= 0, got {shat_budget!r}")
    if grad_ref is None:
        qa = data.q_times(alpha)
        grad = qa - 1.0
    else:
        grad = check_vector(grad_ref, n, "grad_ref")
        qa = grad + 1.0
    start = time.perf_counter()
    gap = gap_ref if gap_ref is not None else data.reference_gap(alpha, grad, hi_ref)
    b_ref = gap.b
    gap0 = 0.0 if exact_reference else max(gap.gap, 0.0)
    status = {}
    new_state = None
    classified = not (pairwise and data.fit_intercept)   # else after the pairwise count
    # The path's typed step, run once: the (gap-)DVI ball (radius
    # bias_screening Thm 4, round-off docs sec. 8), for BT2/IT also s-hat,
    # Q s and the BT2 ball, the margins over the region and R', L'.
    if rule in ("bt2", "it"):
        step = data.two_ball_path_step(rule, tau=tau, budget=shat_budget)
        if shat_state is not None and shat_state.shat.shape == (n,):
            step.set_state(shat_state.shat, shat_state.qs, shat_state.hi, shat_state.error)
        arguments = (gap0, b_ref, exact_reference)
    else:
        step = data.dvi_path_step(tau=tau)
        arguments = (gap0, exact_reference)
    try:
        zero, bound = step(alpha, grad, hi_ref, hi, *arguments)
    except ValueError:
        _raise_box_error(hi_ref, hi, n)
    zero, bound = zero.view(np.uint8), bound.view(np.uint8)
    found = step.details()
    lower, upper = found["lower"], found["upper"]
    # the step's tau, widened by the round-off of the centres (sec. 8)
    q, r1, centre_roundoff = found["q"], found["r1"], found["tau"] - tau
    tau = found["tau"]
    b_lo, b_hi, bc_lo, bc_hi = found["b"]
    ball_b = found["ball_b"]
    b_lo, b_hi = max(b_lo, ball_b[0]), min(b_hi, ball_b[1])     # both hold b*
    status["ball"] = _statuses(data, *found["ball_statuses"])
    if rule in ("bt2", "it"):
        new_state = ShatState(*step.state(), error=step.state_error())
        status["r2_squared"] = found["r2_squared"]
        status["second"] = _statuses(data, *found["statuses"])
    status["conflicts"] = found["conflicts"]
    b_interval, b_centred = _intervals(data, b_lo, b_hi, bc_lo, bc_hi)

    def add_pairwise(zero, bound):
        status["pairwise_added"] = _pairwise(data, qa, q, r1, hi, zero, bound,
                                             2.0 * centre_roundoff)
    if not classified:
        zero, bound = _classify(lower, upper, tau, status, add_pairwise)
    seconds = time.perf_counter() - start
    return ScreeningResult(
        rule=rule, lower=lower, upper=upper, screened_zero=zero.view(bool),
        screened_bound=bound.view(bool), b_interval=b_interval,
        b_interval_centred=b_centred, seconds=seconds, radius=r1, gap_ref=gap0,
        status=status, shat_state=new_state)


def screen_dynamic(data, alpha, grad, p, hi, target=0.0, coef=None, *, tau=DEFAULT_TAU):
    """Gap-safe screening at any feasible point of a C-SVC-shaped box QP

        min 1/2 a'Qa + p'a,  0 <= a_i <= hi_i,  y'a = target (with an intercept),

    for the current iterate of a solve, or the warm start of the next one
    (bias_screening.md sec. 4; paper 001 Rule A, made safe for the intercept
    by the count, notes/seed_001_rsvm_cccp.md sec. 2.3).

    The model is w = sum_j coef_j y_j phi_j with Q coef = G + 1: coef = a for
    the SVM (p = -1); for a CCCP step of the ramp loss, coef = beta - mu with
    p = -1 - Q mu and target = y'mu.  For any feasible a and any b,
    ||w(a) - w*||^2 <= gap(a, b) (notes seed_001 sec. 2.2: the primal is
    1-strongly convex in w and the dual is concave in w), so w* lies in the
    ball B(w, sqrt(gap)); the intercept interval comes from the count with
    C_N + target.

    Parameters
    ----------
    data : ScreeningData
    alpha, grad : ndarray of shape (n,)
        A feasible point (else a ValueError) and G = Q alpha + p, for every
        sample.
    p, hi : ndarray of shape (n,)
    target : float
        Right-hand side of the equality (ignored without an intercept).
    coef : ndarray or None
        The coefficients of w (default: alpha).
    tau : float
        Safety margin of the tests l > 1 + tau, u < 1 - tau.

    Returns
    -------
    ScreeningResult (no shat_state)
    """
    _check_data(data)
    n = data.n
    y = data.y
    alpha = check_vector(alpha, n, "alpha")
    grad = check_vector(grad, n, "grad")
    p = check_vector(p, n, "p")
    hi = _as_vector(hi, n, "hi")
    coef = alpha if coef is None else check_vector(coef, n, "coef")
    if isinstance(target, bool) or not isinstance(target, numbers.Real) \
            or not np.isfinite(target):
        raise ValueError(f"target must be a finite real number, got {target!r}")
    target = float(target)
    _check_feasible(data, alpha, hi, "alpha", "hi", target)
    tau = _check_tau(tau)
    start = time.perf_counter()
    gap = gap_of(alpha, grad, p, np.zeros(n), hi, y if data.fit_intercept else None).gap
    qa = grad + 1.0                                          # Q coef
    W = float(coef @ qa)                                     # ||w||^2
    size = np.abs(alpha) + np.abs(coef - alpha)              # |a| + |shift|
    allowances = gap_rule_allowances(data.roundoff_scale, size, hi, tau)
    radius = _rules.gap_dvi_radius(1.0, W, gap, allowances["gap_roundoff"])
    tau = allowances["gap_tau"]
    weighted = bool(np.any(hi != hi[0])) or target != 0.0
    lower, upper, b_interval, b_centred, statuses = _ball_margins(data, qa, 1.0, radius, hi,
                                                                 weighted, target)
    status = {"ball": statuses}
    zero, bound = _classify(lower, upper, tau, status)
    return ScreeningResult(
        rule="dynamic", lower=lower, upper=upper, screened_zero=zero.astype(bool),
        screened_bound=bound.astype(bool), b_interval=b_interval,
        b_interval_centred=b_centred, seconds=time.perf_counter() - start, radius=radius,
        gap_ref=gap, status=status, shat_state=None)


def _classify(lower, upper, tau, status, extra=None):
    """R' and L' (uint8 masks) from the margin bounds, after ``extra(zero,
    bound)`` may add to them, with conflicting certificates dropped."""
    zero = np.empty(lower.shape[0], dtype=np.uint8)
    bound = np.empty(lower.shape[0], dtype=np.uint8)
    if extra is None:
        status["conflicts"] = _rules.classify_masks(lower, upper, tau, zero, bound)
        return zero, bound
    zero[:] = 0
    bound[:] = 0
    _rules.classify(lower, upper, tau, zero, bound)
    extra(zero, bound)
    _drop_conflicts(zero, bound, status)
    return zero, bound


def _drop_conflicts(zero, bound, status):
    """A sample certified both ways means inconsistent inputs (only possible
    through round-off): screen it neither way."""
    status["conflicts"] = _rules.drop_conflicts(zero, bound)


def _quadratic_roundoff(roundoff_scale, a, b):
    """Bound on the round-off of a'Qb computed as sum_i a_i (Qb)_i:
    |error| <~ eps n_terms max|Q| ||a||_1 ||b||_1; we use
    1e-15 M ||a||_1 ||b||_1, M = ``Kernel.roundoff_scale()`` >= |K_ij|.
    Large on offset linear data at large C, where Q alpha is a sum of large
    cancelling terms (bias_screening.md sec. 7, the 'round-off' remark).
    ``a`` and ``b`` are vectors, or bounds on their 1-norms; the formula
    itself is _rules._quadratic_roundoff."""
    return _rules.quadratic_roundoff(roundoff_scale, float(np.abs(a).sum()),
                                     float(np.abs(b).sum()))


def _margin_roundoff(roundoff_scale, alpha, q, hi):
    """Bound on the round-off of the margin centres (1+q)/2 (Q alpha)_i, added
    to tau: 1e-15 M (1 + q) (||alpha||_1 + sum_i hi_i).  ``alpha`` and
    ``hi`` are vectors, or bounds on ||alpha||_1 and sum_i hi_i; the formula
    itself is _rules._margin_roundoff."""
    return _rules.margin_roundoff(roundoff_scale, q, float(np.abs(alpha).sum()), float(np.sum(hi)))


def gap_rule_allowances(roundoff_scale, size, hi, tau=DEFAULT_TAU):
    """Safety margin and squared-radius round-off of the gap-safe rule
    (``screen_dynamic``, and the solver's own ``gap_screening``, which takes
    them as ``solve(..., **gap_rule_allowances(...))``).

    ``size`` is ||alpha||_1 + ||coef - alpha||_1, or a bound on it over the
    whole solve (a CCCP step: sum_i hi_i + ||mu||_1); ``hi`` the box, or
    sum_i hi_i.  Returns dict(gap_tau=..., gap_roundoff=...)."""
    return dict(gap_tau=tau + _margin_roundoff(roundoff_scale, size, 1.0, hi),
                gap_roundoff=_quadratic_roundoff(roundoff_scale, size, size))


def _pairwise(data, qa, q, radius, hi, zero, bound, slack):
    """Pairwise count on the undecided samples with the (gap-)DVI ball."""
    candidates = np.flatnonzero(~(zero.astype(bool) | bound.astype(bool))).astype(np.intp)
    if candidates.size == 0:
        return 0
    y = data.y
    beta_centre = np.ascontiguousarray(y - 0.5 * (1.0 + q) * y * qa)   # y - m'phi
    added = 0
    for start in range(0, candidates.size, ROW_BLOCK):
        cand = np.ascontiguousarray(candidates[start:start + ROW_BLOCK])
        rows = np.ascontiguousarray(data.kernel.rows(cand))
        added += _rules.pairwise_certify(cand, rows, data.kernel_diag, beta_centre,
                                         y, hi, radius, zero, bound, slack)
    return added


def screen_dome(data, alpha_a, grad_a, hi_a, alpha_b, grad_b, hi_b, hi,
                rule="essnsv", *, tau=DEFAULT_TAU, exact_reference=False):
    """SSNSV (paper 002) or ESSNSV (paper 003, Thm 19) for hi_a <= hi <= hi_b.

    Parameters
    ----------
    data : ScreeningData
    alpha_a, grad_a, hi_a
        A feasible point at the smaller box (C_a <= C), e.g. the solver's
        optimum there, and its gradient Q a - 1 (None computes it); an
        infeasible one is a ValueError, as in ``screen``.
    alpha_b, grad_b, hi_b
        A feasible point at the larger box (C_b >= C), likewise.
    hi : target box, proportional to hi_a and hi_b.
    rule : {"ssnsv", "essnsv"}
    tau : float
        Safety margin of the tests l > 1 + tau, u < 1 - tau.
    exact_reference : bool
        Treat both references as exactly optimal (gap 0): the papers' rules.
        Unsafe for inexact references; for tests and reproductions.

    The papers' domes need optimal references: the half-space is a
    first-order optimality condition at w_a.  Here each reference's duality
    gap widens the dome (``_rules.dome_shape``, docs/screening.md sec. 7),
    so that the rule is safe for any feasible references.
    """
    if rule not in DOME_RULES:
        raise ValueError(f"rule must be one of {DOME_RULES}, got {rule!r}")
    _check_data(data)
    n = data.n
    hi_a = _vector(hi_a, n, "hi_a")
    hi_b = _vector(hi_b, n, "hi_b")
    hi = _vector(hi, n, "hi")
    # the typed ratio, as the path's dome step takes it: a box [0, 0] in all
    # three (a sample of weight 0) is left out, as screen() leaves it
    q_a, q_b = _rules.box_ratio(hi, hi_a), _rules.box_ratio(hi_b, hi)
    # each refused ratio named by its own pair (a bad hi_b had been
    # reported as "hi and hi_a must be ... proportional")
    if q_a != q_a:
        _raise_box_error(hi_a, hi, n, "hi_a", "hi")
    if q_b != q_b:
        _raise_box_error(hi, hi_b, n, "hi", "hi_b")
    if q_a < 1.0 - 1e-12 or q_b < 1.0 - 1e-12:
        raise ValueError("the domes need hi_a <= hi <= hi_b")
    alpha_a = check_vector(alpha_a, n, "alpha_a")
    alpha_b = check_vector(alpha_b, n, "alpha_b")
    _check_feasible(data, alpha_a, hi_a, "alpha_a", "hi_a")
    _check_feasible(data, alpha_b, hi_b, "alpha_b", "hi_b")
    grad_a = data.q_times(alpha_a) - 1.0 if grad_a is None else check_vector(grad_a, n, "grad_a")
    grad_b = data.q_times(alpha_b) - 1.0 if grad_b is None else check_vector(grad_b, n, "grad_b")
    tau = _check_tau(tau)
    exact_reference = check_flag(exact_reference, "exact_reference")
    start = time.perf_counter()
    gap_a, gap_b = (0.0, 0.0) if exact_reference else (
        data.reference_gap(alpha, grad, box).gap
        for alpha, grad, box in ((alpha_a, grad_a, hi_a), (alpha_b, grad_b, hi_b)))
    # The path's typed step, run once (_rules.DomePathStep: the dome's shape
    # with its round-off and the references' gaps, the margins over it and
    # R', L').
    step = data.dome_path_step(rule, tau=tau)
    step.set_upper(alpha_b, grad_b, hi_b, gap_b)
    zero, bound = step(alpha_a, grad_a, hi_a, hi, gap_a)
    found = step.details()
    b_interval, b_centred = _intervals(data, *found["b"])
    return ScreeningResult(
        rule=rule, lower=found["lower"], upper=found["upper"], screened_zero=zero,
        screened_bound=bound, b_interval=b_interval, b_interval_centred=b_centred,
        seconds=time.perf_counter() - start, radius=0.0, gap_ref=gap_a,
        status={"dome": _statuses(data, *found["statuses"]),
                "conflicts": found["conflicts"]},
        shat_state=None)
