#!/usr/bin/env bash
# `mine --partition auto` as a real Slurm job array and `merge` as a job that depends on it
# (--dependency=afterok), on a one-node Slurm installed from Debian's packages (slurm-wlm, munge).
# It submits the job scripts users submit (docs/slurm/*.sbatch) and checks that the merged output is
# byte-identical to a single run (cmp). NOT run in CI: it needs root, apt and a few minutes.
#
#   bash bench/slurm.sh up                        install, write a private slurm.conf, start munged, slurmctld, slurmd
#   bash bench/slurm.sh run FILE.parquet [N ...]  the single run, then per N (default 1 2 4): N tasks + merge, cmp
#   bash bench/slurm.sh hub FILE.parquet [N]      N tasks (default 4) reading FILE from a stand-in Hub by name, one shared cache
#   bash bench/slurm.sh env SPEC [SPEC ...]       the SLURM_ARRAY_* variables of tasks of `sbatch --array=SPEC`, as JSON
#   bash bench/slurm.sh down                      stop the daemons this script started
#   bash bench/slurm.sh all FILE.parquet [N ...]  up, run, down
#
# Everything Slurm and munge need lives in $DM_SLURM_DIR (default /tmp/divergence-mine-slurm): the
# config (SLURM_CONF points at it; /etc/slurm is not touched), a munge key and socket of its own, the
# state, spool, logs and pid files. The node is this machine as `slurmd -C` sees it (its CPUs and
# memory), with no cgroups (proctrack/linuxproc, task/none). There is no accounting database, so
# sacct has nothing: each task's wall and peak RSS come from /usr/bin/time -v around the command
# (DIVERGENCE_MINE, which the job scripts run), and the start/end stamps beside it.
#
# Per N, a task gets max(1, CPUs / N) CPUs and as many --workers (SLURM_CPUS_PER_TASK); with more tasks
# than CPUs, Slurm runs them in waves. The build (npm run build) must be current: the jobs run bin/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${DM_SLURM_DIR:-/tmp/divergence-mine-slurm}"
export SLURM_CONF="$STATE/etc/slurm.conf"
MUNGE_SOCKET="$STATE/munge/munge.socket.2"

log() { printf 'slurm.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null && command -v munged >/dev/null; then return; fi
  [ "$(id -u)" = 0 ] || die "installing slurm-wlm and munge needs root"
  log "installing slurm-wlm and munge from Debian's packages"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >&2
}

