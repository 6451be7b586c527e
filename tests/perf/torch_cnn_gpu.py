#!/usr/bin/env python3
"""PyTorch reference for `scalelab train --device cuda --model cnn|resnet`: the same model on a GPU.

Defines the training-throughput (and optional accuracy) run that tests/perf/compare_torch_gpu.py
puts beside scalelab's CUDA engine; it also runs alone. Eager PyTorch by default; --compile MODE
runs the same training under torch.compile.

Models (--model, default cnn), exactly as lib/nn/model_zoo.cpp builds them, 1x28x28 in, 10 out:
  cnn:    Conv2d(1,32,3)+ReLU -> Conv2d(32,64,3)+ReLU -> MaxPool2d(2) -> Dropout(0.25)
          -> Flatten -> Linear(9216,128)+ReLU -> Dropout(0.5) -> Linear(128,10);
          PyTorch's default initialisation (1,199,882 parameters).
  resnet: build_resnet with lib/nn/residual_block.{h,cpp} and lib/nn/batch_norm.h:
          Conv2d(1,16,3,padding=1,bias=False) -> BatchNorm2d(16) -> ReLU
          -> BasicBlock(16, stride 1) -> BasicBlock(32, stride 2) -> BasicBlock(64, stride 2)
          -> AdaptiveAvgPool2d(1) + Flatten -> Linear(64,10), where
          BasicBlock(filters, stride)(x) = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)),
          conv1 3x3 with the stride, conv2 3x3 stride 1, both padding 1 and no bias; shortcut the
          identity when stride is 1 and the channels are kept, else Conv2d 1x1 with the stride (no
          bias) then BatchNorm2d. Every BatchNorm2d has momentum 0.1 and eps 1e-5 (scalelab's);
          scalelab's initialisation: convolutions He-uniform (kaiming_uniform_, relu gain), the
          BatchNorms 1 and 0, the Linear layer Glorot-uniform with a zero bias (77,754 trainable
          parameters, as `scalelab train --model resnet` prints; 28x28 -> 28 -> 14 -> 7 -> 1x1).
  Both: softmax cross-entropy, Adam lr 1e-3 (PyTorch's default Adam implementation for the
  device: foreach on CUDA), seeded with --seed.
Data: Fashion-MNIST from the four IDX files (stem, stem.gz or MNIST's dotted name, as scalelab
  reads them) in --data-dir, else $SCALELAB_DATA_DIR, else /usr/share/datasets/fashion-mnist;
  scaled to [0,1] as scalelab and the peer do. The whole training and test sets are copied to the
  device once, before anything is timed. Each epoch draws a seeded permutation and takes
  --batch-size images per step; the last partial batch is dropped (as scalelab's sampler does),
  so every step has the same shapes and a compiled step never recompiles after the first ones.
Precision: float32 like scalelab. PyTorch's defaults stand: TF32 allowed for cuDNN convolutions
  (torch.backends.cudnn.allow_tf32 = True; scalelab's cuDNN convolutions use CUDNN_DEFAULT_MATH,
  which allows TF32 too), not for matrix products (torch.backends.cuda.matmul.allow_tf32 = False,
  which torch.compile's generated and autotuned matrix products respect too); cuDNN's heuristics
  pick the algorithms (cudnn.benchmark off, as scalelab asks cuDNN's heuristics). Both settings
  are recorded in the JSON. --amp (bfloat16 autocast), --channels-last and --cudnn-benchmark
  change that; all are off by default.

torch.compile (--compile none|default|reduce-overhead|max-autotune|max-autotune-no-cudagraphs;
  none, the default, is eager). What is compiled, with torch.compile(fn, mode=MODE):
  - the forward and the loss: one function, cross_entropy(model(x), y), so Dynamo captures the
    model with its loss and AOTAutograd derives the backward from it; loss.backward() then runs
    the compiled backward graph. reduce-overhead and max-autotune replay both as CUDA graphs
    (torch.compiler.cudagraph_mark_step_begin() opens every step); max-autotune also times
    Triton templates against cuBLAS/cuDNN for the matrix products and convolutions.
  - the optimizer step (PyTorch's "compiling the optimizer" recipe: opt.step() inside a compiled
    function, the Adam update fused into generated kernels), unless --no-compile-optimizer.
  zero_grad(set_to_none=True), the batch gather and the loss tally stay eager. Evaluation uses
  the uncompiled module (same parameters), so it triggers no recompilation.
  Where compilation happens: in the first steps of the first epoch, which are warm-up steps
  (Dynamo traces and Inductor compiles on the first call; Adam's state appears after the first
  step, so its step may be compiled again on the second; CUDA graphs are recorded on the second
  and third calls). The script relies on --warmup for that, and requires --warmup >= 3 with
  --compile; the timed window of every epoch starts after its warm-up steps. The JSON's
  `graphs_compiled_in_timed_steps` (Dynamo's count of graphs compiled during the timed steps of
  all epochs, null if this PyTorch does not expose the counter) says whether that held: 0 is the
  expected value. Inductor caches its kernels on disk ($TORCHINDUCTOR_CACHE_DIR, by default
  /tmp/torchinductor_$USER), so a second run of the same model, batch and mode compiles faster.

What is timed, and what is not (per epoch, the first --warmup steps excluded):
  timed     from torch.cuda.synchronize() after the last warm-up step to torch.cuda.synchronize()
            after the epoch's last step: per step, the batch gathered from the device-resident
            data set by index (index_select on the GPU), zero_grad(set_to_none), forward, loss,
            backward, Adam step, and the loss added to a device-side sum (no per-step host sync).
  not timed loading and parsing the files, the copy of the data set to the device, the epoch's
            permutation, the warm-up steps (each synchronized, to time it: see
            `warmup_step_seconds`) with any compilation in them, evaluation on the test set, the
            final loss read-back.
  scalelab's `train --device cuda` times, from the end of its --throughput-skip'th step (host
  clock, no device sync) to the end of the epoch after its loss tally is read back (a device
  sync): per step its loader's batch (gathered on the host by a loader thread, overlapped)
  copied into a pinned buffer and on to the GPU (host-to-device copies PyTorch does not make
  here), forward, loss, backward, gradient averaging (NCCL, one rank), the optimizer, and a
  non-blocking copy of the loss tally. So the PyTorch side is spared the per-step host-to-device
  copy of the batch; otherwise both time the training step alone.

JSON (--json FILE; schema `scalelab.torch_cnn_gpu`, version 2): `device`, `device_name`,
`torch`, `cuda` (torch.version.cuda, null on CPU builds), `cudnn`, `python`, `model` (cnn or
resnet), `parameters` (trainable parameters), `compile` (the torch.compile mode, null when
eager), `compile_optimizer` (whether opt.step() was compiled too; false when eager),
`compile_seconds` (null when eager: the wall time of the first epoch's warm-up steps beyond
--warmup steady steps at the first epoch's timed pace, i.e. tracing, compilation, autotuning and
CUDA-graph recording; it also holds the first steps' eager costs, such as creating cuDNN and
cuBLAS handles, which an eager run's `warmup_overhead_seconds` shows alone),
`warmup_overhead_seconds` (the same quantity, recorded for every run), `first_step_seconds`,
`graphs_compiled` and `graphs_compiled_in_timed_steps` (Dynamo's counter, null when eager or not
exposed), `batch`, `epochs`, `max_steps`, `warmup`, `seed`, `amp`, `channels_last`,
`cudnn_benchmark`, `cudnn_allow_tf32`, `matmul_allow_tf32`, `images_per_second` (all timed
images / all timed seconds), `timed_steps`, `steps`, `test_accuracy` (last epoch's, null with
--no-eval), and `epoch`: per epoch `epoch`, `steps`, `timed_steps`, `timed_seconds`,
`images_per_second`, `train_seconds` (the whole loop, warm-up included), `warmup_step_seconds`
(each warm-up step's synchronized wall time), `mean_loss`, `test_accuracy`, `eval_seconds`.
Version 2 added `model`, `parameters`, `compile`, `compile_optimizer`, `compile_seconds`,
`warmup_overhead_seconds`, `first_step_seconds`, `graphs_compiled`,
`graphs_compiled_in_timed_steps` and the epochs' `warmup_step_seconds`.

Usage:
  tests/perf/torch_cnn_gpu.py -B 128 --max-steps 300 --no-eval --json torch.json   (throughput)
  tests/perf/torch_cnn_gpu.py -B 128 --compile max-autotune --max-steps 300 --no-eval
  tests/perf/torch_cnn_gpu.py --model resnet -B 128 --compile reduce-overhead --max-steps 300 --no-eval
  tests/perf/torch_cnn_gpu.py -B 128 --epochs 5                                    (accuracy)
  tests/perf/torch_cnn_gpu.py --device cpu -B 32 --max-steps 5 --warmup 2           (CPU check)
  (torch.compile on the CPU needs a C++ compiler; on CUDA it needs Triton, which PyTorch's CUDA
  wheels bring.)
Exit status: 0 done; 1 PyTorch, CUDA, torch.compile or the data unusable (one line on stderr);
2 bad options.
"""
import argparse
import gzip
import json
import os
import platform
import struct
import sys
import time
import traceback

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


