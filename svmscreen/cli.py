"""The ``svmscreen`` command.

    svmscreen fit FILE [--test FILE] [--kernel rbf] [-C 1] [--gamma G] [--cv 5]

fits one binary SVM on a LIBSVM-format data file (.gz/.bz2/.xz read as is)
and prints the model's size, objective, duality gap, time and accuracy.
"""
import argparse
import sys
import time

import numpy as np

from svmscreen.model import fit_binary


def stratified_folds(y, n_folds, seed=0):
    """Fold number of each sample, classes spread evenly over the folds."""
    rng = np.random.default_rng(seed)
    fold = np.empty(y.shape[0], dtype=np.intp)
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        fold[members] = np.arange(members.size) % n_folds
    return fold


def build_parser():
    parser = argparse.ArgumentParser(prog="svmscreen", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fit = sub.add_parser("fit", help="fit one binary SVM on a LIBSVM-format file")
    fit.add_argument("file")
    fit.add_argument("--test", help="LIBSVM-format file to report test accuracy on")
    fit.add_argument("--kernel", default="rbf",
                     choices=["linear", "poly", "rbf", "sigmoid"])
    fit.add_argument("-C", type=float, default=1.0)
    fit.add_argument("--gamma", type=float, default=None, help="default 1/n_features")
    fit.add_argument("--coef0", type=float, default=0.0)
    fit.add_argument("--degree", type=int, default=3)
    fit.add_argument("--tol", type=float, default=1e-3)
    fit.add_argument("--cache-size", type=float, default=100.0, help="MB")
    fit.add_argument("--no-intercept", action="store_true", help="bias-free SVM")
    fit.add_argument("--no-shrinking", action="store_true")
    fit.add_argument("--cv", type=int, default=5, help="folds for CV accuracy (0: none)")
    return parser


def run_fit(args, out):
    from svmscreen.datasets import load_svmlight_file
    X, y = load_svmlight_file(args.file)
    params = dict(C=args.C, kernel=args.kernel, gamma=args.gamma, coef0=args.coef0,
                  degree=args.degree, tol=args.tol, cache_size=args.cache_size,
                  fit_intercept=not args.no_intercept, shrinking=not args.no_shrinking)
    start = time.perf_counter()
    model = fit_binary(X, y, **params)
    seconds = time.perf_counter() - start
    print(f"data          {args.file}: {X.shape[0]} samples, {X.shape[1]} features", file=out)
    print(f"model         {model.kernel} kernel, C = {model.C:g}, gamma = {model.gamma:g}, "
          f"intercept = {model.intercept_:.6g}", file=out)
    print(f"solver        {model.n_iter_} iterations, {model.n_support_} support vectors, "
          f"{seconds:.3f} s", file=out)
    print(f"objective     {model.objective_:.10g} (duality gap {model.duality_gap_:.3g})",
          file=out)
    print(f"train acc.    {100 * np.mean(model.predict(X) == y):.2f}%", file=out)
    if args.test:
        X_test, y_test = load_svmlight_file(args.test, n_features=X.shape[1])
        print(f"test acc.     {100 * np.mean(model.predict(X_test) == y_test):.2f}%", file=out)
    if args.cv >= 2:
        fold = stratified_folds(y, args.cv)
        correct = 0
        for k in range(args.cv):
            train, held = fold != k, fold == k
            correct += np.sum(fit_binary(X[train], y[train], **params).predict(X[held]) == y[held])
        print(f"{args.cv}-fold CV acc. {100 * correct / y.shape[0]:.2f}%", file=out)
    return 0


def main(argv=None, out=sys.stdout):
    args = build_parser().parse_args(argv)
    try:
        if args.command == "fit":
            return run_fit(args, out)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"svmscreen: error: {exc}", file=sys.stderr)
        return 2
    return 1


if __name__ == "__main__":
    sys.exit(main())
