#!/usr/bin/env bash
# Run the NeMo Curator integration tests in a virtualenv of their own: NeMo Curator is several GB
# and wants pandas 3, so it is not in the `test` extra.
#
# usage: tools/test_nemo_curator.sh [VENV]   (default VENV: data/nemo-venv, git-ignored)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-data/nemo-venv}
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q -e ".[nemo]" pytest hypothesis
export SPARK_LOCAL_IP=127.0.0.1
# Curator's RayClient starts `ray` from PATH: the venv's own
PATH="$(readlink -f "$VENV")/bin:$PATH" "$VENV/bin/python" -m pytest -q \
    tests/integrations/test_nemo_curator.py tests/integrations/test_nemo_curator_extra.py "${@:2}"
