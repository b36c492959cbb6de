"""Writes Fashion-MNIST arrays for cvml-convert: DIR/calib.npy (the first 1,000
training images), DIR/x.npy and DIR/y.npy (the 10,000 test images and labels), as
the reference models take them (float pixels / 255, shape (N, 1, 28, 28)).

usage: python3 tests/convert/make_data.py DIR [--calibration N] [--test N]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fmnist  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--calibration", type=int, default=1000)
    p.add_argument("--test", type=int, default=10000)
    a = p.parse_args()
    if not fmnist.available():
        sys.exit("make_data: the Fashion-MNIST dataset is not in %s (Debian "
                 "dataset-fashion-mnist)" % fmnist.DATASET_DIR)
    os.makedirs(a.dir, exist_ok=True)
    train_x, _ = fmnist.load("train")
    x, y = fmnist.load("test")
    np.save(os.path.join(a.dir, "calib.npy"), train_x[:a.calibration])
    np.save(os.path.join(a.dir, "x.npy"), x[:a.test])
    np.save(os.path.join(a.dir, "y.npy"), y[:a.test])
    print("wrote %s/calib.npy (%d), x.npy and y.npy (%d)" % (a.dir, a.calibration, a.test))


if __name__ == "__main__":
    main()
