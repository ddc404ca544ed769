#!/usr/bin/env bash
# pgbench captured with `dbio job from-pg` and replayed with `dbio run --job`: does the job
# issue what the storage did? A throwaway PostgreSQL (15 by default) runs pgbench; over
# SECONDS of it, `dbio job from-pg` samples the server and writes the job, while this script
# reads the device under the data directory (/proc/diskstats), the server's counters and
# pgbench's transactions a second (its commits) over the same interval. Then the server
# goes, and `dbio run --job` replays the job for SECONDS on the same file system (OUT=DIR on
# a file system of its own, a loop device's, keeps other programs' I/O out of both sides'
# device counters); its device figures come from the
# run's own `os` section (the device under its data set), its commits from its totals.
# Prints device reads/s, writes/s and commits/s of both, and their ratios (the aim: within
# 10 %); what the captured run's device writes were made of (PostgreSQL's buffers written by
# the checkpointer, background writer and backends, its WAL writes and syncs, the device's
# flushes, the data requests left once the WAL's are taken away); the replay's
# requests by event; and each class of the job replayed alone for COST_SECONDS (default 10,
# 0 skips): the device requests one request of that class cost.
#
#   bench/pg-capture-replay.sh [SECONDS] [CLIENTS] [SCALE]   (default: 30 s, 4 clients, scale 20)
#
# PG_BIN (default /usr/lib/postgresql/15/bin) names the server's binaries (pgbench among
# them); DBIO=PATH uses that dbio binary instead of building one; OUT=DIR the directory the
# server and the replay's data set go in (default: a new one under /var/tmp; removed).
#
# MEM=SIZE (e.g. 256M; root only) runs the server, pgbench and the replay's dbio in a memory
# cgroup of their own limited to SIZE (v1 memory.limit_in_bytes, or v2 memory.max), made
# under this script's own cgroup and removed on exit. The limit holds the page cache too: on
# a machine whose memory holds pgbench's data, PostgreSQL's reads are page-cache hits and the
# device reads nothing (0-2 reads/s at scale 20 on 24 GiB), so no read ratio means anything.
# With MEM well under the data (scale 100 is 1.5 GB; shared_buffers is 128 MB of the limit),
# PostgreSQL's reads reach the device. The replay's reads are O_DIRECT (the job's default io
# mode, setall: one device read per read, the page cache not in the way) and it runs in the
# same limit.
#
# Reads reaching the device, as measured for issue 33 (a loop device of its own, PostgreSQL 15;
# pgbench -i -s 100 took 28-40 s, a whole run about 2.5 min):
#   truncate -s 6G /var/tmp/img && dev=$(losetup --find --show --direct-io=on /var/tmp/img)
#   mkfs.ext4 -q $dev && mkdir -p /mnt/pgcr && mount $dev /mnt/pgcr
#   OUT=/mnt/pgcr MEM=256M bench/pg-capture-replay.sh 30 4 100
#   umount /mnt/pgcr && losetup -d $dev && rm /var/tmp/img
# Replay ÷ capture, device reads/s 1.00, 1.01, 1.01 (1,656-2,131 reads/s captured; PostgreSQL
# counted 1,612-2,150), writes/s 0.91, 0.97, 0.97, commits/s 1.01, 1.01, 0.98; with 8 clients
# 1.01, 0.95, 1.02.
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
# The memory cgroup MEM asks for: under the one this script runs in (v1's memory hierarchy,
# else v2's unified one). Checked before anything is made.
cg=
if [ -n "${MEM:-}" ]; then
  [[ $MEM =~ ^[0-9]+[KMG]?$ ]] ||
    { echo "error: MEM=$MEM: a size in bytes, or with K, M or G (e.g. 256M)" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { echo "error: MEM=$MEM: a memory cgroup needs root" >&2; exit 2; }
  if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
    cg_parent=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
    cg_limit=memory.limit_in_bytes
  else
    cg_parent=/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
    cg_limit=memory.max
    grep -qw memory "$cg_parent/cgroup.subtree_control" 2>/dev/null ||
      { echo "error: MEM=$MEM: $cg_parent does not give its children the memory controller" >&2; exit 2; }
  fi
  [ -w "$cg_parent" ] ||
    { echo "error: MEM=$MEM: cannot make a memory cgroup under $cg_parent" >&2; exit 2; }
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
# in_cg CMD...: CMD in the memory cgroup (its children too), or as it is without MEM.
in_cg=()
remove_cg() {
  [ -n "$cg" ] && [ -d "$cg" ] || return 0
  # Its processes (none once the server stopped and the jobs ended) moved out, then it goes.
  for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do echo "$p" >"$cg_parent/cgroup.procs" || true; done
  rmdir "$cg" 2>/dev/null || { sleep 1; rmdir "$cg"; } || echo "dbio-pgcr: could not remove $cg" >&2
}
trap 'stop_server; kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null; remove_cg; rm -rf "$out"' EXIT
if [ -n "${MEM:-}" ]; then
  cg=$cg_parent/dbio-pgcr-$$
  mkdir "$cg"
  echo "$MEM" >"$cg/$cg_limit"
  in_cg=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg")
  echo "memory cgroup $cg: limit $MEM (page cache included)" >&2
fi
"${as_server[@]}" "$bin/initdb" -D "$out/pg/d" -A trust -U bench --no-sync -E UTF8 --no-locale >/dev/null
"${in_cg[@]}" "${as_server[@]}" "$bin/pg_ctl" -D "$out/pg/d" -l "$out/pg/log" -w -o \
  "-c listen_addresses= -c unix_socket_directories=$out/pg -p $port -c track_io_timing=on" \
  start >/dev/null
url="host=$out/pg port=$port user=bench dbname=postgres"
echo "pgbench -i -s $scale ..." >&2
t=$(date +%s)
"${in_cg[@]}" "$bin/pgbench" -i -s "$scale" -q "$url" >/dev/null 2>&1
echo "pgbench -i took $(($(date +%s) - t)) s" >&2
db_bytes=$("$bin/psql" "$url" -Atc "SELECT pg_database_size('postgres')")
# The device under the data directory, as /proc/diskstats names it.
dev=$(basename "$(readlink -f "/sys/dev/block/$(mountpoint -d "$(findmnt -n -o TARGET -T "$out/pg/d")")")")
# One line: the device's reads, writes, sectors written and flushes (/proc/diskstats), then the
# server's commits, its buffers written by the checkpointer, the background writer and the
# backends (pg_stat_bgwriter; pg_stat_io's relation writes on 16+, in the checkpointer's
# column), and its WAL writes and syncs (pg_stat_wal).
if [ "$("$bin/psql" "$url" -Atc "SELECT current_setting('server_version_num')::int >= 160000")" = t ]; then
  buffers="(SELECT coalesce(sum(writes), 0) FROM pg_stat_io WHERE object = 'relation'), 0, 0"
else
  buffers="buffers_checkpoint, buffers_clean, buffers_backend"
fi
snap() {
  echo "$(awk -v d="$dev" '$3 == d { print $4, $8, $10, $20 }' /proc/diskstats)" \
    "$("$bin/psql" "$url" -Atc "SELECT (SELECT sum(xact_commit) FROM pg_stat_database), $buffers,
      wal_write, wal_sync FROM pg_stat_bgwriter, pg_stat_wal" | tr '|' ' ')"
}
"${in_cg[@]}" "$bin/pgbench" -c "$clients" -j "$clients" -T $((seconds + 20)) -P 1 --progress-timestamp "$url" \
  >"$out/pgbench.txt" 2>&1 &
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
"${in_cg[@]}" "$dbio" run --job "$out/job.toml" --target "$out/replay" --size "$((db_bytes / 1048576 + 64))M" \
  --duration "${seconds}s" --redo-files 2 --redo-file-size 64M --out "$out/runs" --json >"$out/replay.json" 2>"$out/replay.err" || rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
  cat "$out/replay.err" >&2
  exit 1
fi
# What each class of the job costs the device alone: the job's classes one at a time, for
# COST_SECONDS (default 10; 0 skips), with the device's requests per request dbio issued.
cost_s=${COST_SECONDS:-10}
if [ "$cost_s" != 0 ]; then
  python3 - "$out/job.toml" "$out" <<'PY'
import sys
import re
head, *classes = open(sys.argv[1]).read().split("[[class]]")
for i, c in enumerate(classes):
    if "log file" in c:
        open(f"{sys.argv[2]}/class{i}-redo.toml", "w").write(head + "[[class]]" + c)
    else:  # no redo: no [redo] table
        h = re.sub(r"\[redo\]\n(?:[^\[\n][^\n]*\n)*", "", head)
        open(f"{sys.argv[2]}/class{i}.toml", "w").write(h + "[[class]]" + c)
PY
  for j in "$out"/class*.toml; do
    redo=()
    case $j in *-redo.toml) redo=(--redo-files 2 --redo-file-size 64M) ;; esac
    "${in_cg[@]}" "$dbio" run --job "$j" --target "$out/replay" --size "$((db_bytes / 1048576 + 64))M" \
      --duration "${cost_s}s" --warmup 2s "${redo[@]}" --out "$out/runs" \
      --json >"${j%.toml}.json" 2>"${j%.toml}.err" || true
  done
