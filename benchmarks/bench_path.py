"""Regularization paths: svmscreen's warm-started, screened path against
LIBSVM and scikit-learn called once per C, on the same grid and parameters.

Arms (all single-threaded, tol 1e-3, 100 MB cache):
    libsvm        libsvm-official svm_train once per C
    sklearn       scikit-learn SVC once per C
    cold          svmscreen.fit_binary once per C (no warm start)
    warm          train_path, no shrinking, no screening
    warm+shrink   train_path, shrinking, no screening
    +<rule>       train_path, shrinking and that screening rule
    oracle        the +<rule> path with the rule replaced by the truth: per C,
                  the solve restricted to the true support vectors with the
                  samples at the bound fixed (what a perfect rule leaves)

Every arm's objective at every C is compared with the warm+shrink arm's
(relative difference printed; the run fails if one of svmscreen's arms is
off by more than 1e-4, or LIBSVM or scikit-learn by more than 1e-2 at a C
where its objective is not above ours: both stop at tol 1e-3 of their own,
and a reference above ours by more than that stopped short, at its
iteration cap; the cold arm too, where fit_binary reports its cap).  Times
are printed as ratios; below the table, the geometric means over rows of the
targets of issue 4.

Each time is the arm's minimum over the runs of its row (the noise of a
shared machine only ever adds time).  The arms of a row run in interleaved
rounds, each round in another order (benchmarks/_measure.py: round k starts
at the k-th arm, forwards in even rounds, backwards in odd ones), so no arm
is always first or always after the same arm.  Before the table, every arm
runs once, untimed, on a small problem, so that no timed run pays for lazy
imports and first-use set-up.  --repeat K runs K rounds; by default a row is
run again until one of its arms has been timed for 0.5 s in all, at most 5
rounds: the paths of a few milliseconds on heart_scale and the like get 5, a
row with a slow arm (LIBSVM on heart_scale's linear kernel, every large row)
runs once.  Every arm of a row runs the same number
of rounds; the row's header says how many.  The objectives and notes are
those of the fastest run (every arm is deterministic).

    python benchmarks/bench_path.py --quick              # CI smoke: heart_scale, 10 C
    python benchmarks/bench_path.py                      # the full table
    python benchmarks/bench_path.py --datasets splice --kernels rbf1
    python benchmarks/bench_path.py --datasets heart_scale --repeat 9
"""
import argparse
import os
import time
import warnings

# one thread for every arm: libsvm-official is built with OpenMP, and a
# shell's OMP_NUM_THREADS=2 made its arm run on two (the cpu clock counts one)
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

import svmscreen  # noqa: E402
from _measure import (AUTO_BUDGET, AUTO_MAX_ROUNDS, best_of, geometric_mean,  # noqa: E402
                      int_at_least)
from svmscreen.path import SCREENING_RULES, train_path  # noqa: E402

DATASETS = {  # name -> rows used (None: all)
    "heart_scale": None, "australian_scale": None, "diabetes_scale": None, "splice": None,
    "svmguide1": None, "mushrooms": None, "madelon": None, "ijcnn1": 10000, "a9a": 10000,
}
KERNELS = {  # label -> (kernel, gamma as a multiple of 1/d)
    "linear": ("linear", None), "rbf0.1": ("rbf", 0.1), "rbf1": ("rbf", 1.0),
    "rbf10": ("rbf", 10.0),
}
TOL = 1e-3
CACHE_MB = 100.0
# Wall time by default; --clock cpu times every arm by this thread's CPU
# time instead (all arms are single-threaded and in-process, LIBSVM through
# ctypes), which other jobs on a shared machine do not inflate.
CLOCK = time.perf_counter


def dual_objective(X, coef, support, kernel, gamma):
    from svmscreen._kernels import cross_kernel
    Xs = X[support]
    quad = 0.0
    for start, stop, block in cross_kernel(Xs, Xs, kernel, gamma or 0.0, 0.0, 3):
        quad += float(coef[start:stop] @ (block @ coef))
    return 0.5 * quad - float(np.abs(coef).sum())


def arm_libsvm(X, y, kernel, gamma, grid):
    from libsvm.svmutil import svm_parameter, svm_problem, svm_train
    t_kernel = {"linear": 0, "rbf": 2}[kernel]
    seconds, objectives = 0.0, []
    # The data converted once, inside the timer, as a path user of libsvm
    # would (svm_train(y, X, ...) converts at every call: in Python without
    # numba, 13% of this arm on heart_scale, 22 ms a call on 10k rows).
    start = CLOCK()
    problem = svm_problem(y, X)
    seconds += CLOCK() - start
    for C in grid:
        start = CLOCK()
        model = svm_train(problem, svm_parameter(
            f"-t {t_kernel} -c {float(C)!r} -g {float(gamma or 0)!r} -e {TOL} -m {CACHE_MB} -q"))
        seconds += CLOCK() - start
        support = np.asarray(model.get_sv_indices()) - 1
        objectives.append(dual_objective(X, np.asarray(model.get_sv_coef()).ravel(),
                                         support, kernel, gamma))
    return seconds, np.array(objectives), {}


