#!/usr/bin/env bash
# The deploy check: runs Meerkat's container deployments for real on this machine.
#
#   1. base image      a local Debian base (debootstrap + podman import), once per machine
#   2. image           deploy/Dockerfile built with podman, the meerkat binary copied in
#   3. compose         the docker-compose stack (docker-compose over podman's API socket),
#                      offline profile on sample/sample.pcap: eve.json in the log volume must
#                      hold the alerts `meerkat run` gives on the same pcap and config; the
#                      healthcheck of each running role must pass; then `down -v` cleanly;
#                      the live profile on lo: capture as uid 10001 with file capabilities,
#                      alerts from datagrams sent to 127.0.0.1, every role healthy; the bus
#                      profile (eve-writer -> Redis Streams -> consumer) with redis stopped
#                      while the events are made: spooled, then all delivered, none pending
#   4. kubernetes      every manifest, and each kustomization rendered (kubectl kustomize),
#                      validated with kubernetes-validate --strict -k 1.32.0 (a missing
#                      schema is a failure)
#   5. configs         the ConfigMaps' and compose's config pass `meerkat config check`,
#                      their rules `meerkat rules check`, detect.workers matches the
#                      detect containers/services; meerkat-interface picks the right one
#
#   deploy/check.sh [--bin PATH] [--keep]
#
# --bin: the meerkat binary to ship (default: target/release/meerkat, built if missing).
# --keep: leave the compose stack up for inspection. Tools: .ci/setup.d/40-deploy.sh.
# Prints each step's wall time; exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

bin=
keep=false
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$2; shift 2 ;;
        --keep) keep=true; shift ;;
        *) echo "usage: deploy/check.sh [--bin PATH] [--keep]" >&2; exit 2 ;;
    esac
done

base_image=localhost/debian-base:bookworm
# Per run: several checks may run at once on one machine (CI beside developers).
# localhost/meerkat:check keeps the last build, so that its layers (the Debian packages)
# are reused by the next build.
image=localhost/meerkat:check-$$
cache_tag=localhost/meerkat:check
project=meerkat-check-$$
sock=/run/podman/podman.sock
work=$(mktemp -d /tmp/meerkat-deploy-check.XXXXXX)

