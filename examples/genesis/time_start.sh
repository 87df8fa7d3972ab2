#!/bin/bash
# Start-up of a Genesis scene on this package and on real Quadrants 0.5.2, cold then warm, one after the other.
#   examples/genesis/time_start.sh SCENE [STEPS]
# Each system runs twice with HOME and XDG_CACHE_HOME in a fresh folder (cold: every cache empty; warm: the
# second run). The venvs are named by OURS / REAL (defaults: /work/venv-gs-ours, /work/venv-gs-real).
set -euo pipefail
S=$1; N=${2:-100}
HERE=$(cd "$(dirname "$0")" && pwd)
OURS=${OURS:-/work/venv-gs-ours}; REAL=${REAL:-/work/venv-gs-real}
for sys in ours real; do
  py=$([ $sys = ours ] && echo "$OURS" || echo "$REAL")/bin/python
  d=$(mktemp -d)
  for run in cold warm; do
    out=$(cd /tmp && HOME=$d XDG_CACHE_HOME=$d/.cache "$py" "$HERE/scenes.py" "$S" --steps "$N" 2>/dev/null | tail -1)
    echo "$sys $run $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"times": d["times"], "quadrants": d.get("quadrants")}))')"
  done
  rm -rf "$d"
done
