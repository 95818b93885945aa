#!/usr/bin/env bash
# The benchmark suite, as README.md gives it: installs the C++ peers' packages first
# (tbb, omp, gomp; skipped with a note where that is not possible), then runs
# `heist-bench suite` at its default sizes on all cores. Extra arguments go to `suite`
# (`--size quick`, `--report DIR`, `--workers N`, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-cpp-peers.sh || echo "suite.sh: C++ peers not installed: the suite runs without them"
exec cargo run --release -p heist-bench -- suite "$@"
