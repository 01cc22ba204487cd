"""Paper 000, Fig. 4 on breast-cancer_scale: screening rate against
C_ref / C, for BT1 (= DVI), BT2 and the Intersection Test, with the
bias-free SVM at C = 10 and references at C_ref = ratio * C (tol 1e-9).
Rate = screened samples / non-support vectors of the optimum at C.

    python benchmarks/fig4_screening_rate.py [--out docs/fig4_breast_cancer.png]

Prints the table; draws the figure when matplotlib is installed.
"""
import argparse
from pathlib import Path

import numpy as np

import svmscreen
from svmscreen._kernels import Kernel
from svmscreen._solver import QMatrix, solve
from svmscreen.screening import ScreeningData, screen

ROOT = Path(__file__).resolve().parent.parent


def rates(C=10.0, ratios=np.linspace(0.05, 0.99, 24)):
    X, y = svmscreen.load_dataset("breast-cancer_scale")
    y = np.where(y > 0, 1.0, -1.0)
    X = np.ascontiguousarray(X.toarray())
    n, d = X.shape
    table = {}
    for label, kernel, gamma in (("linear", "linear", 0.0), ("rbf 0.1/d", "rbf", 0.1 / d),
                                 ("rbf 1/d", "rbf", 1.0 / d), ("rbf 10/d", "rbf", 10.0 / d)):
        Q = QMatrix(Kernel(X, kernel, gamma, 0.0, 3), y, 200.0)
        data = ScreeningData(X, y, kernel, gamma, fit_intercept=False)
        solve_at = lambda c: solve(Q, -np.ones(n), np.zeros(n), np.full(n, c), np.zeros(n),
                                   tol=1e-9)
        opt = solve_at(C).alpha
        non_sv = np.sum((opt < 1e-8 * C) | (opt > C * (1 - 1e-8)))
        refs = [solve_at(r * C) for r in ratios]
        for rule in ("bt1", "bt2", "it"):
            table[label, rule] = np.array([screen(data, ref.alpha, ref.grad, r * C, C,
                                                  rule).n_screened / non_sv
                                           for r, ref in zip(ratios, refs)])
    return ratios, table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "fig4_breast_cancer.png"))
    args = parser.parse_args()
    ratios, table = rates()
    print("C_ref/C " + " ".join(f"{r:5.2f}" for r in ratios))
    for (label, rule), row in table.items():
        print(f"{label:>10} {rule:>4} " + " ".join(f"{v:5.2f}" for v in row))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no figure)")
        return
    labels = sorted({label for label, _ in table}, key=list(dict.fromkeys(
        label for label, _ in table)).index)
    fig, axes = plt.subplots(1, len(labels), figsize=(4 * len(labels), 3.4), sharey=True)
    for ax, label in zip(axes, labels):
        for rule, style in (("bt1", "o-"), ("bt2", "s--"), ("it", "^-")):
            ax.plot(ratios, table[label, rule], style, ms=3, label=rule.upper())
        ax.set_title(f"breast-cancer, {label}")
        ax.set_xlabel("C_ref / C (C = 10)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("screening rate (of non-SVs)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"figure written to {args.out}")


if __name__ == "__main__":
    main()
