"""Single binary fits: svmscreen against libsvm-official and scikit-learn SVC.

Every arm runs in its own child process (one thread: OMP_NUM_THREADS=1) with
the same data, C = 1, tol = 1e-3, shrinking on and a 100 MB cache, so that its
peak memory can be read alone.  The table gives times as ratios (svmscreen
over the peer; below 1 is faster), the relative difference of the dual
objective 1/2 a'Qa - sum a (computed the same way for all three), and the
peak resident memory of each fit over its baseline.

The baseline ("base MB") is the child's resident set just before the fit:
interpreter, the three libraries imported and the data loaded, the same
work in every child.  On Linux the kernel's high-water mark is reset to it
there (benchmarks/_measure.py peak_start), so a fit's peak is its own even
where the loading had left the mark higher; elsewhere the figure is the
growth of the mark, a lower bound, printed with ">=".

    python benchmarks/bench_fit.py            # heart_scale, a9a, ijcnn1, madelon, madelon_scaled
    python benchmarks/bench_fit.py --quick    # heart_scale only (CI smoke)
    python benchmarks/bench_fit.py --rows 0   # full a9a and ijcnn1 (default: 20k rows)
    python benchmarks/bench_fit.py --q-rounding float32   # svmscreen with LIBSVM's
                                              # float-rounded Q (fit_binary q_rounding)

Each arm is timed --repeat times (9 times when every arm takes under 0.1 s;
fresh process each time) and the best time is kept, which damps the noise of
a shared machine; the arms alternate so that a slow phase of the machine hits
all of them alike.

A child that runs past --time-limit is stopped and its row kept: the time
its fit had run by then (the child's start, imports and loading excluded)
is a lower bound of the fit's time, printed as ">t", and the ratios become
bounds (">2.50": svmscreen took at least 2.5 times LIBSVM's time; "<0.40":
at most 0.4 times).  Below the table the geometric mean is printed over the
rows where both svmscreen and LIBSVM finished, and then, when there are
such rows, with the rows where svmscreen timed out counted at their bound
(a lower bound of the mean over those rows) and with the rows where LIBSVM
timed out counted at theirs (an upper bound): leaving the timed-out rows
out would drop exactly the rows where one side is slowest.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from _measure import (bounded_geometric_means, int_at_least, peak_growth, peak_start,
                      positive_float, timed_ratio)

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ["heart_scale", "a9a", "ijcnn1", "madelon", "madelon_scaled"]
KERNELS = ["rbf", "linear"]
ARMS = ["libsvm", "sklearn", "svmscreen"]
CACHE_MB = 100.0
SMALL_REPEAT = 9      # repeats when every arm fits in under 0.1 s
TOL = 1e-3
C = 1.0


def load(name, rows):
    """A shipped set; ``<name>_scaled`` is it scaled to [-1, 1] per feature,
    as ``svm-scale`` does by default (madelon ships unscaled, and on the raw
    features a linear-kernel fit at C = 1 runs into the iteration cap in
    every solver)."""
    from svmscreen.datasets import load_dataset
    scaled = name.endswith("_scaled")
    X, y = load_dataset(name[:-len("_scaled")] if scaled else name)
    if rows and X.shape[0] > rows:
        X, y = X[:rows], y[:rows]
    if scaled:
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        low, high = X.min(axis=0), X.max(axis=0)
        span = np.where(high > low, high - low, 1.0)
        X = np.where(high > low, -1.0 + 2.0 * (X - low) / span, 0.0)
    return X, y


def dual_objective(X, y_signed_alpha, support, kernel, gamma):
    """1/2 c'K c - sum|c| over the support vectors, c_j = y_j alpha_j."""
    from svmscreen._kernels import cross_kernel
    Xs = X[support]
    c = np.asarray(y_signed_alpha, dtype=np.float64)
    quad = 0.0
    for start, stop, block in cross_kernel(Xs, Xs, kernel, gamma, 0.0, 3):
        quad += float(c[start:stop] @ (block @ c))
    return 0.5 * quad - float(np.abs(c).sum())


