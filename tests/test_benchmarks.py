"""Smoke tests of the benchmarks that the notes quote for issue 4, in their
--quick form (heart_scale, 10 values of C): they run from a clean checkout,
and what they print is consistent."""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the benchmarks import their helpers as sibling modules, as the scripts do
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import _measure  # noqa: E402
from conftest import subprocess_env  # noqa: E402


def test_rule_strength_quick_runs_and_reports_shares():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "rule_strength.py"),
                           "--quick"], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()
            if line.startswith("heart_scale ") and line.split()[2] == "270"]
    assert [row[1] for row in rows] == ["linear", "rbf1"]
    for row in rows:
        dvi, dvi_ex, it, free_ex, oracle = map(float, row[3:8])
        assert all(0.0 <= v <= 1.0 for v in (dvi, dvi_ex, it, free_ex, oracle))
        # the exact-reference ball contains the inexact one's screens
        assert dvi <= dvi_ex + 1e-12
        assert np.isfinite(float(row[8]))          # r/|w|


def test_bench_path_quick_runs_every_arm():
    """Every arm runs (wall clock, the default), agrees with warm+shrink
    (the script fails otherwise), and the safe rules put nothing back."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_path.py"),
                           "--quick"], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    arms = {}
    for line in done.stdout.splitlines():
        words = line.split()
        if len(words) > 1 and words[0] in ("libsvm", "sklearn", "cold", "warm", "warm+shrink",
                                           "+it", "+dvi", "+bt2", "+essnsv", "+ssnsv",
                                           "oracle") and words[1][0].isdigit():
            arms.setdefault(words[0], []).append(line)
    assert all(len(lines) == 4 for lines in arms.values())   # linear and 3 RBF gammas
    assert len(arms) == 11
    # every row says over how many runs its minimum was taken
    headers = [line for line in done.stdout.splitlines() if line.startswith("heart_scale ")]
    assert len(headers) == 4
    assert all("minimum of " in line for line in headers)
    for arm in ("+it", "+dvi", "+bt2", "+essnsv", "+ssnsv"):
        assert all("put_back=0 " in line for line in arms[arm])
    assert "screening on vs off" in done.stdout


def test_bench_ramp_quick_runs_every_arm_and_the_oracle():
    """Every arm reaches the plain arm's CCCP sequence and objective, the
    screening arms put nothing back, and the oracle's inner objectives are
    the truth's (the script fails otherwise); both ratios are printed."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_ramp.py"),
                           "--quick", "--clock", "cpu"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    row = [line for line in done.stdout.splitlines() if line.startswith("letter ")]
    assert len(row) == 1
    seconds = [float(word[:-1]) for word in row[0].split() if word.endswith("s")]
    assert len(seconds) == 5 and all(value > 0 for value in seconds)
    assert "geometric mean of (shrink+screen) / shrink" in done.stdout
    assert "geometric mean of oracle / shrink" in done.stdout


def test_bench_estimators_quick_agrees_with_scikit_learn():
    """The model-selection row runs; the three arms pick the same C (the
    script itself fails if their CV accuracies differ by more than 2
    samples of a fold)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks",
                                                        "bench_estimators.py"), "--quick"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    row = next(line.split() for line in done.stdout.splitlines()
               if line.startswith("heart_scale "))
    best = " ".join(row[6:9]).split(", ")
    assert len(set(best)) == 1, row
    assert int(row[-1]) >= 1                       # the runs the minimum is over
    assert "untimed warm-up" in done.stdout
    assert "sklearn GridSearchCV / SVCPathCV" in done.stdout


def test_bench_multiclass_quick_agrees_with_libsvm():
    """The one-vs-one path row runs; every arm's test accuracy and #SV agree
    with LIBSVM's at every C (the script fails otherwise)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks",
                                                        "bench_multiclass.py"), "--quick"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    arms = [line.split()[0] for line in done.stdout.splitlines()[2:]
            if line.startswith("  ") and line.split()[1][0].isdigit()]
    assert arms == ["libsvm", "sklearn", "path", "path-noscreen"]
    assert "screening on vs off" in done.stdout