t0=$(date +%s.%N)
timings=()
step_start=
step() {
    step_end
    step_name=$1
    step_start=$(date +%s.%N)
    printf '\n== deploy check: %s\n' "$1"
}
step_end() {
    if [ -n "$step_start" ]; then
        local s
        s=$(awk -v a="$step_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        timings+=("$(printf '%-44s %7s s' "$step_name" "$s")")
        printf -- '-- %s: %s s\n' "$step_name" "$s"
        step_start=
    fi
}
fail() {
    echo "deploy check FAILED: $*" >&2
    exit 1
}

compose() {
    DOCKER_HOST=unix://$sock MEERKAT_IMAGE=$image \
        MEERKAT_PCAP_DIR=$repo/sample MEERKAT_PCAP=sample.pcap \
        docker-compose -p "$project" -f deploy/docker-compose.yml --profile offline --profile live "$@"
}

cleanup() {
    local rc=$?
    if [ "$keep" = false ] && [ -S "$sock" ] && command -v docker-compose >/dev/null; then
        compose down -v --remove-orphans >/dev/null 2>&1 || true
        # The bus profile's services (redis, consumer) and volumes too.
        local all=(-p "$project" -f deploy/docker-compose.yml -f deploy/docker-compose.bus.yml
            --profile offline --profile live --profile bus)
        DOCKER_HOST=unix://$sock MEERKAT_IMAGE=$image docker-compose "${all[@]}" \
            rm -f -s redis consumer >/dev/null 2>&1 || true
        DOCKER_HOST=unix://$sock MEERKAT_IMAGE=$image docker-compose "${all[@]}" \
            down -v --remove-orphans >/dev/null 2>&1 || true
        podman untag "$image" "$image" >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
    exit $rc
}
trap cleanup EXIT

for tool in podman docker-compose kubernetes-validate python3 curl; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (bash .ci/setup.d/40-deploy.sh installs the tools)"
done

# podman's Docker-compatible API, for docker-compose.
if ! curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; then
    mkdir -p "$(dirname "$sock")"
    nohup podman system service --time=0 "unix://$sock" >/var/log/podman-service.log 2>&1 &
    deadline=$((SECONDS + 10))
    until curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || fail "podman API socket $sock did not come up"
        sleep 0.1
    done
fi

# ---------------------------------------------------------------------------------------
step "binary"
if [ -z "$bin" ]; then
    bin=${CARGO_TARGET_DIR:-target}/release/meerkat
    if [ ! -x "$bin" ]; then
        cargo build --release --locked --bin meerkat
    fi
fi
[ -x "$bin" ] || fail "no meerkat binary at $bin"
"$bin" --version

# ---------------------------------------------------------------------------------------
step "base image (debootstrap + podman import)"
deploy/base-image.sh "$base_image"

# ---------------------------------------------------------------------------------------
step "image (podman build deploy/Dockerfile)"
# A small build context: the binary and the files the Dockerfile copies.
ctx=$work/context
mkdir -p "$ctx/deploy/config" "$ctx/sample"
# Without debug info: the image needs none (and a test build carries a lot).
objcopy --strip-debug "$bin" "$ctx/meerkat"
cp deploy/config/meerkat.yaml "$ctx/deploy/config/"
cp deploy/meerkat-interface "$ctx/deploy/"
cp sample/sample.rules "$ctx/sample/"
previous=$(podman image inspect --format '{{.Id}}' "$cache_tag" 2>/dev/null || true)
podman build -q -f deploy/Dockerfile --build-arg BASE="$base_image" \
    --build-arg MEERKAT_BIN=meerkat -t "$image" -t "$cache_tag" "$ctx" >/dev/null
# The build before this one is of no more use (unless a check running beside uses it).
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect --format '{{.Id}}' "$image")" ]; then
    podman rmi "$previous" >/dev/null 2>&1 || true
fi
podman run --rm "$image" --version
# Non-root by default; the capture copy carries exactly the three file capabilities.
user=$(podman image inspect "$image" --format '{{.Config.User}}')
[ "$user" = meerkat ] || fail "image user is '$user', not meerkat"
caps=$(podman run --rm --entrypoint /usr/sbin/getcap "$image" /usr/libexec/meerkat/meerkat)
echo "$caps"
case "$caps" in
    *cap_net_admin,cap_net_raw,cap_sys_nice=ep*) ;;
    *) fail "unexpected file capabilities on the capture binary: $caps" ;;
esac

# ---------------------------------------------------------------------------------------
step "compose: roles started in reverse order wait for their peers"
compose down -v --remove-orphans >/dev/null 2>&1 || true
state() { podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "${project}_$1_1" 2>/dev/null || echo "missing -"; }
dump() { compose logs --no-color >&2 || true; }
# Waits (up to 120 s) until service $1 has logged a line containing $2.
wait_log() {
    local deadline=$((SECONDS + 120))
    until podman logs "${project}_$1_1" 2>&1 | grep -qF "$2"; do
        read -r st code <<<"$(state "$1")"
        [ "$st" != exited ] || { dump; fail "$1 exited ($code) before logging: $2"; }
        [ $SECONDS -lt $deadline ] || { dump; fail "$1 did not log within 120 s: $2"; }
        sleep 0.2
    done
    echo "$1: ...$2"
}
# Capture alone first: nobody reads the rings, so it waits.
compose up -d --no-deps capture-offline
wait_log capture-offline "waiting for 2 detect worker(s)"
# The workers next: no eve-writer yet, so they wait too.
compose up -d --no-deps detect-0 detect-1
wait_log detect-0 "waiting for the eve-writer"
wait_log detect-1 "waiting for the eve-writer"
read -r st _ <<<"$(state capture-offline)"
[ "$st" = running ] || { dump; fail "capture-offline is $st while the workers wait"; }
# The eve-writer last: capture reads the pcap and exits 0, the workers drain their rings
# and exit 0, the eve-writer keeps running.
compose up -d --no-deps eve-writer
deadline=$((SECONDS + 180))
while :; do
    finished=0
    for c in capture-offline detect-0 detect-1; do
        read -r st code <<<"$(state "$c")"
        if [ "$st" = exited ]; then
            [ "$code" = 0 ] || { dump; fail "$c exited with $code"; }
            finished=$((finished + 1))
        fi
    done
    read -r st _ <<<"$(state eve-writer)"
    [ "$st" = running ] || { dump; fail "eve-writer is $st"; }
    [ $finished -eq 3 ] && break
    [ $SECONDS -lt $deadline ] || { dump; fail "the offline run did not finish within 180 s"; }
    sleep 0.2
