"""How much the safe rules CAN screen along bench_path.py's regularization
path, and why they screen less than a perfect rule would.

No timing: for every row (dataset, kernel) the path is solved once without
screening (train_path(..., screening=None), tol 1e-3, the grid of
bench_path.py: 50 log-spaced C in [1e-2, 1e3]) and, at every step
C_t -> C_{t+1}, the rules are applied to the solution at C_t, with its exact
gradient Q alpha_t - 1, as the path would apply them.  Rates are
(|R'| + |L'|) / n, the share of samples proved to be at alpha = 0 or C:

    dvi       gap-DVI with the real, inexact reference (what the path uses):
              radius^2 = (q-1)^2 ||w_ref||^2 / 4 + q gap_ref, q = C_{t+1}/C_t
    dvi-ex    the same ball with the reference's duality gap taken as 0
              (exact_reference=True, the papers' DVI; unsafe for a tol-1e-3
              reference, a diagnostic only): dvi-ex - dvi is what the
              reference's inexactness costs
    it        the Intersection Test (gap-DVI ball and BT2), real reference,
              full argmax s-hat (no shat_budget)
    free-ex   dvi-ex on the bias-free problem (fit_intercept=False for the
              path and for ScreeningData): free-ex - dvi-ex is what bounding
              the intercept by counting costs
    oracle    the share at alpha = 0 or alpha = C at C_{t+1} of a tight path
              (tol 1e-6), i.e. what a perfect rule would screen (of the
              problem with an intercept)

Also: r/|w|, the mean gap-DVI radius over ||w_ref|| (the exact-reference
ball has (q-1)/2 = 0.132 on the 50-point grid), and halfw, the median over
samples of the half-width (upper - lower)/2 of the dvi margin bounds,
averaged over the steps: a sample is screened only if its margin at the
reference is about halfw away from 1, and halfw grows with ||w|| (radius
times ||phi_i||, plus the intercept interval).  "dvi-ex wrong" counts the
samples dvi-ex screened that the tight path does not have at that bound,
"max_iter" the C of each path (tol 1e-3 / bias-free / tol 1e-6) that stopped
at the solver's iteration cap (raw madelon and svmguide1 with the linear
kernel: the long rows of the run).

Rows are loaded as bench_path.py loads them (its DATASETS, KERNELS and
row caps: the first rows of ijcnn1 and a9a).  Steps are banded by the
target C_{t+1}: C < 1, 1 <= C < 30, C >= 30.  Single-threaded.

    python benchmarks/rule_strength.py --quick         # heart_scale, 10 C
    python benchmarks/rule_strength.py                 # the full default set
    python benchmarks/rule_strength.py --datasets splice --kernels rbf1
"""
import argparse
import os
import sys
import time
import warnings

# one thread, whatever the shell says (as bench_path, whose rows these are)
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_path  # noqa: E402  (DATASETS, KERNELS, TOL: the rows and grid of the path benchmark)
from _measure import int_at_least  # noqa: E402

import svmscreen  # noqa: E402
from svmscreen.objective import duality_gap  # noqa: E402
from svmscreen.path import centre_sample  # noqa: E402
from svmscreen.screening import ScreeningData, screen  # noqa: E402

TOL = bench_path.TOL
TIGHT_TOL = 1e-6
DEFAULT_KERNELS = ("linear", "rbf1")
COLUMNS = ("dvi", "dvi-ex", "it", "free-ex", "oracle", "r/|w|", "halfw")
BANDS = (("C<1", 0.0, 1.0), ("1<=C<30", 1.0, 30.0), ("C>=30", 30.0, np.inf))


def load(name, rows=None):
    """A row of bench_path.py: its dataset, cut to its row cap."""
    X, y = svmscreen.load_dataset(name)
    rows = rows if rows is not None else bench_path.DATASETS.get(name)
    if rows and X.shape[0] > rows:
        X, y = X[:rows], y[:rows]
    return X, y


def rate(result, n):
    return result.n_screened / n