def test_bench_linear_runs_both_problems_against_their_peers():
    """bench_linear.py on one row: a fit with the intercept against LIBSVM
    and a bias-free one against liblinear, whose primal objectives agree
    with ours where both converge (each stops at tol 1e-3 by its own rule;
    LIBSVM's cap is read from what svm.cpp writes to stderr)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_linear.py"),
                           "--datasets", "heart_scale", "--C", "1", "--repeat", "1"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith("heart_")]
    assert [row[1].split()[:2] for row in rows] == [["intercept", "libsvm"],
                                                    ["bias-free", "liblinear"]]
    for row in rows:
        if row[3].split()[0] == "optimal/optimal":
            assert abs(float(row[2])) < 1e-3
    assert rows[0][3].split()[0] == "optimal/optimal"
    assert done.stdout.count("geometric mean of ours / peer") == 2


def test_bench_fit_worker_finds_the_shipped_data(monkeypatch):
    """bench_fit.py's worker (one fit, in a child process) finds the shipped
    data: the README installs the package, which has no data/ beside it, and
    load_dataset then looks in ./data."""
    import bench_fit

    if os.environ.get("PYTHONPATH"):
        monkeypatch.setenv("PYTHONPATH", subprocess_env()["PYTHONPATH"])
    result = bench_fit.run_arm("svmscreen", "heart_scale", "rbf", 0, time_limit=120)
    assert not result["timed_out"] and result["n"] == 270


def _probe(tmp_path, text, *args):
    """The last line printed by the script ``text`` run with ``args`` in a
    fresh interpreter, with benchmarks/ on its path and ROOT as its cwd (the
    benchmarks find ./data there)."""
    # a file, not -c: the child's sys.path then starts with tmp_path, not
    # the source tree of cwd
    script = tmp_path / "probe.py"
    script.write_text(text)
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300,
                          env=subprocess_env(OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
                              [os.path.join(ROOT, "benchmarks"),
                               os.environ.get("PYTHONPATH", "")])))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


# Run in a fresh interpreter: in the test's own process the modules are
# loaded already, and a lazy import inside a timer would not show.
_FIT_WORKER_IMPORTS = """
import sys
import bench_fit
marks = {}
start, growth = bench_fit.peak_start, bench_fit.peak_growth
def peak_start():
    marks["start"] = set(sys.modules)
    return start()
def peak_growth(memory):
    marks["growth"] = set(sys.modules)
    return growth(memory)
bench_fit.peak_start, bench_fit.peak_growth = peak_start, peak_growth
bench_fit.worker(sys.argv[1], "heart_scale", "rbf", 0)
print("loaded:", sorted(marks["growth"] - marks["start"]))
"""

_MEMORY_IMPORTS = _FIT_WORKER_IMPORTS.replace("bench_fit", "bench_memory").replace(
    'bench_memory.worker(sys.argv[1], "heart_scale", "rbf", 0)',
    'sys.argv[0] = bench_memory.__file__\nbench_memory.main()')


@pytest.mark.parametrize("arm", ["libsvm", "sklearn", "svmscreen"])
def test_bench_fit_worker_imports_nothing_inside_the_measured_fit(arm, tmp_path):
    """Between the worker's memory baseline and its peak (the timed fit) no
    module is imported: ``import svmscreen`` alone loads its modules on
    first use, which once fell on the svmscreen arm's time and memory."""
    assert _probe(tmp_path, _FIT_WORKER_IMPORTS, arm) == "loaded: []"


def test_bench_memory_imports_nothing_inside_the_measured_fit(tmp_path):
    """The same for bench_memory.py's one fit (svmscreen.model and the
    compiled modules once loaded inside its peak)."""
    assert _probe(tmp_path, _MEMORY_IMPORTS, "--dataset", "heart_scale") == "loaded: []"


