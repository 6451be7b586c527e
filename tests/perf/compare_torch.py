#!/usr/bin/python3
"""Side-by-side training throughput: scalelab's `cnn` vs PyTorch on the same model.

Runs, alternately and several times, in one invocation:
  - PyTorch: the script given with --peer (not part of scalelab: a PyTorch CPU training script
    of the same `cnn` model, called as `PYTHON PEER --variant V -T THREADS -B BATCH -E 1
    --max-steps N --json FILE --quiet` and writing `epoch[0].train_img_per_s` and `blas`), in
    each variant of --variants (default `tuned`: glibc malloc thresholds raised + OpenBLAS, for
    Debian's PyTorch 1.13; for PyTorch 2.x from PyPI, whose BLAS is its own MKL, `--python
    VENV/bin/python --variants stock,malloc`), with OPENBLAS_CORETYPE unset so that OpenBLAS
    picks its AVX-512 kernels; its img/s excludes 20 warm-up steps. The ratio is against the
    best variant's median.
  - scalelab: bench_cnn_step (forward + cross-entropy + backward + Adam on synthetic inputs,
    median of its repeats after warm-up steps).
and prints each run, the medians and the ratio scalelab / PyTorch, with `uptime` beside each
figure (the machine may be shared: the ratio is only as good as the quiet it was measured in).

The benchmark's GEMM-bound limit (bench_cnn_step's own measurement) is printed beside it.

Usage: tests/perf/compare_torch.py --bench BUILD/tests/perf/bench_cnn_step --peer TORCH_SCRIPT
       [--python /usr/bin/python3] [--variants tuned] [--rounds 3] [--threads 1] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile



def uptime():
    try:
        with open("/proc/loadavg") as f:
            return "load " + " ".join(f.read().split()[:3])
    except OSError:
        return "load ?"


def run_torch(python, peer, variant, threads, batch, steps):
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)  # let OpenBLAS pick its AVX-512 kernels
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        path = tmp.name
    try:
        cmd = [python, peer, "--variant", variant, "-T", str(threads), "-B", str(batch), "-E", "1",
               "--max-steps", str(steps), "--json", path, "--quiet"]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        with open(path) as f:
            r = json.loads(f.read())
        return r["epoch"][0]["train_img_per_s"], r.get("blas", "?")
    finally:
        os.unlink(path)


def run_scalelab(bench, threads, batch):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        path = tmp.name
    try:
        cmd = [bench, "--threads", str(threads), "--batch", str(batch), "--steps", "20", "--repeats", "5",
               "--warmup", "5", "--json", path]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            r = json.load(f)
        return r["median_img_per_s"], r["blas"], r["peak_rss_mib"], r.get("gemm_bound_img_per_s", 0)
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="path to the built bench_cnn_step")
    ap.add_argument("--peer", required=True, help="the PyTorch CPU script to compare with (interface above)")
    ap.add_argument("--python", default="/usr/bin/python3", help="the interpreter with PyTorch (default /usr/bin/python3)")
    ap.add_argument("--variants", default="tuned", help="the peer's variants, comma-separated (default tuned)")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of PyTorch and scalelab (default 3)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--torch-steps", type=int, default=150)
    ap.add_argument("--json", help="write the runs and medians here")
    a = ap.parse_args()
    if not os.path.isfile(a.peer):
        sys.exit(f"compare_torch: --peer {a.peer}: no such file; give the PyTorch CPU script to compare with")
    if not os.access(a.bench, os.X_OK):
        sys.exit(f"compare_torch: --bench {a.bench}: not an executable; build the bench_cnn_step target first")
    if a.rounds < 1:
        sys.exit("compare_torch: --rounds must be at least 1")

    variants = [v for v in a.variants.split(",") if v]
    if not variants:
        sys.exit("compare_torch: --variants is empty; give at least one, e.g. tuned or stock,malloc")
    torch_ips = {v: [] for v in variants}
    ours_ips, bounds, runs = [], [], []
    torch_blas = ours_blas = "?"
    rss = 0
    for r in range(a.rounds):
        run = {"round": r + 1}
        for v in variants:
            load = uptime()
            t, torch_blas = run_torch(a.python, a.peer, v, a.threads, a.batch, a.torch_steps)
            torch_ips[v].append(t)
            run[f"pytorch_{v}_img_per_s"] = t
            print(f"round {r + 1}: pytorch ({v}) {t:7.0f} img/s   ({load})", flush=True)
        load = uptime()
        s, ours_blas, rss, bound = run_scalelab(a.bench, a.threads, a.batch)
        ours_ips.append(s)
        bounds.append(bound)
        run["scalelab_img_per_s"] = s
        run["gemm_bound_img_per_s"] = bound
        print(f"round {r + 1}: scalelab {s:7.0f} img/s, GEMM-bound limit {bound:.0f}   ({load})", flush=True)
        runs.append(run)
    medians = {v: statistics.median(x) for v, x in torch_ips.items()}
    best = max(medians, key=medians.get)
    tm, sm, bm = medians[best], statistics.median(ours_ips), statistics.median(bounds)
    print(f"\ncnn, batch {a.batch}, {a.threads} thread(s), {a.rounds} rounds ({uptime()} at the end)")
    print(f"  {'':18} {'median img/s':>12}")
    for v in variants:
        print(f"  {'pytorch ' + v:18} {medians[v]:12.0f}{'   (best)' if v == best else ''}")
    print(f"  {'':18} blas {torch_blas}")
    print(f"  {'scalelab':18} {sm:12.0f}   blas {ours_blas}; peak RSS {rss:.0f} MiB")
    print(f"  ratio scalelab / best pytorch: {sm / tm:.2f}x")
    if bm > 0:
        print(f"  GEMM-bound limit (bench_cnn_step): {bm:.0f} img/s; scalelab reaches {100 * sm / bm:.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "batch": a.batch, "runs": runs, "pytorch_medians_img_per_s": medians,
                       "pytorch_best_variant": best, "pytorch_median_img_per_s": tm, "scalelab_median_img_per_s": sm,
                       "ratio": sm / tm, "gemm_bound_median_img_per_s": bm, "pytorch_blas": torch_blas,
                       "scalelab_blas": ours_blas, "scalelab_peak_rss_mib": rss}, f, indent=1)


if __name__ == "__main__":
    main()