fi
python3 - "$out/replay.json" "$a" "$b" "$t0" "$t1" "$out/job.toml" "$out" <<'PY'
import glob, json, re, sys
r = json.load(open(sys.argv[1]))
a, b = (list(map(float, x.split())) for x in sys.argv[2:4])
# The device's counters were read before from-pg started and after it ended: pgbench ran
# all that time (the observer's flush pause included), so all of it is the interval.
secs = float(sys.argv[5]) - float(sys.argv[4])
d = [(y - x) / secs for x, y in zip(a, b)]
# Commits: pgbench's own transactions a second (-P 1) over the seconds the capture sampled;
# the server's count less the observer's sampling transactions (up to 100 a second) when
# pgbench printed none.
t0, t1 = float(sys.argv[4]), float(sys.argv[5])
tps = [float(m.group(2)) for m in re.finditer(r"progress: ([0-9.]+) s, ([0-9.]+) tps",
                                               open(sys.argv[7] + "/pgbench.txt").read())
       if t0 + 1 <= float(m.group(1)) <= t1]
cap = [d[0], d[1], sum(tps) / len(tps) if tps else d[4] - 100.0]
print("captured run, per second: device reads %.1f, writes %.1f (%.1f KiB each; %.1f flushes); "
      "PostgreSQL: buffers written %.1f (checkpointer %.1f, bgwriter %.1f, backends %.1f), "
      "WAL writes %.1f, WAL syncs %.1f, commits %.1f (pgbench's transactions %s)" % (
          d[0], d[1], d[2] * 0.5 / max(d[1], 1e-9), d[3], d[5] + d[6] + d[7], d[5], d[6], d[7],
          d[8], d[9], d[4], "%.1f" % cap[2] if tps else "not printed"))
