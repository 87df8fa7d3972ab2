#!/bin/bash
# A venv with Genesis (genesis-world 0.4.5, CPU) and a quadrants: `GENESIS_QUADRANTS=. make_venv.sh DIR` for this
# package (from the repository root; `-e.` for an editable install), `GENESIS_QUADRANTS=quadrants==0.5.2 make_venv.sh DIR` for real Quadrants.
# torch: the CPU wheel from TORCH_WHEELS (default /opt/wheels) where there is one, else PyTorch's CPU index.
set -euo pipefail
DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
WHEELS=${TORCH_WHEELS:-/opt/wheels}
"$PYTHON" -m venv "$DIR"
pip="$DIR/bin/python -m pip install --quiet"
$DIR/bin/python -m pip install --quiet --upgrade pip
set -- "$WHEELS"/torch-*cpu*.whl
if [ -f "$1" ]; then $pip --find-links "$WHEELS" "$1"; else $pip torch --index-url https://download.pytorch.org/whl/cpu; fi
$pip --no-deps genesis-world==0.4.5
$pip -r "$HERE/requirements.txt"
$pip ${GENESIS_QUADRANTS:?set GENESIS_QUADRANTS}
