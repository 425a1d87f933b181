#!/usr/bin/env bash
# Installs what building and testing tensorweave needs, skipping whatever is
# already present, so a fresh Debian machine needs nothing else.
set -euo pipefail

PYTHON=${PYTHON:-python3}
DEBIAN_PACKAGES=(
  g++ make pkg-config swig valgrind
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libeigen3-dev libdnnl-dev libgtest-dev clang-format-14
  libjpeg62-turbo-dev libpng-dev  # the image codecs
  libre2-dev  # the regex ops (RE2, as TensorFlow)
  openssl  # makes the certificates of the TLS tests
  zlib1g-dev  # compressed (ZLIB/GZIP) record files, runtime/util/zlib_stream.cc
)
PYTHON_PACKAGES=("numpy" "protobuf>=4.21,<5" "cffi" "pytest" "setuptools" "wheel" "scikit-learn"
                 "ruff==0.17.6"
                 "ml_dtypes"  # numpy's bfloat16, as TensorFlow's Python has it
)

missing=()
for package in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

# pip checks the version ranges itself and installs only what is missing.
if ! "$PYTHON" - "${PYTHON_PACKAGES[@]}" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
import re
for requirement in sys.argv[1:]:
    name = re.split(r"[<>=!]", requirement)[0]
    try:
        installed = version(name)
    except PackageNotFoundError:
        sys.exit(1)
    if name == "protobuf" and not installed.startswith("4."):
        sys.exit(1)
    pinned = requirement.partition("==")[2]
    if pinned and installed != pinned:
        sys.exit(1)
PY
then
  echo "installing Python packages: ${PYTHON_PACKAGES[*]}"
  "$PYTHON" -m pip install -q "${PYTHON_PACKAGES[@]}"
fi
