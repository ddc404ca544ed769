#!/usr/bin/env bash
# dbio mysql against sysbench on the same throwaway MariaDB: random primary-key reads with a
# buffer pool far smaller than the table (sysbench oltp_point_select --rand-type=uniform vs
# `dbio mysql run read-iops --sync`), and single-row autocommit inserts (sysbench
# oltp_insert into its 10,000-row table vs `dbio mysql run redo`, the same row: an
# auto-increment id, a random k under a secondary index, 119 + 59 random characters), at the
# same sessions, for the same time. For the inserts it prints what the server did per
# commit for each tool (SHOW GLOBAL STATUS deltas over each tool's whole run).
#
#   ROUNDS=N repeats the inserts N times, sysbench and dbio alternating; READS=0 skips the reads. The server is this script's own (as user nobody, on a private socket, no
# network); dbio reaches it by URL (--mysql), as a user's server: both tools load the same
# server, one after the other.
#
#   bench/mysql-vs-sysbench.sh [SECONDS] [SESSIONS]     (default: 10 s, 8 sessions)
#   DBIO=path/to/dbio to test a given binary (default: a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
sessions=${2:-8}
rows=${ROWS:-1000000}      # sysbench's table: about 240 MiB
size=${SIZE:-256M}         # dbio's table
if [ -z "${DBIO:-}" ]; then
  cargo build --release -q
  DBIO=$(realpath "${CARGO_TARGET_DIR:-target}/release/dbio")
fi
command -v sysbench >/dev/null || { echo "sysbench is not installed" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (the server runs as nobody)" >&2; exit 2; }
dir=$(mktemp -d /var/tmp/dbio-bench-mysql.XXXXXX)
chmod 755 "$dir"
export XDG_DATA_HOME=$dir/xdg
sock=$dir/s/sock
pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/s" "$dir/tmp" "$dir/data" && chown nobody:nogroup "$dir/s" "$dir/tmp" "$dir/data"
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/mariadb-install-db --no-defaults \
  --basedir=/usr --datadir="$dir/data" --auth-root-authentication-method=normal --skip-test-db \
  --skip-name-resolve >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; exit 1; }
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/sbin/mariadbd --no-defaults \
  --datadir="$dir/data" --socket="$sock" --skip-networking --tmpdir="$dir/tmp" \
  --log-error="$dir/s/error.log" --performance-schema=ON \
  --innodb-buffer-pool-size=16M --innodb-buffer-pool-load-at-startup=0 \
  --innodb-buffer-pool-dump-at-shutdown=0 --innodb-monitor-enable=trx_rw_commits \
  --max-connections=100 &
pid=$!
for _ in $(seq 600); do mariadb --no-defaults --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
sql() { mariadb --no-defaults --socket="$sock" -uroot -N -e "$1"; }
# The server's counters a commit moves, as "name value" lines.
counters="'Com_insert','Innodb_log_writes','Innodb_os_log_written','Innodb_data_writes','Innodb_data_written','Innodb_data_fsyncs','Innodb_pages_written','Innodb_dblwr_pages_written','Innodb_buffer_pool_reads'"
status() { sql "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ($counters) ORDER BY 1"; }
# Per-commit deltas between two status snapshots: "label  log writes/commit ...".
per_commit() {
  paste <(echo "$1") <(echo "$2") | awk -v label="$3" '
    { d[toupper($1)] = $4 - $2 }
    END {
      c = d["COM_INSERT"]; if (c == 0) c = 1
      printf "  %-42s %6.2f commits/log write, %5.0f redo B, %6.0f B written, %5.2f data writes, %5.2f fsyncs, %5.3f page reads per commit\n",
        label, c / (d["INNODB_LOG_WRITES"] ? d["INNODB_LOG_WRITES"] : 1), d["INNODB_OS_LOG_WRITTEN"] / c,
        d["INNODB_DATA_WRITTEN"] / c, d["INNODB_DATA_WRITES"] / c, d["INNODB_DATA_FSYNCS"] / c,
        d["INNODB_BUFFER_POOL_READS"] / c
    }'
}
sql "CREATE DATABASE sbtest"
SB=(sysbench --db-driver=mysql --mysql-socket="$sock" --mysql-user=root --mysql-db=sbtest --tables=1)
url="mysql://root@localhost/mysql?socket=$sock"
echo "MariaDB $(sql 'SELECT VERSION()'), buffer pool 16 MiB, $sessions sessions, $seconds s each"
printf '%-44s %12s\n' "what" "per second"
if [ "${READS:-1}" != 0 ]; then
  "${SB[@]}" --table-size="$rows" oltp_point_select prepare >"$dir/sb-prepare.log" || { cat "$dir/sb-prepare.log" >&2; exit 1; }
  # Random reads, the buffer pool far smaller than the table.
  sb=$("${SB[@]}" --table-size="$rows" --threads="$sessions" --time="$seconds" --rand-type=uniform \
    oltp_point_select run | awk '/queries:/ {gsub(/[(]/, "", $3); print $3}')
  printf '%-44s %12s\n' "sysbench oltp_point_select (uniform)" "$sb"
  db=$($DBIO mysql run read-iops --sync --sessions "$sessions" --size "$size" --duration "${seconds}s" \
    --warmup 2s --mysql "$url" --out "$dir/runs" --json 2>"$dir/dbio.err" | jq '.events[0].iops') \
    || { cat "$dir/dbio.err" >&2; exit 1; }
  printf '%-44s %12.0f\n' "dbio mysql run read-iops --sync" "$db"
  "${SB[@]}" --table-size="$rows" oltp_point_select cleanup >/dev/null
fi
# Single-row autocommit inserts, the same row from both tools: each commit waits for its log write.
rounds=${ROUNDS:-1}
for round in $(seq "$rounds"); do
  "${SB[@]}" --table-size=10000 oltp_insert prepare >"$dir/sb-insert.log" 2>&1 || { cat "$dir/sb-insert.log" >&2; exit 1; }
  before=$(status)
  sbi=$("${SB[@]}" --table-size=10000 --threads="$sessions" --time="$seconds" oltp_insert run \
    | awk '/transactions:/ {gsub(/[(]/, "", $3); print $3}')
  sbc=$(per_commit "$before" "$(status)" "sysbench")
  "${SB[@]}" --table-size=10000 oltp_insert cleanup >/dev/null
  before=$(status)
  dbr=$($DBIO mysql run redo --sessions "$sessions" --size 16M --duration "${seconds}s" --warmup 2s \
    --mysql "$url" --out "$dir/runs" --json 2>"$dir/dbio.err") || { cat "$dir/dbio.err" >&2; exit 1; }
  dbioc=$(per_commit "$before" "$(status)" "dbio")
  dbc=$(echo "$dbr" | jq '.mysql.innodb.commits_per_s')
  printf '%-44s %12s\n' "sysbench oltp_insert (round $round)" "$sbi"
  printf '%-44s %12.0f\n' "dbio mysql run redo (commits/s)" "$dbc"
  printf '%-44s %12.2f\n' "  commits per log write" "$(echo "$dbr" | jq '.mysql.innodb.commits_per_log_write')"
  awk -v a="$dbc" -v b="$sbi" 'BEGIN { printf "%-44s %12.2f\n", "dbio redo / sysbench inserts", a / b }'
  echo "$sbc"
  echo "$dbioc"
done