write_config() {
  mkdir -p "$STATE"/{etc,munge,state,spool,log}
  chmod 700 "$STATE/munge"
  [ -f "$STATE/munge/munge.key" ] || mungekey --create --keyfile="$STATE/munge/munge.key"
  chmod 600 "$STATE/munge/munge.key"
  local host node
  host="$(hostname -s)"
  # This machine as slurmd sees it: CPUs, sockets, cores, threads, memory (MiB).
  node="$(slurmd -C | head -n 1 | sed -e "s/^NodeName=[^ ]*/NodeName=$host/")"
  [[ "$node" == NodeName=*CPUs=* ]] || die "slurmd -C printed no node line: $node"
  cat >"$SLURM_CONF" <<EOF
# Written by bench/slurm.sh: one node, no cgroups, no accounting database.
ClusterName=divergence-mine
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$STATE/state
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
# Keep finished jobs' records in slurmctld long enough to read their state with scontrol.
MinJobAge=3600
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

cmd_up() {
  install_packages
  write_config
  if ! pid_alive "$STATE/munge/munged.pid"; then
    munged --force --socket="$MUNGE_SOCKET" --key-file="$STATE/munge/munge.key" --pid-file="$STATE/munge/munged.pid" \
      --log-file="$STATE/log/munged.log" --seed-file="$STATE/munge/munged.seed"
  fi
  if ! pid_alive "$STATE/slurmctld.pid"; then slurmctld -i; fi
  if ! pid_alive "$STATE/slurmd.pid"; then slurmd -N "$(hostname -s)"; fi
  local k
  for k in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
      log "up: $(sinfo -h -o '%N %c CPUs %m MiB %T') ($(sinfo -V))"
      return
    fi
    sleep 0.5
  done
  die "the node did not come up; see $STATE/log/"
}

cmd_down() {
  if pid_alive "$STATE/slurmctld.pid"; then scontrol shutdown >/dev/null 2>&1 || true; fi
  local f k
  for f in "$STATE/slurmd.pid" "$STATE/slurmctld.pid" "$STATE/munge/munged.pid"; do
    for k in $(seq 1 40); do pid_alive "$f" || break; [ "$k" = 20 ] && kill "$(cat "$f")" 2>/dev/null; sleep 0.25; done
    pid_alive "$f" && die "$(basename "$f" .pid) (pid $(cat "$f")) is still running"
  done
  log "down: slurmctld, slurmd and munged stopped"
}

# Wait until every job given has left the queue; then print each one's final state.
wait_jobs() {
  while [ -n "$(squeue -h -j "$(IFS=,; echo "$*")" -o %i 2>/dev/null)" ]; do sleep 0.2; done
}

job_state() { scontrol show job "$1" 2>/dev/null | grep -oE 'JobState=[A-Z_]+' | sort -u | cut -d= -f2 | paste -sd, -; }

# Wall seconds, peak RSS (KiB) and exit status from a /usr/bin/time -v file.
time_fields() {
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
    /Maximum resident set size/ { rss = $2 }
    /Exit status/ { st = $2 }
    END { printf "%.2f %d %s\n", w, rss, st }' "$1"
}

cmd_env() {
  [ $# -ge 1 ] || die "usage: bench/slurm.sh env SPEC [SPEC ...]"
  local dir spec jid f first=1
  dir="$(mktemp -d /tmp/dm-slurm-env-XXXXXX)"
  printf '{\n'
  for spec in "$@"; do
    jid="$(sbatch --parsable --array="$spec" --output="$dir/%A_%a.out" \
      --wrap 'env | grep -E "^SLURM_(ARRAY_TASK_(ID|MIN|MAX|COUNT|STEP)|JOB_ID|ARRAY_JOB_ID)=" | sort')"
    jid="${jid%%;*}"
    wait_jobs "$jid"
    [ $first = 1 ] || printf ',\n'
    first=0
    printf '  "%s": [' "$spec"
    local sep=''
    for f in $(ls "$dir"/"${jid}"_*.out | sort -t_ -k2 -n); do
      printf '%s\n    {' "$sep"
      # The job ids differ from run to run: kept out of the record.
      grep -vE '^SLURM_(JOB_ID|ARRAY_JOB_ID)=' "$f" | awk -F= 'BEGIN { s = "" } { printf "%s\"%s\": \"%s\"", s, $1, $2; s = ", " }'
      printf '}'
      sep=','
    done
    printf '\n  ]'
  done
  printf '\n}\n'
  rm -rf "$dir"
}

# The command the job scripts run (DIVERGENCE_MINE) in run folder $1: the CLI ($2) under
# /usr/bin/time -v, with start and end stamps, all in $1/times.
write_timed() {
  local run="$1" bin="$2" times="$1/times"
  cat >"$run/divergence-mine-timed" <<EOF
#!/usr/bin/env bash
tag="\${SLURM_ARRAY_JOB_ID:+\${SLURM_ARRAY_JOB_ID}_\${SLURM_ARRAY_TASK_ID}}"
tag="\${tag:-\${SLURM_JOB_ID:-local}}"
date +%s.%N >"$times/\$tag.start"
/usr/bin/time -v -o "$times/\$tag.time" node "$bin" "\$@"
rc=\$?
date +%s.%N >"$times/\$tag.end"
exit \$rc
EOF
  chmod +x "$run/divergence-mine-timed"
}

# After array job $1 and merge job $2 (of N = $3): both COMPLETED, the merged output $4 cmp-identical to
# $5 (the single run's) and its stats' counters equal to those of $6.
check_merged() {
  local jid="$1" mjid="$2" n="$3" out="$4" single="$5" single_stats="$6" st
  st="$(job_state "$jid")"
  [ "$st" = COMPLETED ] || die "N=$n: array job $jid ended $st; see the logs"
  st="$(job_state "$mjid")"
  [ "$st" = COMPLETED ] || die "N=$n: merge job $mjid ended $st; see the logs"
  cmp "$out" "$single" || die "N=$n: merged output differs from the single run"
  node -e 'const [a, b] = process.argv.slice(1).map((f) => JSON.stringify(JSON.parse(require("fs").readFileSync(f, "utf8")).counters));
    if (a !== b) { console.error("counters differ: " + a + " vs " + b); process.exit(1); }' "$single_stats" "${out%.*}.stats.json" ||
    die "N=$n: the merged counters differ from the single run's"
}

cmd_run() {
  [ $# -ge 1 ] || die "usage: bench/slurm.sh run FILE.parquet [N ...]"
  local input ns cpus run times bin
  input="$(realpath "$1")"
  shift
  [ -f "$input" ] || die "$input: no such file"
  ns=("$@")
  [ ${#ns[@]} -gt 0 ] || ns=(1 2 4)
  cpus="$(sinfo -h -o %c | head -n 1)"
  run="$STATE/runs/$(date +%Y%m%d-%H%M%S)"
  times="$run/times"
  mkdir -p "$times" "$run/logs"
  bin="$ROOT/bin/divergence-mine"
  [ -f "$ROOT/dist/cli.js" ] || die "no build: run npm run build first"
  write_timed "$run" "$bin"
  local loadlog="$run/loadavg.log"
  log "run in $run; input $input ($(stat -c %s "$input") bytes); node: $cpus CPUs"
  echo "before: $(uptime)" >"$loadlog"
  # Load average every 5 s while the jobs run (stopped below, by its pid).
  (while :; do echo "during: $(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$loadlog"; sleep 5; done) &
  local sampler=$!
  trap 'kill $sampler 2>/dev/null || true' RETURN

  log "single run (no --partition, --workers $cpus)"
  (cd "$run" && /usr/bin/time -v -o "$times/single.time" node "$bin" mine --parquet "$input" --workers "$cpus" \
    --out single.jsonl --stats single.stats.json --quiet)
  local single_wall single_rss
  read -r single_wall single_rss _ < <(time_fields "$times/single.time")
  printf '| single run, no Slurm | %s | %s s | %s MiB | - | - | - | - | %s s |\n' "$cpus" "$single_wall" "$((single_rss / 1024))" "$single_wall" >"$run/table.md"

  local n
  for n in "${ns[@]}"; do
    local cpt=$((cpus / n)) parts="$run/n$n/parts" out="$run/n$n/pairs.jsonl" t0 jid mjid to_first span to_merge total
    [ "$cpt" -ge 1 ] || cpt=1
    mkdir -p "$parts"
    t0="$(date +%s.%N)"
    jid="$(cd "$run/n$n" && sbatch --parsable --array="0-$((n - 1))" --cpus-per-task="$cpt" --output="$run/logs/mine-%A_%a.log" \
      --export="ALL,INPUT=$input,PARTS=$parts,DIVERGENCE_MINE=$run/divergence-mine-timed" "$ROOT/docs/slurm/mine.sbatch")"
    jid="${jid%%;*}"
    mjid="$(cd "$run/n$n" && sbatch --parsable --dependency="afterok:$jid" --output="$run/logs/merge-%j.log" \
      --export="ALL,PARTS=$parts,OUT=$out,DIVERGENCE_MINE=$run/divergence-mine-timed" "$ROOT/docs/slurm/merge.sbatch")"
    mjid="${mjid%%;*}"
    log "N=$n: array job $jid (tasks 0-$((n - 1)), $cpt CPUs each), merge job $mjid after it"
    wait_jobs "$jid" "$mjid"
    check_merged "$jid" "$mjid" "$n" "$out" "$run/single.jsonl" "$run/single.stats.json"
    local i walls='' rsss='' w r mw mr first last
    for i in $(seq 0 $((n - 1))); do
      read -r w r _ < <(time_fields "$times/${jid}_$i.time")
      walls+="${walls:+, }$w"
      rsss+="${rsss:+, }$((r / 1024))"
    done
    read -r mw mr _ < <(time_fields "$times/$mjid.time")
    # From the stamps: submit -> first task start, first start -> last end, last end -> merge start, submit -> merge end.
    first="$(cat "$times/${jid}"_*.start | sort -n | head -n 1)"
    last="$(cat "$times/${jid}"_*.end | sort -n | tail -n 1)"
    read -r to_first span to_merge total < <(awk -v t0="$t0" -v f="$first" -v l="$last" -v ms="$(cat "$times/$mjid.start")" -v me="$(cat "$times/$mjid.end")" \
      'BEGIN { printf "%.2f %.2f %.2f %.2f\n", f - t0, l - f, ms - l, me - t0 }')
    printf '| N=%s | %s | %s s | %s MiB | %s s | %s s | %s s | %s s (%s MiB) | %s s |\n' "$n" "$cpt" "$walls" "$rsss" "$to_first" "$span" "$to_merge" "$mw" "$((mr / 1024))" "$total" >>"$run/table.md"
    log "N=$n: merged output is byte-identical to the single run ($(stat -c %s "$out") bytes); total wall $total s"
  done
  echo "after: $(uptime)" >>"$loadlog"
  printf '\n| run | CPUs per task | wall of each task | peak RSS of each task | submit to first start | first start to last end | last end to merge start | merge wall (peak RSS) | total wall (submit to merge end) |\n|---|---:|---|---|---:|---:|---:|---|---:|\n'
  cat "$run/table.md"
  printf '\nload average:\n'
  cat "$loadlog"
  printf 'merged outputs: cmp identical to %s (%s bytes, sha256 %s)\n' "$run/single.jsonl" "$(stat -c %s "$run/single.jsonl")" "$(sha256sum "$run/single.jsonl" | cut -c1-16)"
}

# The tasks of an array reading a Hub dataset by name, through one shared cache: the stand-in Hub
# (bench/slurm-hub.mjs, 127.0.0.1) serves FILE as nebius/SWE-rebench-openhands-trajectories, the N
# tasks and the merge run as in cmd_run with HF_ENDPOINT at it and HF_HUB_CACHE shared, and the Hub's
# request log says how many times the file's body was sent.
cmd_hub() {
  [ $# -ge 1 ] || die "usage: bench/slurm.sh hub FILE.parquet [N]"
  local input n cpus run bin hubpid url k
  input="$(realpath "$1")"
  n="${2:-4}"
  [ -f "$input" ] || die "$input: no such file"
  cpus="$(sinfo -h -o %c | head -n 1)"
  run="$STATE/runs/hub-$(date +%Y%m%d-%H%M%S)"
  mkdir -p "$run/times" "$run/logs" "$run/parts"
  bin="$ROOT/bin/divergence-mine"
  write_timed "$run" "$bin"
  node "$ROOT/bench/slurm-hub.mjs" "$input" "$run/hub.url" "$run/hub-requests.jsonl" 2>"$run/logs/hub.log" &
  hubpid=$!
  trap 'kill $hubpid 2>/dev/null || true' RETURN
  for k in $(seq 1 240); do [ -s "$run/hub.url" ] && break; sleep 0.25; done
  url="$(cat "$run/hub.url")"
  log "stand-in Hub at $url serving $input; single run on the local file"
  (cd "$run" && node "$bin" mine --parquet "$input" --workers "$cpus" --out single.jsonl --stats single.stats.json --quiet)
  local cpt=$((cpus / n)) jid mjid
  [ "$cpt" -ge 1 ] || cpt=1
  # The Hub's variables reach the tasks through sbatch --export=ALL; no token.
  jid="$(cd "$run" && env -u HF_TOKEN HF_ENDPOINT="$url" HF_HUB_CACHE="$run/hf-cache" HF_HOME="$run/hf-home" \
    sbatch --parsable --array="0-$((n - 1))" --cpus-per-task="$cpt" --output="$run/logs/mine-%A_%a.log" \
    --export="ALL,INPUT=nebius/SWE-rebench-openhands-trajectories,PARTS=$run/parts,DIVERGENCE_MINE=$run/divergence-mine-timed" "$ROOT/docs/slurm/mine.sbatch")"
  jid="${jid%%;*}"
  mjid="$(cd "$run" && sbatch --parsable --dependency="afterok:$jid" --output="$run/logs/merge-%j.log" \
    --export="ALL,PARTS=$run/parts,OUT=$run/pairs.jsonl,DIVERGENCE_MINE=$run/divergence-mine-timed" "$ROOT/docs/slurm/merge.sbatch")"
  mjid="${mjid%%;*}"
  log "N=$n: array job $jid reading the dataset by name, merge job $mjid after it"
  wait_jobs "$jid" "$mjid"
  check_merged "$jid" "$mjid" "$n" "$run/pairs.jsonl" "$run/single.jsonl" "$run/single.stats.json"
  kill "$hubpid"
  wait "$hubpid" || true
  local bodies
  bodies="$(grep -c '"path":"/cdn/' "$run/hub-requests.jsonl" || true)"
  printf 'N=%s tasks read %s by name through one cache (%s): the body was sent %s time(s); merged output cmp-identical to the single run on the local file (%s bytes)\n' \
    "$n" "nebius/SWE-rebench-openhands-trajectories" "$run/hf-cache" "$bodies" "$(stat -c %s "$run/pairs.jsonl")"
  printf 'requests to the stand-in Hub (method path status):\n'
  node -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")) { const q = JSON.parse(l); console.log(`  ${q.method} ${q.path} ${q.status}${q.range ? ` (${q.range})` : ""}`); }' "$run/hub-requests.jsonl"
  printf 'first lines of each task log:\n'
  for k in "$run"/logs/mine-*.log; do printf '  %s: %s\n' "$(basename "$k")" "$(grep -m 3 -E 'divergence-mine: (partition|download|.*cache)' "$k" | tr '\n' ' ')"; done
  [ "$bodies" = 1 ] || die "the body was sent $bodies times, not once"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  env) shift; cmd_env "$@" ;;
  run) shift; cmd_run "$@" ;;
  hub) shift; cmd_hub "$@" ;;
  all) shift; cmd_up; trap cmd_down EXIT; cmd_run "$@" ;;
  *) die "usage: bench/slurm.sh up | run FILE.parquet [N ...] | hub FILE.parquet [N] | env SPEC ... | down | all FILE.parquet [N ...]" ;;
esac
