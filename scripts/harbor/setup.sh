#!/usr/bin/env bash
# A Python 3.12 virtual environment with Harbor's ATIF validator, for `make test-harbor`.
# Harbor requires Python >= 3.12; this machine's python3 is 3.11. The interpreter is taken
# from PATH (python3.12) or from pyenv, which this kind of machine carries (3.12.1); Debian 12
# has no python3.12 package. Only pydantic and harbor itself are installed: the validator
# (harbor.utils.trajectory_validator) needs nothing else, and harbor's full dependency set
# (docker, cloud SDKs, ...) is large. A second run finds the venv and does nothing.
# Usage: scripts/harbor/setup.sh VENV
set -euo pipefail
venv="$1"
harbor_version="0.26.0"
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import harbor.utils.trajectory_validator" 2>/dev/null; then
    exit 0
fi
python=""
if command -v python3.12 >/dev/null 2>&1 && python3.12 -c pass 2>/dev/null; then
    python="$(command -v python3.12)"
else
    for candidate in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.12*/bin/python3.12; do
        if [[ -x "$candidate" ]]; then python="$candidate"; fi
    done
fi
if [[ -z "$python" ]]; then
    echo "test-harbor: no Python 3.12 here (not on PATH, not in pyenv); Harbor needs >= 3.12" >&2
    exit 1
fi
"$python" -m venv "$venv"
"$venv/bin/pip" install -q 'pydantic>=2.9,<3'
"$venv/bin/pip" install -q --no-deps "harbor==$harbor_version"
"$venv/bin/python" -c "import harbor.utils.trajectory_validator"
echo "test-harbor: $("$venv/bin/python" --version) with harbor $harbor_version in $venv"
