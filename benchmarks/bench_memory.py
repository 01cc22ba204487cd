"""Peak memory of one RBF fit on the full ijcnn1 (49,990 x 22), against the
budget of issue 2: data + cache_size + 64 MB.

    python benchmarks/bench_memory.py [--cache-size 100] [--dataset ijcnn1]

The growth of the peak resident set size during the fit (after loading the
data) is what the fit itself needed: the validated copy of X, the kernel
cache (at most cache_size), the solver's O(n) arrays and the model.
"""
import argparse
import resource
import time

import svmscreen


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="ijcnn1")
    parser.add_argument("--cache-size", type=float, default=100.0)
    args = parser.parse_args()
    X, y = svmscreen.load_dataset(args.dataset)
    data_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20
    before = peak_mb()
    start = time.perf_counter()
    model = svmscreen.fit_binary(X, y, kernel="rbf", cache_size=args.cache_size)
    seconds = time.perf_counter() - start
    grown = peak_mb() - before
    budget = data_mb + args.cache_size + 64
    print(f"{args.dataset} {X.shape[0]}x{X.shape[1]}: fit {seconds:.1f} s, "
          f"{model.n_support_} SVs; peak RSS grew {grown:.0f} MB; data {data_mb:.1f} MB, "
          f"budget data + cache + 64 = {budget:.0f} MB -> {'within' if grown <= budget else 'OVER'}")


if __name__ == "__main__":
    main()
