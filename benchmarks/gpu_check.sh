#!/usr/bin/env bash
# On a machine with a CUDA GPU: run the CUDA tests, then time the update on the GPU at 256x2048
# and 1024x8192. Needs python3 with torch, numpy, pytest and hypothesis; the package need not be
# installed (src/ goes on PYTHONPATH). The log is also written to $OUT/gpu_check.log when OUT is
# set, else /tmp/gpu_check.log.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
log="${OUT:-/tmp}/gpu_check.log"
{
    python3 -c "import sys, torch; print('torch', torch.__version__); print(torch.cuda.get_device_name(0)) if torch.cuda.is_available() else sys.exit('no CUDA device')"
    python3 -m pytest -q -m cuda tests/methods
    python3 benchmarks/update_bench.py --device cuda --sizes 256x2048,1024x8192 --no-python --repeat 5
} 2>&1 | tee "$log"