def worker(arm, name, kernel, rows):
    """Fit once with one arm; print a JSON line with time, objective, memory."""
    X, y = load(name, rows)
    gamma = 1.0 / X.shape[1]
    # Imports first, so that the memory figure is the fit's alone.  (By the
    # name itself: ``import svmscreen`` loads its modules on first use,
    # which was inside the svmscreen arm's timer and memory.)
    from libsvm.svmutil import svm_train
    from sklearn.svm import SVC
    from svmscreen import fit_binary
    memory = peak_start()
    # when the fit began, for the parent to bound the time of a fit it stops
    print(json.dumps({"fit_started": time.time()}), flush=True)
    if arm == "libsvm":
        t_kernel = {"linear": 0, "rbf": 2}[kernel]
        start = time.perf_counter()
        # LIBSVM's warning "reaching max number of iterations" goes to
        # stderr (fprintf in svm.cpp, -q or not), where the parent looks.
        model = svm_train(y, X, f"-s 0 -t {t_kernel} -c {C} -g {gamma!r} -e {TOL} "
                                f"-m {CACHE_MB} -h 1")
        seconds = time.perf_counter() - start
        capped = None
        support = np.asarray(model.get_sv_indices()) - 1
        coef = np.asarray(model.get_sv_coef()).ravel()
    elif arm == "sklearn":
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = SVC(C=C, kernel=kernel, gamma=gamma, tol=TOL, cache_size=CACHE_MB,
                        shrinking=True).fit(X, y)
        seconds = time.perf_counter() - start
        capped = any("terminated early" in str(w.message) for w in caught)
        support = model.support_
        coef = model.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef).ravel()
    else:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = fit_binary(X, y, C=C, kernel=kernel, gamma=gamma, tol=TOL,
                               cache_size=CACHE_MB, shrinking=True,
                               q_rounding=os.environ.get("BENCH_Q_ROUNDING") or None)
        seconds = time.perf_counter() - start
        capped = model.status_ == "max_iter"
        support = model.support_
        coef = model.dual_coef_
    grown, exact = peak_growth(memory)
    objective = dual_objective(X, coef, support, kernel, gamma)
    print(json.dumps({"seconds": seconds, "objective": objective, "n_sv": int(len(support)),
                      "peak_mb": grown, "peak_exact": exact, "base_mb": memory["base_mb"],
                      "n": int(X.shape[0]), "d": int(X.shape[1]), "capped": capped}))


