"""The ``svmscreen`` command (also ``python -m svmscreen``).

    svmscreen path FILE [--kernel rbf --gamma G --C-min 0.01 --C-max 1000
                         --n-C 50 --cv 5 --screening dvi --compare]

solves the whole regularization path on a LIBSVM-format data file (.gz, .bz2
and .xz are read as is): one row per C, then the best C and the total time.
More than two classes are classified one-vs-one, as LIBSVM does: a path per
pair of classes, the rows summing the pairs (#SV counts each sample once).

    svmscreen fit FILE [--test FILE] [--kernel rbf] [-C 1] [--gamma G] [--cv 5]

fits one SVM (one-vs-one for more than two classes) and prints its size,
objective, duality gap, time and accuracy.
"""
import argparse
import importlib.util
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from svmscreen._validation import INT_MAX, check_n_jobs
from svmscreen.datasets import load_svmlight_file
from svmscreen.libsvm.commands import broken_pipe_exit
from svmscreen.model import fit_binary
from svmscreen.path import (EPSILON_MIN, MAX_N_C, SCREENING_RULES, cv_splits, log_grid,
                            may_be_indefinite, train_path)


def _count(number, noun):
    """"1 value", "50 values"."""
    return f"{number} {noun}" + ("" if number == 1 else "s")


def add_kernel_options(parser):
    parser.add_argument("--kernel", default="rbf",
                        choices=["linear", "poly", "rbf", "sigmoid"])
    parser.add_argument("--gamma", type=_finite("gamma", zero=True), default=None,
                        help="default 1/n_features")
    parser.add_argument("--coef0", type=_within(float, np.isfinite, "a finite coef0"),
                        default=0.0)
    parser.add_argument("--degree", type=_within(int, lambda degree: 0 <= degree <= INT_MAX,
                                                 f"a degree in [0, {INT_MAX}]"), default=3)
    parser.add_argument("--tol", type=_finite("tolerance"), default=1e-3)
    parser.add_argument("--cache-size", type=_finite("size"), default=100.0, help="MB")
    parser.add_argument("--no-intercept", action="store_true", help="bias-free SVM")
    parser.add_argument("--no-shrinking", action="store_true")


def _folds(text):
    """--cv: 0 (none) or at least 2 folds."""
    try:
        folds = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a number of folds, got {text!r}") from None
    if folds != 0 and folds < 2:
        raise argparse.ArgumentTypeError(f"needs 0 (no cross-validation) or at least 2 "
                                         f"folds, got {folds}")
    return folds


def _finite(what, zero=False):
    """An argparse type: a finite number > 0 (>= 0 with ``zero``), refused
    under the option's name, before the data are read (train_path's own
    check names its parameter: cache_size for --cache-size)."""
    if zero:
        return _within(float, lambda value: 0.0 <= value < float("inf"),
                       f"a finite {what} >= 0")
    return _within(float, lambda value: 0.0 < value < float("inf"),
                   f"a positive, finite {what}")


def _within(convert, allowed, needs):
    """An argparse type: ``convert(text)`` for which ``allowed`` holds (is
    true, and raises no ValueError), refused under the option's name before
    the data are read; train_path refused it after the data line, in its
    parameter's name."""
    def parse(text):
        try:
            ok = allowed(value := convert(text))
        except ValueError:
            ok = False
        if not ok:
            raise argparse.ArgumentTypeError(f"needs {needs}, got {text!r}")
        return value
    return parse


