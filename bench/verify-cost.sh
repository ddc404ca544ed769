#!/usr/bin/env bash
# What --verify costs: read-iops --sync (db file sequential read) and write-iops (db file
# parallel write), each with and without --verify, alternating, on data sets in /dev/shm
# (tmpfs: the I/O takes microseconds, so dbio's own per-request CPU shows). Two data sets
# of the same size — one filled with verify headers, one without — so neither mode makes
# the other recreate its data set. Prints IOPS and dbio CPU seconds per 1,000 requests per
# run, and the median ratio (verify / plain) over the rounds.
#
#   bench/verify-cost.sh [ROUNDS] [SECONDS] [SESSIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-5}
sessions=${3:-1}
base=/dev/shm/dbio-verify-cost
cargo build --release -q
dbio=./target/release/dbio
out=$(mktemp -d /tmp/dbio-verify-cost.XXXXXX)
export XDG_DATA_HOME=$out/xdg # keep the runs out of the user's results store
trap 'rm -rf "$out"; for m in plain verify; do $dbio clean "$base-$m" >/dev/null 2>&1 || true; done' EXIT
common=(--size 1G --sessions "$sessions" --duration "${seconds}s" --warmup 1s --out "$out/runs" --json --quiet)
$dbio prepare --target "$base-plain" --size 1G --quiet >/dev/null
$dbio prepare --target "$base-verify" --size 1G --verify --quiet >/dev/null
for i in $(seq "$rounds"); do
  for test in read-iops write-iops; do
    extra=()
    [ "$test" = read-iops ] && extra=(--sync)
    for mode in plain verify; do
      flag=()
      [ "$mode" = verify ] && flag=(--verify)
      $dbio run "$test" --target "$base-$mode" "${common[@]}" "${extra[@]}" "${flag[@]}" \
        >"$out/$test-$mode-$i.json" 2>/dev/null
    done
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def figures(path):
    r = json.load(open(path))
    e = r["events"][0]
    v = r.get("verify") or {}
    assert v.get("blocks_bad", 0) == 0 and e["errors"] == 0, path
    return e["name"], e["iops"], r["cpu"]["cpu_s_per_1k_requests"]
print("%-34s %7s %12s %12s %10s" % ("run", "round", "IOPS", "CPU s/1k", "verified"))
for test in ("read-iops", "write-iops"):
    ratios_iops, ratios_cpu = [], []
    for i in range(1, rounds + 1):
        p = figures(f"{out}/{test}-plain-{i}.json")
        v = figures(f"{out}/{test}-verify-{i}.json")
        for mode, f in (("plain", p), ("verify", v)):
            print("%-34s %7d %12.0f %12.5f %10s" % (f"{test} ({f[0]})", i, f[1], f[2], mode))
        ratios_iops.append(v[1] / p[1])
        ratios_cpu.append(v[2] / p[2])
    print("%-34s %7s %11.2fx %11.2fx" % (f"{test}: verify / plain", "median",
          statistics.median(ratios_iops), statistics.median(ratios_cpu)))
PY
