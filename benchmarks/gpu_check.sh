#!/usr/bin/env bash
# On a machine with a CUDA GPU: run the CUDA tests, then time the update at 1024x8192 on the GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device')"
python3 -m pytest -q -m cuda tests/test_flash_reinforce.py tests/test_sao.py tests/test_bpco.py
python3 benchmarks/update_bench.py --device cuda --sizes 256x2048,1024x8192 --no-python --repeat 5
