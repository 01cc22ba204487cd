"""Smoke tests of the benchmarks that the notes quote for issue 4, in their
--quick form (heart_scale, 10 values of C): they run from a clean checkout,
and what they print is consistent."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    for arm in ("+it", "+dvi", "+bt2", "+essnsv", "+ssnsv"):
        assert all("put_back=0 " in line for line in arms[arm])
    assert "screening on vs off" in done.stdout


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
