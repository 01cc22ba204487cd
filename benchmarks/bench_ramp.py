"""Ramp-loss SVM by CCCP: time with and without shrinking and safe screening,
following paper 001's protocol (sec. 5): RBF kernel, gamma in {0.05, 0.5, 5},
C in {0.1, 1, 10, 100}, s = 0, on a9a, ijcnn1 and letter (A-M vs N-Z),
each subsampled at random to --rows training samples.

Arms (one thread, the same data and parameters):
    plain            no shrinking, no screening
    shrink           LIBSVM shrinking
    screen           safe screening (warm start + during each inner solve)
    shrink+screen    both
    oracle           shrinking, with screening replaced by the truth: each
                     CCCP step's solve restricted to the samples free at that
                     step's inner optimum, the others fixed at their value
                     there (what a perfect, free rule leaves to the solver;
                     the outlier sequence is the plain arm's, so it skips
                     CCCP's re-solves near ties, and its truth, a tol-1e-10
                     replay of that sequence, is not timed)

Every arm must reach the same outlier sequence and final objective (1e-5
relative) as the plain arm, and the screening arms put nothing back: the
run ends with an error listing the rows where they do not.  The table gives
each arm's seconds, shrink+screen / shrink, and their geometric mean (issue
5's target: <= 0.6), and oracle / shrink: the best any safe rule could do.
"frozen" sums, over the CCCP steps of the shrink+screen arm, the samples
its rule fixed (at the warm starts and during the solves); "select work
ss/shrink" is that arm's SMO working-set work (the sum over iterations of
the active set's size) over the shrink arm's.

    python benchmarks/bench_ramp.py                 # the full protocol
    python benchmarks/bench_ramp.py --quick         # CI smoke: one small case
"""
import argparse
import itertools
import os
import time
import warnings

# one thread for every arm, whatever the shell says (as bench_path)
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

import svmscreen  # noqa: E402
from _measure import geometric_mean, int_at_least  # noqa: E402
from svmscreen.path import WARM_FIRST_SHRINK, _Problem  # noqa: E402
from svmscreen.ramp import _build, next_step_start  # noqa: E402
from svmscreen.reduced import solve_reduced  # noqa: E402

# Wall time by default; --clock cpu: this thread's CPU time (every arm is
# single-threaded), which other jobs on a shared machine do not inflate
CLOCK = time.perf_counter

ARMS = {"plain": (False, None), "shrink": (True, None), "screen": (False, "safe"),
        "shrink+screen": (True, "safe")}


def dataset(name, rows, seed=0):
    if name == "letter":
        X, labels = svmscreen.load_dataset("letter.scale")
        y = np.where(labels <= 13, 1.0, -1.0)          # A-M vs N-Z
    else:
        X, y = svmscreen.load_dataset(name)
    if rows and X.shape[0] > rows:
        keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], rows, replace=False))
        X, y = X[keep], y[keep]
    return X, y


