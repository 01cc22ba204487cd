"""scikit-learn users' two jobs, timed against scikit-learn in the same run:

* model selection over C: ``GridSearchCV(sklearn.svm.SVC(), {"C": grid})``
  against ``svmscreen.estimators.SVCPathCV`` (one warm-started, screened
  path per fold, per pair of classes for letter.scale) on the same folds,
  and ``GridSearchCV`` over svmscreen's ``SVC`` (the solver alone, no path);
* one multi-class fit: ``sklearn.svm.SVC`` against ``svmscreen.estimators.SVC``
  (one-vs-one) on letter.scale, scored on letter.scale.t.

Both sides are single-threaded (n_jobs=1, OMP_NUM_THREADS=1), with the same
gamma (1/d), tol 1e-3 and a 100 MB cache.  The model-selection rows print the
best C of each arm and the largest difference of their per-C mean CV
accuracies (the optima differ by the tolerance, so a sample on the margin can
flip); the run fails if that difference exceeds 2 samples in a fold.

Before anything is timed, every arm runs once, untimed, on a small problem
(the first 100 rows of heart_scale, 2 C, 2 folds; 500 rows of letter.scale
for the multi-class fit): the first call of an arm pays for lazy imports and
first-use set-up (10-35 ms each on heart_scale, a tenth of an arm there),
which would otherwise fall on whichever arm runs first.  Then each row runs
its arms in interleaved rounds, each round in another order, and prints each
arm's minimum (benchmarks/_measure.py best_of): a row is run again until one
of its arms has been timed for 0.5 s in all, at most 5 rounds, so small rows
get several runs and a row with an arm of 0.5 s or more runs once; the
"runs" column says how many.  The best C and CV accuracies are those of the
fastest run (every arm is deterministic).

    python benchmarks/bench_estimators.py                 # the table
    python benchmarks/bench_estimators.py --quick         # heart_scale, 10 C, no letter
"""
import argparse
import os
import time

# one thread for every arm: libsvm-official is built with OpenMP, and a
# shell's OMP_NUM_THREADS=2 made its arm run on two (the cpu clock counts one)
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
from sklearn import svm  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold  # noqa: E402

import svmscreen  # noqa: E402
from _measure import best_of, geometric_mean, int_at_least  # noqa: E402
from svmscreen.estimators import SVC, SVCPathCV  # noqa: E402

DATASETS = {  # name -> rows used (None: all)
    "heart_scale": None, "australian_scale": None, "diabetes_scale": None, "splice": None,
    "svmguide1": None, "a9a": 5000, "ijcnn1": 5000,
    "letter.scale": 3000,       # 26 classes: SVCPathCV one-vs-one, 325 pairs a fold
}
TOL = 1e-3
CACHE_MB = 100.0
N_FOLDS = 5
CLOCK = time.perf_counter


def selection_arms(X, y, grid, splits, gamma):
    """{arm: function running it once -> (seconds, best C, mean CV accuracy per C)}."""
    def grid_search(estimator):
        def run():
            start = CLOCK()
            search = GridSearchCV(estimator, {"C": grid}, cv=splits, n_jobs=1).fit(X, y)
            return (CLOCK() - start, search.best_params_["C"],
                    search.cv_results_["mean_test_score"])
        return run

    def path_cv():
        start = CLOCK()
        path = SVCPathCV(Cs=grid, cv=splits, gamma=gamma, tol=TOL,
                         cache_size=CACHE_MB).fit(X, y)
        return CLOCK() - start, path.C_, path.cv_accuracy_.mean(axis=0)

    return {"sklearn grid": grid_search(svm.SVC(gamma=gamma, tol=TOL, cache_size=CACHE_MB)),
            "svmscreen grid": grid_search(SVC(gamma=gamma, tol=TOL, cache_size=CACHE_MB)),
            "SVCPathCV": path_cv}


def multiclass_arms(X, y, C, gamma):
    """{arm: function fitting it once -> (seconds, fitted estimator)}."""
    def fit(make):
        def run():
            estimator = make()
            start = CLOCK()
            estimator.fit(X, y)
            return CLOCK() - start, estimator
        return run
    return {"sklearn SVC": fit(lambda: svm.SVC(C=C, gamma=gamma, tol=TOL,
                                                cache_size=CACHE_MB)),
            "svmscreen SVC": fit(lambda: SVC(C=C, gamma=gamma, tol=TOL, cache_size=CACHE_MB))}


