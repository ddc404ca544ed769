# Sourced by the scripts that compare dbio with fio (vs-fio.sh, vs-fio-null.sh): builds dbio,
# makes a work directory (removed at exit with the data set in $data) and a results store of
# its own, and defines the helpers that read IOPS and compute medians and ratios.
# Expects: $data (where the data set goes). Sets: $here, $top, $work, $dbio.
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=$(mktemp -d)
export DBIO_DB=$work/dbio.db # keep the bench's runs out of the user's results store
dbio=
# (A stop before dbio is built has no data set to clean.)
trap 'rm -rf "$work"; if [ -n "$dbio" ]; then "$dbio" clean "$data" >/dev/null 2>&1 || rm -rf "$data"; fi' EXIT

command -v fio >/dev/null || { echo "fio not found: apt-get install fio" >&2; exit 2; }
(cd "$top" && cargo build --release --quiet)
dbio=$top/target/release/dbio

# On a shared machine, ask for the CPU first (everything below inherits it; all contenders
# alike). Needs root; elsewhere the runs go at the usual priority.
renice -n -20 -p $$ >/dev/null 2>&1 || true

json_iops_cpu() { python3 -c 'import json,sys; r=json.load(sys.stdin); e=r["events"][0]; c=r["cpu"]; print(round(e["iops"]), round((c["user_s"]+c["system_s"])/e["requests"]*1e9, 1))'; }
json_iops() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["events"][0]["iops"]))'; }
fio_iops() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'; }
median() { python3 -c 'import sys,statistics; print(round(statistics.median(int(x) for x in sys.argv[1:])))' "$@"; }
median_f() { python3 -c 'import sys,statistics; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.2f}")' "$@"; }
fratio() { python3 -c 'import sys; print(f"{float(sys.argv[1])/float(sys.argv[2]):.2f}")' "$1" "$2"; }
ratio() { python3 -c 'import sys; print(f"{int(sys.argv[1])/int(sys.argv[2]):.2f}")' "$1" "$2"; }