# Arms that are references, not svmscreen: they may stop at their own
# iteration cap (then their objective is higher than ours, and the row says so).
# svmscreen's cold arm is held to the same rule where it reports its cap.
REFERENCE_ARMS = ("libsvm", "sklearn")


def arm_sklearn(X, y, kernel, gamma, grid):
    from sklearn.svm import SVC
    seconds, objectives = 0.0, []
    for C in grid:
        start = CLOCK()
        model = SVC(C=C, kernel=kernel, gamma=gamma or "scale", tol=TOL,
                    cache_size=CACHE_MB).fit(X, y)
        seconds += CLOCK() - start
        coef = model.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef).ravel()
        objectives.append(dual_objective(X, coef, model.support_, kernel, gamma))
    return seconds, np.array(objectives), {}


def arm_cold(X, y, kernel, gamma, grid):
    """fit_binary once per C.  From 0 at a large C on unscaled data (svmguide1,
    linear) SMO can reach its iteration cap, as LIBSVM does; those C are
    counted in ``max_iter`` and the arm is then held to the references' rule
    (stopped short, not wrong) instead of failing the run."""
    seconds, objectives, capped = 0.0, [], 0
    for C in grid:
        start = CLOCK()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", svmscreen.ConvergenceWarning)
            model = svmscreen.fit_binary(X, y, C=C, kernel=kernel, gamma=gamma, tol=TOL,
                                         cache_size=CACHE_MB)
        seconds += CLOCK() - start
        objectives.append(model.objective_)
        capped += model.status_ == "max_iter"
    return seconds, np.array(objectives), {"max_iter": capped} if capped else {}


def arm_path(shrinking, screening):
    def run(X, y, kernel, gamma, grid):
        start = CLOCK()
        path = train_path(X, y, C=grid, kernel=kernel, gamma=gamma, tol=TOL,
                          cache_size=CACHE_MB, shrinking=shrinking, screening=screening,
                          keep="summary")
        seconds = CLOCK() - start
        extra = {"rate": float(np.mean(path.screening_rate)),
                 "put_back": int(path.put_back.sum()),
                 "rule_share": float(path.rule_seconds.sum() / max(path.solve_seconds.sum(),
                                                                    1e-12)),
                 "rule_s": float(path.rule_seconds.sum()),
                 "solve_s": float(path.solve_seconds.sum())}
        return seconds, path.objective, extra
    return run


class _OracleRule:
    """A perfect rule for the path: at each C it "proves" exactly the R
    (a = 0) and L (a = C) of a tight (tol 1e-6) solution at that C."""

    def __init__(self, grid, truth):
        self.grid, self.truth = grid, truth

    def __call__(self, alpha_ref, grad_ref, hi_ref, hi, gap_ref=None):
        t = int(np.argmin(np.abs(self.grid - hi[0])))
        exact = self.truth.alphas[t]
        return exact <= 0, exact >= hi


_TRUTH = {}


def _oracle_truth(X, y, kernel, gamma, grid):
    """The tight path of the oracle, solved once per row: the row's repeats
    would otherwise each pay for this untimed solve again."""
    key = (kernel, gamma, grid.tobytes())
    cached = _TRUTH.get(key)
    if cached is None or cached[0] is not X:
        # (keyed on the very X of the row: the next dataset may share
        # kernel, gamma and grid)
        _TRUTH.clear()
        cached = _TRUTH[key] = (X, train_path(X, y, C=grid, kernel=kernel, gamma=gamma,
                                              tol=1e-6, cache_size=CACHE_MB, screening=None))
    return cached[1]


def arm_oracle(X, y, kernel, gamma, grid):
    """The default arm's path (warm starts, shrinking, the hard-margin stop)
    with the rule replaced by the oracle: what a perfect, free rule leaves
    to the solver.  The tight path that tells the truth is not timed.

    Its put_back is not 0 on the linear rows: the tol-1e-3 solve's final
    check finds some samples of the tight R and L violating (near-margin
    ones; excluding those within tol of the margin did not remove them),
    and releases them, or all fixed samples, and solves on; the time
    includes that."""
    from svmscreen.path import _Problem, run_path
    truth = _oracle_truth(X, y, kernel, gamma, grid)
    signs = np.where(y == np.unique(y)[1], 1.0, -1.0)
    start = CLOCK()
    problem = _Problem(X, signs, np.ones(y.size), kernel, gamma or 0.0, 0.0, 3, CACHE_MB,
                       True)
    rows, _ = run_path(problem, grid, screening=_OracleRule(grid, truth), tol=TOL,
                       shrinking=True, max_iter=None, keep="summary")
    seconds = CLOCK() - start
    rate = np.mean([(a <= 0).mean() + (a >= C).mean() for a, C in zip(truth.alphas, grid)])
    # rate: the share a perfect rule screens (compare the rules' rate)
    return seconds, np.array([row["objective"] for row in rows]), {
        "rate": float(rate), "put_back": int(sum(row["put_back"] for row in rows))}