def _count_of_C(text):
    """--n-C: a positive number of C values, within what an array can hold."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a positive integer, got {text!r}") from None
    if count <= 0:
        raise argparse.ArgumentTypeError(f"needs a positive integer, got {text!r}")
    if count > MAX_N_C:
        raise argparse.ArgumentTypeError(f"{text} is more values than an array can hold "
                                         f"(at most {MAX_N_C})")
    return count


def _n_jobs(text):
    """--n-jobs: joblib's n_jobs, and joblib to run them (an optional
    dependency: without it the path stopped with an ImportError traceback,
    after the data line)."""
    n_jobs = _within(int, check_n_jobs, "a nonzero integer (joblib's n_jobs)")(text)
    if n_jobs != 1 and importlib.util.find_spec("joblib") is None:
        raise argparse.ArgumentTypeError(f"{n_jobs} jobs need joblib: "
                                         "pip install 'svmscreen[parallel]'")
    return n_jobs


def build_parser():
    # the docstring's first line, without its reST quotes
    description = __doc__.split("\n\n")[0].replace("``", "")
    parser = argparse.ArgumentParser(prog="svmscreen", description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    path = sub.add_parser("path", help="the regularization path over C, with screening")
    path.add_argument("file")
    add_kernel_options(path)
    path.add_argument("--C-min", type=_finite("C"), default=1e-2)
    path.add_argument("--C-max", type=_finite("C"), default=1e3)
    path.add_argument("--n-C", type=_count_of_C, default=50)
    path.add_argument("--grid", choices=["log", "epsilon"], default="log")
    path.add_argument("--epsilon", type=_within(float, lambda eps: EPSILON_MIN <= eps < 1,
                                                f"an epsilon in [{EPSILON_MIN:g}, 1)"),
                      default=1e-3)
    path.add_argument("--cv", type=_folds, default=5, help="folds (0: no cross-validation)")
    path.add_argument("--screening", default="dvi", choices=list(SCREENING_RULES) + ["none"])
    path.add_argument("--n-jobs", type=_n_jobs, default=None)
    path.add_argument("--compare", action="store_true",
                      help="also time the path without screening")
    path.add_argument("--verbose", action="store_true", help="progress bar")
    fit = sub.add_parser("fit", help="fit one SVM on a LIBSVM-format file")
    fit.add_argument("file")
    fit.add_argument("--test", help="LIBSVM-format file to report test accuracy on")
    add_kernel_options(fit)
    fit.add_argument("-C", type=_finite("C"), default=1.0)
    fit.add_argument("--cv", type=_folds, default=5, help="folds for CV accuracy (0: none)")
    return parser


def _negative_values_joined(argv, parser):
    """argv with ``--coef0 -1e-3`` written ``--coef0=-1e-3``.

    argparse (Python 3.11) takes a token after an option for its value only
    if it does not start with "-" or is a plain negative number (-1, -.5):
    -1e-3 and -inf were read as unknown options ("expected one argument").
    A token that float() reads is joined to the option before it, if that
    option (or the unique option it abbreviates) takes a value; after "--"
    nothing is touched.
    """
    takes_value = {name for sub in _subparsers(parser) for action in sub._actions
                   if action.nargs is None and action.option_strings
                   for name in action.option_strings}
    out, tokens = [], iter(argv)
    for token in tokens:
        out.append(token)
        if token == "--":
            out.extend(tokens)
            break
        if not token.startswith("-") or "=" in token:
            continue
        named = [token] if token in takes_value else [
            name for name in takes_value if token.startswith("--") and name.startswith(token)]
        if len(named) != 1:
            continue
        following = next(tokens, None)
        if following is None:
            break
        if following.startswith("-") and _is_number(following):
            out[-1] = f"{token}={following}"
        else:
            out.append(following)
    return out


def _subparsers(parser):
    """The parser and its sub-commands' parsers."""
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers.extend(action.choices.values())
    return parsers


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _worker_ready():
    """A no-op task whose unpickling imports svmscreen in a worker."""
    return 0


def _check_path_args(args, y):
    """What train_path would refuse in its parameters' names (C_range, n_C,
    cv), in the options' names, before anything is printed."""
    if args.C_min > args.C_max:
        raise ValueError(f"--C-min {args.C_min:g} is above --C-max {args.C_max:g}")
    if args.grid == "log" and args.n_C > 1 and args.C_min == args.C_max:
        raise ValueError(f"--C-min and --C-max are both {args.C_min:g}: give --n-C 1 or "
                         "a wider range")
    if args.grid == "log":
        try:
            log_grid((args.C_min, args.C_max), args.n_C)
        except ValueError:
            raise ValueError(f"--C-min {args.C_min!r} to --C-max {args.C_max!r} holds fewer "
                             f"than --n-C {args.n_C} distinct values: give a smaller --n-C "
                             "or a wider range") from None
    classes, counts = np.unique(y, return_counts=True)
    # an empty file has no smallest class, and in a file of one class --cv
    # is not what is wrong: train_path's own error names the problem
    if args.cv >= 2 and counts.size >= 2 and args.cv > counts.min():
        raise ValueError(f"--cv {args.cv} is larger than the smallest class "
                         f"({counts.min()} samples)")
    if args.grid == "epsilon" and classes.size > 2:
        raise ValueError(f"--grid epsilon needs two classes, the file has {classes.size} "
                         "(each pair would step its own grid): use --grid log")
    if args.grid == "epsilon" and may_be_indefinite(args.kernel, args.coef0):
        # train_path's words ("give C or use grid='log'") offered a C grid,
        # which the command has no option for
        raise ValueError(f"--grid epsilon needs a positive semi-definite kernel (its steps "
                         f"are certified by weak duality), which --kernel {args.kernel} with "
                         f"--coef0 {args.coef0:g} need not be: use --grid log")


