#!/usr/bin/env bash
# Live capture tests: iproute2 (network namespaces with veth pairs for AF_PACKET),
# DPDK's development files and drivers (the `dpdk` cargo feature; net_pcap and
# net_af_packet virtual devices, no NIC and no hugepages needed), pkg-config to find it;
# libpcap (loaded at run time to compile BPF filter expressions) and tcpdump (the BPF
# tests' oracle, and the reader pcap-log files are checked with).
# Installs only; the tests run in .ci/test.d/30-capture-dpdk.sh.
set -euo pipefail
need=()
command -v ip >/dev/null || need+=(iproute2)
command -v pkg-config >/dev/null || need+=(pkg-config)
ls /usr/lib/*/libpcap.so.0.8 >/dev/null 2>&1 || need+=(libpcap0.8)
command -v tcpdump >/dev/null || need+=(tcpdump)
pkg-config --exists libdpdk 2>/dev/null || need+=(libdpdk-dev)
ls /usr/lib/*/dpdk/pmds-*/librte_net_pcap.so* >/dev/null 2>&1 || need+=(dpdk)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
