#!/usr/bin/env bash
# Records bench/smb-seed/seed.pcap, the real SMB2/DCERPC/Kerberos traffic that
# bench/gen-smb-mix.py replicates into a benchmark pcap. Needs root (a network namespace),
# Debian's samba, smbclient, krb5-kdc and krb5-user, and tcpdump:
#   apt-get install -y --no-install-recommends samba smbclient krb5-kdc krb5-user tcpdump
#
#   bench/smb-seed/capture.sh [OUT.pcap]
#
# Everything runs in a private namespace `pbseed` whose loopback has a 1500-byte MTU and
# no offloads, so segments look like an Ethernet LAN's: a Samba standalone server (smbd,
# SMB2/3 with NTLMSSP, no signing or encryption so the payload is inspectable) and an MIT
# KDC, then smbclient (tree connects, directory listings, reads and writes of 1 KB to
# 40 KB, a delete, a failed logon, a missing share), rpcclient (srvsvc, wkssvc, lsarpc,
# samr over SMB named pipes) and kinit/kvno (AS with pre-authentication, TGS, a wrong
# password; UDP and TCP). The file contents are generated text, so a rerun differs only
# in times, GUIDs, nonces and ports.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/seed.pcap}")
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 2; }
for c in smbd smbclient rpcclient krb5kdc kdb5_util kadmin.local kinit kvno tcpdump ip; do
    command -v $c >/dev/null || { echo "$c is not installed" >&2; exit 2; }
done
ns=pbseed
dir=$(mktemp -d)
pids=()
made_user=no
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    # smbd starts samba-dcerpcd for the named pipes; it reads our config file.
    for p in $(pgrep -f -- "--configfile=$dir/smb.conf" || true); do kill "$p" 2>/dev/null || true; done
    ip netns del $ns 2>/dev/null || true
    [ "$made_user" = no ] || userdel pbseed 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
ip netns add $ns
run() { ip netns exec $ns "$@"; }
run ip link set lo mtu 1500 up
run ethtool -K lo tso off gso off gro off tx off >/dev/null 2>&1 || true

# --- Samba: a standalone server with one user and two shares.
mkdir -p "$dir"/{share,private,lock,state,cache,log,pid,ncalrpc}
cat > "$dir/smb.conf" <<EOF
[global]
  workgroup = PBENCH
  netbios name = PBSRV
  server role = standalone server
  smb ports = 445
  private dir = $dir/private
  lock directory = $dir/lock
  state directory = $dir/state
  cache directory = $dir/cache
  pid directory = $dir/pid
  ncalrpc dir = $dir/ncalrpc
  log file = $dir/log/%m.log
  passdb backend = tdbsam:$dir/private/passdb.tdb
  server signing = disabled
  smb encrypt = off
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  server min protocol = SMB2_02
[data]
  path = $dir/share
  read only = no
  force user = root
[docs]
  path = $dir/share
  read only = yes
EOF
chmod 777 "$dir/share"
if ! id pbseed >/dev/null 2>&1; then
    useradd -M -s /usr/sbin/nologin pbseed
    made_user=yes
fi
printf 'seedpw1\nseedpw1\n' | smbpasswd -c "$dir/smb.conf" -s -a pbseed >/dev/null

# --- MIT Kerberos: realm PBENCH.TEST, two users (pre-authentication required), a service.
cat > "$dir/krb5.conf" <<EOF
[libdefaults]
  default_realm = PBENCH.TEST
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
[realms]
  PBENCH.TEST = {
    kdc = 127.0.0.1
  }
EOF
sed 's/^\[libdefaults\]/[libdefaults]\n  udp_preference_limit = 1/' "$dir/krb5.conf" > "$dir/krb5-tcp.conf"
cat > "$dir/kdc.conf" <<EOF
[kdcdefaults]
  kdc_ports = 88
  kdc_tcp_ports = 88
