#!/usr/bin/env python3
"""Side-by-side GPU training throughput: `scalelab train --device cuda --model cnn` vs PyTorch.

Issue 6's speed bar: on an H100, scalelab's images/sec on the `cnn` model with Fashion-MNIST is at
least 1.5x PyTorch's at batch 128 and at least 1.0x at batch 1024. This script measures both, in
one invocation, alternating the two programs for --rounds rounds at every batch of --batches:
  - PyTorch: tests/perf/torch_cnn_gpu.py (beside this script; the same model, initialisation,
    Adam 1e-3 and dropout as the CPU peer, the data set resident on the GPU; see its docstring
    for exactly what each side times) run with --python;
  - scalelab: `SCALELAB train --device cuda --model cnn --batch-size B --max-steps S --epochs E
    --throughput-skip W --no-eval --quiet --json F`, images/sec read from the epoch records of
    the scalelab.train JSON (docs/results-schema.md).
Both run S steps per epoch (capped by the epoch: 60000 // B for Fashion-MNIST) for E epochs, E
chosen so that each run has at least --steps steps, and leave out the first W steps of every
epoch; a run's figure is its timed images over its timed seconds, all epochs together. The
script prints each run, then per batch the medians, the ratio scalelab / PyTorch and the bar,
with the GPU's name from nvidia-smi when it is there.

Usage (on the GPU machine; the four Fashion-MNIST IDX files may sit in any folder):
  tests/perf/compare_torch_gpu.py --scalelab PATH/scalelab --data-dir DIR [--rounds 3]
      [--batches 128,1024] [--steps 300] [--warmup 10] [--json FILE]
--device cpu runs both programs on the CPU instead (tiny --steps: a check of this script on a
machine without a GPU; its ratio says nothing about the bar).
Exit status: 0 measured (whether or not the bars are met: read the table); 1 a run failed (its
last error line is printed); 2 bad options.
"""
import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_SCRIPT = os.path.join(HERE, "torch_cnn_gpu.py")
TRAIN_IMAGES = 60000  # Fashion-MNIST's training set: the steps in one epoch are TRAIN_IMAGES // batch
BARS = {128: 1.5, 1024: 1.0}  # issue 6: scalelab / PyTorch images/sec at least this
PROG = "compare_torch_gpu"


class Fail(Exception):
    """One line for stderr, exit status 1."""


def gpu_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def plan(batch, steps):
    """(steps per epoch, epochs) for a run of at least `steps` steps at this batch."""
    per_epoch = min(TRAIN_IMAGES // batch, steps)
    return per_epoch, math.ceil(steps / per_epoch)


def run_checked(cmd, what):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        lines = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()]
        last = lines[-1] if lines else "(no output)"
        raise Fail(f"{what} exited with status {p.returncode}: {last}  [command: {shlex.join(cmd)}]")
    return time.perf_counter() - t0


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Fail(f"{what} wrote no readable JSON at {path} ({e})") from None


def run_torch(a, batch, per_epoch, epochs, path):
    cmd = [a.python, TORCH_SCRIPT, "--device", a.device, "-B", str(batch), "--max-steps", str(per_epoch),
           "--epochs", str(epochs), "--warmup", str(a.warmup), "--no-eval", "--quiet", "--json", path]
    if a.data_dir:
        cmd += ["--data-dir", a.data_dir]
    cmd += shlex.split(a.torch_args)
    run_checked(cmd, "the PyTorch run")
    r = read_json(path, "the PyTorch run")
    return {"images_per_second": r["images_per_second"], "timed_steps": r["timed_steps"], "steps": r["steps"],
            "device": r["device_name"], "versions": f"torch {r['torch']}, CUDA {r['cuda']}, cuDNN {r['cudnn']}",
            "command": cmd}


