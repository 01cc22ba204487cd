"""Linear-kernel fits over C, with and without the intercept, against peers
solving the same problem in the same run.

    python benchmarks/bench_linear.py [--datasets ...] [--C 0.1 1 10 100] [--repeat 3]

The linear kernel is where SMO crawls (few features, many free vectors or
unscaled data) and where the solver's fallback works on Q's factor
(docs/madelon_linear.md, session 33).  Two problems per row:

* with the intercept (LIBSVM's C-SVC): ``fit_binary`` against
  ``libsvm-official``'s ``svm_train -t 0``;
* bias-free (the screening papers' SVM, ``fit_intercept=False``): against
  scikit-learn's ``LinearSVC(loss="hinge", fit_intercept=False)``,
  liblinear's dual coordinate descent on that same dual.

Each arm's CPU time is its minimum over ``--repeat`` interleaved runs
(``_measure.best_of``); the ratio is svmscreen's time over the peer's.  The
quality column compares the primal objectives 1/2 ||w||^2 + C sum max(0, 1 -
y_i f(x_i)) of the two models, (peer - ours) / |ours|: positive where ours is
lower.  Each solver stops by
its own rule at tol 1e-3, so neither is exact; a peer that stops at its
iteration cap (LIBSVM's 10 million, liblinear's 1000 epochs) is marked
"cap", and its time is then no measure of the problem's.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np

from _measure import best_of, geometric_mean, int_at_least, positive_float

DATASETS = ["heart_scale", "australian_scale", "diabetes_scale", "breast-cancer_scale",
            "german.numer_scale", "splice", "svmguide1"]
TOL = 1e-3


def primal_objective(X, s, C, w, b):
    """1/2 ||w||^2 + C sum_i max(0, 1 - s_i (x_i'w + b))."""
    margins = s * (np.asarray(X @ w).ravel() + b)
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - margins).sum())


def cpu_seconds(call):
    """(CPU seconds of one call(), its result)."""
    start = time.process_time()
    result = call()
    return time.process_time() - start, result


def ours(X, y, C, fit_intercept):
    """One fit_binary: (seconds, w, b, status)."""
    from svmscreen import fit_binary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, model = cpu_seconds(lambda: fit_binary(X, y, C=C, kernel="linear", tol=TOL,
                                                        fit_intercept=fit_intercept))
    w = np.asarray(model.dual_coef_ @ X[model.support_]).ravel()
    # (decision values are positive for classes_[1], as the peers' below)
    return seconds, w, float(model.intercept_), model.status_


def with_stderr(call):
    """(call(), what it wrote to file descriptor 2): svm.cpp reports its
    iteration cap there with fprintf, -q or not."""
    sys.stderr.flush()
    with tempfile.TemporaryFile() as capture:
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            result = call()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        return result, capture.read().decode(errors="replace")


def libsvm_peer(X, y, C):
    """One svm_train -t 0: (seconds, w, b, status)."""
    from libsvm.svmutil import svm_train
    (seconds, model), said = with_stderr(
        lambda: cpu_seconds(lambda: svm_train(y, X, f"-s 0 -t 0 -c {C} -e {TOL} -q")))
    support = np.asarray(model.get_sv_indices()) - 1
    coef = np.asarray(model.get_sv_coef()).ravel()
    w = np.asarray(coef @ X[support]).ravel()
    b = -float(model.rho[0])
    # LIBSVM's decision values are positive for its first label
    if model.get_labels()[0] != max(model.get_labels()):
        w, b = -w, -b
    return seconds, w, b, "cap" if "max number of iterations" in said else "optimal"


def liblinear_peer(X, y, C):
    """One LinearSVC(loss="hinge", fit_intercept=False): (seconds, w, 0, status)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # (its order of coordinates is random: a fixed seed, the same run twice)
        seconds, model = cpu_seconds(lambda: LinearSVC(
            C=C, loss="hinge", dual=True, fit_intercept=False, tol=TOL,
            random_state=0).fit(X, y))
    capped = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return seconds, model.coef_.ravel(), 0.0, "cap" if capped else "optimal"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--C", nargs="+", type=positive_float, default=[0.1, 1.0, 10.0, 100.0])
    parser.add_argument("--repeat", type=int_at_least(1), default=3)
    args = parser.parse_args(argv)
    from svmscreen import load_dataset
    print(f"linear kernel, tol {TOL}; CPU seconds, minimum of {args.repeat} runs; "
          "ratio = ours / peer; objective: (peer - ours) / |ours| of the primal")
    print(f"{'data':20s} {'C':>6s} | {'problem':10s} {'peer':9s} {'peer s':>8s} "
          f"{'ours s':>8s} {'ratio':>7s} | {'objective':>10s} | status peer/ours")
    ratios = {"intercept": [], "bias-free": []}
    converged = {"intercept": [], "bias-free": []}      # rows where both stopped by their rule
    for name in args.datasets:
        X, y = load_dataset(name)
        labels = np.unique(y)
        if labels.size != 2:
            sys.exit(f"{name}: bench_linear needs two classes, got {labels.size}")
        s = np.where(y == labels[1], 1.0, -1.0)
        for C in args.C:
            for problem, peer, peer_fit in (("intercept", "libsvm", libsvm_peer),
                                           ("bias-free", "liblinear", liblinear_peer)):
                # each arm's fastest of --repeat interleaved runs
                best, _ = best_of({
                    "peer": lambda: peer_fit(X, y, C),
                    "ours": lambda: ours(X, y, C, problem == "intercept")},
                    repeat=args.repeat)
                theirs, mine = best["peer"], best["ours"]
                p_theirs = primal_objective(X, s, C, theirs[1], theirs[2])
                p_mine = primal_objective(X, s, C, mine[1], mine[2])
                ratio = mine[0] / max(theirs[0], 1e-9)
                ratios[problem].append(ratio)
                if theirs[3] == mine[3] == "optimal":
                    converged[problem].append(ratio)
                print(f"{name:20s} {C:6g} | {problem:10s} {peer:9s} {theirs[0]:8.3f} "
                      f"{mine[0]:8.3f} {ratio:7.2f} | {(p_theirs - p_mine) / abs(p_mine):10.2e} "
                      f"| {theirs[3]}/{mine[3]}", flush=True)
    for problem, values in ratios.items():
        if values:
            both = converged[problem]
            print(f"geometric mean of ours / peer, {problem}: {geometric_mean(values):.2f} "
                  f"over {len(values)} rows, worst {max(values):.2f}; over the "
                  f"{len(both)} rows where both converged: {geometric_mean(both):.2f}")


if __name__ == "__main__":
    main()
