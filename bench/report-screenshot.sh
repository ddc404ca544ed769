#!/usr/bin/env bash
# Opens a run's report.html in headless Chromium: takes a full-page screenshot to look at,
# and fails if the page logs any console message or makes any network request
# (report.html must work offline). Not part of CI: it needs a browser.
#
#   bench/report-screenshot.sh [RUN_DIR] [OUT.png]      (RUN_DIR "" = make a run)
#
# Without RUN_DIR it runs a 10 s read-iops test on a 256 MiB data set in a temporary
# directory. The screenshot goes to OUT.png (default ./report-screenshot.png).
# Needs: chromium (apt-get install chromium), python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
png=$(realpath -m "${2:-report-screenshot.png}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "no chromium found: apt-get install chromium" >&2; exit 2; }

if [ -n "${1:-}" ]; then
  run_dir=$(realpath "$1")
else
  (cd "$top" && cargo build --quiet)
  (cd "$work" && "$top/target/debug/dbio" run read-iops --size 256M --sessions 4 \
      --duration 10s --warmup 1s >/dev/null)
  run_dir=$(ls -d "$work"/dbio-runs/*/)
  run_dir=${run_dir%/}
fi
[ -f "$run_dir/report.html" ] || { echo "$run_dir/report.html not found" >&2; exit 2; }

# Background features off, so that every request in the net log is the page's own.
"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars \
  --no-first-run --disable-background-networking --disable-component-update \
  --disable-sync --disable-default-apps --no-default-browser-check \
  --user-data-dir="$work/profile" \
  --enable-logging=stderr --v=0 \
  --log-net-log="$work/net.json" --net-log-capture-mode=Default \
  --window-size=1400,4000 --screenshot="$png" \
  "file://$run_dir/report.html" 2>"$work/stderr.log" >/dev/null || {
    cat "$work/stderr.log" >&2; exit 1; }

status=0
# Console messages reach stderr as "INFO:CONSOLE(line)" (the level is not shown); the page
# has no script, so any message at all (an error, a blocked resource) fails the check.
if grep -E 'CONSOLE' "$work/stderr.log" >&2; then
  echo "console messages above" >&2
  status=1
fi
# Every request the network stack started on behalf of the page (a file:// page's requests
# carry a file:// network isolation key); the browser's own background requests (update
# checks and the like) are counted but not held against the page.
python3 - "$work/net.json" <<'EOF' || status=1
import json, sys
log = json.load(open(sys.argv[1]))
start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
page, browser = [], 0
for e in log["events"]:
    p = e.get("params", {})
    if e["type"] != start_job or "url" not in p or p["url"].startswith("file:"):
        continue
    if "file://" in p.get("network_isolation_key", "") or p.get("initiator") in ("null", "file://"):
        page.append(p["url"])
    else:
        browser += 1
print(f"net log: {len(page)} request(s) by the page, {browser} by the browser itself", file=sys.stderr)
for u in page:
    print(f"  the page requested {u}", file=sys.stderr)
sys.exit(1 if page else 0)
EOF
echo "screenshot: $png (report: $run_dir/report.html, $(stat -c %s "$run_dir/report.html") bytes)"
exit $status