def run_scalelab(a, batch, per_epoch, epochs, path):
    cmd = [a.scalelab, "train", "--device", a.device, "--model", "cnn", "--batch-size", str(batch), "--max-steps",
           str(per_epoch), "--epochs", str(epochs), "--throughput-skip", str(a.warmup), "--no-eval", "--quiet",
           "--json", path]
    if a.data_dir:
        cmd += ["--data-dir", a.data_dir]
    cmd += shlex.split(a.scalelab_args)
    run_checked(cmd, "scalelab train")
    r = read_json(path, "scalelab train")
    if not r.get("complete") or not r.get("epochs"):
        raise Fail(f"scalelab train left an incomplete record in {path}; run its command by hand: {shlex.join(cmd)}")
    images = sum(e["timed_steps"] * e["global_batch"] for e in r["epochs"])
    seconds = sum(e["timed_steps"] * e["global_batch"] / e["images_per_second"] for e in r["epochs"])
    return {"images_per_second": images / seconds, "timed_steps": sum(e["timed_steps"] for e in r["epochs"]),
            "steps": sum(e["steps"] for e in r["epochs"]), "device": r["device"],
            "command": cmd}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="compare_torch_gpu.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalelab", required=True, help="the scalelab binary (a build with CUDA)")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of PyTorch and scalelab per batch (default 3)")
    ap.add_argument("--batches", default="128,1024", help="comma-separated batch sizes (default 128,1024)")
    ap.add_argument("--steps", type=int, default=300, help="at least this many steps per run (default 300)")
    ap.add_argument("--warmup", type=int, default=10,
                    help="steps left out of the timing at the start of every epoch, both sides (default 10)")
    ap.add_argument("--data-dir", "--data", dest="data_dir", default="",
                    help="folder of the four Fashion-MNIST IDX files, passed to both (default: each program's own)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cuda (the comparison), or cpu to check this script where there is no GPU")
    ap.add_argument("--python", default=sys.executable, help="Python with PyTorch for the PyTorch side (default: this one)")
    ap.add_argument("--torch-args", default="", help="extra options for torch_cnn_gpu.py, e.g. '--channels-last'")
    ap.add_argument("--scalelab-args", default="", help="extra options for scalelab train")
    ap.add_argument("--json", default="", help="write every run, the medians and the ratios here")
    a = ap.parse_args(argv)
    try:
        a.batch_list = [int(b) for b in a.batches.split(",") if b.strip()]
    except ValueError:
        ap.error(f"--batches {a.batches}: give comma-separated whole numbers, e.g. 128,1024")
    if not a.batch_list or any(b < 1 or b > TRAIN_IMAGES for b in a.batch_list):
        ap.error(f"--batches {a.batches}: each batch must be between 1 and {TRAIN_IMAGES}")
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds}: at least 1")
    if a.warmup < 0:
        ap.error(f"--warmup {a.warmup}: must not be negative")
    for b in a.batch_list:
        per_epoch, _ = plan(b, max(a.steps, 1))
        if a.steps < 1 or per_epoch <= 2 * a.warmup:
            ap.error(f"--steps {a.steps} with --warmup {a.warmup}: batch {b} would run {per_epoch} steps per epoch; "
                     f"each epoch needs more than twice --warmup (scalelab's rule for --throughput-skip)")
    if not (os.path.isfile(a.scalelab) and os.access(a.scalelab, os.X_OK)):
        ap.error(f"--scalelab {a.scalelab}: not an executable file; give the path of a scalelab binary built with CUDA")
    if a.json:
        folder = os.path.dirname(os.path.abspath(a.json))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            ap.error(f"--json {a.json}: the folder {folder} does not exist or is not writable")
    a.scalelab = os.path.abspath(a.scalelab)
    return a


def measure(a, tmp):
    runs = []
    for batch in a.batch_list:
        per_epoch, epochs = plan(batch, a.steps)
        print(f"batch {batch}: {epochs} epoch(s) of {per_epoch} steps per run, the first {a.warmup} of each untimed",
              flush=True)
        for r in range(1, a.rounds + 1):
            for side, fn in (("pytorch", run_torch), ("scalelab", run_scalelab)):
                load = load_average()
                res = fn(a, batch, per_epoch, epochs, os.path.join(tmp, f"{side}-{batch}-{r}.json"))
                res.update({"side": side, "batch": batch, "round": r, "load_average": load})
                runs.append(res)
                print(f"  round {r}: {side:8} {res['images_per_second']:10.0f} img/s  "
                      f"({res['timed_steps']} timed steps; {res['device']}; load {load})", flush=True)
    return runs


def summarise(a, runs):
    rows = []
    for batch in a.batch_list:
        t = [r["images_per_second"] for r in runs if r["batch"] == batch and r["side"] == "pytorch"]
        s = [r["images_per_second"] for r in runs if r["batch"] == batch and r["side"] == "scalelab"]
        tm, sm = statistics.median(t), statistics.median(s)
        bar = BARS.get(batch) if a.device == "cuda" else None
        rows.append({"batch": batch, "pytorch_median_img_per_s": tm, "scalelab_median_img_per_s": sm,
                     "ratio": sm / tm, "bar": bar, "met": None if bar is None else sm / tm >= bar,
                     "pytorch_img_per_s": t, "scalelab_img_per_s": s})
    return rows


def print_table(a, rows, gpu, runs):
    print(f"\ncnn on Fashion-MNIST, {a.device}, {a.rounds} round(s) per batch; GPU: {gpu or 'nvidia-smi not available'}")
    torch_run = next(r for r in runs if r["side"] == "pytorch")
    ours_run = next(r for r in runs if r["side"] == "scalelab")
    print(f"  pytorch:  {torch_run['device']}; {torch_run['versions']}")
    print(f"  scalelab: {ours_run['device']}; {a.scalelab}")
    print(f"  {'batch':>6} {'pytorch img/s':>14} {'scalelab img/s':>15} {'ratio':>7} {'bar':>6}  verdict")
    for row in rows:
        bar = "-" if row["bar"] is None else f"{row['bar']:.1f}x"
        verdict = ("no bar (cpu check)" if row["met"] is None else "meets the bar" if row["met"] else "BELOW the bar")
        print(f"  {row['batch']:>6} {row['pytorch_median_img_per_s']:>14.0f} {row['scalelab_median_img_per_s']:>15.0f} "
              f"{row['ratio']:>6.2f}x {bar:>6}  {verdict}")
    print("  (medians over the rounds; ratio = scalelab / pytorch)")


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    gpu = gpu_name()
    try:
        with tempfile.TemporaryDirectory(prefix="compare_torch_gpu.") as tmp:
            runs = measure(a, tmp)
    except Fail as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    rows = summarise(a, runs)
    print_table(a, rows, gpu, runs)
    if a.json:
        doc = {"schema": "scalelab.compare_torch_gpu", "schema_version": 1,
               "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": sys.argv,
               "device": a.device, "gpu": gpu, "scalelab": a.scalelab, "rounds": a.rounds, "steps": a.steps,
               "warmup": a.warmup, "rows": rows, "runs": runs}
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