done
echo "capture-offline, detect-0, detect-1 exited 0; eve-writer running"

step "compose: eve.json in the log volume"
logs=$(podman volume inspect "${project}_logs" --format '{{.Mountpoint}}')
eve=$logs/eve.json
[ -s "$eve" ] || fail "no eve.json in the log volume ($eve)"
# The reference: `meerkat run` on the host with the same config, rules and pcap.
mkdir -p "$work/ref"
"$bin" -q run -c deploy/config/meerkat.yaml -S sample/sample.rules -r sample/sample.pcap \
    -l "$work/ref" --set "runtime-dir=$work/ref-run"
python3 - "$eve" "$work/ref/eve.json" <<'EOF'
import collections, json, sys

def alerts(path):
    c = collections.Counter()
    for line in open(path):
        e = json.loads(line)
        if e.get("event_type") == "alert":
            c[e["alert"]["signature_id"]] += 1
    return c

got, want = alerts(sys.argv[1]), alerts(sys.argv[2])
print("alerts by sid in the log volume:", dict(sorted(got.items())))
if got != want:
    sys.exit(f"the compose stack's alerts differ from `meerkat run`'s: {dict(sorted(want.items()))}")
expected = set(range(1000001, 1000009))
if set(got) != expected:
    sys.exit(f"expected alerts of sids {sorted(expected)}, got {sorted(got)}")
EOF