print("  the device's writes less one per WAL write and one per WAL sync (its flush, on a volatile "
      "cache): %.1f data requests/s against %.1f buffers written/s; less the buffers instead, "
      "%.2f device writes per WAL sync" % (d[1] - d[8] - d[9], d[5] + d[6] + d[7],
                                           (d[1] - d[5] - d[6] - d[7]) / max(d[9], 1e-9)))
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
def per_event(run):
    return {e["name"]: e["iops"] for e in run["events"] if e["iops"] > 0}
print("\nreplay, dbio's requests/s by event:", ", ".join(f"{k} {v:.1f}" for k, v in per_event(r).items()))
for f in sorted(glob.glob(sys.argv[7] + "/class*.json")):
    try:
        c = json.load(open(f))
    except ValueError:
        continue
    rows = [x for x in (c.get("os") or {}).get("devices", []) if x["device"] == top]
    m = max(len(rows), 1)
    rs, ws = sum(x["r_s"] for x in rows) / m, sum(x["w_s"] for x in rows) / m
    ev = per_event(c)
    reads = sum(v for k, v in ev.items() if "read" in k)
    writes = sum(v for k, v in ev.items() if "write" in k)
    q = lambda x, y: f"{x / y:.2f}" if y > 0 else "-"
    print(f"alone: {', '.join(f'{k} {v:.1f}/s' for k, v in ev.items())}: device reads {rs:.1f}/s, "
          f"writes {ws:.1f}/s; device reads per dbio read {q(rs, reads)}, device writes per dbio write {q(ws, writes)}")
print("\njob:")
print("".join(l for l in open(sys.argv[6]) if not l.startswith("#")))
PY
