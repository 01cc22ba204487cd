"""Smoke test of the diagnostic benchmark that the notes quote for issue 4
(benchmarks/rule_strength.py --quick: heart_scale, 10 values of C): it runs
from a clean checkout and its rates are shares of the samples."""
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