def _int32_indices(X):
    """X with int32 indices, as scikit-learn's sparse SVC wants them; both
    sides get this same matrix."""
    X = X.copy()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


def load(name):
    """A row's data set, cut to its row cap, with int32 indices."""
    X, y = svmscreen.load_dataset(name)
    rows = DATASETS.get(name)
    if rows and X.shape[0] > rows:
        X, y = X[:rows], y[:rows]
    return _int32_indices(X), y


def warm_up(multiclass):
    """Run every arm once, untimed, on a small problem, so that no timed
    arm pays for the lazy imports and first-use set-up of the process."""
    X, y = load("heart_scale")
    X, y = X[:100], y[:100]
    splits = list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y))
    for run in selection_arms(X, y, np.geomspace(0.1, 10, 2), splits,
                              1.0 / X.shape[1]).values():
        run()
    if multiclass:
        X, y = svmscreen.load_dataset("letter.scale")
        for run in multiclass_arms(_int32_indices(X[:500]), y[:500], 10,
                                   1.0 / X.shape[1]).values():
            run()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--datasets", nargs="*", default=None)
    parser.add_argument("--n-C", type=int_at_least(1), default=20)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.thread_time
    names = ["heart_scale"] if args.quick else (args.datasets or list(DATASETS))
    grid = np.geomspace(1e-2, 1e3, 10 if args.quick else args.n_C)
    warm_up(multiclass=not args.quick)
    print(f"model selection: {grid.size} C in [{grid[0]:g}, {grid[-1]:g}], {N_FOLDS} "
          f"stratified folds (the same for every arm), rbf gamma 1/d, tol {TOL}, refit on "
          f"all data; {args.clock} clock; seconds: each arm's minimum over interleaved runs, "
          "after an untimed warm-up of every arm")
    print(f"{'data':<18} {'n':>6} {'sklearn grid':>12} {'ours grid':>10} {'SVCPathCV':>10} "
          f"{'grid/path':>9} {'best C (sk, ours, path)':>26} {'max CV diff':>11} {'runs':>4}")
    speedups = []
    for name in names:
        X, y = load(name)
        splits = list(StratifiedKFold(N_FOLDS, shuffle=True, random_state=0).split(X, y))
        gamma = 1.0 / X.shape[1]
        out, rounds = best_of(selection_arms(X, y, grid, splits, gamma))
        reference = out["sklearn grid"][2]
        diff = max(float(np.max(np.abs(scores - reference))) for _, _, scores in out.values())
        fold_size = min(len(test) for _, test in splits)
        if diff > 2.0 / fold_size:
            raise AssertionError(f"{name}: CV accuracies differ by {diff:.4f}")
        seconds = {arm: value[0] for arm, value in out.items()}
        speedups.append(seconds["sklearn grid"] / seconds["SVCPathCV"])
        best = ", ".join(f"{out[arm][1]:.3g}" for arm in out)
        print(f"{name:<18} {X.shape[0]:>6} {seconds['sklearn grid']:>12.2f} "
              f"{seconds['svmscreen grid']:>10.2f} {seconds['SVCPathCV']:>10.2f} "
              f"{speedups[-1]:>9.2f} {best:>26} {diff:>11.4f} {rounds:>4}")
    print(f"geometric mean, sklearn GridSearchCV / SVCPathCV: {geometric_mean(speedups):.2f}x")
    if args.quick:
        return
    X, y = svmscreen.load_dataset("letter.scale")
    X_test, y_test = svmscreen.load_dataset("letter.scale.t", n_features=X.shape[1])
    X, X_test = _int32_indices(X), _int32_indices(X_test)
    print(f"\none multi-class fit: letter.scale ({X.shape[0]} x {X.shape[1]}, "
          f"{np.unique(y).size} classes), C = 10, gamma 1/d")
    fits, rounds = best_of(multiclass_arms(X, y, 10, 1 / X.shape[1]))
    for arm, (fit_seconds, estimator) in fits.items():
        accuracy = np.mean(estimator.predict(X_test) == y_test)
        print(f"  {arm:<14} fit {fit_seconds:7.2f} s (minimum of {rounds})  test accuracy "
              f"{100 * accuracy:.2f}%  support vectors {int(np.sum(estimator.n_support_))}")

if __name__ == "__main__":
    main()
