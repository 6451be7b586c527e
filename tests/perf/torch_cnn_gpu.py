#!/usr/bin/env python3
"""PyTorch reference for `scalelab train --device cuda --model cnn`: the same model on a GPU.

Defines the training-throughput (and optional accuracy) run that tests/perf/compare_torch_gpu.py
puts beside scalelab's CUDA engine; it also runs alone.

Model: the `cnn` model exactly as lib/nn/model_zoo.cpp builds it:
  Conv2d(1,32,3)+ReLU -> Conv2d(32,64,3)+ReLU -> MaxPool2d(2) -> Dropout(0.25)
  -> Flatten -> Linear(9216,128)+ReLU -> Dropout(0.5) -> Linear(128,10),
  PyTorch's default initialisation, softmax cross-entropy, Adam lr 1e-3 (PyTorch's default Adam
  implementation for the device), seeded with --seed.
Data: Fashion-MNIST from the four IDX files (stem, stem.gz or MNIST's dotted name, as scalelab
  reads them) in --data-dir, else $SCALELAB_DATA_DIR, else /usr/share/datasets/fashion-mnist;
  scaled to [0,1] as scalelab and the peer do. The whole training and test sets are copied to the
  device once, before anything is timed. Each epoch draws a seeded permutation and takes
  --batch-size images per step; the last partial batch is dropped (as scalelab's sampler does).
Precision: float32 like scalelab. PyTorch's defaults stand: TF32 allowed for cuDNN convolutions
  (torch.backends.cudnn.allow_tf32 = True; scalelab's cuDNN convolutions use CUDNN_DEFAULT_MATH,
  which allows TF32 too), not for matrix products (torch.backends.cuda.matmul.allow_tf32 = False);
  cuDNN's heuristics pick the algorithms (cudnn.benchmark off, as scalelab asks cuDNN's
  heuristics). Both settings are recorded in the JSON. --amp (bfloat16 autocast),
  --channels-last and --cudnn-benchmark change that; all are off by default.

What is timed, and what is not (per epoch, the first --warmup steps excluded):
  timed     from torch.cuda.synchronize() after the last warm-up step to torch.cuda.synchronize()
            after the epoch's last step: per step, the batch gathered from the device-resident
            data set by index (index_select on the GPU), zero_grad(set_to_none), forward, loss,
            backward, Adam step, and the loss added to a device-side sum (no per-step host sync).
  not timed loading and parsing the files, the copy of the data set to the device, the epoch's
            permutation, evaluation on the test set, the final loss read-back.
  scalelab's `train --device cuda` times, from the end of its --throughput-skip'th step (host
  clock, no device sync) to the end of the epoch after its loss tally is read back (a device
  sync): per step its loader's batch (gathered on the host by a loader thread, overlapped)
  copied into a pinned buffer and on to the GPU (host-to-device copies PyTorch does not make
  here), forward, loss, backward, gradient averaging (NCCL, one rank), the optimizer, and a
  non-blocking copy of the loss tally. So the PyTorch side is spared the per-step host-to-device
  copy of the batch; otherwise both time the training step alone.

JSON (--json FILE; schema `scalelab.torch_cnn_gpu`, version 1): `device`, `device_name`,
`torch`, `cuda` (torch.version.cuda, null on CPU builds), `cudnn`, `python`, `batch`,
`epochs`, `max_steps`, `warmup`, `seed`, `amp`, `channels_last`, `cudnn_benchmark`,
`cudnn_allow_tf32`, `matmul_allow_tf32`, `images_per_second` (all timed images / all timed
seconds), `timed_steps`, `steps`, `test_accuracy` (last epoch's, null with --no-eval), and
`epoch`: per epoch `epoch`, `steps`, `timed_steps`, `timed_seconds`, `images_per_second`,
`train_seconds` (the whole loop, warm-up included), `mean_loss`, `test_accuracy`,
`eval_seconds`.

Usage:
  tests/perf/torch_cnn_gpu.py -B 128 --max-steps 300 --no-eval --json torch.json   (throughput)
  tests/perf/torch_cnn_gpu.py -B 128 --epochs 5                                    (accuracy)
  tests/perf/torch_cnn_gpu.py --device cpu -B 32 --max-steps 5 --warmup 2           (CPU check)
Exit status: 0 done; 1 PyTorch, CUDA or the data unusable (one line on stderr); 2 bad options.
"""
import argparse
import gzip
import json
import os
import platform
import struct
import sys
import time

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"
STEMS = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
PROG = "torch_cnn_gpu"


class Fail(Exception):
    """One line for stderr, exit status 1: the environment or the data cannot serve the run."""


