#!/usr/bin/python3
"""Train ShardLens's reference Fashion-MNIST classifier and save it with torch.jit.

Run with Debian's python3-torch (CPU):  /usr/bin/python3 scripts/oracles/train_reference_model.py

The saved TorchScript module takes raw pixels as float32 in [0, 255], shaped [N, 1, 28, 28],
normalizes them itself (so every consumer - `shardlens-cli run`, the oracle tests, users -
feeds it the same thing) and returns logits [N, 10]. Training is seeded and single-threaded
so a rerun gives the same model on the same machine; it takes a couple of minutes on one core.
"""
import argparse
import gzip
import os
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"
DEFAULT_OUT = os.path.join(HERE, "..", "..", "resources", "models", "fashion_mnist_reference.pt")
MEAN, STD = 72.94, 90.02  # Fashion-MNIST train pixel mean / std on the 0..255 scale


def read_idx(path, magic):
    with gzip.open(path, "rb") as f:
        data = f.read()
    got, count = struct.unpack(">II", data[:8])
    if got != magic:
        raise SystemExit("%s: bad IDX magic %#x" % (path, got))
    if magic == 0x801:
        return torch.frombuffer(bytearray(data[8:]), dtype=torch.uint8).long()
    rows, cols = struct.unpack(">II", data[8:16])
    pixels = torch.frombuffer(bytearray(data[16:]), dtype=torch.uint8)
    return pixels.reshape(count, 1, rows, cols)


class ReferenceNet(nn.Module):
    """Two small conv blocks and a linear head (~20k parameters, ~80 KB on disk)."""

    def __init__(self):
        super().__init__()
        self.mean = MEAN  # plain float attributes: TorchScript bakes them into the module
        self.std = STD
        self.conv1 = nn.Conv2d(1, 16, 5)   # 28 -> 24, pool -> 12
        self.conv2 = nn.Conv2d(16, 32, 5)  # 12 -> 8, pool -> 4
        self.head = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = (x - self.mean) / self.std  # raw [0, 255] pixels in, normalization lives in the model
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def accuracy(model, images, labels, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(images), batch):
            logits = model(images[i:i + batch].float())
            correct += int((logits.argmax(1) == labels[i:i + batch]).sum())
    return correct / len(images)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--out", default=DEFAULT_OUT)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    train_x = read_idx(os.path.join(args.data, "train-images-idx3-ubyte.gz"), 0x803)
    train_y = read_idx(os.path.join(args.data, "train-labels-idx1-ubyte.gz"), 0x801)
    test_x = read_idx(os.path.join(args.data, "t10k-images-idx3-ubyte.gz"), 0x803)
    test_y = read_idx(os.path.join(args.data, "t10k-labels-idx1-ubyte.gz"), 0x801)

    model = ReferenceNet()
    torch.jit.script(model)  # fail now, not after training, if the model is not scriptable
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    start = time.time()
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(train_x))
        for i in range(0, len(order), 128):
            idx = order[i:i + 128]
            loss = F.cross_entropy(model(train_x[idx].float()), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch %d: test accuracy %.4f (%.0f s)"
              % (epoch, accuracy(model, test_x, test_y), time.time() - start), flush=True)

    model.eval()
    scripted = torch.jit.script(model)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = out + ".tmp"
    scripted.save(tmp)
    os.replace(tmp, out)  # never leave a half-written model behind
    reloaded = torch.jit.load(out)
    acc = accuracy(reloaded, test_x, test_y)
    print("saved %s (%d bytes), reloaded test accuracy %.4f" % (out, os.path.getsize(out), acc))


if __name__ == "__main__":
    main()
