"""cvml-convert MODEL.onnx --calibration CALIB.npy --out PREFIX [options]

Converts a float ONNX model to a CVM model (PREFIX.json, PREFIX.params) and its
quantization sidecar (PREFIX.quant.json). Exit status: 0 converted, 1 the model,
the data or the options cannot be converted (one line a reason, no files left),
2 a failure of the system (e.g. the runtime library for --report), 64 usage.
"""
import argparse
import os
import sys

import numpy as np

from . import DEFAULT_IMAGES, DEFAULT_METHOD, METHODS, convert, write
from .errors import ConvertError

PROG = "cvml-convert"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write("%s: %s\n" % (PROG, message))
        sys.exit(64)


def _bits(text):
    name, sep, value = text.rpartition("=")
    if not sep or not name or not value.isdigit():
        raise argparse.ArgumentTypeError("expected NODE=BITS, got %r" % text)
    return name, int(value)


def _positive(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("expected a positive count, got %r" % text)
    return int(text)


def parser():
    p = _Parser(prog=PROG, description="Convert a float ONNX model to a CVM model with "
                "post-training quantization (docs/convert.md).")
    p.add_argument("model", metavar="MODEL.onnx")
    p.add_argument("--calibration", required=True, metavar="CALIB.npy",
                   help="float inputs as the ONNX model takes them, shape (N, ...)")
    p.add_argument("--out", required=True, metavar="PREFIX",
                   help="writes PREFIX.json, PREFIX.params, PREFIX.quant.json")
    p.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                   help="activation thresholds (default %(default)s); mrt reproduces MRT: "
                   "abs-max, per-tensor weights, 16 images, no bias correction")
    p.add_argument("--images", type=_positive, default=DEFAULT_IMAGES,
                   help="calibration images used at most (default %(default)s)")
    p.add_argument("--per-tensor", action="store_true",
                   help="one weight scale a layer instead of one a channel")
    p.add_argument("--no-bias-correction", action="store_true")
    p.add_argument("--bits", type=_bits, action="append", default=[], metavar="NODE=BITS",
                   help="wider activations for a node's output where the next operator "
                   "takes them (additions, concatenation, pooling, the output); repeatable")
    p.add_argument("--output-bits", type=int, default=16, choices=(8, 16),
                   help="bits of the model's outputs (default %(default)s)")
    p.add_argument("--report", action="store_true",
                   help="print gas, params size and a per-layer float/integer table")
    p.add_argument("--evaluate", nargs=2, metavar=("X.npy", "LABELS.npy"),
                   help="top-1 of the float and the converted model, and their agreement")
    p.add_argument("--threads", type=_positive, default=None,
                   help="cvm-lite threads for runs")
    return p


def _load_npy(path, what):
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ConvertError("%s %s: cannot read it as .npy: %s" % (what, path, e))


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        calib = _load_npy(args.calibration, "calibration data")
        eval_data = None
        if args.evaluate:
            eval_data = (_load_npy(args.evaluate[0], "evaluation inputs"),
                         _load_npy(args.evaluate[1], "evaluation labels"))
        out_dir = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(out_dir):
            raise ConvertError("--out %s: the directory %s does not exist" % (args.out, out_dir))
        result = convert(args.model, calib, method=args.method,
                         per_channel=False if args.per_tensor else None,
                         bias_correction=False if args.no_bias_correction else None,
                         bits=dict(args.bits), images=args.images,
                         output_bits=args.output_bits)
        files = write(result, args.out)
    except ConvertError as e:
        for line in e.problems:
            sys.stderr.write("%s: %s\n" % (PROG, line))
        return 1
    print("wrote %s" % ", ".join(files))
    try:
        if args.report:
            _report(result, calib, args.threads)
        if eval_data is not None:
            from . import report
            f, c, a, n = report.evaluate(result, eval_data[0], eval_data[1], args.threads)
            print(report.evaluate_line(f, c, a, n))
    except (ImportError, OSError) as e:
        sys.stderr.write("%s: cannot run the converted model: %s\n" % (PROG, e))
        return 2
    except ValueError as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 1
    return 0


def _report(result, calib, threads):
    from . import report
    import cvml
    with cvml.Model.from_bytes(result.graph_json, result.params, threads=threads) as m:
        model_gas = m.gas
    for line in report.gas_lines(result, model_gas):
        print(line)
    images = np.asarray(calib, np.float32).reshape((-1,) + result.graph.input_shape[1:])[:32]
    for line in report.layer_table(result, images, threads):
        print(line)


if __name__ == "__main__":
    sys.exit(main())
