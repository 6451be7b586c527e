#!/usr/bin/env python3
"""Side-by-side GPU training throughput: `scalelab train --device cuda` vs the strongest PyTorch.

scalelab's speed goals, on an H100 with Fashion-MNIST, float32 on both sides, scalelab's
images/sec against the BEST of the PyTorch peers run beside it (eager PyTorch and torch.compile
in its "max-autotune" and "reduce-overhead" modes; same model, batch and precision):
  --model cnn:    at least 1.5x at batch 128 and at least 1.1x at batch 1024 (other batches: no bar);
  --model resnet: at least 1.0x at every batch.
(The earlier goals were 1.5x and 1.0x against eager PyTorch alone.) This script measures
them in one invocation. At every batch of --batches it runs --rounds rounds; each round runs
scalelab and every peer of --peers once, one after another, the order rotated by one place from
round to round, so that no side always runs first or after the same neighbour:
  - scalelab: `SCALELAB train --device cuda --model M --batch-size B --max-steps S --epochs E
    --throughput-skip W --no-eval --quiet --json F`, images/sec read from the epoch records of
    the scalelab.train JSON (docs/results-schema.md);
  - each PyTorch peer: tests/perf/torch_cnn_gpu.py (beside this script; the same model and
    initialisation as scalelab's zoo builds it, Adam 1e-3, the data set resident on the GPU; see
    its docstring for exactly what each side times and what torch.compile compiles) run with
    --python and `--model M --compile MODE`. Peer names: eager (no torch.compile), default,
    reduce-overhead, max-autotune, max-autotune-no-cudagraphs (torch.compile's modes).
Both run S steps per epoch (capped by the epoch: 60000 // B for Fashion-MNIST) for E epochs, E
chosen so that each run has at least --steps steps, and leave out the first W steps of every
epoch; a run's figure is its timed images over its timed seconds, all epochs together. A
compiled peer compiles (and autotunes, and records its CUDA graphs) in its first warm-up steps,
outside the timed steps; its compile time is shown with each run (the torch_cnn_gpu JSON's
compile_seconds), and every run's wall time too. Inductor's on-disk cache makes the first round
of a compiled peer the slow one.

A peer that fails (it exits non-zero, e.g. torch.compile cannot build its kernels, or runs past
--peer-timeout seconds) does not stop the comparison: its one-line error is printed and kept in
the table and the JSON, it is left out of the later rounds at that batch, and the best peer is
chosen among those that ran. A scalelab run that fails stops the script (exit 1).

The script prints each run, then per batch every peer's median, the best peer (the highest
median), the ratio scalelab / best peer and the bar, with the GPU's name from nvidia-smi when
it is there; --json FILE keeps every run, the medians, the ratios (against the best peer and
against each peer) and the errors.

Usage (on the GPU machine; the four Fashion-MNIST IDX files may sit in any folder):
  tests/perf/compare_torch_gpu.py --scalelab PATH/scalelab --data-dir DIR [--model cnn|resnet]
      [--peers eager,max-autotune,reduce-overhead] [--rounds 3] [--batches 128,1024]
      [--steps 300] [--warmup 10] [--peer-timeout 900] [--json FILE]
--device cpu runs every program on the CPU instead (tiny --steps: a check of this script on a
machine without a GPU; its ratios say nothing about the bars; torch.compile there needs a C++
compiler, else use --peers eager).
Exit status: 0 measured: scalelab ran every round and, at every batch, at least one peer gave a
figure (whether or not the bars are met: read the table; a failed peer is reported there); 1 a
scalelab run failed (its last error line is printed) or no peer ran at some batch; 2 bad options.
"""
import argparse
import json
import math
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_SCRIPT = os.path.join(HERE, "torch_cnn_gpu.py")
TRAIN_IMAGES = 60000  # Fashion-MNIST's training set: the steps in one epoch are TRAIN_IMAGES // batch
MODELS = ("cnn", "resnet")
PEER_MODES = {"eager": "none", "default": "default", "reduce-overhead": "reduce-overhead",
              "max-autotune": "max-autotune", "max-autotune-no-cudagraphs": "max-autotune-no-cudagraphs"}
DEFAULT_PEERS = "eager,max-autotune,reduce-overhead"
PROG = "compare_torch_gpu"


class Fail(Exception):
    """One line for stderr, exit status 1."""


def bar_of(model, batch):
    """The goal: scalelab / best PyTorch peer images/sec at least this (float32), or None: no bar."""
    if model == "cnn":
        return {128: 1.5, 1024: 1.1}.get(batch)
    return 1.0


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


