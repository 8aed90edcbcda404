"""Sparse text classification: bayesgen's MultinomialNB against scikit-learn's on CSR.

Usage::

    .venv/bin/python benchmarks/bench_sparse.py              # full size, 2 rounds x 3 runs
    .venv/bin/python benchmarks/bench_sparse.py --quick      # 10x fewer documents
    .venv/bin/python benchmarks/bench_sparse.py --rounds 3 --repeats 5

Data (fixed seed): N = 200,000 generated documents over a V = 100,000-word
vocabulary, K = 20 classes drawn uniformly. Word probabilities follow a Zipf law
(p_j proportional to 1 / (j + 1)^1.1) multiplied per class by log-normal factors
(sd 1), renormalised; each document draws 1 + Poisson(11) tokens from its class. The
counts form one float64 CSR matrix (about 2 million non-zeros), saved once and
loaded by every worker.

Measured, for ``bg.MultinomialNB(method="map", alpha=2)`` and scikit-learn's
``MultinomialNB(alpha=1)`` (the same estimate) on the same CSR matrix:

- time: wall time of ``fit(X, y).predict_proba(X)``. Each library runs in its own
  subprocess (``--worker``): one warm-up run, then ``--repeats`` timed runs; the
  subprocesses alternate between the libraries for ``--rounds`` rounds, and the
  median over all timed runs is reported with the ratio bayesgen / scikit-learn
  (goal: <= 0.7), together with the ratio of the fastest runs and of the median
  CPU times (``time.process_time``; less sensitive to other processes on a busy
  machine);
- memory, in a fresh subprocess per library and measure (so neither sees the other's
  allocations): the ``tracemalloc`` peak of one ``fit + predict_proba`` above the
  memory held before it (NumPy and SciPy register their arrays with tracemalloc),
  and the growth of the peak resident set size over the same call (Linux: the
  high-water mark ``VmHWM`` reset through ``/proc/self/clear_refs`` just before the
  call, minus the resident set size then) (goal: bayesgen's peak no more than
  scikit-learn's);
- ``max|dp|``: the largest absolute difference between the two probability matrices.

Timings on a shared machine are noisy: run it when the machine is quiet, compare
ratios from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import sparse

N_DOCS, VOCAB, N_CLASSES = 200_000, 100_000, 20
MEAN_TOKENS = 12.0
GOAL_TIME = 0.7


def make_corpus(n_docs: int, vocab: int, n_classes: int, seed: int):
    """(X CSR float64 (n_docs, vocab), y (n_docs,)) as described in the module docstring."""
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, vocab + 1) ** 1.1
    y = rng.integers(0, n_classes, n_docs)
    lengths = 1 + rng.poisson(MEAN_TOKENS - 1.0, n_docs)
    doc_of_token = np.repeat(np.arange(n_docs), lengths)
    words = np.empty(doc_of_token.size, dtype=np.int64)
    for k in range(n_classes):
        p = base * np.exp(rng.normal(0.0, 1.0, vocab))
        cdf = np.cumsum(p / p.sum())
        mine = np.flatnonzero(y[doc_of_token] == k)
        words[mine] = np.minimum(np.searchsorted(cdf, rng.uniform(size=mine.size)), vocab - 1)
    X = sparse.csr_matrix(
        (np.ones(words.size), (doc_of_token, words)), shape=(n_docs, vocab)
    )
    X.sum_duplicates()
    return X, y


def _estimator(lib: str):
    if lib == "bayesgen":
        import bayesgen as bg

        return bg.MultinomialNB(method="map", alpha=2.0)
    from sklearn.naive_bayes import MultinomialNB

    return MultinomialNB(alpha=1.0)


def _load(path: str):
    with np.load(path) as f:
        X = sparse.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
        return X, f["y"]


def worker(lib: str, path: str, mode: str, repeats: int, out: str) -> None:
    """Run in a subprocess: time or memory of one library; writes JSON to ``out``."""
    X, y = _load(path)
    run = lambda: _estimator(lib).fit(X, y).predict_proba(X)  # noqa: E731
    result: dict = {}
    if mode == "time":
        proba = run()  # warm-up (imports, caches)
        times, cpu = [], []
        for _ in range(repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            proba = run()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        np.save(out + ".npy", proba)
        result["times"], result["cpu"] = times, cpu
    elif mode == "tracemalloc":
        import tracemalloc

        _estimator(lib)  # import the library before measuring
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        proba = run()
        result["peak"] = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
    else:  # rss: reset the kernel's high-water mark (VmHWM), then read it after the run
        _estimator(lib)
        before = _reset_peak_rss()
        proba = run()
        result["peak"] = _status_kb("VmHWM") * 1024 - before
    result["proba_bytes"] = proba.nbytes
    Path(out).write_text(json.dumps(result))


def _status_kb(field: str) -> int:
    """A ``/proc/self/status`` field in kB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak_rss() -> int:
    """Reset the peak resident set size to the current one (Linux >= 4.0, writing 5 to
    /proc/self/clear_refs); returns the current resident set size in bytes."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kb("VmRSS") * 1024


def _spawn(lib: str, path: str, mode: str, repeats: int, tmp: str) -> dict:
    out = os.path.join(tmp, f"{lib}-{mode}.json")
    cmd = [sys.executable, __file__, "--worker", lib, "--data", path, "--mode", mode,
           "--repeats", str(repeats), "--out", out]
    subprocess.run(cmd, check=True)
    return json.loads(Path(out).read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N / 10 documents")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.data, args.mode, args.repeats, args.out)
        return

    import sklearn

    import bayesgen as bg

    n_docs = N_DOCS // 10 if args.quick else N_DOCS
    start = time.perf_counter()
    X, y = make_corpus(n_docs, VOCAB, N_CLASSES, args.seed)
    print(f"data: {X.shape[0]:,} documents x {X.shape[1]:,} words, {X.nnz:,} non-zeros, "
          f"{N_CLASSES} classes (generated in {time.perf_counter() - start:.1f} s)")
    print(f"bayesgen {bg.__version__}, scikit-learn {sklearn.__version__}, numpy "
          f"{np.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "corpus.npz")
        np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y)
        times: dict[str, list[float]] = {"bayesgen": [], "sklearn": []}
        cpu: dict[str, list[float]] = {"bayesgen": [], "sklearn": []}
        for _ in range(args.rounds):
            for lib in times:
                result = _spawn(lib, path, "time", args.repeats, tmp)
                times[lib] += result["times"]
                cpu[lib] += result["cpu"]
        probas = {lib: np.load(os.path.join(tmp, f"{lib}-time.json.npy")) for lib in times}
        memory = {lib: {m: _spawn(lib, path, m, 1, tmp)["peak"] for m in ("tracemalloc", "rss")}
                  for lib in times}
    ours, theirs = statistics.median(times["bayesgen"]), statistics.median(times["sklearn"])
    dp = float(np.max(np.abs(probas["bayesgen"] - probas["sklearn"])))
    mb = 1024.0**2
    print(f"\nfit + predict_proba, median of {len(times['bayesgen'])} runs (seconds):")
    print(f"  bayesgen MultinomialNB(method='map', alpha=2): {ours:.3f} "
          f"(runs: {', '.join(f'{t:.3f}' for t in times['bayesgen'])})")
    print(f"  sklearn  MultinomialNB(alpha=1):               {theirs:.3f} "
          f"(runs: {', '.join(f'{t:.3f}' for t in times['sklearn'])})")
    print(f"  ratio bayesgen / sklearn: {ours / theirs:.2f} (goal <= {GOAL_TIME}: "
          f"{'met' if ours / theirs <= GOAL_TIME else 'NOT met'})")
    best = min(times["bayesgen"]) / min(times["sklearn"])
    ratio_cpu = statistics.median(cpu["bayesgen"]) / statistics.median(cpu["sklearn"])
    print(f"  ratio of the fastest runs: {best:.2f}; ratio of median CPU times: {ratio_cpu:.2f} "
          f"(bayesgen {statistics.median(cpu['bayesgen']):.3f} s, sklearn "
          f"{statistics.median(cpu['sklearn']):.3f} s)")
    print(f"peak memory of fit + predict_proba (MB; the output itself is "
          f"{probas['bayesgen'].nbytes / mb:.1f} MB):")
    for m in ("tracemalloc", "rss"):
        a, b = memory["bayesgen"][m] / mb, memory["sklearn"][m] / mb
        print(f"  {m:11s}: bayesgen {a:8.1f}   sklearn {b:8.1f}   "
              f"({'<=' if a <= b else '>'} sklearn)")
    print(f"max |p_bayesgen - p_sklearn| = {dp:.2e}")


if __name__ == "__main__":
    main()
