#!/usr/bin/env python3
"""Writes the manifest of tests/arm/mcu/conformance.c: one line per conformance case
(every directory of CASES with a meta.json), its expectation as the host suite reads it
(tests/conformance/conformance_util.cpp, load_meta):
  DIR OUTCOME CLASS GRAPH_GAS_RC GRAPH_GAS HAS_GAS GAS HAS_IO IN_LEN OUT_LEN IN_TYPE OUT_TYPE OUTPUT
usage: manifest.py CASES OUT"""
import json
import os
import sys


def as_int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def line(case_dir):
    meta = json.load(open(os.path.join(case_dir, "meta.json")))
    expect = meta.get("expect") or {}
    up = meta.get("upstream") or {}
    klass = {"logic": 1, "runtime": 2}.get(expect.get("class"), 0)
    gas = as_int(expect.get("gas"))
    io = [as_int(up.get(k)) for k in
          ("input_length", "output_length", "input_type_size", "output_type_size")]
    has_io = all(v is not None for v in io)
    fields = [case_dir, expect.get("outcome") or "-", klass, as_int(expect.get("graph_gas_rc")) or 0,
              as_int(expect.get("graph_gas")) or 0, int(gas is not None), gas or 0, int(has_io)]
    fields += [v if has_io else 0 for v in io]
    fields.append(expect.get("output") or "-")
    return " ".join(str(f) for f in fields)


def main():
    cases, out = sys.argv[1], sys.argv[2]
    dirs = sorted(d for d in os.listdir(cases)
                  if os.path.isfile(os.path.join(cases, d, "meta.json")))
    with open(out, "w") as f:
        for d in dirs:
            f.write(line(os.path.join(cases, d)) + "\n")
    print(len(dirs))


main()