def run_checked(cmd, what, timeout=None):
    """Run cmd in its own process group; its wall seconds, or Fail with its last error line."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:  # the whole group: torch.compile's worker processes too
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.communicate()
        raise Fail(f"{what} ran past {timeout:.0f} s and was stopped  [command: {shlex.join(cmd)}]") from None
    except BaseException:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        raise
    if p.returncode != 0:
        lines = [l for l in err.splitlines() if l.strip()] or [l for l in out.splitlines() if l.strip()]
        last = lines[-1].strip() if lines else "(no output)"
        raise Fail(f"{what} exited with status {p.returncode}: {last}  [command: {shlex.join(cmd)}]")
    return time.perf_counter() - t0


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Fail(f"{what} wrote no readable JSON at {path} ({e})") from None


def run_torch(a, peer, batch, per_epoch, epochs, path):
    cmd = [a.python, TORCH_SCRIPT, "--device", a.device, "--model", a.model, "--compile", PEER_MODES[peer],
           "-B", str(batch), "--max-steps", str(per_epoch), "--epochs", str(epochs), "--warmup", str(a.warmup),
           "--no-eval", "--quiet", "--json", path]
    if a.data_dir:
        cmd += ["--data-dir", a.data_dir]
    cmd += shlex.split(a.torch_args)
    what = f"the PyTorch peer {peer}"
    wall = run_checked(cmd, what, a.peer_timeout or None)
    r = read_json(path, what)
    return {"images_per_second": r["images_per_second"], "timed_steps": r["timed_steps"], "steps": r["steps"],
            "device": r["device_name"], "versions": f"torch {r['torch']}, CUDA {r['cuda']}, cuDNN {r['cudnn']}",
            "parameters": r.get("parameters"), "compile": r.get("compile"),
            "compile_seconds": r.get("compile_seconds"), "warmup_overhead_seconds": r.get("warmup_overhead_seconds"),
            "graphs_compiled_in_timed_steps": r.get("graphs_compiled_in_timed_steps"), "amp": r.get("amp"),
            "wall_seconds": wall, "command": cmd}


def run_scalelab(a, batch, per_epoch, epochs, path):
    cmd = [a.scalelab, "train", "--device", a.device, "--model", a.model, "--batch-size", str(batch), "--max-steps",
           str(per_epoch), "--epochs", str(epochs), "--throughput-skip", str(a.warmup), "--no-eval", "--quiet",
           "--json", path]
    if a.data_dir:
        cmd += ["--data-dir", a.data_dir]
    cmd += shlex.split(a.scalelab_args)
    wall = run_checked(cmd, "scalelab train")
    r = read_json(path, "scalelab train")
    if not r.get("complete") or not r.get("epochs"):
        raise Fail(f"scalelab train left an incomplete record in {path}; run its command by hand: {shlex.join(cmd)}")
    images = sum(e["timed_steps"] * e["global_batch"] for e in r["epochs"])
    seconds = sum(e["timed_steps"] * e["global_batch"] / e["images_per_second"] for e in r["epochs"])
    return {"images_per_second": images / seconds, "timed_steps": sum(e["timed_steps"] for e in r["epochs"]),
            "steps": sum(e["steps"] for e in r["epochs"]), "device": r["device"], "parameters": r.get("parameters"),
            "wall_seconds": wall, "command": cmd}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="compare_torch_gpu.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalelab", required=True, help="the scalelab binary (a build with CUDA)")
    ap.add_argument("--model", choices=MODELS, default="cnn", help="the model both sides train (default cnn)")
    ap.add_argument("--peers", default=DEFAULT_PEERS,
                    help=f"comma-separated PyTorch variants to run beside scalelab, of {', '.join(PEER_MODES)} "
                         f"(default {DEFAULT_PEERS})")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per batch, each running scalelab and every peer (default 3)")
    ap.add_argument("--batches", default="128,1024", help="comma-separated batch sizes (default 128,1024)")
    ap.add_argument("--steps", type=int, default=300, help="at least this many steps per run (default 300)")
    ap.add_argument("--warmup", type=int, default=10,
                    help="steps left out of the timing at the start of every epoch, all sides (default 10; "
                         "a compiled peer compiles in them, so at least 3 with a compiled peer)")
    ap.add_argument("--peer-timeout", type=float, default=900,
                    help="seconds after which a PyTorch run is stopped and reported as failed (default 900; 0: none)")
    ap.add_argument("--data-dir", "--data", dest="data_dir", default="",
                    help="folder of the four Fashion-MNIST IDX files, passed to all (default: each program's own)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cuda (the comparison), or cpu to check this script where there is no GPU")
    ap.add_argument("--python", default=sys.executable, help="Python with PyTorch for the PyTorch side (default: this one)")
    ap.add_argument("--torch-args", default="",
                    help="extra options for every torch_cnn_gpu.py run, e.g. '--no-compile-optimizer'")
    ap.add_argument("--scalelab-args", default="", help="extra options for scalelab train")
    ap.add_argument("--json", default="", help="write every run, the medians and the ratios here")
    a = ap.parse_args(argv)
    try:
        a.batch_list = [int(b) for b in a.batches.split(",") if b.strip()]
    except ValueError:
        ap.error(f"--batches {a.batches}: give comma-separated whole numbers, e.g. 128,1024")
    if not a.batch_list or any(b < 1 or b > TRAIN_IMAGES for b in a.batch_list):
        ap.error(f"--batches {a.batches}: each batch must be between 1 and {TRAIN_IMAGES}")
    a.peer_list = []
    for p in (p.strip() for p in a.peers.split(",")):
        if p and p not in a.peer_list:
            if p not in PEER_MODES:
                ap.error(f"--peers {a.peers}: {p} is not one of {', '.join(PEER_MODES)}")
            a.peer_list.append(p)
    if not a.peer_list:
        ap.error(f"--peers {a.peers!r}: name at least one of {', '.join(PEER_MODES)}")
    torch_opts = shlex.split(a.torch_args)
    for opt in ("--model", "--compile", "--device", "-B", "--batch-size", "--warmup", "--max-steps", "--epochs"):
        if any(t == opt or t.startswith(opt + "=") for t in torch_opts):
            ap.error(f"--torch-args: {opt} is set by this script (--model, --peers, --device, --batches, --warmup, --steps)")
    a.torch_amp = "--amp" in torch_opts
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds}: at least 1")
    if a.warmup < 0:
        ap.error(f"--warmup {a.warmup}: must not be negative")
    if a.warmup < 3 and any(p != "eager" for p in a.peer_list):
        ap.error(f"--warmup {a.warmup}: a compiled peer needs at least 3 warm-up steps (it compiles in them)")
    if a.peer_timeout < 0:
        ap.error(f"--peer-timeout {a.peer_timeout}: must not be negative")
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


def describe(res):
    extra = ""
    if res.get("compile_seconds") is not None:
        extra = f"; compiled in {res['compile_seconds']:.1f} s"
        if res.get("graphs_compiled_in_timed_steps"):
            extra += f", {res['graphs_compiled_in_timed_steps']} graph(s) compiled in the TIMED steps"
    return f"{res['timed_steps']} timed steps{extra}; {res['wall_seconds']:.1f} s wall; {res['device']}"


def measure(a, tmp):
    runs = []
    sides = ["scalelab"] + a.peer_list
    for batch in a.batch_list:
        per_epoch, epochs = plan(batch, a.steps)
        print(f"{a.model}, batch {batch}: {epochs} epoch(s) of {per_epoch} steps per run, the first {a.warmup} of "
              f"each untimed; scalelab and {', '.join(a.peer_list)}", flush=True)
        failed = set()
        for r in range(1, a.rounds + 1):
            k = (r - 1) % len(sides)
            for side in sides[k:] + sides[:k]:
                if side in failed:
                    continue
                load = load_average()
                path = os.path.join(tmp, f"{side}-{batch}-{r}.json")
                if side == "scalelab":
                    res = run_scalelab(a, batch, per_epoch, epochs, path)  # a Fail here stops the script
                    res.update({"side": "scalelab", "peer": None})
                else:
                    try:
                        res = run_torch(a, side, batch, per_epoch, epochs, path)
                    except Fail as e:
                        failed.add(side)
                        runs.append({"side": "pytorch", "peer": side, "batch": batch, "round": r, "load_average": load,
                                     "images_per_second": None, "error": str(e)})
                        print(f"  round {r}: {side:26} FAILED: {e}  (left out of the later rounds)", flush=True)
                        continue
                    res.update({"side": "pytorch", "peer": side})
                res.update({"batch": batch, "round": r, "load_average": load, "error": None})
                runs.append(res)
                print(f"  round {r}: {res['peer'] or 'scalelab':26} {res['images_per_second']:10.0f} img/s  "
                      f"({describe(res)}; load {load})", flush=True)
    return runs


def one_line(error):
    """A failed run's error without the command that follows it."""
    return error.split("  [command: ")[0]