MODELS = ("cnn", "resnet")
COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")  # the modes whose compiled steps replay as CUDA graphs


def build_cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(9216, 128), nn.ReLU(),
        nn.Dropout(0.5),
        nn.Linear(128, 10),
    )


def build_resnet(torch, nn):
    """scalelab's resnet (lib/nn/model_zoo.cpp build_resnet, lib/nn/residual_block.cpp) with its
    initialisation: He-uniform convolutions, BatchNorm 1 and 0, a Glorot-uniform Linear with a zero bias."""
    F = torch.nn.functional

    def conv(cin, cout, k, stride):
        return nn.Conv2d(cin, cout, k, stride=stride, padding=(k - 1) // 2, bias=False)

    def bn(c):
        return nn.BatchNorm2d(c, eps=1e-5, momentum=0.1)

    class BasicBlock(nn.Module):
        # out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)); ResidualBlock(filters, stride)
        def __init__(self, cin, filters, stride):
            super().__init__()
            self.conv1, self.bn1 = conv(cin, filters, 3, stride), bn(filters)
            self.conv2, self.bn2 = conv(filters, filters, 3, 1), bn(filters)
            projects = stride != 1 or cin != filters  # ResidualBlock::projects
            self.shortcut = nn.Sequential(conv(cin, filters, 1, stride), bn(filters)) if projects else nn.Identity()

        def forward(self, x):
            out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
            return F.relu(out + self.shortcut(x))

    model = nn.Sequential(
        conv(1, 16, 3, 1), bn(16), nn.ReLU(),
        BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),  # GlobalAvgPool: (64, 7, 7) -> (64)
        nn.Linear(64, 10),
    )
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):  # Init::he_uniform: U(+-sqrt(6 / fan_in))
                nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
            elif isinstance(m, nn.Linear):  # Init::glorot_uniform: U(+-sqrt(6 / (fan_in + fan_out))), bias 0
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
    return model  # BatchNorm2d starts at weight 1, bias 0, running mean 0, running var 1, as BatchNorm::initialize


