#!/usr/bin/env bash
# What many sessions cost: peak resident memory of `read-iops --sync` with 10,000 sessions
# (4 KiB synchronous reads on a tmpfs data set in /dev/shm), and its IOPS against 8 sessions
# on the same data set. Runs alternate (8, N, 8, N, ...) so that machine noise hits both
# alike; medians are printed, with dbio's CPU per request (which other load on a shared
# machine disturbs less than IOPS). The peak is the kernel's own figure for the process
# (ru_maxrss, what `/usr/bin/time -v` prints as "Maximum resident set size").
#
#   bench/many-sessions.sh [SESSIONS] [SECONDS] [ROUNDS]   (defaults: 10000, 10 s, 3 rounds)
#
# 10,000 threads need kernel.threads-max, kernel.pid_max and vm.max_map_count above what
# 10,000 sessions take (dbio's preflight says which is short and how to raise it).
# Needs: python3.
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${1:-10000}
secs=${2:-10}
rounds=${3:-3}
cargo build --release -q
dbio=$(realpath "${CARGO_TARGET_DIR:-target}/release/dbio")
data=/dev/shm/dbio-many-sessions-$$
work=$(mktemp -d /tmp/dbio-many-sessions.XXXXXX)
export XDG_DATA_HOME=$work/xdg # keep the runs out of the user's results store
trap '"$dbio" clean "$data" >/dev/null 2>&1 || rm -rf "$data"; rm -rf "$work"' EXIT

"$dbio" prepare --target "$data" --size 1G --block-size 4K >/dev/null 2>&1

# Runs read-iops with $1 sessions; prints "IOPS PEAK_RSS_KIB CPU_NS_PER_REQUEST".
run() {
  python3 - "$dbio" "$1" "$data" "$secs" "$work/runs" <<'PY'
import json, os, subprocess, sys
dbio, n, data, secs, out = sys.argv[1:]
args = [dbio, "run", "read-iops", "--sync", "--sessions", n, "--size", "1G",
        "--block-size", "4K", "--target", data, "--duration", secs + "s",
        "--warmup", "0s", "--json", "--out", out]
p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
stdout = p.stdout.read()
stderr = p.stderr.read()
_, status, ru = os.wait4(p.pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(f"dbio {' '.join(args[1:])} failed:\n{stderr.decode()}")
r = json.loads(stdout)
e, c = r["events"][0], r["cpu"]
print(round(e["iops"]), ru.ru_maxrss, round((c["user_s"] + c["system_s"]) / e["requests"] * 1e9))
PY
}

results=()
for r in $(seq "$rounds"); do
  echo "round $r/$rounds" >&2
  results+=("8 $(run 8)")
  results+=("$sessions $(run "$sessions")")
done
printf '%s\n' "${results[@]}" >"$work/results"
python3 - "$work/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
by = {}
for n, iops, rss, cpu in rows:
    by.setdefault(int(n), []).append((int(iops), int(rss), int(cpu)))
(few, a), (many, b) = sorted(by.items())
def med(xs, i):
    return statistics.median(x[i] for x in xs)
print(f"read-iops --sync, 4 KiB reads on tmpfs, medians of {len(a)} alternating runs")
print(f"{'sessions':>9} {'IOPS':>10} {'peak RSS':>12} {'CPU ns/request':>15}")
for n, xs in ((few, a), (many, b)):
    print(f"{n:>9} {med(xs, 0):>10,.0f} {max(x[1] for x in xs) / 1024:>8.1f} MiB {med(xs, 2):>15,.0f}")
each = ", ".join(f"{y[0] / x[0]:.2f}" for x, y in zip(a, b))
print(f"IOPS ratio {many}/{few} sessions: {med(b, 0) / med(a, 0):.2f} (each round: {each})")
print(f"CPU per request ratio {many}/{few} sessions: {med(b, 2) / med(a, 2):.2f}")
rss = (max(x[1] for x in b) - max(x[1] for x in a)) / (many - few)
print(f"peak RSS per session at {many}: {rss:.1f} KiB")
PY
