"""Generating and simulating from Python against the same work in C++, in one run.

Interleaved 1F1B, P = 64, m = 1024, V = 4 (524,288 compute ops): `ctpipe.Schedule(...)`
(parse, check, generate) plus `.simulate()`, timed over 30 runs (median), beside Google
Benchmark's BM_interleaved_P64_m1024_V4 of bench/runtime_bench.cpp (generate + simulate)
run right before it. Usage, after `cmake --build --preset bench` and `pip install .`:

    build/venv/bin/python bench/python_speed.py build/bench/bench/runtime_bench

Prints both medians and their ratio (the Python issue asks for at most 1.5).
"""

import json
import statistics
import subprocess
import sys
import time

import ctpipe


def cpp_ms(binary: str) -> float:
    out = subprocess.run([binary, "--benchmark_filter=^BM_interleaved_P64_m1024_V4$", "--benchmark_format=json",
                          "--benchmark_repetitions=10", "--benchmark_report_aggregates_only=true"],
                         capture_output=True, text=True, check=True).stdout
    runs = json.loads(out)["benchmarks"]
    return next(b["real_time"] for b in runs if b.get("aggregate_name") == "median")


def python_ms(runs: int = 30) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        s = ctpipe.Schedule("interleaved-1f1b", P=64, m=1024, V=4)
        s.simulate()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


if __name__ == "__main__":
    cpp = cpp_ms(sys.argv[1])
    py = python_ms()
    print(f"C++ generate + simulate (median of 10): {cpp:.2f} ms")
    print(f"Python Schedule() + simulate() (median of 30): {py:.2f} ms")
    print(f"ratio {py / cpp:.2f}")