def replay(X, y, C, gamma, outlier_history, tol, truth=None):
    """CCCP's inner solves for a known outlier sequence, as ``ramp.cccp``
    runs them (shrinking; each step warm-started by
    ``ramp.next_step_start``).  With ``truth`` (a replay's betas at a tight
    tol), each step fixes the samples at a bound of its true optimum there
    and solves over the rest: the oracle.  Returns the betas, each step's inner
    objective, the samples put back and the seconds."""
    start = CLOCK()
    X, _, signs, hi_unit, params, tol, _ = _build(X, y, "rbf", gamma, 0.0, 3, tol, 100.0,
                                                  None, None, None)
    problem = _Problem(X, signs, hi_unit, **params)
    Q, n = problem.Q, problem.n
    C_i, lo = hi_unit * C, np.zeros(n)
    beta, mu, grad, q_mu = np.zeros(n), np.zeros(n), None, np.zeros(n)
    betas, objectives, put_back = [], [], 0
    for step, outliers in enumerate(outlier_history):
        new_mu = np.zeros(n)
        new_mu[outliers] = C_i[outliers]
        fixed = target = movable = None
        if truth is not None:
            fixed = (truth[step] <= lo) | (truth[step] >= C_i)
            target = np.where(fixed, truth[step], beta)
            movable = ~fixed
        repaired = next_step_start(Q, beta, grad, mu, new_mu, q_mu, signs, lo, C_i,
                                   start=target, movable=movable)
        warm = {} if grad is None else dict(first_shrink=WARM_FIRST_SHRINK)
        result, released = solve_reduced(Q, -1.0 - q_mu, lo, C_i, repaired, y=signs,
                                         fixed=fixed, grad0=grad, tol=tol, shrinking=True,
                                         **warm)
        beta, mu, grad = result.alpha, new_mu, result.grad
        betas.append(beta.copy())
        put_back += released
        # 1/2 b'Qb + p'b = 1/2 b'(G + p), G = Qb + p
        objectives.append(0.5 * float(beta @ (grad - 1.0 - q_mu)))
    return betas, np.array(objectives), put_back, CLOCK() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["a9a", "ijcnn1", "letter"])
    parser.add_argument("--rows", type=int_at_least(0), default=2000, help="0: all rows")
    # (one value at least: an empty grid left geometric means of nothing)
    parser.add_argument("--gammas", nargs="+", type=float, default=[0.05, 0.5, 5.0])
    parser.add_argument("--Cs", nargs="+", type=float, default=[0.1, 1.0, 10.0, 100.0])
    parser.add_argument("--tol", type=float, default=1e-6,
                        help="inner tolerance (the paper uses 1e-8)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.thread_time
    if args.quick:
        args.datasets, args.rows, args.gammas, args.Cs = ["letter"], 500, [0.5], [1.0]
    ratios, oracle_ratios, failures = [], [], []
    print(f"{'data':<8} {'gamma':>6} {'C':>6} {'outer':>5} | "
          + " ".join(f"{arm:>13}" for arm in [*ARMS, "oracle"])
          + " | shrink+screen / shrink | oracle / shrink | frozen | select work ss/shrink")
    for name in args.datasets:
        X, y = dataset(name, args.rows)
        for gamma, C in itertools.product(args.gammas, args.Cs):
            times, results = {}, {}
            for arm, (shrinking, screening) in ARMS.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start = CLOCK()
                    results[arm] = svmscreen.train_ramp(X, y, C=C, gamma=gamma, s=0.0,
                                                        shrinking=shrinking,
                                                        screening=screening, tol=args.tol)
                    times[arm] = CLOCK() - start
            plain = results["plain"]
            for arm, result in results.items():
                same = (result.n_outer == plain.n_outer and all(
                    np.array_equal(a, b) for a, b in zip(result.outlier_history,
                                                         plain.outlier_history)))
                close = abs(result.objective[-1] - plain.objective[-1]) <= \
                    1e-5 * abs(plain.objective[-1])
                if not (same and close):
                    failures.append(
                        f"{name}, gamma {gamma:g}, C {C:g}: {arm} reached another CCCP "
                        f"sequence or objective ({result.objective[-1]:.10g} against "
                        f"{plain.objective[-1]:.10g} without screening or shrinking)")
                if ARMS[arm][1] is not None and result.put_back.sum():
                    failures.append(f"{name}, gamma {gamma:g}, C {C:g}: {arm} put "
                                    f"{int(result.put_back.sum())} samples back")
            history = results["plain"].outlier_history
            truth, exact, _, _ = replay(X, y, C, gamma, history, 1e-10)
            _, found, put_back, times["oracle"] = replay(X, y, C, gamma, history, args.tol,
                                                         truth)
            if np.any(np.abs(found - exact) > 1e-5 * np.abs(exact)) or put_back:
                failures.append(f"{name}, gamma {gamma:g}, C {C:g}: the oracle's inner "
                                f"objectives are off the truth's by up to "
                                f"{np.max(np.abs(found - exact) / np.abs(exact)):.2g} "
                                f"relative, {put_back} samples put back")
            ratio = times["shrink+screen"] / times["shrink"]
            ratios.append(ratio)
            oracle_ratios.append(times["oracle"] / times["shrink"])
            ss = results["shrink+screen"]
            frozen = ss.frozen.sum() + ss.screened_zero.sum() + ss.screened_bound.sum()
            work = ss.work_select.sum() / max(results["shrink"].work_select.sum(), 1)
            print(f"{name:<8} {gamma:>6g} {C:>6g} {plain.n_outer:>5} | "
                  + " ".join(f"{times[arm]:>12.3f}s" for arm in [*ARMS, "oracle"])
                  + f" | {ratio:>22.2f} | {oracle_ratios[-1]:>15.2f} | {frozen:>6} | {work:.2f}",
                  flush=True)
    print(f"\ngeometric mean of (shrink+screen) / shrink: {geometric_mean(ratios):.2f} "
          "(target <= 0.6)")
    print("geometric mean of oracle / shrink (what a perfect rule could give): "
          f"{geometric_mean(oracle_ratios):.2f}")
    if failures:
        raise SystemExit("arms that disagree with the plain arm:\n  " + "\n  ".join(failures))


if __name__ == "__main__":
    main()
