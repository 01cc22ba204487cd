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


def select_C(X, y, grid, splits, gamma):
    """{arm: (seconds, best C, mean CV accuracy per C)}."""
    out = {}
    for arm, estimator in (("sklearn grid", svm.SVC(gamma=gamma, tol=TOL,
                                                     cache_size=CACHE_MB)),
                           ("svmscreen grid", SVC(gamma=gamma, tol=TOL, cache_size=CACHE_MB))):
        start = CLOCK()
        search = GridSearchCV(estimator, {"C": grid}, cv=splits, n_jobs=1).fit(X, y)
        out[arm] = (CLOCK() - start, search.best_params_["C"],
                    search.cv_results_["mean_test_score"])
    start = CLOCK()
    path = SVCPathCV(Cs=grid, cv=splits, gamma=gamma, tol=TOL, cache_size=CACHE_MB).fit(X, y)
    out["SVCPathCV"] = (CLOCK() - start, path.C_, path.cv_accuracy_.mean(axis=0))
    return out


def geometric_mean(values):
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--datasets", nargs="*", default=None)
    parser.add_argument("--n-C", type=int, default=20)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.thread_time
    names = ["heart_scale"] if args.quick else (args.datasets or list(DATASETS))
    grid = np.geomspace(1e-2, 1e3, 10 if args.quick else args.n_C)
    print(f"model selection: {grid.size} C in [{grid[0]:g}, {grid[-1]:g}], {N_FOLDS} "
          f"stratified folds (the same for every arm), rbf gamma 1/d, tol {TOL}, refit on "
          f"all data; {args.clock} clock")
    print(f"{'data':<18} {'n':>6} {'sklearn grid':>12} {'ours grid':>10} {'SVCPathCV':>10} "
          f"{'grid/path':>9} {'best C (sk, ours, path)':>26} {'max CV diff':>11}")
    speedups = []
    for name in names:
        X, y = svmscreen.load_dataset(name)
        rows = DATASETS.get(name)
        if rows and X.shape[0] > rows:
            X, y = X[:rows], y[:rows]
        X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
        splits = list(StratifiedKFold(N_FOLDS, shuffle=True, random_state=0).split(X, y))
        gamma = 1.0 / X.shape[1]
        out = select_C(X, y, grid, splits, gamma)
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
              f"{speedups[-1]:>9.2f} {best:>26} {diff:>11.4f}")
    print(f"geometric mean, sklearn GridSearchCV / SVCPathCV: {geometric_mean(speedups):.2f}x")
    if args.quick:
        return
    X, y = svmscreen.load_dataset("letter.scale")
    X_test, y_test = svmscreen.load_dataset("letter.scale.t", n_features=X.shape[1])
    print(f"\none multi-class fit: letter.scale ({X.shape[0]} x {X.shape[1]}, "
          f"{np.unique(y).size} classes), C = 10, gamma 1/d")
    for arm, estimator in (("sklearn SVC", svm.SVC(C=10, gamma=1 / X.shape[1], tol=TOL,
                                                   cache_size=CACHE_MB)),
                           ("svmscreen SVC", SVC(C=10, gamma=1 / X.shape[1], tol=TOL,
                                                 cache_size=CACHE_MB))):
        if arm.startswith("sklearn"):
            X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
            X_test.indices = X_test.indices.astype(np.int32)
            X_test.indptr = X_test.indptr.astype(np.int32)
        start = CLOCK()
        estimator.fit(X, y)
        fit_seconds = CLOCK() - start
        accuracy = np.mean(estimator.predict(X_test) == y_test)
        print(f"  {arm:<14} fit {fit_seconds:7.2f} s  test accuracy {100 * accuracy:.2f}%  "
              f"support vectors {int(np.sum(estimator.n_support_))}")


if __name__ == "__main__":
    main()
