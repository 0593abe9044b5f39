#!/usr/bin/env bash
# Issue 8 figures, rerunnable: live rule reload under traffic and worker restart time.
#
#   tools/control-bench.sh BIN RULES PCAP [RUNS] [COPIES]
#
# Starts `BIN run --workers 2 -S RULES` kept running, queues PCAP COPIES times (20), and while
# it is read reloads RULES RUNS times (--allow-errors: ET Open has rules Meerkat refuses) (ReloadRules: total and swap-phase ms), then checks
# that every packet capture read was inspected (none dropped by the reloads). Then
# restarts detect worker 0 RUNS times (`ctl restart-worker`: wall ms until the new worker
# is attached to its ring with its rules loaded). Prints each figure and the medians.
set -euo pipefail
BIN=$1 RULES=$2 PCAP=$3 RUNS=${4:-3} COPIES=${5:-20}
INPUTS=(); for _ in $(seq "$COPIES"); do INPUTS+=(-r "$PCAP"); done
D=$(mktemp -d /tmp/meerkat-ctl-bench.XXXXXX)
SOCK=$D/ctl.sock
ctl() { "$BIN" ctl --socket "$SOCK" --timeout 900 "$@"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# As the reference alerts of ../shared/corpus/traffic: HOME_NET and EXTERNAL_NET any, -k none.
VARS=(-k none --set vars.address-groups.HOME_NET=any --set vars.address-groups.EXTERNAL_NET=any)
# Baseline: the same inputs, undisturbed (no reload).
"$BIN" -q run --workers 2 -S "$RULES" "${VARS[@]}" -l "$D/base" "${INPUTS[@]}" >/dev/null 2>&1
echo "baseline (no reload): $(grep -c '"event_type":"alert"' "$D/base/eve.json") alerts"
"$BIN" -q run --workers 2 -S "$RULES" "${VARS[@]}" -l "$D/logs" --set runtime-dir="$D/rt" \
  --set control.socket="$SOCK" --set supervisor.keep-running=yes >"$D/run.out" 2>"$D/run.err" &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$D"' EXIT
t0=$(date +%s%N)
until ctl health >/dev/null 2>&1; do sleep 0.05; done
echo "stack ready in $(( ($(date +%s%N) - t0) / 1000000 )) ms (rules: $(ctl --json status | jq .ruleset.loaded) loaded)"
for _ in $(seq "$COPIES"); do ctl add-pcap "$PCAP" >/dev/null; done
# Keep traffic flowing through every reload: queue another copy whenever the queue runs low.
( while [ ! -e "$D/stopfeed" ]; do
    if [ "$(ctl --json status | jq '.pending_pcaps | length')" -lt 2 ]; then
      ctl add-pcap "$PCAP" >/dev/null && echo x >>"$D/fed"
    fi
    sleep 0.2
  done ) &
FEEDER=$!
: >"$D/reload"
for i in $(seq "$RUNS"); do
  before=$(ctl --json status | jq -r '"\(.state), \(.pending_pcaps | length) queued"')
  r=$(ctl --json reload-rules --allow-errors)
  after=$(ctl --json status | jq -r '"\(.state), \(.pending_pcaps | length) queued"')
  echo "reload $i: $(echo "$r" | jq -c '{generation, loaded, failed, duration_ms, swap_ms}') stack before: $before; after: $after"
  echo "$r" | jq '.duration_ms, .swap_ms' | paste - - >>"$D/reload"
done
touch "$D/stopfeed"; wait $FEEDER
COPIES=$((COPIES + $(cat "$D/fed" 2>/dev/null | wc -l)))
echo "reload median total ms: $(cut -f1 "$D/reload" | median), median swap ms: $(cut -f2 "$D/reload" | median)"
until [ "$(ctl --json status | jq -r .state)" = idle ]; do sleep 0.2; done
ctl flush >/dev/null
stats=$(ctl --json stats)
cap=$(echo "$stats" | jq '.capture.counters["capture.packets"]')
insp=$(echo "$stats" | jq '[.["detect-0"].counters["detect.0.packets"], .["detect-1"].counters["detect.1.packets"]] | add')
echo "inputs: $COPIES x $cap packets = $((COPIES * cap)); inspected by the workers: $insp (dropped: $((COPIES * cap - insp)))"
echo "with reloads: $(grep -c '"event_type":"alert"' "$D/logs/eve.json") alerts over $COPIES copies (baseline: the first COPIES, undisturbed)"
: >"$D/restart"
for i in $(seq "$RUNS"); do
  t=$(date +%s%N)
  ctl restart-worker 0 >/dev/null
  ms=$(( ($(date +%s%N) - t) / 1000000 ))
  echo "restart-worker $i: $ms ms"
  echo "$ms" >>"$D/restart"
done
echo "restart median ms: $(median <"$D/restart")"
ctl shutdown >/dev/null
wait $PID && echo "stack exited 0"