_PATH_ROW_IMPORTS = """
import sys
import bench_path
loaded = set()
best_of = bench_path.best_of
def timed_rows(*args, **kwargs):
    before = set(sys.modules)
    try:
        return best_of(*args, **kwargs)
    finally:
        loaded.update(set(sys.modules) - before)
bench_path.best_of = timed_rows
sys.argv[0] = bench_path.__file__
bench_path.main()
print("loaded:", sorted(loaded))
"""


def test_bench_path_rows_import_nothing(tmp_path):
    """No module is first imported inside a row's timed rounds (the warm-up
    runs every arm first): svmscreen.screening, loaded by the first screened
    path, once added 5 ms to the +dvi arm's 7 ms on the first row, which a
    row with a slow arm runs once."""
    assert _probe(tmp_path, _PATH_ROW_IMPORTS, "--datasets", "heart_scale", "--kernels",
                  "rbf1", "--n-C", "3", "--repeat", "1", "--rules", "dvi") == "loaded: []"


_MULTICLASS_IMPORTS = """
import sys
import bench_multiclass
loaded = {}         # arm -> the modules each of its runs imported
def recorded(arm, run):
    def once(*args):
        before = set(sys.modules)
        try:
            return run(*args)
        finally:
            loaded.setdefault(arm, []).append(sorted(set(sys.modules) - before))
    return once
bench_multiclass.ARMS = {arm: recorded(arm, run) for arm, run in bench_multiclass.ARMS.items()}
sys.argv[0] = bench_multiclass.__file__
bench_multiclass.main()
print("loaded:", {arm: runs[-1] for arm, runs in loaded.items() if runs[-1]})
"""


def test_bench_multiclass_timed_runs_import_nothing(tmp_path):
    """No arm's timed run (its last) first imports a module: svmscreen.path
    and its modules once added 60 ms to the path arm's 0.33 s in --quick."""
    assert _probe(tmp_path, _MULTICLASS_IMPORTS, "--quick") == "loaded: {}"


def test_bench_libsvm_cli_smoke_imports_the_package_on_the_path():
    """bench_libsvm_cli.py --smoke (the script's CI line) runs and agrees with
    LIBSVM; its child processes import svmscreen from the interpreter's path
    (the installed package), not the unbuilt source directory beside the
    script."""
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks",
                                                        "bench_libsvm_cli.py"), "--smoke"],
                          capture_output=True, text=True,
                          env=subprocess_env(OMP_NUM_THREADS="1"), cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    row = next(line.split() for line in done.stdout.splitlines()
               if line.startswith("heart_scale "))
    sv_libsvm, sv_ours = row[-2].split("/")
    assert sv_libsvm == sv_ours and float(row[-1]) == 1.0, row


def test_round_order_each_arm_leads_and_neighbours_vary():
    """Every round is a permutation; round k starts at the k-th arm; from
    three arms on, no arm has the same predecessor in two rounds running."""
    for n in range(1, 12):
        names = [f"arm{i}" for i in range(n)]
        for k in range(2 * n + 1):
            order = _measure.round_order(names, k)
            assert sorted(order) == sorted(names)
            assert order[0] == names[k % n]
            if n >= 3:
                before = {b: a for a, b in zip(order, order[1:])}
                after = _measure.round_order(names, k + 1)
                before_next = {b: a for a, b in zip(after, after[1:])}
                assert all(before[arm] != before_next[arm]
                           for arm in names if arm in before and arm in before_next)


def _scripted(seconds, calls, name):
    """An arm whose runs 'take' the given seconds in turn; it logs its calls."""
    runs = iter(seconds)

    def once():
        calls.append(name)
        value = next(runs)
        return None if value is None else (value, f"{name} run of {value}")
    return once


def test_best_of_keeps_the_fastest_run_of_interleaved_rounds():
    calls = []
    runs = {"a": _scripted([0.03, 0.01, 0.02], calls, "a"),
            "b": _scripted([0.02, 0.05, 0.04], calls, "b")}
    best, rounds = _measure.best_of(runs, repeat=3)
    assert rounds == 3
    assert best == {"a": (0.01, "a run of 0.01"), "b": (0.02, "b run of 0.02")}
    assert calls == [arm for k in range(3) for arm in _measure.round_order(["a", "b"], k)]