def summarise(a, runs):
    rows = []
    for batch in a.batch_list:
        mine = [r for r in runs if r["batch"] == batch]
        s = [r["images_per_second"] for r in mine if r["side"] == "scalelab"]
        sm = statistics.median(s)
        peers = {}
        for p in a.peer_list:
            pr = [r for r in mine if r["peer"] == p]
            ok = [r["images_per_second"] for r in pr if r["error"] is None]
            errs = [one_line(r["error"]) for r in pr if r["error"] is not None]
            med = statistics.median(ok) if ok else None
            peers[p] = {"median_img_per_s": med, "img_per_s": ok, "ratio": None if med is None else sm / med,
                        "compile_seconds": [r.get("compile_seconds") for r in pr if r["error"] is None],
                        "wall_seconds": [r.get("wall_seconds") for r in pr if r["error"] is None],
                        "error": errs[0] if errs else None}
        ran = [p for p in a.peer_list if peers[p]["median_img_per_s"] is not None]
        best = max(ran, key=lambda p: peers[p]["median_img_per_s"]) if ran else None
        bm = peers[best]["median_img_per_s"] if best else None
        bar = bar_of(a.model, batch) if a.device == "cuda" and not a.torch_amp else None
        ratio = None if bm is None else sm / bm
        rows.append({"batch": batch, "scalelab_median_img_per_s": sm, "scalelab_img_per_s": s, "peers": peers,
                     "best_peer": best, "best_peer_median_img_per_s": bm, "ratio": ratio, "bar": bar,
                     "met": None if bar is None or ratio is None else ratio >= bar})
    return rows


