#!/usr/bin/env bash
# A test-only venv with evalplus 0.3.1 for comparing our verdicts with upstream's (never the project's venv).
# Lean: evalplus itself without its dependencies (its code generation pulls in openai, anthropic, transformers,
# tree-sitter...), then only what its evaluation path imports: numpy and psutil (evalplus/eval), termcolor and
# tqdm (evaluate.py), appdirs, tempdir and wget (evalplus/data/utils.py); scipy and pandas so that a sample that
# imports them meets them as it would in a full install. `datasets` (imported by evalplus/data/__init__.py for
# EvalPerf) and `evalplus.codegen` (model back-ends) are stubbed by evalplus_driver.py: evaluation never calls them.
# Usage: tools/upstream/make_evalplus_venv.sh [VENV]   (default: build/evalplus-venv, git-ignored)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${1:-build/evalplus-venv}"
PYTHON="${PYTHON:-python3}"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import evalplus, numpy, psutil, termcolor, tqdm, appdirs, tempdir, wget, scipy, pandas" 2>/dev/null; then
  echo "evalplus venv ready: $VENV"
  exit 0
fi
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "evalplus==0.3.1"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check numpy psutil termcolor tqdm appdirs tempdir wget \
  scipy pandas
"$VENV/bin/python" -c "import evalplus; print('evalplus', evalplus.__version__, 'in', '$VENV')"