def run_path(args, out):
    X, y = load_svmlight_file(args.file)
    _check_path_args(args, y)
    screening = None if args.screening == "none" else args.screening
    options = dict(C_range=(args.C_min, args.C_max), n_C=args.n_C, grid=args.grid,
                   epsilon=args.epsilon, kernel=args.kernel, gamma=args.gamma,
                   coef0=args.coef0, degree=args.degree, tol=args.tol,
                   cache_size=args.cache_size, fit_intercept=not args.no_intercept,
                   shrinking=not args.no_shrinking, keep="summary")
    n_classes = np.unique(y).size
    one_vs_one = (f", one-vs-one ({n_classes * (n_classes - 1) // 2} pairs: each row sums "
                  "them)" if n_classes > 2 else "")
    print(f"data: {args.file}: {X.shape[0]} samples, {X.shape[1]} features, {n_classes} "
          f"classes{one_vs_one}; {args.kernel} kernel, screening {args.screening}", file=out)
    if args.compare and args.n_jobs not in (None, 1) and (args.cv >= 2 or n_classes > 2):
        # start joblib's workers (and their import of svmscreen) before the
        # timed runs (folds, or one-vs-one pairs, run there): the first run
        # would otherwise pay for both, and the ratio would be meaningless
        from joblib import Parallel, delayed
        Parallel(n_jobs=args.n_jobs)(delayed(_worker_ready)()
                                     for _ in range(2 * max(args.cv, 2)))
    start = time.perf_counter()
    result = train_path(X, y, screening=screening, cv=args.cv if args.cv >= 2 else None,
                        n_jobs=args.n_jobs, verbose=args.verbose, **options)
    seconds = time.perf_counter() - start
    print(result.summary(), file=out)
    if result.cv_accuracy is not None:
        best = result.best_index
        print(f"best C = {result.C[best]:.6g} (CV accuracy {100 * result.cv_mean[best]:.2f}% "
              f"+/- {100 * result.cv_std[best]:.2f})", file=out)
    put_back = int(result.put_back.sum())
    print(f"total time {seconds:.2f} s for {_count(len(result), 'value')} of C"
          f"{' and ' + str(args.cv) + ' folds' if args.cv >= 2 else ''}; "
          f"{_count(put_back, 'sample')} put back", file=out)
    if args.compare:
        start = time.perf_counter()
        train_path(X, y, screening=None, cv=args.cv if args.cv >= 2 else None,
                   n_jobs=args.n_jobs, **options)
        plain = time.perf_counter() - start
        print(f"without screening: {plain:.2f} s (screening speed-up {plain / seconds:.2f}x)",
              file=out)
    return 0


def _fit_splits(args, y):
    """The CV splits of ``svmscreen fit`` (None without --cv), and why
    there are none when a class is smaller than --cv: --cv 5 is the
    default, so a small class gets a line in the report, not an error."""
    if args.cv < 2:
        return None, None
    try:
        return [(np.flatnonzero(train), np.flatnonzero(held))
                for train, held in cv_splits(args.cv, y)], None
    except ValueError as exc:
        return None, f"{args.cv}-fold CV acc. not computed: {exc}"


def _with_columns(X, n_features):
    """The CSR matrix X widened to n_features columns (zeros)."""
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def run_fit(args, out):
    X, y = load_svmlight_file(args.file)
    # LIBSVM's default gamma, 1 / the training file's largest index, before
    # any widening below (0 for a file without features, as svm-train's)
    n_features = X.shape[1]
    if args.gamma is not None:
        gamma = args.gamma
    else:
        gamma = 1.0 / n_features if n_features else 0.0
    test = None
    if args.test:
        # read before the fit (a bad file fails first); features beyond the
        # training file's count in the kernel as in svm-predict (zero weight,
        # but in the RBF distance), so both get the wider width
        X_test, y_test = load_svmlight_file(args.test)
        if not y_test.size:     # the prediction's "X is empty", after the report
            raise ValueError(f"--test {args.test} has no samples")
        width = max(X.shape[1], X_test.shape[1])
        X, test = _with_columns(X, width), (_with_columns(X_test, width), y_test)
    params = dict(C=args.C, kernel=args.kernel, gamma=gamma, coef0=args.coef0,
                  degree=args.degree, tol=args.tol, cache_size=args.cache_size,
                  fit_intercept=not args.no_intercept, shrinking=not args.no_shrinking)
    splits, no_cv = _fit_splits(args, y)
    # one class too: fit_binary would say "exactly two classes", and the
    # command takes any number from two up
    if np.unique(y).size != 2:
        return _fit_one_vs_one(args, X, y, n_features, params, splits, no_cv, test, out)
    start = time.perf_counter()
    model = fit_binary(X, y, **params)
    seconds = time.perf_counter() - start
    print(f"data          {args.file}: {X.shape[0]} samples, {n_features} features", file=out)
    print(f"model         {model.kernel} kernel, C = {model.C:g}, gamma = {model.gamma:g}, "
          f"intercept = {model.intercept_:.6g}", file=out)
    print(f"solver        {model.n_iter_} iterations, {model.n_support_} support vectors, "
          f"{seconds:.3f} s", file=out)
    print(f"objective     {model.objective_:.10g} (duality gap {model.duality_gap_:.3g})",
          file=out)
    cv_accuracy = None
    if splits is not None:
        correct = 0
        for train, held in splits:
            correct += np.sum(fit_binary(X[train], y[train], **params).predict(X[held]) == y[held])
        cv_accuracy = correct / y.shape[0]
    _print_accuracies(out, model, X, y, test, args.cv, cv_accuracy, no_cv)
    return 0