def arms(rules):
    out = {"libsvm": arm_libsvm, "sklearn": arm_sklearn, "cold": arm_cold,
           "warm": arm_path(False, None), "warm+shrink": arm_path(True, None)}
    for rule in rules:
        out["+" + rule] = arm_path(True, rule)
    out["oracle"] = arm_oracle
    return out


def _once(arm, run, X, y, kernel, gamma, grid):
    """One run of an arm for best_of; None (and a note) if it is unavailable."""
    def once():
        try:
            return run(X, y, kernel, gamma, grid)
        except (ImportError, NotImplementedError) as exc:
            print(f"  ({arm} unavailable: {exc})")
            return None
    return once


def warm_up(all_arms, kernels):
    """Run every arm once, untimed, on a small problem (60 rows of
    heart_scale, 2 C) with each kernel of the run.  An arm's first run pays
    for lazy imports (svmscreen.screening on the first screened path: +5 ms
    on heart_scale's 7 ms paths) and first-use set-up; without this they
    fell on the first row's first round, the only round of a row with a
    slow arm."""
    X, y = svmscreen.load_dataset("heart_scale")
    X, y = X[:60], y[:60]
    for label in kernels:
        kernel, multiple = KERNELS[label]
        gamma = None if multiple is None else multiple / X.shape[1]
        for run in all_arms.values():
            try:
                run(X, y, kernel, gamma, np.geomspace(0.1, 10, 2))
            except (ImportError, NotImplementedError):
                pass        # the rows will say that the arm is unavailable


