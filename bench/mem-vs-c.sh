#!/usr/bin/env bash
# `dbio mem` latency against a reference C pointer chase of the same kind
# (bench/mem_chase.c: random cyclic permutation of 64-byte lines, 4k pages, pinned to one
# CPU), measured right after each other, alternately, for ROUNDS rounds. Prints each
# size's medians and their ratio, and fails when a ratio is more than 25 % from 1.
#
#   bench/mem-vs-c.sh [ROUNDS] [SIZES] [CPU]     (defaults: 3 rounds, 16K,1G, CPU 0)
#
# Needs: cc, python3.
set -euo pipefail
rounds=${1:-3}
sizes=${2:-16K,1G}
cpu=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$top" && cargo build --release --quiet)
dbio=$top/target/release/dbio
cc -O2 -o "$work/mem_chase" "$here/mem_chase.c"

bytes() { python3 -c '
import sys
s = sys.argv[1].strip().upper()
mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
print(int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s))' "$1"; }

IFS=, read -r -a list <<<"$sizes"
declare -A d c
for r in $(seq "$rounds"); do
  echo "round $r/$rounds" >&2
  # dbio: one run over all sizes (its curve), then the reference size by size.
  "$dbio" mem --sizes "$sizes" --only curve --cpu "$cpu" --budget 1s --json --out "$work/runs" \
      --db "$work/dbio.db" 2>/dev/null >"$work/dbio.json"
  for s in "${list[@]}"; do
    b=$(bytes "$s")
    d[$s]+="$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(next(p["ns"] for p in r["curve"] if p["size_bytes"] == int(sys.argv[2])))' "$work/dbio.json" "$b") "
    c[$s]+="$("$work/mem_chase" "$b" "$cpu" | awk '{print $2}') "
  done
done

median() { python3 -c 'import sys, statistics; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.2f}")' "$@"; }
echo
echo "ns per load, median of $rounds alternating rounds (CPU $cpu, kernel $(uname -r), $(nproc) CPUs)"
printf '%10s %12s %12s %8s\n' size "dbio mem" "C chase" ratio
fail=0
for s in "${list[@]}"; do
  # shellcheck disable=SC2086
  md=$(median ${d[$s]}); mc=$(median ${c[$s]})
  ratio=$(python3 -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")' "$md" "$mc")
  ok=$(python3 -c 'import sys; print("ok" if abs(float(sys.argv[1]) - 1) <= 0.25 else "OUTSIDE 25 %")' "$ratio")
  [ "$ok" = ok ] || fail=1
  printf '%10s %12s %12s %8s  %s\n' "$s" "$md" "$mc" "$ratio" "$ok"
  echo "    rounds: dbio ${d[$s]}| C ${c[$s]}" >&2
done
exit $fail
