#!/usr/bin/env bash
# heist-mpi's performance lines (issue 27), interleaved process by process:
#   A: one rank with 2 workers        mpirun -np 1 ... --workers 2
#   B: two ranks with 1 worker each   mpirun -np 2 ... --workers 1   (B/A at most 1.15)
#   C: four ranks with 1 worker each  mpirun -np 4 --oversubscribe   (C/B at most 2.5)
# Usage: scripts/bench-mpi.sh [ROUNDS] [KERNEL] [SIZE]; BTL=self,tcp for TCP loopback
# (default self,vader: shared memory). Each mpirun times one run after a warm-up.
set -euo pipefail
cd "$(dirname "$0")/../crates/heist-mpi"
rounds=${1:-5}
kernel=${2:-uts}
size=${3:-T3L}
btl=${BTL:-self,vader}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release -q -p heist-mpi-bench
bin=target/release/heist-mpi-bench
out=$(mktemp)
for i in $(seq "$rounds"); do
    for cfg in "A 1 2" "B 2 1" "C 4 1"; do
        set -- $cfg
        line=$(mpirun -np "$2" --oversubscribe --mca btl "$btl" \
            "$bin" run "$kernel" --size "$size" --workers "$3" --runs 1 --json)
        echo "$1 $line" >> "$out"
        echo "round $i $1 (np=$2, $3 worker(s)): $(echo "$line" | python3 -c 'import json,sys; print(json.load(sys.stdin)["median_s"])') s" >&2
    done
done
python3 - "$out" "$btl" "$kernel" "$size" <<'PY'
import json, statistics, sys
path, btl, kernel, size = sys.argv[1:]
runs = {}
for l in open(path):
    cfg, js = l.split(" ", 1)
    runs.setdefault(cfg, []).append(json.loads(js))
med = {c: statistics.median(r["median_s"] for r in rs) for c, rs in runs.items()}
print(f"{kernel} {size}, btl {btl}, medians of {len(runs['A'])} interleaved processes")
names = {"A": "np=1, 2 workers", "B": "np=2, 1 worker each", "C": "np=4, 1 worker each (2 cores)"}
for c in "ABC":
    rs = runs[c]
    moved = statistics.median(r["tasks_moved"] for r in rs)
    per = statistics.median(r["bytes_per_stolen_task"] for r in rs)
    idle = statistics.median(sum(x["idle_s"] for x in r["ranks"]) for r in rs)
    req = statistics.median(sum(x["requests_sent"] for x in r["ranks"]) for r in rs)
    fwd = statistics.median(sum(x["requests_forwarded"] for x in r["ranks"]) for r in rs)
    ans = statistics.median(sum(x["requests_answered"] for x in r["ranks"]) for r in rs)
    print(f"  {names[c]:32} {med[c]:8.3f} s  {rs[0]['work']/med[c]/1e6:7.2f} M/s  moved {moved:.0f} tasks, "
          f"{per:.1f} B/task, requests {req:.0f} sent {fwd:.0f} fwd {ans:.0f} answered, idle {idle:.3f} s (sum)")
print(f"  B/A = {med['B']/med['A']:.3f} (line: at most 1.15)   C/B = {med['C']/med['B']:.3f} (line: at most 2.5)")
PY
rm -f "$out"