def parse_args(argv=None):
    """The command line (``argv``, default sys.argv[1:]) as a Namespace."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="heart_scale, 10 values of C")
    parser.add_argument("--datasets", nargs="*", default=None)
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    parser.add_argument("--rules", nargs="*", default=list(SCREENING_RULES),
                        choices=list(SCREENING_RULES))
    parser.add_argument("--n-C", type=int_at_least(1), default=50)
    parser.add_argument("--rows", type=int_at_least(0), default=None,
                        help="override the row cap of the large sets (0: all rows)")
    parser.add_argument("--skip", nargs="*", default=[], choices=list(arms(SCREENING_RULES)),
                        help="arms to leave out")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time (default) or this thread's CPU time, for a busy "
                             "machine; the path's rule/solve split follows it")
    parser.add_argument("--repeat", type=int_at_least(1), default=None, metavar="K",
                        help="run every arm K times per row, interleaved, and keep its "
                             f"minimum (default: until an arm has been timed for "
                             f"{AUTO_BUDGET:g} s, at most {AUTO_MAX_ROUNDS} times)")
    args = parser.parse_args(argv)
    if "warm+shrink" in args.skip:
        parser.error("warm+shrink is the arm every other one is compared with; "
                     "it cannot be skipped")
    return args


def main():
    args = parse_args()
    if args.clock == "cpu":
        global CLOCK
        CLOCK = time.thread_time
        # (an import here would make svmscreen local to main for the wall clock too)
        svmscreen.path._clock = time.thread_time
    names = ["heart_scale"] if args.quick else (args.datasets or list(DATASETS))
    grid = np.geomspace(1e-2, 1e3, 10 if args.quick else args.n_C)
    all_arms = {k: v for k, v in arms(args.rules).items() if k not in args.skip}
    default = "+dvi" if "+dvi" in all_arms else "warm+shrink"
    ratios = {key: [] for key in ("libsvm", "sklearn", "screen", "oracle")}
    per_rule = {arm: {"speedup": [], "rule_share": [], "rule_s": 0.0, "solve_s": 0.0}
                for arm in all_arms if arm[0] == "+"}
    repeat = (f"{args.repeat} interleaved runs" if args.repeat else
              f"interleaved runs until an arm has been timed for {AUTO_BUDGET:g} s "
              f"(at most {AUTO_MAX_ROUNDS})")
    warm_up(all_arms, args.kernels)
    print(f"grid: {grid.size} values of C in [{grid[0]:g}, {grid[-1]:g}], tol {TOL}; "
          f"default arm {default}; {args.clock} clock; seconds: each arm's minimum over "
          f"{repeat} per row")
    for name in names:
        X, y = svmscreen.load_dataset(name)
        rows = args.rows if args.rows is not None else DATASETS.get(name)
        if rows and X.shape[0] > rows:
            X, y = X[:rows], y[:rows]
        for label in args.kernels:
            kernel, multiple = KERNELS[label]
            gamma = None if multiple is None else multiple / X.shape[1]
            results, rounds = best_of(
                {arm: _once(arm, run, X, y, kernel, gamma, grid)
                 for arm, run in all_arms.items()}, repeat=args.repeat)
            base = results["warm+shrink"][1]
            print(f"\n{name} ({X.shape[0]}x{X.shape[1]}), {label}: "
                  f"minimum of {rounds} run{'s' if rounds > 1 else ''} per arm")
            print(f"  {'arm':<12} {'seconds':>9} {'x faster than libsvm':>21} "
                  f"{'max rel obj diff':>16}  notes")
            for arm, (seconds, objectives, extra) in results.items():
                relative = (objectives - base) / np.maximum(np.abs(base), 1e-12)
                diff = float(np.max(np.abs(relative)))
                speed = (f"{results['libsvm'][0] / seconds:.2f}" if "libsvm" in results
                         else "not measured")
                note = "  ".join(f"{k}={v:.3g}" for k, v in extra.items())
                # A reference worse than our solution (a higher dual
                # objective) at some C stopped short of the optimum: LIBSVM
                # prints "reaching max number of iterations" there.
                may_stop_short = arm in REFERENCE_ARMS or extra.get("max_iter", 0) > 0
                limit = 1e-2 if may_stop_short else 1e-4
                stopped_short = (diff > limit and may_stop_short
                                 and bool(np.all(relative > -1e-6)))
                if stopped_short:
                    note = (f"objective above ours by > {limit:g} at "
                            f"{int(np.sum(relative > limit))} of {len(grid)} C "
                            "(stopped short: iteration cap)")
                print(f"  {arm:<12} {seconds:9.3f} {speed:>21} {diff:16.2e}  {note}")
                if diff > limit and not stopped_short:
                    raise AssertionError(f"{arm} disagrees with warm+shrink by {diff:.2e} "
                                         f"(limit {limit:g})")
            ours = results[default][0]
            if "libsvm" in results:
                ratios["libsvm"].append(results["libsvm"][0] / ours)
            if "sklearn" in results:
                ratios["sklearn"].append(results["sklearn"][0] / ours)
            if default != "warm+shrink":
                # (without +dvi the default is warm+shrink itself: no on/off)
                ratios["screen"].append(results["warm+shrink"][0] / ours)
            if "oracle" in results:
                ratios["oracle"].append(ours / results["oracle"][0])
            for arm, stats in per_rule.items():
                if arm in results:
                    stats["speedup"].append(results["warm+shrink"][0] / results[arm][0])
                    stats["rule_share"].append(results[arm][2]["rule_share"])
                    stats["rule_s"] += results[arm][2]["rule_s"]
                    stats["solve_s"] += results[arm][2]["solve_s"]
    def mean(values, text):
        # an arm skipped or unavailable measured nothing: say so, not "nan"
        return text.format(geometric_mean(values)) if len(values) else "not measured"

    print("\ngeometric means over rows:")
    print(f"  svmscreen default ({default}) vs LIBSVM per C: "
          f"{mean(ratios['libsvm'], '{:.2f}x faster')} (target >= 5)")
    print(f"  vs scikit-learn per C: {mean(ratios['sklearn'], '{:.2f}x faster')}")
    print(f"  screening on vs off (both warm + shrinking): "
          f"{mean(ratios['screen'], '{:.2f}x')} (target >= 1.3)")
    print(f"  default / oracle time: {mean(ratios['oracle'], '{:.2f}')} (target <= 2)")
    if ratios["oracle"] and ratios["screen"]:
        print(f"  warm+shrink / oracle time (what a perfect rule could give): "
              f"{geometric_mean(np.array(ratios['oracle']) * np.array(ratios['screen'])):.2f}x")
    for arm, stats in per_rule.items():
        share = np.array(stats["rule_share"])
        if share.size:
            print(f"  {arm}: on/off {geometric_mean(stats['speedup']):.2f}x; rule time / solve "
                  f"time: max {share.max():.3f}, mean {share.mean():.3f}, rows > 0.05: "
                  f"{int(np.sum(share > 0.05))} of {share.size} (target: none); over all "
                  f"rows {stats['rule_s'] / max(stats['solve_s'], 1e-12):.3f} "
                  f"({stats['rule_s']:.3f} s of rule, {stats['solve_s']:.3f} s of solve)")


if __name__ == "__main__":
    main()