step "compose down"
# Stopped first, to see that the eve-writer drains and exits 0 on SIGTERM.
compose stop
read -r st code <<<"$(state eve-writer)"
[ "$st $code" = "exited 0" ] || { dump; fail "the eve-writer did not stop cleanly ($st $code)"; }
compose down -v --remove-orphans
left=$(podman ps -a -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "containers left after down: $left"
if podman volume exists "${project}_logs" || podman volume exists "${project}_run"; then
    fail "volumes left after down -v"
fi

step "compose: healthchecks (podman healthcheck run)"
# podman 4.3 runs no healthchecks by itself (that needs systemd): run each service's
# check until it passes. Without capture the workers stay up, attached to their rings.
compose up -d eve-writer detect-0 detect-1
for c in eve-writer detect-0 detect-1; do
    deadline=$((SECONDS + 120))
    until podman healthcheck run "${project}_${c}_1" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || { dump; fail "$c's healthcheck did not pass within 120 s"; }
        sleep 0.2
    done
    echo "$c: healthy"
done
compose stop
read -r st code <<<"$(state eve-writer)"
[ "$st $code" = "exited 0" ] || { dump; fail "the eve-writer did not stop cleanly ($st $code)"; }
compose down -v --remove-orphans
left=$(podman ps -a -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "containers left after down: $left"

step "compose: live profile on lo (non-root capture, file capabilities)"
# The live capture service on the host's loopback (lo's 64 KiB MTU needs larger AF_PACKET
# blocks than the default), three syslog datagrams to 127.0.0.1:514 that sid 1000008
# matches, then every role's healthcheck, capture's included.
{ cat deploy/config/meerkat.yaml; printf 'af-packet:\n  - interface: default\n    block-size: 262144\n'; } >"$work/live.yaml"
live() {
    DOCKER_HOST=unix://$sock MEERKAT_IMAGE=$image MEERKAT_CONFIG=$work/live.yaml \
        MEERKAT_INTERFACE=lo docker-compose -p "$project" -f deploy/docker-compose.yml --profile live "$@"
}
live up -d
wait_log capture "live capture started"
status=$(podman exec "${project}_capture_1" cat /proc/1/status)
grep -qE '^Uid:\s+10001\s' <<<"$status" || fail "capture does not run as uid 10001: $(grep ^Uid <<<"$status")"
grep -E '^Cap(Eff|Bnd)' <<<"$status"
python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(3):
    s.sendto(b"<34>Nov 30 12:00:00 host su: 'su root' failed for bob on /dev/pts/0", ("127.0.0.1", 514))
PY
logs=$(podman volume inspect "${project}_logs" --format '{{.Mountpoint}}')
deadline=$((SECONDS + 60))
# Each datagram crosses lo twice (sent and received): at least 3 alerts.
until [ "$(grep -c '"signature_id":1000008' "$logs/eve.json" 2>/dev/null)" -ge 3 ]; do
    [ $SECONDS -lt $deadline ] || { live logs --no-color >&2 || true; fail "no alerts from the live capture on lo within 60 s"; }
    sleep 0.2
done
echo "live: $(grep -c '"signature_id":1000008' "$logs/eve.json") alerts of sid 1000008"
for c in eve-writer detect-0 detect-1 capture; do
    podman healthcheck run "${project}_${c}_1" >/dev/null || fail "$c's healthcheck failed"
    echo "$c: healthy"
done
live stop
for c in eve-writer capture; do
    read -r st code <<<"$(state "$c")"
    [ "$st $code" = "exited 0" ] || fail "$c did not stop cleanly ($st $code)"
done
live down -v --remove-orphans
left=$(podman ps -a -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "containers left after down: $left"

# ---------------------------------------------------------------------------------------
step "compose: bus profile (eve-writer -> Redis Streams -> consumer), redis down meanwhile"
# The bus profile over the main file, for real: redis is stopped while the offline run
# produces its events (the eve-writer spools them), then started; every alert and flow
# the file output holds must reach the consumer's file through the stream, and the
# consumer group must have nothing pending.
bus_image=localhost/meerkat-bus:check
podman build -q -f deploy/Dockerfile.bus --build-arg BASE="$base_image" -t "$bus_image" deploy >/dev/null
bus() {
    DOCKER_HOST=unix://$sock MEERKAT_IMAGE=$image MEERKAT_BUS_IMAGE=$bus_image \
        MEERKAT_CONFIG=./config/meerkat-bus.yaml \
        MEERKAT_PCAP_DIR=$repo/sample MEERKAT_PCAP=sample.pcap \
        docker-compose -p "$project" -f deploy/docker-compose.yml -f deploy/docker-compose.bus.yml \
        --profile offline --profile bus "$@"
}
redis_cli() { podman exec "${project}_redis_1" redis-cli -h 127.0.0.1 "$@"; }
# Counts of the alert (by sid) and flow records of an EVE file, on one line.
eve_counts() {
    python3 -c '
import collections, json, sys
c = collections.Counter()
try:
    for line in open(sys.argv[1]):
        e = json.loads(line)
        if e.get("event_type") == "alert":
            c["alert:" + str(e["alert"]["signature_id"])] += 1
        elif e.get("event_type") == "flow":
            c["flow"] += 1
except FileNotFoundError:
    pass
print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))
' "$1"
}
bus up -d --no-build --no-deps eve-writer
bus up -d --no-build --no-deps redis consumer
deadline=$((SECONDS + 60))
until [ "$(redis_cli ping 2>/dev/null)" = PONG ]; do
    [ $SECONDS -lt $deadline ] || { bus logs --no-color >&2 || true; fail "redis did not answer within 60 s"; }
    sleep 0.2
done
bus stop redis
bus up -d --no-build --no-deps capture-offline detect-0 detect-1
deadline=$((SECONDS + 180))
for c in capture-offline detect-0 detect-1; do
    until read -r st code <<<"$(state "$c")" && [ "$st" = exited ]; do
        [ $SECONDS -lt $deadline ] || { bus logs --no-color >&2 || true; fail "$c did not finish within 180 s"; }
        sleep 0.2
    done
    [ "$code" = 0 ] || { bus logs --no-color >&2 || true; fail "$c exited with $code"; }
done
logs=$(podman volume inspect "${project}_logs" --format '{{.Mountpoint}}')
consumer_dir=$(podman volume inspect "${project}_consumer" --format '{{.Mountpoint}}')
# The workers are gone: the file output holds all their records once their flows are in.
deadline=$((SECONDS + 30))
until want=$(eve_counts "$logs/eve.json") && [[ "$want" == *alert:1000001=*flow=* ]]; do
    [ $SECONDS -lt $deadline ] || { bus logs --no-color >&2 || true; fail "the file output lacks alerts or flows: $want"; }
    sleep 0.2
done
got=$(eve_counts "$consumer_dir/eve.json")
[ -z "$got" ] || fail "records reached the consumer while redis was down: $got"
spooled=$(find "$logs" -path '*spool*' -type f ! -name cursor -size +0 | head -1)
[ -n "$spooled" ] || { ls -lR "$logs" >&2; fail "redis is down but nothing is spooled in the log volume"; }
echo "redis down: the file output has $want; spooled: ${spooled#"$logs"/}"
bus start redis
deadline=$((SECONDS + 120))
until [ "$(eve_counts "$consumer_dir/eve.json")" = "$want" ]; do
    [ $SECONDS -lt $deadline ] || { bus logs --no-color >&2 || true; fail "the consumer has $(eve_counts "$consumer_dir/eve.json"), not $want, 120 s after redis came back"; }
    sleep 0.5
done
pending=$(redis_cli XPENDING eve meerkat-consumers | head -1)
[ "$pending" = 0 ] || fail "the consumer group has $pending entries pending"
echo "redis back: the consumer has every record ($want), none pending"
bus stop
# redis and the consumer live in the eve-writer's network namespace: they go first.
bus rm -f redis consumer
bus down -v --remove-orphans
left=$(podman ps -a -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "containers left after down: $left"

# ---------------------------------------------------------------------------------------
step "kubernetes manifests (kubernetes-validate --strict -k 1.32.0)"
validate() {
    local out
    out=$(kubernetes-validate --strict -k 1.32.0 "$@" 2>&1) || { echo "$out" >&2; return 1; }
    echo "$out"
    # A resource without a schema is only a WARN: not good enough.
    if grep -qE '^(WARN|ERROR)' <<<"$out"; then
        return 1
    fi
}
# Every plain manifest (patches are checked in the rendered overlays).
manifests=()
while IFS= read -r f; do
    manifests+=("$f")
done < <(find deploy/k8s -name '*.yaml' ! -name kustomization.yaml ! -name meerkat.yaml \
    -path '*/base/*' | sort)
validate "${manifests[@]}" || fail "a manifest does not validate"
rendered=()
if command -v kubectl >/dev/null; then
    for k in $(find deploy/k8s -name kustomization.yaml -printf '%h\n' | sort); do
        out=$work/$(echo "$k" | tr / _).yaml
        kubectl kustomize "$k" >"$out" || fail "kubectl kustomize $k failed"
        echo "rendered $k"
        validate "$out" || fail "the rendering of $k does not validate"
        rendered+=("$out")
    done
else
    echo "kubectl is not installed: kustomizations not rendered, overlays not validated"
fi

# ---------------------------------------------------------------------------------------
step "configs (meerkat config check, rules check, workers)"
"$bin" config check deploy/config/meerkat.yaml
"$bin" config check deploy/config/meerkat-bus.yaml
# The bus profile (Meerkat -> Redis Streams -> a consumer) over the main file.
MEERKAT_CONFIG=./config/meerkat-bus.yaml DOCKER_HOST=unix://$sock docker-compose \
    -f deploy/docker-compose.yml -f deploy/docker-compose.bus.yml --profile offline --profile bus config -q \
    || fail "docker-compose.bus.yml does not validate"
compose_workers=$(DOCKER_HOST=unix://$sock docker-compose -f deploy/docker-compose.yml config --services | grep -c '^detect-')
configs=("deploy/config/meerkat.yaml:$compose_workers:sample/sample.rules")
# The ConfigMaps of each rendering (or the base's files when nothing was rendered).
if [ ${#rendered[@]} -gt 0 ]; then
    for r in "${rendered[@]}"; do
        d=$work/$(basename "$r" .yaml)
        python3 - "$r" "$d" <<'EOF'
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
os.makedirs(sys.argv[2], exist_ok=True)
cms = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("meerkat-config")]
if len(cms) != 1:
    sys.exit(f"{sys.argv[1]}: expected one meerkat-config ConfigMap, found {len(cms)}")
for key, value in cms[0]["data"].items():
    open(os.path.join(sys.argv[2], key), "w").write(value)
ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
containers = ds["spec"]["template"]["spec"]["containers"]
open(os.path.join(sys.argv[2], "workers"), "w").write(
    str(sum(c["name"].startswith("detect-") for c in containers)))
EOF
        configs+=("$d/meerkat.yaml:$(cat "$d/workers"):$d/local.rules")
    done
else
    configs+=("deploy/k8s/base/meerkat.yaml:2:deploy/k8s/base/rules/local.rules")
fi
for entry in "${configs[@]}"; do
    IFS=: read -r cfg workers rules <<<"$entry"
    "$bin" config check "$cfg" || fail "$cfg does not pass meerkat config check"
    "$bin" rules check -c "$cfg" "$rules" || fail "$rules do not all load with $cfg"
    n=$("$bin" config check --print "$cfg" | python3 -c 'import sys, yaml; print(yaml.safe_load(sys.stdin.read().rsplit("\n", 2)[0])["detect"]["workers"])')
    [ "$n" = "$workers" ] || fail "$cfg: detect.workers is $n but $workers detect containers/services run"
    echo "$cfg: detect.workers $n = $workers detect containers"
done

# meerkat-interface: explicit, per node, wildcard, default route.
printf '# map\nnode-a  ens5\n*  bond0\n' >"$work/map"
printf 'Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\nlo9\t0000000A\t0\t1\t0\t0\t0\t000000FF\neth9\t00000000\t010200C0\t3\t0\t0\t200\t00000000\neth7\t00000000\t010200C0\t3\t0\t0\t100\t00000000\n' >"$work/route"
pick() { env -i PATH="$PATH" MEERKAT_ROUTE_FILE="$work/route" "$@" deploy/meerkat-interface; }
[ "$(pick MEERKAT_INTERFACE=eth3 MEERKAT_INTERFACE_MAP="$work/map")" = eth3 ] || fail "meerkat-interface: MEERKAT_INTERFACE"
[ "$(pick NODE_NAME=node-a MEERKAT_INTERFACE_MAP="$work/map")" = ens5 ] || fail "meerkat-interface: node map"
[ "$(pick NODE_NAME=node-b MEERKAT_INTERFACE_MAP="$work/map")" = bond0 ] || fail "meerkat-interface: * entry"
[ "$(pick NODE_NAME=node-b MEERKAT_INTERFACE_MAP=deploy/k8s/base/interfaces)" = eth7 ] || fail "meerkat-interface: default route"
if pick NODE_NAME=x MEERKAT_INTERFACE_MAP=/nonexistent MEERKAT_ROUTE_FILE=/nonexistent 2>/dev/null; then
    fail "meerkat-interface: no interface must fail"
fi
echo "meerkat-interface: ok"
step_end

total=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
printf '\n== deploy check passed in %s s\n' "$total"
printf '   %s\n' "${timings[@]}"
