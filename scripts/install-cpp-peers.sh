#!/usr/bin/env bash
# Installs what heist-bench's C++ peers need, from Debian's packages:
#   tbb  - oneTBB (libtbb-dev)
#   omp  - LLVM's OpenMP runtime, libomp (libomp-dev), compiled with clang
#   gomp - GCC's OpenMP runtime, libgomp (comes with g++)
# Then `cargo build --release -p heist-bench` builds them in (its build.rs looks for
# them on every build after a package change). Quick and silent when all is there;
# runs as root without sudo, or through sudo otherwise.
set -euo pipefail

packages=(libtbb-dev libomp-dev clang g++)

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-cpp-peers: not a Debian-like system (no dpkg/apt-get)." >&2
    echo "Install oneTBB, LLVM's OpenMP runtime (libomp) with clang, and g++ yourself;" >&2
    echo "heist-bench's build.rs finds them through the C++ compiler's search paths." >&2
    exit 1
fi

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-cpp-peers: ${packages[*]} already installed"
    exit 0
fi

as_root=()
if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-cpp-peers: need root (or sudo) to install: ${missing[*]}" >&2
        exit 1
    fi
    as_root=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-cpp-peers: installing ${missing[*]}"
# The package lists may be missing (a fresh container) or stale: update them once if
# the first attempt cannot find a package.
if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-cpp-peers: done; rebuild with: cargo build --release -p heist-bench"
