"""Peak memory of one RBF fit on the full ijcnn1 (49,990 x 22), against the
budget of issue 2: data + cache_size + 64 MB.

    python benchmarks/bench_memory.py [--cache-size 100] [--dataset ijcnn1]

What the fit itself needed (the validated copy of X, the kernel cache, at
most cache_size, the solver's O(n) arrays and the model) is its peak
resident set over the baseline: the resident set just before the fit, with
the interpreter, svmscreen and the data loaded, printed beside it.  On
Linux the kernel's high-water mark is reset to that baseline before the fit
(benchmarks/_measure.py peak_start): loading ijcnn1 leaves the mark some
20 MB above the resident set, and a fit's memory below the mark would not
show in its growth.  Elsewhere the growth of the mark is printed, marked as
a lower bound.
"""
import argparse
import time

# By name: ``import svmscreen`` alone loads svmscreen.model and the compiled
# modules at the first fit, inside the measured peak.
from svmscreen import fit_binary, load_dataset
from _measure import peak_growth, peak_start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="ijcnn1")
    parser.add_argument("--cache-size", type=float, default=100.0)
    args = parser.parse_args()
    X, y = load_dataset(args.dataset)
    data_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20
    memory = peak_start()
    start = time.perf_counter()
    model = fit_binary(X, y, kernel="rbf", cache_size=args.cache_size)
    seconds = time.perf_counter() - start
    grown, exact = peak_growth(memory)
    budget = data_mb + args.cache_size + 64
    print(f"{args.dataset} {X.shape[0]}x{X.shape[1]}: fit {seconds:.1f} s, "
          f"{model.n_support_} SVs; peak RSS over the baseline of {memory['base_mb']:.0f} MB: "
          f"{'' if exact else 'at least '}{grown:.0f} MB; data {data_mb:.1f} MB, "
          f"budget data + cache + 64 = {budget:.0f} MB -> "
          + ("OVER" if grown > budget else "within" if exact else "within? (a lower bound)"))


if __name__ == "__main__":
    main()
