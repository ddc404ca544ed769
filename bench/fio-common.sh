# Sourced by the scripts that compare dbio with fio (vs-fio.sh, vs-fio-null.sh): builds dbio,
# makes a work directory (removed at exit with the data set in $data) and a results store of
# its own, and defines the helpers that read IOPS and compute medians and ratios.
# Expects: $data (where the data set goes). Sets: $here, $top, $work, $dbio.
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=$(mktemp -d)
export DBIO_DB=$work/dbio.db # keep the bench's runs out of the user's results store
trap 'rm -rf "$work"; "$dbio" clean "$data" >/dev/null 2>&1 || rm -rf "$data"' EXIT

command -v fio >/dev/null || { echo "fio not found: apt-get install fio" >&2; exit 2; }
(cd "$top" && cargo build --release --quiet)
dbio=$top/target/release/dbio

json_iops() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["events"][0]["iops"]))'; }
fio_iops() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'; }
median() { python3 -c 'import sys,statistics; print(round(statistics.median(int(x) for x in sys.argv[1:])))' "$@"; }
ratio() { python3 -c 'import sys; print(f"{int(sys.argv[1])/int(sys.argv[2]):.2f}")' "$1" "$2"; }
