#!/usr/bin/env bash
# pgbench captured with `dbio job from-pg` and replayed with `dbio run --job`: does the job
# issue what the storage did? A throwaway PostgreSQL (15 by default) runs pgbench; over
# SECONDS of it, `dbio job from-pg` samples the server and writes the job, while this script
# reads the device under the data directory (/proc/diskstats) and the server's commits
# (pg_stat_database) over the same interval. Then the server goes, and `dbio run --job`
# replays the job for SECONDS on the same file system; its device figures come from the
# run's own `os` section (the device under its data set), its commits from its totals.
# Prints device reads/s, writes/s and commits/s of both, and their ratios (the aim: within
# 10 %).
#
#   bench/pg-capture-replay.sh [SECONDS] [CLIENTS] [SCALE]   (default: 30 s, 4 clients, scale 20)
#
# PG_BIN (default /usr/lib/postgresql/15/bin) names the server's binaries (pgbench among
# them); DBIO=PATH uses that dbio binary instead of building one; OUT=DIR the directory the
# server and the replay's data set go in (default: a new one under /var/tmp; removed).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
seconds=${1:-30}
clients=${2:-4}
scale=${3:-20}
for p in initdb pg_ctl postgres pgbench psql; do
  [ -x "$bin/$p" ] || { echo "error: $bin/$p missing (PG_BIN names the binaries)" >&2; exit 2; }
done
if [ -n "${DBIO:-}" ]; then
  dbio=$(realpath "$DBIO")
else
  cargo build --release -q
  dbio=$(realpath "${CARGO_TARGET_DIR:-target}/release/dbio")
fi
out=$(mktemp -d "${OUT:-/var/tmp}/dbio-pgcr.XXXXXX")
chmod 755 "$out"
export XDG_DATA_HOME=$out/xdg # keep the runs out of the user's results store

# initdb and postgres refuse root: as root the server runs as nobody (never as user dbio,
# which dbio keeps to the servers it starts itself).
as_server=()
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$out/pg"
  chown nobody "$out/pg"
  as_server=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
  mkdir -p "$out/pg"
fi
port=54430
stop_server() {
  "${as_server[@]}" "$bin/pg_ctl" -D "$out/pg/d" -w -m fast stop >/dev/null 2>&1 || true
}
trap 'stop_server; kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"' EXIT
"${as_server[@]}" "$bin/initdb" -D "$out/pg/d" -A trust -U bench --no-sync -E UTF8 --no-locale >/dev/null
"${as_server[@]}" "$bin/pg_ctl" -D "$out/pg/d" -l "$out/pg/log" -w -o \
  "-c listen_addresses= -c unix_socket_directories=$out/pg -p $port -c track_io_timing=on" \
  start >/dev/null
url="host=$out/pg port=$port user=bench dbname=postgres"
echo "pgbench -i -s $scale ..." >&2
"$bin/pgbench" -i -s "$scale" -q "$url" >/dev/null 2>&1
db_bytes=$("$bin/psql" "$url" -Atc "SELECT pg_database_size('postgres')")
# The device under the data directory, as /proc/diskstats names it.
dev=$(basename "$(readlink -f "/sys/dev/block/$(mountpoint -d "$(findmnt -n -o TARGET -T "$out/pg/d")")")")
snap() { # reads writes of $dev, then the server's commits
  awk -v d="$dev" '$3 == d { print $4, $8 }' /proc/diskstats
  "$bin/psql" "$url" -Atc "SELECT sum(xact_commit) FROM pg_stat_database"
}
"$bin/pgbench" -c "$clients" -j "$clients" -T $((seconds + 20)) "$url" >"$out/pgbench.txt" 2>&1 &
sleep 5 # past the connections' start
a=$(snap)
t0=$(date +%s.%N)
"$dbio" job from-pg --pg "$url" --interval "${seconds}s" >"$out/job.toml" 2>"$out/from-pg.err" ||
  { cat "$out/from-pg.err" >&2; exit 1; }
t1=$(date +%s.%N)
b=$(snap)
wait
stop_server
echo "captured; replaying ..." >&2
# Exit 3 is a class's limit missed: the figures are still the replay's.
rc=0
"$dbio" run --job "$out/job.toml" --target "$out/replay" --size "$((db_bytes / 1048576 + 64))M" \
  --duration "${seconds}s" --redo-files 2 --redo-file-size 64M --out "$out/runs" --json >"$out/replay.json" 2>"$out/replay.err" || rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
  cat "$out/replay.err" >&2
  exit 1
fi
python3 - "$out/replay.json" "$a" "$b" "$t0" "$t1" "$out/job.toml" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a, b = (list(map(float, x.split())) for x in sys.argv[2:4])
secs = float(sys.argv[5]) - float(sys.argv[4]) - 1.1  # less the observer's flush pause
# The observer's 100 samples a second are transactions of their own: not pgbench's commits.
cap = [(b[0] - a[0]) / secs, (b[1] - a[1]) / secs, (b[2] - a[2]) / secs - 100.0]
os_ = r.get("os") or {}
top = os_["devices"][0]["device"] if os_.get("devices") else None
rows = [d for d in os_.get("devices", []) if d["device"] == top]
n = max(len(rows), 1)
dev = [sum(d["r_s"] for d in rows) / n, sum(d["w_s"] for d in rows) / n,
       r["totals"].get("commits_per_s") or 0.0]
# dbio's own requests (direct I/O: one device request each), by direction.
ev = r["events"]
own = [sum(e["iops"] for e in ev if "read" in e["name"]),
       sum(e["iops"] for e in ev if "write" in e["name"]),
       r["totals"].get("commits_per_s") or 0.0]
print(f"device {top}: the capture's device counters against the replay's "
      "(another process's I/O on the device counts on both sides)")
print(f"{'':12} {'captured':>10} {'replay dbio':>12} {'ratio':>7} {'replay device':>14} {'ratio':>7}")
for name, c, o, d in zip(["reads/s", "writes/s", "commits/s"], cap, own, dev):
    q = lambda x: f"{x / c:.2f}" if c > 0 else "-"
    print(f"{name:12} {c:10.1f} {o:12.1f} {q(o):>7} {d:14.1f} {q(d):>7}")
print("\njob:")
print("".join(l for l in open(sys.argv[6]) if not l.startswith("#")))
PY
