"""Train and export the float reference models for the ONNX -> CVM converter.

    /usr/bin/python3 tests/convert/train_models.py [--out DIR] [--only NAME ...] [--epochs N]

Five small Fashion-MNIST nets, each exported with torch.onnx.export in eval
mode (batch fixed at 1, input "input", output "logits", constant folding on):

    plain_cnn     opset 17  conv-BN-ReLU x2 with MaxPool, Flatten, two Gemm
    resnet        opset 13  ResNet-20-style basic blocks, 1x1 conv+BN shortcuts
    mobilenet_v1  opset 13  depthwise-separable blocks with ReLU6
    mobilenet_v2  opset 12  inverted residuals, linear-bottleneck adds
    coverage      opset 11  the remaining converter operators (Sub/Div input
                            normalization, standalone BatchNormalization,
                            Concat, Pad + AveragePool, Sigmoid, Resize,
                            Shape/Gather/.../Reshape, Softmax)

Input convention: float32 (1, 1, 28, 28), pixels / 255 in [0, 1], exactly what
fmnist.load() returns; any normalization is inside the model.

After export, each model's float top-1 on the 10,000 test images (the torch
model in eval mode) goes to DIR/float_accuracy.json.

Determinism: seeds are fixed (torch, the shuffling order) and training runs on
one thread with torch.use_deterministic_algorithms(True), so a rerun on the same
machine and torch build gives the same weights. Other CPUs, other torch or
oneDNN versions may pick other kernels and round differently, so bytes are not
promised across machines; the frozen .onnx files in the repo are the reference.

Exits 77 (skip) when torch or the data set is absent.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fmnist  # noqa: E402

SKIP = 77
SEED = 20261205
BATCH = 128

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    torch = None


def conv_bn(cin, cout, k, stride=1, groups=1):
    """Conv without bias followed by BN; the export folds the BN into the Conv."""
    return [
        nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]


def build_plain_cnn():
    return nn.Sequential(
        *conv_bn(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
        *conv_bn(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


if torch is not None:

    class BasicBlock(nn.Module):
        """conv-BN-ReLU, conv-BN, residual Add, ReLU; 1x1 conv+BN shortcut on a shape change."""

        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(), *conv_bn(cout, cout, 3))
            self.shortcut = nn.Identity()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(*conv_bn(cin, cout, 1, stride))

        def forward(self, x):
            return F.relu(self.body(x) + self.shortcut(x))

    class InvertedResidual(nn.Module):
        """1x1 expand-BN-ReLU6, dw 3x3-BN-ReLU6, 1x1 project-BN; Add where shapes allow."""

        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            mid = cin * expand
            self.body = nn.Sequential(
                *conv_bn(cin, mid, 1), nn.ReLU6(),
                *conv_bn(mid, mid, 3, stride, groups=mid), nn.ReLU6(),
                *conv_bn(mid, cout, 1),
            )
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    class Coverage(nn.Module):
        """One net with every converter operator the other four nets lack."""

        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(*conv_bn(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2))
            # After MaxPool no Conv precedes it, so the export keeps this BN.
            self.standalone_bn = nn.BatchNorm2d(16)
            self.branch1 = nn.Sequential(*conv_bn(16, 16, 1), nn.ReLU())
            self.branch3 = nn.Sequential(*conv_bn(16, 16, 3), nn.ReLU())
            # count_include_pad (the default) makes opset 11 emit Pad + AveragePool.
            self.avgpool = nn.AvgPool2d(3, stride=2, padding=1)
            self.gate = nn.Sequential(*conv_bn(32, 32, 3), nn.Sigmoid())
            self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
            self.down = nn.Sequential(*conv_bn(32, 16, 3, stride=2), nn.ReLU())
            self.fc1 = nn.Linear(16 * 7 * 7, 64)
            self.fc2 = nn.Linear(64, 10)
            # Training uses cross_entropy on the logits; the export ends in Softmax.
            self.with_softmax = True

        def forward(self, x):
            x = (x - 0.286) / 0.353
            x = self.standalone_bn(self.stem(x))
            x = torch.cat([self.branch1(x), self.branch3(x)], dim=1)
            x = self.upsample(self.gate(self.avgpool(x)))
            x = self.down(x)
            x = x.view(x.size(0), -1)
            x = self.fc2(F.relu(self.fc1(x)))
            return F.softmax(x, dim=1) if self.with_softmax else x


def build_resnet():
    return nn.Sequential(
        *conv_bn(1, 16, 3, stride=2), nn.ReLU(),
        BasicBlock(16, 16, 1),
        BasicBlock(16, 32, 2), BasicBlock(32, 32, 1),
        BasicBlock(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10),
    )


def dw_separable(cin, cout, stride):
    return [*conv_bn(cin, cin, 3, stride, groups=cin), nn.ReLU6(), *conv_bn(cin, cout, 1), nn.ReLU6()]


def build_mobilenet_v1():
    return nn.Sequential(
        *conv_bn(1, 16, 3, stride=2), nn.ReLU6(),
        *dw_separable(16, 32, 1),
        *dw_separable(32, 64, 2),
        *dw_separable(64, 64, 1),
        *dw_separable(64, 128, 2),
        *dw_separable(128, 128, 1),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    )


def build_mobilenet_v2():
    return nn.Sequential(
        *conv_bn(1, 16, 3, stride=2), nn.ReLU6(),
        InvertedResidual(16, 16, 1, 2),
        InvertedResidual(16, 24, 2, 4),
        InvertedResidual(24, 24, 1, 4),
        InvertedResidual(24, 48, 2, 4),
        InvertedResidual(48, 48, 1, 4),
        *conv_bn(48, 128, 1), nn.ReLU6(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    )


def build_coverage():
    return Coverage()


# name: (builder, opset, default epochs, Adam learning rate)
MODELS = {
    "plain_cnn": (build_plain_cnn, 17, 3, 2e-3),
    "resnet": (build_resnet, 13, 3, 3e-3),
    "mobilenet_v1": (build_mobilenet_v1, 13, 3, 3e-3),
    "mobilenet_v2": (build_mobilenet_v2, 12, 2, 3e-3),
    "coverage": (build_coverage, 11, 3, 2e-3),
}


def set_softmax(model, on):
    if hasattr(model, "with_softmax"):
        model.with_softmax = on


def train(model, images, labels, epochs, lr, seed):
    """Adam with a cosine-decayed learning rate over all steps; fixed shuffling order."""
    torch.manual_seed(seed)
    order_rng = np.random.RandomState(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = (len(images) + BATCH - 1) // BATCH
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps_per_epoch)
    x_all, y_all = torch.from_numpy(images), torch.from_numpy(labels)
    set_softmax(model, False)
    for epoch in range(epochs):
        model.train()
        order = torch.from_numpy(order_rng.permutation(len(images)))
        total = 0.0
        for start in range(0, len(images), BATCH):
            idx = order[start:start + BATCH]
            loss = F.cross_entropy(model(x_all[idx]), y_all[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print("  epoch %d/%d loss %.4f" % (epoch + 1, epochs, total / len(images)), flush=True)
    set_softmax(model, True)
    model.eval()


def top1(model, images, labels):
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(images), 1000):
            out = model(torch.from_numpy(images[start:start + 1000]))
            correct += int((out.argmax(1).numpy() == labels[start:start + 1000]).sum())
    return correct / len(images)


def export(model, path, opset):
    model.eval()
    torch.onnx.export(
        model,
        torch.zeros(1, 1, 28, 28),
        path,
        opset_version=opset,
        input_names=["input"],
        output_names=["logits"],
        do_constant_folding=True,
        training=torch.onnx.TrainingMode.EVAL,
    )


def run_one(name, args, train_set, test_set):
    build, opset, epochs, lr = MODELS[name]
    epochs = args.epochs or epochs
    torch.manual_seed(SEED)
    model = build()
    params = sum(p.numel() for p in model.parameters())
    print("%s: %d params, opset %d, %d epochs" % (name, params, opset, epochs), flush=True)
    t0 = time.time()
    train(model, *train_set, epochs, lr, SEED)
    seconds = time.time() - t0
    export(model, os.path.join(args.out, name + ".onnx"), opset)
    acc = top1(model, *test_set)
    print("%s: top1 %.4f, trained in %.0f s" % (name, acc, seconds), flush=True)
    return {"top1": round(acc, 4), "opset": opset, "params": params}


def record_accuracy(path, name, entry):
    """Update one model's entry; models not retrained keep theirs. Read just
    before writing so that runs with disjoint --only lists can share a file."""
    results = {}
    if os.path.isfile(path):
        with open(path) as f:
            results = json.load(f)
    results[name] = entry
    with open(path, "w") as f:
        json.dump({k: results[k] for k in MODELS if k in results}, f, indent=2)
        f.write("\n")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "models"))
    p.add_argument("--only", nargs="+", choices=sorted(MODELS), help="models to train (default: all)")
    p.add_argument("--epochs", type=int, help="epochs for every model (default: each model's own)")
    return p.parse_args()


def main():
    args = parse_args()
    if torch is None:
        print("train_models: skipped, torch is not installed (Debian python3-torch)")
        return SKIP
    if not fmnist.available():
        print("train_models: skipped, Fashion-MNIST is not in %s (Debian dataset-fashion-mnist)" % fmnist.DATASET_DIR)
        return SKIP
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(args.out, exist_ok=True)
    train_set, test_set = fmnist.load("train"), fmnist.load("test")

    for name in args.only or list(MODELS):
        record_accuracy(os.path.join(args.out, "float_accuracy.json"), name, run_one(name, args, train_set, test_set))
    return 0


if __name__ == "__main__":
    sys.exit(main())
