#!/usr/bin/env bash
# dbio's own cost per request against fio's: both with a null engine (every request completes
# at once, no system call), so what is left is the tool itself — choosing the block, timing
# the request, recording it. Runs alternate (fio, dbio, fio, dbio, ...) so that machine noise
# hits both alike; the medians and their ratios are printed at the end.
#
#   bench/vs-fio-null.sh [ROUNDS] [SECONDS]      (defaults: 5 rounds of 5 s)
#
# The same job on both sides: 4 KiB random reads over 1 GiB, one session/job,
#   - one request at a time: dbio `read-iops --sync` (db file sequential read) against fio
#     at iodepth 1;
#   - batches of 32 submitted together and waited for together: dbio `read-iops --batch 32`
#     (db file parallel read) against fio at iodepth 32 submitting and reaping 32 at a time.
#
# Needs: fio (apt-get install fio), python3.
set -euo pipefail
rounds=${1:-5}
secs=${2:-5}
data=/dev/shm/dbio-bench-null-$$
source "$(dirname "$0")/fio-common.sh"

"$dbio" prepare --target "$data" --size 1G --files 1 --block-size 4K >/dev/null 2>&1
common=(--engine null --target "$data" --size 1G --files 1 --block-size 4K --sessions 1 --duration "${secs}s" --warmup 1s --json --out "$work/runs")

fio_run() { fio --name=bench --ioengine=null --size=1G --rw=randread --bs=4k --runtime="$secs" --ramp_time=1 --time_based --output-format=json "$@" | fio_iops; }

declare -a fio1 dbio1 fio32 dbio32 r1 r32
for r in $(seq "$rounds"); do
  echo "round $r/$rounds" >&2
  fio1+=("$(fio_run --iodepth=1)")
  dbio1+=("$("$dbio" run read-iops --sync "${common[@]}" 2>/dev/null | json_iops)")
  fio32+=("$(fio_run --iodepth=32 --iodepth_batch_submit=32 --iodepth_batch_complete_min=32)")
  dbio32+=("$("$dbio" run read-iops --async --batch 32 "${common[@]}" 2>/dev/null | json_iops)")
  r1+=("$(ratio "${dbio1[-1]}" "${fio1[-1]}")")
  r32+=("$(ratio "${dbio32[-1]}" "${fio32[-1]}")")
done

m_fio1=$(median "${fio1[@]}"); m_dbio1=$(median "${dbio1[@]}")
m_fio32=$(median "${fio32[@]}"); m_dbio32=$(median "${dbio32[@]}")
cat <<OUT

null engines: 4 KiB random reads over 1 GiB, one session/job, medians of $rounds alternating runs of ${secs} s
(kernel $(uname -r), $(nproc) CPUs, fio $(fio --version))

one request at a time                                  IOPS
  fio --ioengine=null --iodepth=1                 $(printf '%10s' "$m_fio1")
  dbio run read-iops --sync --engine null         $(printf '%10s' "$m_dbio1")
  dbio / fio, each round                          ${r1[*]}
  dbio / fio, median of the rounds                $(printf '%10s' "$(median_f "${r1[@]}")")
  dbio / fio, ratio of the medians                $(printf '%10s' "$(ratio "$m_dbio1" "$m_fio1")")

batches of 32, submitted and waited for together
  fio ... --iodepth=32 --iodepth_batch_submit=32 --iodepth_batch_complete_min=32 $(printf '%10s' "$m_fio32")
  dbio run read-iops --batch 32 --engine null     $(printf '%10s' "$m_dbio32")
  dbio / fio, each round                          ${r32[*]}
  dbio / fio, median of the rounds                $(printf '%10s' "$(median_f "${r32[@]}")")
  dbio / fio, ratio of the medians                $(printf '%10s' "$(ratio "$m_dbio32" "$m_fio32")")
OUT