def test_best_of_default_repeats_small_rows_only():
    # an arm of 0.3 s: stops after the round where it passes 0.5 s in all
    calls = []
    best, rounds = _measure.best_of({"slow": _scripted([0.3] * 9, calls, "slow"),
                                     "fast": _scripted([0.001] * 9, calls, "fast")})
    assert rounds == 2 and calls.count("fast") == calls.count("slow") == 2
    # a large row runs once
    best, rounds = _measure.best_of({"large": _scripted([2.0] * 9, [], "large")})
    assert rounds == 1
    # a small one up to the cap
    best, rounds = _measure.best_of({"small": _scripted([0.01] * 9, [], "small")})
    assert rounds == _measure.AUTO_MAX_ROUNDS


def test_best_of_drops_an_unavailable_arm():
    calls = []
    best, rounds = _measure.best_of({"gone": _scripted([None], calls, "gone"),
                                     "here": _scripted([0.1, 0.2], calls, "here")},
                                    repeat=2)
    assert list(best) == ["here"] and calls.count("gone") == 1
    with pytest.raises(ValueError, match="repeat"):
        _measure.best_of({"here": _scripted([0.1], [], "here")}, repeat=0)


@pytest.mark.parametrize("argv, repeat", [([], None), (["--repeat", "3"], 3),
                                          (["--quick", "--repeat", "1"], 1)])
def test_bench_path_repeat_option(argv, repeat):
    import bench_path
    assert bench_path.parse_args(argv).repeat == repeat


@pytest.mark.parametrize("argv", [["--repeat", "0"], ["--repeat", "-2"], ["--repeat", "two"],
                                  ["--rows", "-5"], ["--n-C", "0"], ["--kernels", "rbf2"],
                                  ["--kernels"], ["--rules", "nosuch"], ["--skip", "libsvmm"]],
                         ids=["repeat-0", "repeat-negative", "repeat-word", "rows", "n-C",
                              "kernel", "no-kernel", "rule", "arm"])
def test_bench_path_rejects_bad_arguments(argv, capsys):
    """Each fails on the command line, naming its option: before, a negative
    --rows cut the last rows, an unknown --skip was ignored, and the others
    ended in a traceback or an empty table."""
    import bench_path
    with pytest.raises(SystemExit):
        bench_path.parse_args(argv)
    assert argv[0] in capsys.readouterr().err


@pytest.mark.parametrize("script, argv", [
    ("bench_libsvm_cli.py", ["--smoke", "--repeat", "0"]),    # read no model, deep inside
    ("bench_fit.py", ["--quick", "--rows", "-1"]),            # dropped the last row
    ("bench_fit.py", ["--quick", "--time-limit", "0"]),       # every fit a timeout
    ("bench_multiclass.py", ["--quick", "--skip", "lib"]),    # ignored
    ("bench_ramp.py", ["--quick", "--gammas"]),               # means of nothing
    ("rule_strength.py", ["--quick", "--kernels", "rbf2"]),   # KeyError
    ("bench_estimators.py", ["--n-C", "0"]),                  # an empty grid
    ("robustness.py", ["--seeds", "0"]),                      # NameError after the loop
])
def test_benchmarks_reject_bad_arguments(script, argv):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", script), *argv],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env=subprocess_env(OMP_NUM_THREADS="1"))
    option = next(word for word in reversed(argv) if word.startswith("--"))
    assert done.returncode == 2 and f"argument {option}" in done.stderr, done.stderr


