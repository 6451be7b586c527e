#!/usr/bin/env python3
"""Side-by-side input pipeline: `scalelab pipeline` against torchvision in a PyTorch DataLoader.

The same work in one invocation, alternating, several rounds: read each JPEG of a packed set
(`scalelab data make-jpeg`: images.bin + index.bin, docs/jpeg-dataset.md), decode it, take a
random crop of --crop pixels, flip it half the time, scale to float32 in [0, 1], and batch it
(NCHW) --images times, with the same number of workers:
  - scalelab: `scalelab pipeline --workers W --augment simple --decode accurate` (its images/s);
  - PyTorch: a map-style Dataset over the same bytes with torchvision.io.decode_jpeg,
    transforms.v2.RandomCrop and RandomHorizontalFlip and a float conversion, in a DataLoader with
    num_workers=W (W worker processes; the main process collates), one torch thread per process,
    timed from its first batch on (its worker processes' start-up left out).
Prints each run with the load average, the medians and the ratio scalelab / PyTorch.

Needs PyTorch 2.x and torchvision from PyPI (`python3 -m venv V && V/bin/pip install torch
torchvision`), run with that interpreter:
  V/bin/python tests/perf/compare_torchvision_pipeline.py --scalelab build/release/bin/scalelab \
      --dataset fm-jpeg --workers 1,2 --rounds 3
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def read_index(folder):
    with open(os.path.join(folder, "index.bin"), "rb") as f:
        raw = f.read()
    magic, _version, count, width, height, channels, _classes = struct.unpack_from("<8s6I", raw, 0)
    assert magic == b"SLJPGIDX", f"{folder}/index.bin: not a scalelab JPEG index"
    entries = [struct.unpack_from("<QII", raw, 32 + 16 * i) for i in range(count)]
    return entries, width, height, channels


def run_scalelab(binary, folder, workers, images, batch, crop):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        path = tmp.name
    subprocess.run([binary, "pipeline", "--dataset", "jpeg:" + folder, "--workers", str(workers), "--augment", "simple",
                    "--decode", "accurate", "--images", str(images), "--batch-size", str(batch), "--crop", str(crop),
                    "--json", path], check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        rate = json.load(f)["rows"][0]["images_per_s"]
    os.unlink(path)
    return rate


def run_torch(folder, workers, images, batch, crop):
    import torch
    import torchvision
    from torchvision.transforms import v2

    torch.set_num_threads(1)
    entries, _w, _h, channels = read_index(folder)
    with open(os.path.join(folder, "images.bin"), "rb") as f:
        blob = f.read()
    mode = torchvision.io.ImageReadMode.RGB if channels == 3 else torchvision.io.ImageReadMode.GRAY
    augment = v2.Compose([v2.RandomCrop(crop), v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True)])

    class Jpegs(torch.utils.data.Dataset):
        def __len__(self):
            return images

        def __getitem__(self, p):
            offset, size, label = entries[p % len(entries)]
            data = torch.frombuffer(bytearray(blob[offset:offset + size]), dtype=torch.uint8)
            return augment(torchvision.io.decode_jpeg(data, mode=mode)), label

    def worker_init(_):
        torch.set_num_threads(1)

    loader = torch.utils.data.DataLoader(Jpegs(), batch_size=batch, num_workers=workers, worker_init_fn=worker_init,
                                         prefetch_factor=2, persistent_workers=False)
    # Timed from the first batch on: the worker processes' start-up is left out (in PyTorch's favour).
    t0, n = None, 0
    for x, _y in loader:
        if t0 is None:
            t0 = time.perf_counter()
            continue
        n += x.shape[0]
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scalelab", required=True)
    ap.add_argument("--dataset", required=True, help="a folder made by scalelab data make-jpeg")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--images", type=int, default=16384)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--crop", type=int, default=56)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    out = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": "), "rows": []}
    import torch
    import torchvision
    out["torch"], out["torchvision"] = torch.__version__, torchvision.__version__
    for w in [int(x) for x in a.workers.split(",")]:
        ours, theirs = [], []
        for r in range(a.rounds):
            ours.append(run_scalelab(a.scalelab, a.dataset, w, a.images, a.batch_size, a.crop))
            print(f"workers {w} round {r + 1}: scalelab {ours[-1]:9.0f} images/s (load {load()})", flush=True)
            theirs.append(run_torch(a.dataset, w, a.images, a.batch_size, a.crop))
            print(f"workers {w} round {r + 1}: torch    {theirs[-1]:9.0f} images/s (load {load()})", flush=True)
        mo, mt = statistics.median(ours), statistics.median(theirs)
        print(f"workers {w}: medians scalelab {mo:.0f}, torchvision DataLoader {mt:.0f}: ratio {mo / mt:.2f}", flush=True)
        out["rows"].append({"workers": w, "scalelab": ours, "torch": theirs, "ratio_of_medians": mo / mt})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