def data_dir_of(flag):
    if flag:
        return flag, "--data-dir"
    env = os.environ.get("SCALELAB_DATA_DIR", "")
    if env:
        return env, "SCALELAB_DATA_DIR"
    return DEFAULT_DATA_DIR, "the default --data-dir"


def find_idx(folder, stem, origin):
    dotted = stem.replace("-idx", ".idx", 1)  # MNIST's "train-images.idx3-ubyte"
    for name in (stem, stem + ".gz", dotted, dotted + ".gz"):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    raise Fail(f"{origin} {folder}: no {stem}[.gz] there; point --data-dir at a folder holding the four "
               "Fashion-MNIST IDX files (e.g. copied beside the scalelab binary)")


def read_idx(path):
    """An IDX file (gzipped or plain) as a numpy uint8 array of its dimensions."""
    import numpy as np
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError) as e:
        raise Fail(f"{path}: cannot read ({e}); copy the file again") from None
    if len(data) < 4:
        raise Fail(f"{path}: too short for an IDX header; copy the file again")
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08 or ndim < 1 or len(data) < 4 + 4 * ndim:
        raise Fail(f"{path}: not an unsigned-byte IDX file (magic {data[:4].hex()}); give the Fashion-MNIST files")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise Fail(f"{path}: holds {arr.size} bytes of data for dimensions {dims}; copy the file again")
    return arr.reshape(dims)


def load_fashion_mnist(flag):
    import numpy as np
    folder, origin = data_dir_of(flag)
    xtr, ytr, xte, yte = (read_idx(find_idx(folder, s, origin)) for s in STEMS)
    for x, y, name in ((xtr, ytr, "train"), (xte, yte, "t10k")):
        if x.ndim != 3 or x.shape[1:] != (28, 28) or y.shape != (x.shape[0],):
            raise Fail(f"{folder}: {name} images {x.shape} and labels {y.shape} are not N x 28 x 28 and N; "
                       "give the Fashion-MNIST files")

    def images(a):
        return (a.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)

    return images(xtr), ytr.astype(np.int64), images(xte), yte.astype(np.int64), folder


def build_model():
    import torch.nn as nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(9216, 128), nn.ReLU(),
        nn.Dropout(0.5),
        nn.Linear(128, 10),
    )


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def open_device(torch, name):
    """The torch.device for --device, or Fail naming why it cannot be used."""
    if name == "cpu":
        return torch.device("cpu"), cpu_name()
    if not torch.cuda.is_available():
        built = torch.version.cuda
        why = (f"this PyTorch {torch.__version__} is built without CUDA" if built is None else
               f"this PyTorch {torch.__version__} (CUDA {built}) finds no usable GPU (torch.cuda.is_available() is False)")
        raise Fail(f"--device cuda: {why}; run on a GPU machine with a CUDA build of PyTorch, or use --device cpu")
    dev = torch.device("cuda", torch.cuda.current_device())
    return dev, torch.cuda.get_device_name(dev)


def evaluate(torch, model, x, y, batch, amp_ctx, channels_last):
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=x.device)
    with torch.no_grad():
        for i in range(0, x.shape[0], batch):
            xb = x[i:i + batch]
            if channels_last:
                xb = xb.contiguous(memory_format=torch.channels_last)
            with amp_ctx():
                out = model(xb)
            correct += (out.argmax(1) == y[i:i + batch]).sum()
    model.train()
    return correct.item() / x.shape[0]