def print_table(a, rows, gpu, runs):
    print(f"\n{a.model} on Fashion-MNIST, {a.device}, {a.rounds} round(s) per batch; GPU: {gpu or 'nvidia-smi not available'}")
    torch_run = next((r for r in runs if r["side"] == "pytorch" and r["error"] is None), None)
    ours_run = next(r for r in runs if r["side"] == "scalelab")
    if torch_run:
        print(f"  pytorch:  {torch_run['device']}; {torch_run['versions']}"
              + (f"; {torch_run['amp']} autocast" if torch_run.get("amp") else ""))
    print(f"  scalelab: {ours_run['device']}; {a.scalelab}")
    pt_params = {r["parameters"] for r in runs if r["side"] == "pytorch" and r["error"] is None}
    if ours_run.get("parameters") is not None and pt_params:
        same = pt_params == {ours_run["parameters"]}
        print(f"  parameters: scalelab {ours_run['parameters']}, pytorch {', '.join(str(p) for p in sorted(pt_params))}"
              + ("" if same else "  MISMATCH: not the same model"))
    width = max(len(p) for p in a.peer_list + ["best peer"])
    for row in rows:
        print(f"  batch {row['batch']}: scalelab {row['scalelab_median_img_per_s']:.0f} img/s")
        for p in a.peer_list:
            pe = row["peers"][p]
            if pe["median_img_per_s"] is None:
                print(f"    {p:<{width}} FAILED: {pe['error']}")
                continue
            comp = [c for c in pe["compile_seconds"] if c is not None]
            ctext = f"; compile {min(comp):.1f}-{max(comp):.1f} s" if comp else ""
            note = f"  (then failed: {pe['error']})" if pe["error"] else ""
            print(f"    {p:<{width}} {pe['median_img_per_s']:10.0f} img/s  scalelab / it {pe['ratio']:5.2f}x"
                  f"  ({len(pe['img_per_s'])} run(s){ctext}){note}")
        if row["best_peer"] is None:
            print(f"    {'best peer':<{width}} none: every peer failed")
            continue
        bar = "no bar" if row["bar"] is None else f"bar {row['bar']:.1f}x"
        verdict = ("" if row["met"] is None else ": meets the bar" if row["met"] else ": BELOW the bar")
        why = ""
        if row["bar"] is None:
            why = (" (cpu check)" if a.device != "cuda" else " (PyTorch ran bfloat16 autocast; the bars are float32)"
                   if a.torch_amp else f" (no goal is set at batch {row['batch']} for {a.model})")
        print(f"    {'best peer':<{width}} {row['best_peer']}: {row['best_peer_median_img_per_s']:.0f} img/s; "
              f"scalelab / best peer = {row['ratio']:.2f}x, {bar}{verdict}{why}")
    print("  (medians over the rounds; ratio = scalelab / PyTorch, the best peer = the highest median)")


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    gpu = gpu_name()
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="compare_torch_gpu.") as tmp:
            runs = measure(a, tmp)
    except Fail as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    rows = summarise(a, runs)
    print_table(a, rows, gpu, runs)
    wall = time.perf_counter() - t0
    print(f"  ({wall:.0f} s wall in all)")
    if a.json:
        doc = {"schema": "scalelab.compare_torch_gpu", "schema_version": 2,
               "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": sys.argv,
               "device": a.device, "gpu": gpu, "scalelab": a.scalelab, "model": a.model, "peers": a.peer_list,
               "rounds": a.rounds, "steps": a.steps, "warmup": a.warmup, "torch_args": a.torch_args,
               "scalelab_args": a.scalelab_args, "wall_seconds": wall, "rows": rows, "runs": runs}
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.json)
    lost = [row["batch"] for row in rows if row["best_peer"] is None]
    if lost:
        print(f"{PROG}: no PyTorch peer ran at batch {', '.join(map(str, lost))}: nothing to compare with", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