@pytest.mark.parametrize("ours, reference, expected", [
    ((2.0, True), (4.0, True), (0.5, "=")),
    ((30.0, False), (3.0, True), (10.0, ">")),     # ours stopped after 30 s
    ((1.0, True), (20.0, False), (0.05, "<")),     # the reference stopped after 20 s
    ((30.0, False), (20.0, False), (None, "?")),
    ((0.0, False), (3.0, True), (None, "?")),      # stopped before its fit began
], ids=["exact", "ours-stopped", "reference-stopped", "both-stopped", "no-fit"])
def test_timed_ratio_bounds(ours, reference, expected):
    ratio, relation = _measure.timed_ratio(ours, reference)
    assert relation == expected[1]
    if expected[0] is None:
        assert np.isnan(ratio)
    else:
        assert ratio == pytest.approx(expected[0])


def test_bounded_geometric_means_bound_every_consistent_truth():
    """Whatever the stopped fits' true times beyond their bounds, the
    geometric mean over the exact and '>' rows is at least the reported
    lower bound, and over the exact and '<' rows at most the upper one."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 8))
        ours, reference = rng.uniform(0.1, 10, n), rng.uniform(0.1, 10, n)
        stopped_ours, stopped_reference = rng.random(n) < 0.3, rng.random(n) < 0.3
        ratios = [_measure.timed_ratio((a, not sa), (b, not sb))
                  for a, b, sa, sb in zip(ours, reference, stopped_ours, stopped_reference)]
        exact, at_least, at_most = _measure.bounded_geometric_means(ratios)
        # the truth: a stopped fit took its bound times a factor >= 1
        true = (ours * np.where(stopped_ours, rng.uniform(1, 100, n), 1.0)
                / (reference * np.where(stopped_reference, rng.uniform(1, 100, n), 1.0)))
        relations = np.array([relation for _, relation in ratios])
        if np.any(relations == "="):
            assert exact == pytest.approx(_measure.geometric_mean(true[relations == "="]))
        else:
            assert np.isnan(exact)
        low, high = np.isin(relations, ["=", ">"]), np.isin(relations, ["=", "<"])
        assert (at_least is None) == (not np.any(relations == ">"))
        assert (at_most is None) == (not np.any(relations == "<"))
        if at_least is not None:
            assert _measure.geometric_mean(true[low]) >= at_least * (1 - 1e-12)
        if at_most is not None:
            assert _measure.geometric_mean(true[high]) <= at_most * (1 + 1e-12)


def test_peak_growth_sees_memory_below_an_earlier_peak():
    """A step's peak is measured over the resident set at its start, even
    when an earlier step (a file's parsing, say) left the high-water mark
    above it: there the growth of the mark alone would read about 0."""
    earlier = np.ones(80 * 2**20 // 8)         # 80 MB, touched, then freed
    del earlier
    memory = _measure.peak_start()
    if not memory["exact"]:
        pytest.skip("the high-water mark cannot be reset here (not Linux)")
    step = np.ones(30 * 2**20 // 8)            # 30 MB, under the earlier peak
    grown, exact = _measure.peak_growth(memory)
    del step
    assert exact
    assert 29 <= grown < 60


def test_robustness_split_finds_the_test_file_where_load_dataset_looks(tmp_path,
                                                                      monkeypatch):
    """robustness.py scores on <name>.t wherever svmscreen.load_dataset
    finds data ($SVMSCREEN_DATA here), and says when it falls back to a
    split of the training file instead."""
    import svmscreen
    import robustness
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.repeat([-1.0, 1.0], 20)
    svmscreen.dump_svmlight_file(X, y, str(tmp_path / "toy_robust.xz"))
    svmscreen.dump_svmlight_file(X[:10], y[:10], str(tmp_path / "toy_robust.t.xz"))
    monkeypatch.setenv("SVMSCREEN_DATA", str(tmp_path))
    X_train, _, X_test, _, test_set = robustness.split("toy_robust", 0, 0)
    assert test_set == "toy_robust.t"
    assert (X_train.shape, X_test.shape) == ((40, 3), (10, 3))
    (tmp_path / "toy_robust.t.xz").unlink()
    X_train, _, X_test, _, test_set = robustness.split("toy_robust", 0, 0)
    assert test_set == "30% of toy_robust"
    assert (X_train.shape[0], X_test.shape[0]) == (28, 12)