def run_arm(arm, name, kernel, rows, time_limit, q_rounding=None):
    """One fit in a child process.

    Returns the worker's result, with ``"timed_out": False``; or, if the
    child runs past ``time_limit`` s and is stopped, ``{"timed_out": True,
    "seconds": s}`` with s how long its fit had run by then (a lower bound
    of its time: the child's start, imports and loading are not counted;
    0 if the fit had not begun).
    """
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", BENCH_Q_ROUNDING=q_rounding or "")
    launched = time.time()
    try:
        out = subprocess.run([sys.executable, __file__, "--worker", arm, name, kernel,
                              str(rows)], capture_output=True, text=True, env=env,
                             cwd=str(ROOT), timeout=time_limit)
    except subprocess.TimeoutExpired as exc:
        # (the output read before the stop comes as bytes, text=True or not)
        started = [json.loads(line)["fit_started"]
                   for line in (exc.stdout or b"").decode(errors="replace").splitlines()
                   if line.startswith('{"fit_started"')]
        # the child was stopped no earlier than launched + time_limit
        return {"timed_out": True,
                "seconds": max(0.0, launched + time_limit - started[0]) if started else 0.0}
    if out.returncode != 0:
        raise RuntimeError(f"{arm} on {name}/{kernel} failed:\n{out.stderr}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["capped"] is None:
        result["capped"] = "reaching max number of iterations" in out.stdout + out.stderr
    result["timed_out"] = False
    return result


def capped_note(res):
    """Names the arms that stopped at their iteration cap, not at tol: their
    times measure the cost of an iteration, not of a solution."""
    capped = [arm for arm in ARMS if not res[arm]["timed_out"] and res[arm]["capped"]]
    return f"  (iteration cap: {', '.join(capped)})" if capped else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="heart_scale only")
    parser.add_argument("--rows", type=int_at_least(0), default=20000,
                        help="first rows of a9a/ijcnn1 to use (0: all)")
    parser.add_argument("--datasets", nargs="*", default=None)
    parser.add_argument("--kernels", nargs="+", default=KERNELS, choices=KERNELS)
    parser.add_argument("--repeat", type=int_at_least(1), default=3,
                        help="best of N runs per arm")
    parser.add_argument("--time-limit", type=positive_float, default=600.0,
                        help="seconds per fit; a slower fit is reported as a timeout")
    parser.add_argument("--q-rounding", choices=("float32",), default=None,
                        help="svmscreen's fit_binary(q_rounding=...): float32 rounds Q as "
                             "LIBSVM's cache does")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        arm, name, kernel, rows = args.worker
        worker(arm, name, kernel, int(rows))
        return
    datasets = ["heart_scale"] if args.quick else (args.datasets or DATASETS)
    header = (f"{'data':<12} {'kernel':<7} {'n':>6} {'d':>4} | {'libsvm s':>9} {'sklearn s':>9} "
              f"{'ours s':>8} | {'/libsvm':>7} {'/sklearn':>8} | {'obj rel diff':>12} | "
              f"{'peak MB libsvm/sklearn/ours':>28} {'base MB':>7}")
    if args.q_rounding:
        print(f"svmscreen: Q rounded to {args.q_rounding} (as LIBSVM's kernel cache)")
    print(header)
    print("-" * len(header))
    ratios = []
    for name in datasets:
        for kernel in args.kernels:
            runs = {arm: [] for arm in ARMS}
            repeat = args.repeat
            done = 0
            while done < repeat:
                for arm in ARMS:
                    # (a fit stopped at the limit is not run again)
                    if not any(r["timed_out"] for r in runs[arm]):
                        runs[arm].append(run_arm(arm, name, kernel, args.rows, args.time_limit,
                                                 args.q_rounding))
                done += 1
                # millisecond fits are at the mercy of the machine: take more
                if done == 1 and all(not r["timed_out"] and r["seconds"] < 0.1
                                     for arm in ARMS for r in runs[arm]):
                    repeat = max(repeat, SMALL_REPEAT)
            # each arm's fastest finished run, else its stopped one
            res = {arm: min(runs[arm], key=lambda r: (r["timed_out"], r["seconds"]))
                   for arm in ARMS}
            seconds = {arm: (res[arm]["seconds"], not res[arm]["timed_out"]) for arm in ARMS}
            r_lib = timed_ratio(seconds["svmscreen"], seconds["libsvm"])
            r_skl = timed_ratio(seconds["svmscreen"], seconds["sklearn"])
            ratios.append(r_lib)
            done_runs = [r for r in res.values() if not r["timed_out"]]
            n, d = (done_runs[0]["n"], done_runs[0]["d"]) if done_runs else ("?", "?")
            ours, lib = res["svmscreen"], res["libsvm"]
            obj_diff = "-" if ours["timed_out"] or lib["timed_out"] else format(
                abs(ours["objective"] - lib["objective"]) / max(abs(lib["objective"]), 1e-300),
                ".2e")
            print(f"{name:<12} {kernel:<7} {n:>6} {d:>4} | "
                  + " ".join(_seconds_cell(seconds[arm], width)
                             for arm, width in zip(ARMS, (9, 9, 8)))
                  + f" | {_ratio_cell(r_lib, 7)} {_ratio_cell(r_skl, 8)} | {obj_diff:>12} | "
                  + " ".join(_memory_cell(res[arm]) for arm in ARMS)
                  + f" {max((r['base_mb'] for r in done_runs), default=float('nan')):>7.1f}"
                  + capped_note(res), flush=True)
    exact, at_least, at_most = bounded_geometric_means(ratios)
    count = {relation: sum(1 for _, r in ratios if r == relation) for relation in "=><?"}
    exact_ratios = [value for value, relation in ratios if relation == "="]
    print(f"\ngeometric mean of time ratios (svmscreen / libsvm) over the {_rows(count['='])} "
          "where both finished: " + (f"{exact:.2f}; worst row {max(exact_ratios):.2f}"
                                     if exact_ratios else "none"))
    if at_least is not None:
        print(f"  with the {_rows(count['>'])} where svmscreen timed out, each counted at the "
              f"time its fit had run: at least {at_least:.2f}")
    if at_most is not None:
        print(f"  with the {_rows(count['<'])} where LIBSVM timed out, each counted at the time "
              f"its fit had run: at most {at_most:.2f}")
    if count["?"]:
        print(f"  ({_rows(count['?'])} without a ratio: both timed out)")


def _memory_cell(result):
    """A fit's peak over its baseline; ">=" where it is only a lower bound."""
    if result["timed_out"]:
        return f"{'-':>8}"
    return f"{('' if result['peak_exact'] else '>=') + format(result['peak_mb'], '.1f'):>8}"


def _rows(count):
    return f"{count} row" + ("" if count == 1 else "s")


def _seconds_cell(seconds, width):
    """An arm's time; ">t" for a fit stopped after running t s."""
    value, exact = seconds
    return f"{value:>{width}.3f}" if exact else f"{'>' + format(value, '.1f'):>{width}}"


def _ratio_cell(ratio, width):
    """A ratio, prefixed by > or < where it is a bound (see timed_ratio)."""
    value, relation = ratio
    if relation == "?":
        return f"{'?':>{width}}"
    return f"{('' if relation == '=' else relation) + format(value, '.2f'):>{width}}"


if __name__ == "__main__":
    main()