def _print_accuracies(out, model, X, y, test, folds, cv_accuracy, no_cv):
    """``svmscreen fit``'s last lines: training, test (if given) and CV
    accuracy, or why there is no CV figure."""
    print(f"train acc.    {100 * np.mean(model.predict(X) == y):.2f}%", file=out)
    if test is not None:
        print(f"test acc.     {100 * np.mean(model.predict(test[0]) == test[1]):.2f}%",
              file=out)
    if cv_accuracy is not None:
        print(f"{folds}-fold CV acc. {100 * cv_accuracy:.2f}%", file=out)
    elif no_cv:
        print(no_cv, file=out)


def _fit_one_vs_one(args, X, y, n_features, params, splits, no_cv, test, out):
    """``svmscreen fit`` on more than two classes (or one: train_path's
    error): one-vs-one, as a path of one C (``train_path``, with its CV
    folds), its rows summing the pairs; the time printed is the pairs'
    solves on all data."""
    C = params.pop("C")
    path = train_path(X, y, C=[C], screening=None, cv=splits, **params)
    seconds = path.solve_seconds[0] + path.rule_seconds[0]
    model = path.model(0)
    first = model.models[0]
    print(f"data          {args.file}: {X.shape[0]} samples, {n_features} features, "
          f"{model.classes_.size} classes", file=out)
    print(f"model         one-vs-one ({len(model.pairs)} pairs), {first.kernel} kernel, "
          f"C = {C:g}, gamma = {first.gamma:g}", file=out)
    print(f"solver        {int(path.n_iter[0])} iterations, {model.n_support_} support "
          f"vectors, {seconds:.3f} s", file=out)
    print(f"objective     {path.objective[0]:.10g} summed over the pairs (duality gap "
          f"{path.duality_gap[0]:.3g})", file=out)
    cv_accuracy = None
    if splits is not None:
        # the held-out samples' accuracy, as for two classes (svm-train -v's):
        # the folds' mean weighs a sample of a smaller fold more
        sizes = np.array([held.size for _, held in splits])
        cv_accuracy = sizes @ path.cv_accuracy[:, 0] / sizes.sum()
    _print_accuracies(out, model, X, y, test, args.cv, cv_accuracy, no_cv)
    return 0


class _WarningLines:
    """``warnings.showwarning`` of the commands: a warning is a line of the
    report, printed once (the full path and each fold would raise it from
    other source lines, which the default filter tells apart)."""

    def __init__(self):
        self.seen = set()

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        if (str(message), category) not in self.seen:
            self.seen.add((str(message), category))
            print(f"svmscreen: warning: {message}", file=sys.stderr if file is None else file)


def main(argv=None, out=None):
    # sys.stdout when called, not when imported: a test's captured stream
    # may be closed by the next call
    out = sys.stdout if out is None else out
    parser = build_parser()
    args = parser.parse_args(_negative_values_joined(
        sys.argv[1:] if argv is None else list(argv), parser))
    try:
        with warnings.catch_warnings():     # the user's -W filters still apply
            warnings.showwarning = _WarningLines()
            if args.command == "fit":
                return run_fit(args, out)
            if args.command == "path":
                return run_path(args, out)
    except BrokenPipeError:                   # an OSError: first
        return broken_pipe_exit()
    except (ValueError, TypeError, OSError, Warning) as exc:   # Warning: by -W error
        print(f"svmscreen: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        # (numpy's _ArrayMemoryError says how much it wanted)
        print("svmscreen: error: not enough memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("svmscreen: interrupted", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
