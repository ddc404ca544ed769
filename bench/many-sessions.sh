#!/usr/bin/env bash
# What many sessions cost: peak resident memory of `read-iops --sync` with 10,000 sessions
# (4 KiB synchronous reads on a tmpfs data set in /dev/shm), and its IOPS against 8 sessions
# on the same data set, measured one after the other (the same minute). The peak is the
# kernel's own figure for the process (ru_maxrss, what `/usr/bin/time -v` prints as
# "Maximum resident set size").
#
#   bench/many-sessions.sh [SESSIONS] [SECONDS]      (defaults: 10000 sessions, 10 s)
#
# 10,000 threads need kernel.threads-max, kernel.pid_max and vm.max_map_count above what
# 10,000 sessions take (dbio's preflight says which is short and how to raise it).
# Needs: python3.
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${1:-10000}
secs=${2:-10}
cargo build --release -q
dbio=$(realpath "${CARGO_TARGET_DIR:-target}/release/dbio")
data=/dev/shm/dbio-many-sessions-$$
work=$(mktemp -d /tmp/dbio-many-sessions.XXXXXX)
export XDG_DATA_HOME=$work/xdg # keep the runs out of the user's results store
trap '"$dbio" clean "$data" >/dev/null 2>&1 || rm -rf "$data"; rm -rf "$work"' EXIT

"$dbio" prepare --target "$data" --size 1G --block-size 4K >/dev/null 2>&1

# Runs read-iops with $1 sessions; prints "IOPS PEAK_RSS_KIB".
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
print(round(r["events"][0]["iops"]), ru.ru_maxrss)
PY
}

read -r iops8 rss8 < <(run 8)
read -r iopsn rssn < <(run "$sessions")
python3 - "$sessions" "$iops8" "$rss8" "$iopsn" "$rssn" <<'PY'
import sys
n, iops8, rss8, iopsn, rssn = sys.argv[1], *map(int, sys.argv[2:])
print(f"read-iops --sync, 4 KiB reads on tmpfs")
print(f"{'sessions':>9} {'IOPS':>10} {'peak RSS':>12}")
print(f"{8:>9} {iops8:>10,} {rss8 / 1024:>9.1f} MiB")
print(f"{n:>9} {iopsn:>10,} {rssn / 1024:>9.1f} MiB")
print(f"IOPS ratio {n}/8 sessions: {iopsn / iops8:.2f}")
print(f"peak RSS per session at {n}: {(rssn - rss8) / (int(n) - 8):.1f} KiB")
PY
