#!/bin/bash
# Genesis' own headless examples (examples/rigid/ of its repository, tag v0.4.5) on a Python with Genesis:
#   examples/genesis/rigid_examples.sh GENESIS_CHECKOUT PYTHON [EXAMPLE...]
# Each is copied with the backend switched to the CPU (`gs.gpu` -> `gs.cpu`: no GPU here) and its step loops cut
# to 200 steps, then run headless (no -v) in a fresh folder, with the caches under a fresh HOME. Prints one line
# per example: name, exit status, seconds, and the last error line. Skipped: multi_gpu (GPUs) and
# single_franka_batch_render (a batch renderer).
set -uo pipefail
SRC=$1/examples/rigid; PY=$2; shift 2
WORK=$(mktemp -d); HOME_DIR=$WORK/home; mkdir -p "$HOME_DIR"
names=("$@"); [ ${#names[@]} -eq 0 ] && names=($(cd "$SRC" && ls *.py | sed 's/\.py$//'))
for n in "${names[@]}"; do
  case $n in multi_gpu|single_franka_batch_render) continue;; esac
  sed -e 's/backend=gs.gpu/backend=gs.cpu/g' -e 's/gs.cpu if args.cpu else gs.gpu/gs.cpu/g' \
      -e 's/gs.init(precision/gs.init(backend=gs.cpu, precision/' -e 's/gs.init()/gs.init(backend=gs.cpu)/' \
      -e 's/range(\(500\|720\|750\|1000\|2000\))/range(200)/' "$SRC/$n.py" > "$WORK/$n.py"
  d=$(mktemp -d -p "$WORK"); t0=$(date +%s)
  (cd "$d" && HOME=$HOME_DIR XDG_CACHE_HOME=$HOME_DIR/.cache QD_CACHE_DIR=$HOME_DIR/qd timeout 600 "$PY" "$WORK/$n.py" \
    > out.txt 2>&1); rc=$?
  err=$(grep -E "Error|Exception" "$d/out.txt" | grep -v -E "WARNING|mjMINVAL" | tail -1 | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-160)
  echo "$n rc=$rc $(( $(date +%s) - t0 ))s $err"
done
rm -rf "$WORK"
