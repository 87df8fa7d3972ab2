#!/usr/bin/env bash
# The GPU checks as one script, for a machine with an NVIDIA GPU (the device tool runs it from the repository
# root, with the built .venv carried over): the CUDA tests, then the GPU benchmarks. Results go to $OUT.
set -uo pipefail
OUT="${OUT:-benchmarks/results}"
mkdir -p "$OUT"
PY=.venv/bin/python
$PY -m pip install --quiet "cuda-python>=12" 2>/dev/null || echo "cuda-python not installed (offline?)"
nvidia-smi --query-gpu=name,compute_cap,memory.total --format=csv | tee "$OUT/gpu-info.txt"
$PY -m pytest -q -m gpu --no-ptx-check tests/cuda 2>&1 | tee "$OUT/gpu-tests.txt"
timeout 420 $PY benchmarks/gpu.py --out "$OUT" 2>&1 | tee "$OUT/gpu-bench.txt"