def measure(X, y, kernel, gamma, grid):
    """Per step t -> t+1 (arrays of length len(grid) - 1): the rates of
    COLUMNS; the count of samples dvi-ex screened against the tight path
    (``wrong``: its unsafety with a tol-1e-3 reference, within tol 1e-6);
    and how many C of each path (tol 1e-3, bias-free, tol 1e-6) stopped at
    the solver's max_iter (their rates are then of a point short of the
    tolerance, and the oracle's of an inexact solution)."""
    n = y.size
    classes = np.unique(y)
    signs = np.where(y == classes[1], 1.0, -1.0)
    options = dict(C=grid, kernel=kernel, gamma=gamma, screening=None, keep="all")
    unconverged = []

    def solve(**extra):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", svmscreen.ConvergenceWarning)
            result = svmscreen.train_path(X, y, **options, **extra)
        unconverged.append(sum(issubclass(w.category, svmscreen.ConvergenceWarning)
                               for w in caught))
        return result
    path = solve(tol=TOL)
    free = solve(tol=TOL, fit_intercept=False)
    tight = solve(tol=TIGHT_TOL)
    params = dict(kernel=kernel, gamma=gamma or 0.0, centre_sample=centre_sample(n))
    data = ScreeningData(X, signs, fit_intercept=True, **params)
    data_free = ScreeningData(X, signs, fit_intercept=False, **params)
    steps = len(grid) - 1
    out = {key: np.empty(steps) for key in COLUMNS}
    wrong = 0
    shat_state = None
    for t in range(steps):
        C_ref, C = float(grid[t]), float(grid[t + 1])
        hi_ref, hi = np.full(n, C_ref), np.full(n, C)
        alpha = path.alphas[t]
        grad = data.q_times(alpha) - 1.0
        gap = duality_gap(alpha, grad, -np.ones(n), np.zeros(n), hi_ref, signs)
        dvi = screen(data, alpha, grad, hi_ref, hi, rule="dvi", gap_ref=gap)
        exact = screen(data, alpha, grad, hi_ref, hi, rule="dvi", gap_ref=gap,
                       exact_reference=True)
        it = screen(data, alpha, grad, hi_ref, hi, rule="it", gap_ref=gap,
                    shat_state=shat_state)
        shat_state = it.shat_state
        alpha_free = free.alphas[t]
        free_ex = screen(data_free, alpha_free, data_free.q_times(alpha_free) - 1.0,
                         hi_ref, hi, rule="dvi", exact_reference=True)
        truth = tight.alphas[t + 1]
        at_zero, at_bound = truth <= 0, truth >= hi
        out["dvi"][t] = rate(dvi, n)
        out["dvi-ex"][t] = rate(exact, n)
        out["it"][t] = rate(it, n)
        out["free-ex"][t] = rate(free_ex, n)
        out["oracle"][t] = (at_zero.sum() + at_bound.sum()) / n
        w_norm = np.sqrt(max(float(alpha @ (grad + 1.0)), 0.0))
        out["r/|w|"][t] = dvi.radius / w_norm if w_norm > 0 else np.nan
        out["halfw"][t] = float(np.median(0.5 * (dvi.upper - dvi.lower)))
        wrong += int(np.sum(exact.screened_zero & ~at_zero) +
                     np.sum(exact.screened_bound & ~at_bound))
    return out, wrong, unconverged


def fmt(values):
    return " ".join(f"{np.nanmean(v) if np.size(v) else np.nan:>8.3f}" for v in values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="heart_scale, 10 values of C")
    parser.add_argument("--datasets", nargs="*", default=None)
    parser.add_argument("--kernels", nargs="+", default=list(DEFAULT_KERNELS),
                        choices=list(bench_path.KERNELS))
    # (at least one step C_t -> C_t+1)
    parser.add_argument("--n-C", type=int_at_least(2), default=50)
    parser.add_argument("--rows", type=int_at_least(0), default=None,
                        help="override the row cap of the large sets (0: all rows)")
    parser.add_argument("--save", default=None,
                        help="also write the per-step rates to this .npz ('row|column' keys)")
    args = parser.parse_args()
    names = ["heart_scale"] if args.quick else (args.datasets or list(bench_path.DATASETS))
    grid = np.geomspace(1e-2, 1e3, 10 if args.quick else args.n_C)
    target = grid[1:]
    bands = [(label, (target >= lo) & (target < hi)) for label, lo, hi in BANDS]
    print(f"grid: {grid.size} values of C in [{grid[0]:g}, {grid[-1]:g}], tol {TOL} "
          f"(oracle: tol {TIGHT_TOL}); q = C_t+1/C_t = {grid[1] / grid[0]:.4f}; "
          f"steps per band: " + ", ".join(f"{label} {int(m.sum())}" for label, m in bands))
    header = " ".join(f"{c:>8}" for c in COLUMNS)
    rows = []
    print(f"\nmean over the {target.size} steps (rates: share of the n samples screened)")
    print(f"{'row':<26} {'n':>6} {header} {'dvi-ex wrong':>12} {'max_iter':>9} {'s':>6}")
    for name in names:
        X, y = load(name, args.rows)
        for label in args.kernels:
            kernel, multiple = bench_path.KERNELS[label]
            gamma = None if multiple is None else multiple / X.shape[1]
            start = time.perf_counter()
            out, wrong, unconverged = measure(X, y, kernel, gamma, grid)
            seconds = time.perf_counter() - start
            rows.append((f"{name} {label}", out, unconverged))
            print(f"{name + ' ' + label:<26} {y.size:>6} "
                  f"{fmt(out[c] for c in COLUMNS)} {wrong:>12} "
                  f"{'/'.join(map(str, unconverged)):>9} {seconds:6.1f}", flush=True)
    print("\nmean over the steps of each band of the target C")
    print(f"{'row':<26} {'band':<8} {header}")
    for row, out, _ in rows:
        for label, mask in bands:
            print(f"{row:<26} {label:<8} {fmt(out[c][mask] for c in COLUMNS)}")
    # Rows whose tol-1e-3 or tight path stopped at max_iter have no
    # meaningful rates or oracle (raw madelon, linear): left out of the means.
    kept = [(row, out) for row, out, unconverged in rows
            if unconverged[0] == 0 and unconverged[2] == 0]
    left_out = [row for row, _, unconverged in rows
                if unconverged[0] != 0 or unconverged[2] != 0]
    if len(kept) > 1:
        print(f"\nmean over {len(kept)} rows (each row's band mean, then the mean over rows)"
              + (f"; left out (path at max_iter): {', '.join(left_out)}" if left_out else ""))
        print(f"{'':<26} {'band':<8} {header}")
        for label, mask in [("all", np.ones(target.size, bool))] + bands:
            means = [[np.nanmean(out[c][mask]) for _, out in kept] for c in COLUMNS]
            print(f"{'mean over rows':<26} {label:<8} {fmt(means)}")
    if args.save:
        np.savez(args.save, C=grid, **{f"{row}|{c}": out[c] for row, out, _ in rows
                                      for c in COLUMNS})

if __name__ == "__main__":
    main()
