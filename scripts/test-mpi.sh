#!/usr/bin/env bash
# Runs heist-mpi's tests where MPI is present (a workspace of its own, outside the
# repository's `cargo test --workspace`); says clearly that it skipped them where MPI is
# missing. scripts/install-mpi.sh installs what they need. Extra arguments go to cargo test.
set -euo pipefail
cd "$(dirname "$0")/../crates/heist-mpi"

if ! command -v mpirun >/dev/null 2>&1 || ! command -v mpicc >/dev/null 2>&1 \
    || ! ldconfig -p 2>/dev/null | grep -q 'libclang'; then
    echo "test-mpi: SKIPPED heist-mpi's tests: MPI (mpirun, mpicc) or libclang is not installed;"
    echo "test-mpi: run scripts/install-mpi.sh first to run them."
    exit 0
fi

# Open MPI refuses to run as root without these; they are set for this script's
# mpiruns only (the tests set them on their own mpirun commands too).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "test-mpi: $(mpirun --version | head -1)"
cargo test --profile ci --workspace "$@"
