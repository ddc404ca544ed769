#!/usr/bin/env bash
# The classic log-writer starvation experiment: the same redo load with LGWR pinned to CPU 0,
# once alone and once sharing CPU 0 with a noise thread (~3 ms of computation, 1 ms of sleep).
# Runs alternate (ROUNDS pairs) so machine noise hits both sides alike; prints each run and
# the median ratio (with noise / without) of log file sync and log file parallel write.
#
#   bench/lgwr-starvation.sh [TARGET_DIR] [ROUNDS] [SESSIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-/dev/shm/dbio-starvation}
rounds=${2:-3}
sessions=${3:-16}
cargo build --release -q
out=$(mktemp -d /tmp/dbio-starvation.XXXXXX)
trap 'rm -rf "$out"; ./target/release/dbio clean "$target" >/dev/null 2>&1 || true' EXIT
for i in $(seq "$rounds"); do
  for mode in alone noise; do
    extra=(--lgwr-cpu 0)
    [ "$mode" = noise ] && extra+=(--noise-cpu 0)
    ./target/release/dbio run redo --target "$target" --sessions "$sessions" --duration 10s \
      --warmup 2s --redo-file-size 256M --out "$out/runs" --json "${extra[@]}" \
      >"$out/$mode-$i.json" 2>/dev/null
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def figures(path):
    r = json.load(open(path))
    e = {x["name"]: x for x in r["events"]}
    s, w = e["log file sync"]["latency_us"], e["log file parallel write"]["latency_us"]
    return {"lfs p50": s["p50"], "lfs p99": s["p99"], "lfs mean": s["mean"],
            "lfpw p50": w["p50"], "lfpw p99": w["p99"], "lfpw mean": w["mean"],
            "commits/s": r["totals"]["commits_per_s"],
            "commits/write": r["redo"]["commits_per_lgwr_write"]}
keys = ["lfs p50", "lfs p99", "lfs mean", "lfpw p50", "lfpw p99", "lfpw mean", "commits/s", "commits/write"]
print("%-10s" % "run" + "".join("%14s" % k for k in keys))
ratios = {k: [] for k in keys}
for i in range(1, rounds + 1):
    a, n = figures(f"{out}/alone-{i}.json"), figures(f"{out}/noise-{i}.json")
    for name, f in (("alone", a), ("noise", n)):
        print("%-10s" % f"{name} {i}" + "".join("%14.1f" % f[k] for k in keys))
    for k in keys:
        ratios[k].append(n[k] / a[k] if a[k] else float("nan"))
print("%-10s" % "ratio" + "".join("%13.2fx" % statistics.median(ratios[k]) for k in keys))
print("(latencies in µs; ratio = median over rounds of noise / alone)")
PY
