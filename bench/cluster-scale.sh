#!/usr/bin/env bash
# How many hosts one coordinator handles: one `dbio run --hosts h1,…,hN` whose "ssh" is a
# stand-in that drops the options and the destination and runs the remote command here (ssh's
# own cost is not dbio's), so N agents run on this machine, each with its own data set in
# /dev/shm. Each agent runs read-iops --sync with --engine null at a fixed --rate, so the
# agents' load stays small and the same at every N. Reports the coordinator's CPU (utime +
# stime from /proc/PID/stat, sampled every 100 ms): over its whole life, and while it
# streams (the middle of the measured window), per host per second; and whether it kept up:
# per-second lines merged against hosts × seconds, and how late the latest one was.
#
#   bench/cluster-scale.sh [SECONDS] [HOSTS...]      (default: 10 s; 8 32 64 hosts)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(8 32 64)
rate=${RATE:-200} # requests per second per host
cargo build --release -q
dbio=$(realpath "${CARGO_TARGET_DIR:-target}/release/dbio")
base=/dev/shm/dbio-cluster-scale
out=$(mktemp -d /tmp/dbio-cluster-scale.XXXXXX)
export XDG_DATA_HOME=$out/xdg # keep the runs out of the user's results store
cleanup() {
  for d in "$base"/*; do [ -d "$d" ] && $dbio clean "$d" >/dev/null 2>&1 || true; done
  rmdir "$base" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT
mkdir -p "$base"
cat >"$out/ssh" <<'SH'
#!/bin/sh
# ssh stand-in: skip the options and the destination up to "--", run the command here.
while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift
exec sh -c "$*"
SH
chmod +x "$out/ssh"
printf '%6s %10s %12s %14s %16s %12s %10s\n' hosts wall_s coord_cpu_s cpu_ms/host/s stream_ms/host/s lines late_ms
for n in "${counts[@]}"; do
  hosts=$(seq -s, -f 'h%g' 1 "$n")
  python3 - "$dbio" "$out" "$n" "$seconds" "$hosts" "$base" "$rate" <<'PY'
import os, re, subprocess, sys, time
dbio, out, n, seconds, hosts, base, rate = sys.argv[1:]
n, seconds = int(n), int(seconds)
hz = os.sysconf("SC_CLK_TCK")
argv = [dbio, "run", "read-iops", "--sync", "--engine", "null", "--rate", rate,
        "--target", base + "/{host}", "--size", "8M", "--sessions", "1",
        "--duration", f"{seconds}s", "--warmup", "1s", "--hosts", hosts,
        "--ssh", out + "/ssh", "--remote-dbio", dbio, "--out", out + "/runs", "--quiet"]
t0 = time.monotonic()
p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
samples = []
while p.poll() is None:
    try:
        f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        samples.append((time.monotonic() - t0, (int(f[11]) + int(f[12])) / hz))
    except (FileNotFoundError, ProcessLookupError, IndexError):
        pass
    time.sleep(0.1)
wall = time.monotonic() - t0
err = p.stderr.read()
if p.returncode != 0:
    sys.exit(f"{n} hosts: exit {p.returncode}\n{err}")
cpu = samples[-1][1]
# While it streams: the middle half of the measured window, which ends about 1 s before exit.
end = samples[-1][0] - 1.0
lo, hi = end - seconds * 0.75, end - seconds * 0.25
mid = [s for s in samples if lo <= s[0] <= hi]
stream = (mid[-1][1] - mid[0][1]) / (mid[-1][0] - mid[0][0]) if len(mid) > 1 else float("nan")
m = re.search(r"(\d+) per-second line\(s\) merged, the latest (\d+) ms", err)
lines, late = (m.group(1), m.group(2)) if m else ("?", "?")
print(f"{n:6d} {wall:10.1f} {cpu:12.2f} {1000 * cpu / n / seconds:14.3f} "
      f"{1000 * stream / n:16.3f} {lines:>5}/{n * seconds:<6} {late:>10}")
PY
done
