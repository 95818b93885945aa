#!/usr/bin/env bash
# The tests, as README.md gives them: everything a fresh machine needs is installed
# here first (from Debian's packages; skipped with a note where that is not possible),
# then the workspace's tests, rayon's own tests against heist (.ci/rayon-suite), then
# heist-mpi's (a workspace of its own, run where MPI is present). Extra arguments go to
# the workspace's `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "== test.sh: $*"; }

say "the C++ peers' packages (scripts/install-cpp-peers.sh)"
bash scripts/install-cpp-peers.sh || say "C++ peers not installed: the harness's tests run without tbb and omp"
say "MPI's packages (scripts/install-mpi.sh)"
bash scripts/install-mpi.sh || say "MPI not installed: heist-mpi's tests will be skipped"

say "cargo test --workspace"
cargo test --workspace "$@"

say "rayon's published tests against heist, rayon as the control (.ci/rayon-suite)"
bash .ci/rayon-suite

say "heist-mpi (scripts/test-mpi.sh)"
bash scripts/test-mpi.sh
