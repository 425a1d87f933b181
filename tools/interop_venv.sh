#!/usr/bin/env bash
# Makes the virtualenv the interop tests run TensorFlow in (make test-interop):
#   tools/interop_venv.sh VENV [REQUIREMENT]
# REQUIREMENT defaults to tensorflow-cpu==2.21.0; TensorBoard (whose event
# reader checks our event files) is installed beside it, since TensorFlow 2.21
# no longer depends on it. A VENV whose Python already imports both is left as it is, so INTEROP_VENV=/work/tfvenv (or any
# prepared one) costs nothing. TensorFlow is never a dependency of
# tensorweave: it lives only in this separate virtualenv.
set -euo pipefail
venv="${1:?usage: tools/interop_venv.sh VENV [REQUIREMENT]}"
requirement="${2:-tensorflow-cpu==2.21.0}"
tensorboard_requirement="${INTEROP_TENSORBOARD:-tensorboard==2.21.0}"
python="${PYTHON:-python3}"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import tensorflow, tensorboard' >/dev/null 2>&1; then
  exit 0
fi
echo "interop: creating $venv with $requirement"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$requirement" "$tensorboard_requirement"
"$venv/bin/python" -c 'import tensorflow as tf; print("interop: tensorflow", tf.__version__)'