def run(a):
    try:
        import numpy  # noqa: F401  (the IDX reader needs it)
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        raise Fail(f"cannot import {e.name}: run with a Python that has PyTorch and numpy") from None
    device, device_name = open_device(torch, a.device)
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    torch.manual_seed(a.seed)

    xtr, ytr, xte, yte, folder = load_fashion_mnist(a.data_dir)
    n = xtr.shape[0]
    steps = n // a.batch_size
    if steps == 0:
        raise Fail(f"--batch-size {a.batch_size}: larger than the {n} training images of {folder}")
    if a.max_steps:
        steps = min(steps, a.max_steps)
    if steps <= a.warmup:
        raise Fail(f"--warmup {a.warmup}: an epoch here has only {steps} steps; lower --warmup or raise --max-steps")
    xtr, ytr = torch.from_numpy(xtr).to(device), torch.from_numpy(ytr).to(device)
    xte, yte = torch.from_numpy(xte).to(device), torch.from_numpy(yte).to(device)
    if a.channels_last:
        xtr = xtr.contiguous(memory_format=torch.channels_last)

    model = build_model().to(device)
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(a.seed)

    def amp_ctx():
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=a.amp)

    res = {"schema": "scalelab.torch_cnn_gpu", "schema_version": 1,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": sys.argv,
           "device": str(device), "device_name": device_name, "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version() if device.type == "cuda" else None,
           "python": platform.python_version(), "data_dir": folder, "batch": a.batch_size, "epochs": a.epochs,
           "max_steps": a.max_steps, "warmup": a.warmup, "seed": a.seed, "amp": "bfloat16" if a.amp else None,
           "channels_last": a.channels_last, "cudnn_benchmark": a.cudnn_benchmark,
           "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
           "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32, "epoch": []}
    timed_images = timed_seconds = timed_steps = 0
    for ep in range(a.epochs):
        perm = torch.randperm(n, generator=gen)[:steps * a.batch_size].to(device)
        loss_sum = torch.zeros((), device=device)
        model.train()
        sync(torch, device)
        t_start = t_warm = time.perf_counter()
        for s in range(steps):
            idx = perm[s * a.batch_size:(s + 1) * a.batch_size]
            xb, yb = xtr.index_select(0, idx), ytr.index_select(0, idx)
            opt.zero_grad(set_to_none=True)
            with amp_ctx():
                loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            loss_sum += loss.detach().float()
            if s + 1 == a.warmup:
                sync(torch, device)
                t_warm = time.perf_counter()
        sync(torch, device)
        t_end = time.perf_counter()
        mean_loss = loss_sum.item() / steps
        e = {"epoch": ep + 1, "steps": steps, "timed_steps": steps - a.warmup, "timed_seconds": t_end - t_warm,
             "images_per_second": (steps - a.warmup) * a.batch_size / (t_end - t_warm),
             "train_seconds": t_end - t_start, "mean_loss": mean_loss, "test_accuracy": None, "eval_seconds": None}
        timed_images += (steps - a.warmup) * a.batch_size
        timed_seconds += t_end - t_warm
        timed_steps += steps - a.warmup
        if a.eval:
            t0 = time.perf_counter()
            e["test_accuracy"] = evaluate(torch, model, xte, yte, 1000, amp_ctx, a.channels_last)
            e["eval_seconds"] = time.perf_counter() - t0
        res["epoch"].append(e)
        if not a.quiet:
            acc = "" if e["test_accuracy"] is None else f", test accuracy {e['test_accuracy']:.4f}"
            print(f"pytorch {device_name}: epoch {ep + 1}/{a.epochs}: {steps} steps of batch {a.batch_size}, "
                  f"{e['images_per_second']:.0f} img/s over the last {steps - a.warmup} (after {a.warmup} warm-up), "
                  f"mean loss {mean_loss:.4f}{acc}", flush=True)
    res["images_per_second"] = timed_images / timed_seconds
    res["timed_steps"] = timed_steps
    res["steps"] = steps * a.epochs
    res["test_accuracy"] = res["epoch"][-1]["test_accuracy"]
    return res


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="torch_cnn_gpu.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="where to train (default cuda)")
    ap.add_argument("--batch-size", "-B", type=int, default=128, help="images per step (default 128)")
    ap.add_argument("--epochs", "-E", type=int, default=1, help="epochs to train (default 1)")
    ap.add_argument("--max-steps", type=int, default=0, help="cap on steps per epoch (0: the whole epoch)")
    ap.add_argument("--warmup", type=int, default=20, help="steps left out of the timing at the start of each epoch (default 20)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--data-dir", "--data", dest="data_dir", default="",
                    help=f"folder of the four IDX files (default $SCALELAB_DATA_DIR, else {DEFAULT_DATA_DIR})")
    ap.add_argument("--no-eval", dest="eval", action="store_false", help="skip the test-set evaluation after each epoch")
    ap.add_argument("--amp", action="store_true", help="bfloat16 autocast (off: float32 like scalelab)")
    ap.add_argument("--channels-last", action="store_true", help="NHWC images and convolution weights (off: NCHW)")
    ap.add_argument("--cudnn-benchmark", action="store_true",
                    help="let cuDNN time its algorithms (off: its heuristics choose, as scalelab's do)")
    ap.add_argument("--json", default="", help="write the run's record here")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    a = ap.parse_args(argv)
    for name, low in (("batch_size", 1), ("epochs", 1), ("max_steps", 0), ("warmup", 0)):
        v = getattr(a, name)
        if v < low:
            ap.error(f"--{name.replace('_', '-')} {v}: must be at least {low}")
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.json:
        folder = os.path.dirname(os.path.abspath(a.json))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            print(f"{PROG}: --json {a.json}: the folder {folder} does not exist or is not writable", file=sys.stderr)
            return 2
    try:
        res = run(a)
    except Fail as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
