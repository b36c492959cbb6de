"""Fashion-MNIST loader for the converter's reference models and tests.

Depends on numpy and gzip only, so converter tests can read the data set
without torch. The images come back exactly as the reference ONNX models
take them: float32 pixels / 255 in [0, 1], shape (N, 1, 28, 28); any
normalization lives inside the model.

The files are Debian's `dataset-fashion-mnist` (the original IDX format,
gzip-compressed).
"""

import gzip
import os

import numpy as np

DATASET_DIR = "/usr/share/datasets/fashion-mnist"

_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}

# IDX magic numbers: unsigned bytes, 3 dimensions (images) or 1 (labels).
_IMAGES_MAGIC = 0x00000803
_LABELS_MAGIC = 0x00000801
_SIDE = 28


def _paths(split):
    if split not in _FILES:
        raise ValueError("fmnist: split must be 'train' or 'test', not %r" % (split,))
    return [os.path.join(DATASET_DIR, name) for name in _FILES[split]]


def available():
    """True when both splits' image and label files are present."""
    return all(os.path.isfile(p) for split in _FILES for p in _paths(split))


def _read_idx(path, magic, ndim):
    if not os.path.isfile(path):
        raise FileNotFoundError(
            "fmnist: missing %s (install the Debian package dataset-fashion-mnist)" % path
        )
    with gzip.open(path, "rb") as f:
        data = f.read()
    header = 4 * (1 + ndim)
    if len(data) < header:
        raise ValueError("fmnist: %s is truncated: %d bytes, header needs %d" % (path, len(data), header))
    fields = np.frombuffer(data[:header], dtype=">u4")
    if fields[0] != magic:
        raise ValueError("fmnist: %s has magic 0x%08x, expected 0x%08x" % (path, fields[0], magic))
    shape = tuple(int(d) for d in fields[1:])
    body = np.frombuffer(data[header:], dtype=np.uint8)
    if body.size != int(np.prod(shape)):
        raise ValueError(
            "fmnist: %s holds %d values after its header, its shape %s needs %d"
            % (path, body.size, shape, int(np.prod(shape)))
        )
    return body.reshape(shape)


def load(split):
    """Return (images float32 (N, 1, 28, 28) = pixels / 255, labels int64 (N,))."""
    images_path, labels_path = _paths(split)
    pixels = _read_idx(images_path, _IMAGES_MAGIC, 3)
    labels = _read_idx(labels_path, _LABELS_MAGIC, 1)
    if pixels.shape[1:] != (_SIDE, _SIDE):
        raise ValueError("fmnist: %s has images of %s, expected 28x28" % (images_path, pixels.shape[1:]))
    if pixels.shape[0] != labels.shape[0]:
        raise ValueError(
            "fmnist: %s has %d images but %s has %d labels"
            % (images_path, pixels.shape[0], labels_path, labels.shape[0])
        )
    images = (pixels.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, _SIDE, _SIDE)
    return images, labels.astype(np.int64)
