"""Loaded by the server of `bench.support.collector` (this folder first on its PYTHONPATH): sets the cyclic
collector's thresholds from BENCH_GC_THRESHOLDS ("gen0,gen1,gen2"), so one run can compare them with Python's."""

import gc
import os

if thresholds := os.environ.get("BENCH_GC_THRESHOLDS"):
    gc.set_threshold(*(int(number) for number in thresholds.split(",")))
