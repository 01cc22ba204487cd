"""The multi-class path (one-vs-one, as ``svmscreen path`` runs on a file with
more than two classes) against LIBSVM and scikit-learn called once per C, on
the same grid and parameters.

Arms (all single-threaded, tol 1e-3, 100 MB cache, RBF gamma 1/d):
    libsvm        libsvm-official svm_train once per C (one-vs-one inside)
    sklearn       scikit-learn SVC once per C
    path          train_path: a warm-started path per pair of classes, DVI
    path-noscreen train_path, screening=None

The training rows are sorted by label, so that LIBSVM's class order (first
appearance) is the sorted one of the other arms: the order breaks ties of the
votes.  Every arm runs once, untimed, on a small problem before it is timed.
Every arm's test accuracy and total number of support vectors at every C are
compared with LIBSVM's (the run fails if an accuracy differs by more than 0.5
points, or #SV by more than 2%: near-ties of the votes, alphas within tol of
0).

    python benchmarks/bench_multiclass.py            # letter.scale, 15000 x 16, 26 classes
    python benchmarks/bench_multiclass.py --quick    # 1000 rows, 5 values of C
"""
import argparse
import os
import time

# one thread for every arm: libsvm-official is built with OpenMP, and a
# shell's OMP_NUM_THREADS=2 made its arm run on two (the cpu clock counts one)
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

import svmscreen  # noqa: E402
from _measure import int_at_least  # noqa: E402

TOL = 1e-3
CACHE_MB = 100.0
CLOCK = time.perf_counter


def arm_libsvm(X, y, X_test, gamma, grid):
    from libsvm.svmutil import svm_parameter, svm_predict, svm_problem, svm_train
    seconds, accuracy, n_sv = 0.0, [], []
    # converted once, inside the timer (as bench_path's LIBSVM arm)
    start = CLOCK()
    problem = svm_problem(y, X)
    seconds += CLOCK() - start
    for C in grid:
        start = CLOCK()
        model = svm_train(problem, svm_parameter(
            f"-t 2 -c {float(C)!r} -g {gamma!r} -e {TOL} -m {CACHE_MB} -q"))
        seconds += CLOCK() - start
        accuracy.append(svm_predict(np.zeros(X_test.shape[0]), X_test, model, "-q")[0])
        n_sv.append(model.get_nr_sv())
    return seconds, accuracy, n_sv


def arm_sklearn(X, y, X_test, gamma, grid):
    from sklearn.svm import SVC
    seconds, accuracy, n_sv = 0.0, [], []
    for C in grid:
        start = CLOCK()
        model = SVC(C=C, gamma=gamma, tol=TOL, cache_size=CACHE_MB).fit(X, y)
        seconds += CLOCK() - start
        accuracy.append(model.predict(X_test))
        n_sv.append(model.support_.size)
    return seconds, accuracy, n_sv


def arm_path(screening):
    def run(X, y, X_test, gamma, grid):
        start = CLOCK()
        path = svmscreen.train_path(X, y, C=grid, gamma=gamma, tol=TOL, cache_size=CACHE_MB,
                                    screening=screening)
        seconds = CLOCK() - start
        return (seconds, [path.model(t).predict(X_test) for t in range(grid.size)],
                list(path.n_sv))
    return run


ARMS = {"libsvm": arm_libsvm, "sklearn": arm_sklearn, "path": arm_path("dvi"),
        "path-noscreen": arm_path(None)}


def warm_up(arms, X, y, X_test, gamma):
    """Run every arm once, untimed, on a small problem (about 300 rows spread
    over the sorted ones, so over every class; 2 C).  An arm's first run
    pays for lazy imports (svmscreen.path and its modules: 60 ms of the path
    arm's 0.33 s in --quick) and first-use set-up, which would otherwise
    fall on whichever arm runs first."""
    rows = slice(None, None, max(1, X.shape[0] // 300))
    for run in arms.values():
        run(X[rows], y[rows], X_test[:50], gamma, np.geomspace(0.1, 10, 2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="1000 rows (1000 test rows), 5 values of C")
    parser.add_argument("--rows", type=int_at_least(0), default=None,
                        help="training rows (default, or 0: all)")
    parser.add_argument("--n-C", type=int_at_least(1), default=10)
    parser.add_argument("--skip", nargs="*", default=[], choices=list(ARMS),
                        help="arms to leave out")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time, or this thread's CPU time for a busy machine")
    args = parser.parse_args()
    if args.clock == "cpu":
        global CLOCK
        CLOCK = time.thread_time
    X, y = svmscreen.load_dataset("letter.scale")
    X_test, y_test = svmscreen.load_dataset("letter.scale.t")
    rows = 1000 if args.quick else args.rows
    if rows:
        X, y = X[:rows], y[:rows]
    if args.quick:
        X_test, y_test = X_test[:1000], y_test[:1000]
    # LIBSVM orders the classes by first appearance, svmscreen and
    # scikit-learn sort them; the order breaks ties of the votes, which are
    # many at small C.  Sorted rows give every arm the same order.
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    grid = np.geomspace(1e-2, 1e3, 5 if args.quick else args.n_C)
    gamma = 1.0 / X.shape[1]
    print(f"letter.scale: {X.shape[0]} x {X.shape[1]}, {np.unique(y).size} classes; "
          f"test {X_test.shape[0]}; rbf gamma {gamma:g}; {grid.size} values of C in "
          f"[{grid[0]:g}, {grid[-1]:g}], tol {TOL}; {args.clock} clock")
    arms = {arm: run for arm, run in ARMS.items() if arm not in args.skip}
    warm_up(arms, X, y, X_test, gamma)
    results = {arm: run(X, y, X_test, gamma, grid) for arm, run in arms.items()}
    reference = results.get("libsvm")
    print(f"  {'arm':<14} {'seconds':>9} {'x faster than libsvm':>21} "
          f"{'max acc diff (points)':>22} {'max #SV diff':>13}")
    for arm, (seconds, predictions, n_sv) in results.items():
        accuracy = np.array([100 * np.mean(p == y_test) for p in predictions])
        if reference is None:
            speed = acc_diff = sv_diff = float("nan")
        else:
            theirs = np.array([100 * np.mean(np.asarray(p) == y_test) for p in reference[1]])
            speed = reference[0] / seconds
            acc_diff = float(np.max(np.abs(accuracy - theirs)))
            sv_diff = float(np.max(np.abs(np.array(n_sv) - reference[2])
                                   / np.array(reference[2])))
            if acc_diff > 0.5 or sv_diff > 0.02:
                raise AssertionError(f"{arm} disagrees with LIBSVM: accuracy by {acc_diff:.2f} "
                                     f"points, #SV by {100 * sv_diff:.1f}%")
        print(f"  {arm:<14} {seconds:9.2f} {speed:21.2f} {acc_diff:22.2f} "
              f"{100 * sv_diff:12.2f}%")
    if "path" in results and "path-noscreen" in results:
        print(f"  screening on vs off: "
              f"{results['path-noscreen'][0] / results['path'][0]:.2f}x")
    best = int(np.argmax([np.mean(p == y_test) for p in results[next(iter(results))][1]]))
    print(f"  best test accuracy at C = {grid[best]:.4g}")


if __name__ == "__main__":
    main()