def build_model(torch, name):
    return build_cnn(torch.nn) if name == "cnn" else build_resnet(torch, torch.nn)


def parameter_count(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def graphs_compiled(torch):
    """Dynamo's count of graphs compiled so far in this process, or None where it is not exposed."""
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:  # an internal counter: absent or renamed in some releases
        return None


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

    model = build_model(torch, a.model).to(device)
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(a.seed)

    def amp_ctx():
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=a.amp)

    def forward_loss(xb, yb):
        return F.cross_entropy(model(xb), yb)

    def optimizer_step():
        opt.step()

    compiled = a.compile != "none"
    compile_opt = compiled and a.compile_optimizer
    mark_step = None
    if compiled:
        if not hasattr(torch, "compile"):
            raise Fail(f"--compile {a.compile}: this PyTorch {torch.__version__} has no torch.compile (2.0 or later has)")
        forward_loss = torch.compile(forward_loss, mode=a.compile)
        if compile_opt:
            optimizer_step = torch.compile(optimizer_step, mode=a.compile)
        if device.type == "cuda" and a.compile in CUDA_GRAPH_MODES:
            mark_step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    graphs_before = graphs_compiled(torch) if compiled else None

    res = {"schema": "scalelab.torch_cnn_gpu", "schema_version": 2,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": sys.argv,
           "device": str(device), "device_name": device_name, "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version() if device.type == "cuda" else None,
           "python": platform.python_version(), "data_dir": folder, "model": a.model,
           "parameters": parameter_count(model), "compile": a.compile if compiled else None,
           "compile_optimizer": compile_opt, "compile_seconds": None, "warmup_overhead_seconds": None,
           "first_step_seconds": None, "graphs_compiled": None, "graphs_compiled_in_timed_steps": None,
           "batch": a.batch_size, "epochs": a.epochs,
           "max_steps": a.max_steps, "warmup": a.warmup, "seed": a.seed, "amp": "bfloat16" if a.amp else None,
           "channels_last": a.channels_last, "cudnn_benchmark": a.cudnn_benchmark,
           "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
           "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32, "epoch": []}
    if not a.quiet:
        how = (f"torch.compile mode {a.compile}" + ("" if compile_opt else ", optimizer eager")) if compiled else "eager"
        print(f"pytorch {device_name}: {a.model} ({res['parameters']} parameters), {how}", flush=True)
    timed_images = timed_seconds = timed_steps = 0
    graphs_in_timed = 0 if graphs_before is not None else None
    for ep in range(a.epochs):
        perm = torch.randperm(n, generator=gen)[:steps * a.batch_size].to(device)
        loss_sum = torch.zeros((), device=device)
        model.train()
        warm_times = []
        sync(torch, device)
        t_start = t_warm = time.perf_counter()
        for s in range(steps):
            if s == a.warmup and graphs_in_timed is not None:
                graphs_at_warm = graphs_compiled(torch)
            if mark_step is not None:
                mark_step()
            idx = perm[s * a.batch_size:(s + 1) * a.batch_size]
            xb, yb = xtr.index_select(0, idx), ytr.index_select(0, idx)
            opt.zero_grad(set_to_none=True)
            with amp_ctx():
                loss = forward_loss(xb, yb)
            loss.backward()
            optimizer_step()
            loss_sum += loss.detach().float()
            if s < a.warmup:  # untimed: each warm-up step synchronized, to see where compilation went
                sync(torch, device)
                now = time.perf_counter()
                warm_times.append(now - t_warm)
                t_warm = now
        sync(torch, device)
        t_end = time.perf_counter()
        if graphs_in_timed is not None:
            after = graphs_compiled(torch)
            graphs_in_timed = None if after is None else graphs_in_timed + after - graphs_at_warm
        mean_loss = loss_sum.item() / steps
        e = {"epoch": ep + 1, "steps": steps, "timed_steps": steps - a.warmup, "timed_seconds": t_end - t_warm,
             "images_per_second": (steps - a.warmup) * a.batch_size / (t_end - t_warm),
             "train_seconds": t_end - t_start, "warmup_step_seconds": warm_times, "mean_loss": mean_loss,
             "test_accuracy": None, "eval_seconds": None}
        if ep == 0 and warm_times:
            steady = e["timed_seconds"] / e["timed_steps"]
            res["first_step_seconds"] = warm_times[0]
            res["warmup_overhead_seconds"] = max(0.0, sum(warm_times) - len(warm_times) * steady)
            if compiled:
                res["compile_seconds"] = res["warmup_overhead_seconds"]
        timed_images += (steps - a.warmup) * a.batch_size
        timed_seconds += t_end - t_warm
        timed_steps += steps - a.warmup
        if a.eval:  # the uncompiled module: same parameters, no recompilation for eval mode or batch 1000
            t0 = time.perf_counter()
            e["test_accuracy"] = evaluate(torch, model, xte, yte, 1000, amp_ctx, a.channels_last)
            e["eval_seconds"] = time.perf_counter() - t0
        res["epoch"].append(e)
        if not a.quiet:
            acc = "" if e["test_accuracy"] is None else f", test accuracy {e['test_accuracy']:.4f}"
            comp = (f", {res['compile_seconds']:.1f} s compiling in the warm-up"
                    if ep == 0 and res["compile_seconds"] is not None else "")
            print(f"pytorch {device_name}: epoch {ep + 1}/{a.epochs}: {steps} steps of batch {a.batch_size}, "
                  f"{e['images_per_second']:.0f} img/s over the last {steps - a.warmup} (after {a.warmup} warm-up{comp}), "
                  f"mean loss {mean_loss:.4f}{acc}", flush=True)
    if compiled:
        after = graphs_compiled(torch)
        res["graphs_compiled"] = None if after is None or graphs_before is None else after - graphs_before
        res["graphs_compiled_in_timed_steps"] = graphs_in_timed
    res["images_per_second"] = timed_images / timed_seconds
    res["timed_steps"] = timed_steps
    res["steps"] = steps * a.epochs
    res["test_accuracy"] = res["epoch"][-1]["test_accuracy"]
    return res


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="torch_cnn_gpu.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="where to train (default cuda)")
    ap.add_argument("--model", choices=MODELS, default="cnn", help="scalelab's model to train (default cnn)")
    ap.add_argument("--compile", choices=COMPILE_MODES, default="none",
                    help="torch.compile mode for the forward+loss (and backward) and the optimizer step (default none: eager)")
    ap.add_argument("--no-compile-optimizer", dest="compile_optimizer", action="store_false",
                    help="with --compile: leave the Adam step eager (default: compile it too)")
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
    if a.compile != "none" and a.warmup < 3:
        ap.error(f"--warmup {a.warmup} with --compile {a.compile}: at least 3 (compilation and CUDA-graph recording "
                 "happen in the first steps, which must stay out of the timing)")
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
    except Exception as e:  # e.g. torch.compile's backend failing: the traceback, then one line to end on
        traceback.print_exc()
        what = f"--compile {a.compile}" if a.compile != "none" else "the training run"
        msg = (str(e).strip().splitlines() or [""])[0][:300]
        print(f"{PROG}: {what} failed: {type(e).__name__}: {msg}", file=sys.stderr)
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