[realms]
  PBENCH.TEST = {
    database_name = $dir/principal
    key_stash_file = $dir/stash
    acl_file = $dir/kadm5.acl
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
EOF
export KRB5_CONFIG=$dir/krb5.conf KRB5_KDC_PROFILE=$dir/kdc.conf KRB5CCNAME=FILE:$dir/ccache
kdb5_util create -s -r PBENCH.TEST -P masterpw1 >/dev/null 2>&1
for p in alice bob; do kadmin.local -q "addprinc +requires_preauth -pw ${p}pw1 $p" >/dev/null 2>&1; done
for s in cifs/pbsrv.pbench.test host/pbsrv.pbench.test; do kadmin.local -q "addprinc -randkey $s" >/dev/null 2>&1; done

# --- Files of several sizes: generated text (deterministic), so the pcap stays small
# under compression and a rerun writes the same contents.
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
words = "invoice report quarterly budget draft meeting notes contract review summary".split()
for name, size in [("memo.txt", 1024), ("notes.txt", 6000), ("report.csv", 20000), ("big.doc", 40000)]:
    s, i = [], 0
    while sum(map(len, s)) < size:
        s.append(f"{i:06d},{words[i % len(words)]},{words[(i * 7) % len(words)]},{i * 37 % 1000}\n")
        i += 1
    open(f"{d}/{name}", "w").write("".join(s)[:size])
PY
cp "$dir/report.csv" "$dir/share/report.csv"

# `ip netns exec` execs the command, so $! is the daemon's own pid (a shell function
# run in the background would give a subshell's). smbd makes its own process group
# (no --no-process-group): on SIGTERM it signals its group, which must not be ours.
ip netns exec $ns smbd --foreground -s "$dir/smb.conf" >"$dir/smbd.out" 2>&1 &
pids+=($!)
ip netns exec $ns env KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc.conf" \
    krb5kdc -n >"$dir/kdc.out" 2>&1 &
pids+=($!)
# Wait (with a deadline) for both servers to listen.
for _ in $(seq 100); do
    run ss -ltn | grep -q ':445 ' && run ss -lun | grep -q ':88 ' && break
    sleep 0.1
done
run ss -ltn | grep -q ':445 ' || { cat "$dir/smbd.out" >&2; exit 1; }

ip netns exec $ns tcpdump -i lo -s 0 -U -w "$dir/seed.pcap" 'tcp port 445 or port 88' \
    2>"$dir/tcpdump.err" &
tcpdump_pid=$!
for _ in $(seq 100); do grep -q listening "$dir/tcpdump.err" && break; sleep 0.1; done

smb() { run smbclient -s "$dir/smb.conf" "//127.0.0.1/$1" -U "pbseed%seedpw1" -c "$2" >/dev/null 2>&1 || true; }
# Writes, reads, listings, a delete.
smb data "put $dir/memo.txt memo.txt; put $dir/notes.txt notes.txt; ls; get memo.txt $dir/g1"
smb data "mkdir reports; cd reports; put $dir/big.doc big.doc; ls; get big.doc $dir/g2"
smb docs "ls; get report.csv $dir/g3; get notes.txt $dir/g4"
smb data "cd reports; allinfo big.doc; rm big.doc; cd ..; rmdir reports; ls"
# A failed logon and a share that does not exist.
run smbclient -s "$dir/smb.conf" //127.0.0.1/data -U "pbseed%wrongpw" -c ls >/dev/null 2>&1 || true
smb nosuch "ls"
# DCERPC over SMB named pipes.
run rpcclient -s "$dir/smb.conf" 127.0.0.1 -U "pbseed%seedpw1" \
    -c 'srvinfo; netshareenumall; netsharegetinfo data; enumdomusers; lsaquery; getusername' >/dev/null 2>&1 || true
# Kerberos: AS with pre-authentication and TGS over UDP, then over TCP, then a wrong password.
run env KRB5_CONFIG="$dir/krb5.conf" kinit alice <<<"alicepw1" >/dev/null 2>&1 || true
run env KRB5_CONFIG="$dir/krb5.conf" kvno cifs/pbsrv.pbench.test host/pbsrv.pbench.test >/dev/null 2>&1 || true
run env KRB5_CONFIG="$dir/krb5-tcp.conf" kinit bob <<<"bobpw1" >/dev/null 2>&1 || true
run env KRB5_CONFIG="$dir/krb5-tcp.conf" kvno host/pbsrv.pbench.test >/dev/null 2>&1 || true
run env KRB5_CONFIG="$dir/krb5.conf" kinit alice <<<"badpass" >/dev/null 2>&1 || true
sleep 1  # let tcpdump write the last packets (-U flushes per packet)
kill "$tcpdump_pid"; wait "$tcpdump_pid" 2>/dev/null || true
cp "$dir/seed.pcap" "$out"
tcpdump -r "$out" -nn 2>/dev/null | wc -l | xargs echo "packets in $out:"
