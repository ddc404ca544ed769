#!/usr/bin/env bash
# dbio against a bare pread loop and fio, on the same file in /dev/shm (tmpfs accepts
# O_DIRECT and is CPU-bound, so per-request overhead is what shows). Runs alternate
# (bare, dbio, fio, ..., bare, dbio, fio, ...) so that machine noise hits all of them alike;
# the medians and their ratios are printed at the end. Against the bare loop, the ratio of
# each round (two runs side by side) and their median come first: a round that another
# process disturbed moves the median of the rounds less than the ratio of the medians. The
# CPU time per request of the bare loop and of dbio, which a busy machine disturbs least,
# comes last.
#
#   bench/vs-fio.sh [ROUNDS] [SECONDS]      (defaults: 5 rounds of 5 s)
#
# Needs: fio (apt-get install fio), gcc, python3.
set -euo pipefail
rounds=${1:-5}
secs=${2:-5}
data=/dev/shm/dbio-bench-$$
source "$(dirname "$0")/fio-common.sh"
gcc -O2 -o "$work/pread_loop" "$here/pread_loop.c"

"$dbio" prepare --target "$data" --size 1G --files 1 --block-size 4K >/dev/null
file=$data/dbio-data-001.dbf
common=(--target "$data" --size 1G --files 1 --block-size 4K --sessions 1 --duration "${secs}s" --warmup 1s --json --out "$work/runs")

fio_run() { fio --name=bench --filename="$file" --direct=1 --rw=randread --bs=4k --runtime="$secs" --ramp_time=1 --time_based --output-format=json "$@" | fio_iops; }

declare -a bare psync dsync fiou dkeep fiob dbatch rbare cbare cdbio
for r in $(seq "$rounds"); do
  echo "round $r/$rounds" >&2
  read -r iops cpu < <("$work/pread_loop" "$file" 4096 "$secs")
  bare+=("$iops"); cbare+=("$cpu")
  read -r iops cpu < <("$dbio" run read-iops --sync "${common[@]}" 2>/dev/null | json_iops_cpu)
  dsync+=("$iops"); cdbio+=("$cpu")
  rbare+=("$(ratio "${dsync[-1]}" "${bare[-1]}")")
  psync+=("$(fio_run --ioengine=psync)")
  fiou+=("$(fio_run --ioengine=io_uring --iodepth=32)")
  dkeep+=("$("$dbio" run read-iops --async --engine uring --batch 32 --keep-inflight "${common[@]}" 2>/dev/null | json_iops)")
  fiob+=("$(fio_run --ioengine=io_uring --iodepth=32 --iodepth_batch_submit=32 --iodepth_batch_complete_min=32)")
  dbatch+=("$("$dbio" run read-iops --async --engine uring --batch 32 "${common[@]}" 2>/dev/null | json_iops)")
done

m_bare=$(median "${bare[@]}"); m_psync=$(median "${psync[@]}"); m_dsync=$(median "${dsync[@]}")
m_cbare=$(median_f "${cbare[@]}"); m_cdbio=$(median_f "${cdbio[@]}")
m_fiou=$(median "${fiou[@]}"); m_dkeep=$(median "${dkeep[@]}"); m_fiob=$(median "${fiob[@]}"); m_dbatch=$(median "${dbatch[@]}")
cat <<OUT

4 KiB O_DIRECT random reads on /dev/shm, one session/job, medians of $rounds alternating runs of ${secs} s
(kernel $(uname -r), $(nproc) CPUs, fio $(fio --version))

queue depth 1 (synchronous pread)                      IOPS
  bare C pread loop (times nothing)               $(printf '%10s' "$m_bare")
  fio --ioengine=psync                            $(printf '%10s' "$m_psync")
  dbio run read-iops --sync                       $(printf '%10s' "$m_dsync")
  dbio / fio psync                                $(printf '%10s' "$(ratio "$m_dsync" "$m_psync")")
  dbio / bare pread loop, each round              ${rbare[*]}
  dbio / bare pread loop, median of the rounds    $(printf '%10s' "$(median_f "${rbare[@]}")")
  dbio / bare pread loop, ratio of the medians    $(printf '%10s' "$(ratio "$m_dsync" "$m_bare")")
  CPU per request, ns (whole process, medians): bare loop $m_cbare, dbio $m_cdbio, dbio / bare $(fratio "$m_cdbio" "$m_cbare")

queue depth 32, io_uring, 32 kept in flight
  fio --ioengine=io_uring --iodepth=32            $(printf '%10s' "$m_fiou")
  dbio read-iops --batch 32 --keep-inflight       $(printf '%10s' "$m_dkeep")
  dbio / fio                                      $(printf '%10s' "$(ratio "$m_dkeep" "$m_fiou")")

queue depth 32, io_uring, submit 32 / wait for all 32 ("db file parallel read")
  fio ... --iodepth_batch_submit=32 --iodepth_batch_complete_min=32 $(printf '%10s' "$m_fiob")
  dbio read-iops --batch 32                       $(printf '%10s' "$m_dbatch")
  dbio / fio                                      $(printf '%10s' "$(ratio "$m_dbatch" "$m_fiob")")
OUT
