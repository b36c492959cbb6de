"""The converter's accuracy acceptance on the reference Fashion-MNIST models.

Each model is converted twice from the first 1,000 training images, with the
default settings and with --method mrt (MRT's scheme), and both CVM models run the
10,000 test images in cvm-lite; accuracy is read from the runtime's own output
bytes. `python3 tests/convert/accuracy.py [MODEL,... [METHOD ...]]` prints the table
that docs/convert.md shows (set CVML_LIBRARY to a built libcvml.so).
"""
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
CALIBRATION_IMAGES = 1000

# Acceptance, in points of top-1 and percent of agreement (issue: converter).
LIMITS = {
    "plain_cnn": {"drop": 0.2, "agreement": 99.0},
    "resnet": {"drop": 0.3, "agreement": 99.0},
    "coverage": {"drop": 0.3, "agreement": 98.5},
    "mobilenet_v1": {"drop": 0.5, "agreement": 98.5},
    "mobilenet_v2": {"drop": 0.5, "agreement": 98.5},
}


def float_accuracy():
    with open(os.path.join(MODELS, "float_accuracy.json")) as f:
        return json.load(f)


def float_predictions(name, x, batch=500):
    """The float model's top-1 classes by the converter's numpy evaluator."""
    from cvml.convert import onnx_model, simplify
    g = simplify.simplify(onnx_model.load(os.path.join(MODELS, name + ".onnx")))
    out = g.outputs[0]
    return np.concatenate([g.run(x[i:i + batch])[out].reshape(len(x[i:i + batch]), -1)
                           .argmax(axis=1) for i in range(0, len(x), batch)])


def measure(name, calib, x, labels, method="mse", float_pred=None):
    """One conversion and its evaluation: a dict of the figures. float_pred, the
    float model's classes, is computed when not given."""
    from cvml.convert import convert, report
    if float_pred is None:
        float_pred = float_predictions(name, x)
    t0 = time.time()
    r = convert(os.path.join(MODELS, name + ".onnx"), calib, method=method)
    seconds = time.time() - t0
    cvm_pred = report.cvm_predictions(r, x)
    labels = np.asarray(labels).ravel()
    f_top1, c_top1 = (float_pred == labels).mean(), (cvm_pred == labels).mean()
    agree, n = (float_pred == cvm_pred).mean(), len(x)
    ops, mem, glue = r.cvm.gas()
    return {"model": name, "method": method, "float_top1": 100 * f_top1,
            "cvm_top1": 100 * c_top1, "agreement": 100 * agree, "images": n,
            "seconds": seconds, "gas": ops + mem, "glue": glue, "params": len(r.params)}


def table(rows):
    out = ["| model | method | float top-1 | CVM top-1 | drop | agreement | gas | params |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %s | %.2f | %.2f | %.2f | %.2f | %d | %d |" % (
            r["model"], r["method"], r["float_top1"], r["cvm_top1"],
            r["float_top1"] - r["cvm_top1"], r["agreement"], r["gas"], r["params"]))
    return "\n".join(out)


def main():
    sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"), HERE]
    import fmnist
    train_x, _ = fmnist.load("train")
    x, labels = fmnist.load("test")
    rows = []
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else sorted(LIMITS)
    for name in names:
        fp = float_predictions(name, x)
        for method in sys.argv[2:] or ("mse", "mrt"):
            rows.append(measure(name, train_x[:CALIBRATION_IMAGES], x, labels, method, fp))
            print("%s %s: %.2f -> %.2f, agreement %.2f, %.1f s" % (
                name, method, rows[-1]["float_top1"], rows[-1]["cvm_top1"],
                rows[-1]["agreement"], rows[-1]["seconds"]), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
