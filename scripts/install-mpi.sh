#!/usr/bin/env bash
# Installs what crates/heist-mpi needs from Debian's packages: Open MPI (headers, the
# library and mpirun) and libclang (rsmpi's build script generates its bindings with
# bindgen). Idempotent: when everything is there it returns at once, touching nothing.
# Runs as root without sudo, or through sudo when it is there and we are not root.
set -euo pipefail

packages=(libopenmpi-dev openmpi-bin libclang-dev)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ] && command -v mpirun >/dev/null 2>&1; then
    echo "install-mpi: already installed (${packages[*]})"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "install-mpi: not root and no sudo: cannot install ${missing[*]}" >&2
    exit 1
fi

echo "install-mpi: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
mpirun --version | head -1
