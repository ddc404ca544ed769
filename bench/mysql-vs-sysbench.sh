#!/usr/bin/env bash
# dbio mysql against sysbench on the same throwaway MariaDB: random primary-key reads with a
# buffer pool far smaller than the table (sysbench oltp_point_select --rand-type=uniform vs
# `dbio mysql run read-iops --sync`), and single-row autocommit inserts (sysbench
# oltp_insert into a 1,000-row table that stays in the buffer pool vs `dbio mysql run redo`), at the same sessions, for the
# same time. The server is this script's own (as user nobody, on a private socket, no
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
sql "CREATE DATABASE sbtest"
SB=(sysbench --db-driver=mysql --mysql-socket="$sock" --mysql-user=root --mysql-db=sbtest --tables=1)
"${SB[@]}" --table-size="$rows" oltp_point_select prepare >"$dir/sb-prepare.log" || { cat "$dir/sb-prepare.log" >&2; exit 1; }
url="mysql://root@localhost/mysql?socket=$sock"

echo "MariaDB $(sql 'SELECT VERSION()'), buffer pool 16 MiB, $sessions sessions, $seconds s each"
printf '%-44s %12s\n' "what" "per second"
# Random reads, the buffer pool far smaller than the table.
sb=$("${SB[@]}" --table-size="$rows" --threads="$sessions" --time="$seconds" --rand-type=uniform \
  oltp_point_select run | awk '/queries:/ {gsub(/[(]/, "", $3); print $3}')
printf '%-44s %12s\n' "sysbench oltp_point_select (uniform)" "$sb"
db=$($DBIO mysql run read-iops --sync --sessions "$sessions" --size "$size" --duration "${seconds}s" \
  --warmup 2s --mysql "$url" --out "$dir/runs" --json 2>"$dir/dbio.err" | jq '.events[0].iops') \
  || { cat "$dir/dbio.err" >&2; exit 1; }
printf '%-44s %12.0f\n' "dbio mysql run read-iops --sync" "$db"
"${SB[@]}" --table-size="$rows" oltp_point_select cleanup >/dev/null
# Single-row autocommit inserts into an empty table: each commit waits for its log write.
"${SB[@]}" --table-size=1000 oltp_insert prepare >"$dir/sb-insert.log" 2>&1 || { cat "$dir/sb-insert.log" >&2; exit 1; }
sbi=$("${SB[@]}" --table-size=1000 --threads="$sessions" --time="$seconds" oltp_insert run \
  | awk '/transactions:/ {gsub(/[(]/, "", $3); print $3}')
printf '%-44s %12s\n' "sysbench oltp_insert (1,000-row table)" "$sbi"
dbr=$($DBIO mysql run redo --sessions "$sessions" --size 16M --duration "${seconds}s" --warmup 2s \
  --mysql "$url" --out "$dir/runs" --json 2>"$dir/dbio.err") || { cat "$dir/dbio.err" >&2; exit 1; }
dbc=$(echo "$dbr" | jq '.mysql.innodb.commits_per_s')
printf '%-44s %12.0f\n' "dbio mysql run redo (commits/s)" "$dbc"
printf '%-44s %12.2f\n' "  commits per log write" "$(echo "$dbr" | jq '.mysql.innodb.commits_per_log_write')"
awk -v a="$dbc" -v b="$sbi" 'BEGIN { printf "%-44s %12.2f\n", "dbio redo / sysbench inserts", a / b }'
