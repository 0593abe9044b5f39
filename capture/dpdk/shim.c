/*
 * Meerkat's shim over DPDK (built only with the capture crate's `dpdk` feature).
 *
 * DPDK's fast path (rte_eth_rx_burst, rte_pktmbuf_free, rte_pktmbuf_mtod) is made of
 * static inline functions and macros that Rust cannot call; this file compiles them into
 * plain functions with a small, stable C ABI. Setup calls go through here too, so the Rust
 * side never depends on the layout of DPDK's structs.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

static int ts_offset = -1;
static uint64_t ts_flag;

int mk_dpdk_init(int argc, char **argv) {
    int r = rte_eal_init(argc, argv);
    if (r < 0)
        return -rte_errno;
    return r;
}

const char *mk_dpdk_strerror(int err) { return rte_strerror(err); }

/* Sets up port `name` with one RX queue of `nb_rxd` descriptors and starts it.
 * Returns 0 or a negative errno; `err` gets a message. `*ts_usec` is set to 1 when the
 * port stamps packets with a capture time in microseconds since the epoch (net_pcap with
 * the timestamp offload), which is then read by mk_dpdk_mbuf. */
int mk_dpdk_port_open(const char *name, uint16_t nb_rxd, uint32_t pool_size,
                      uint32_t cache_size, uint32_t mtu, int promisc, uint16_t *port_out,
                      int *ts_usec, char *err, size_t errlen) {
    uint16_t port;
    int r = rte_eth_dev_get_port_by_name(name, &port);
    if (r != 0) {
        snprintf(err, errlen, "no DPDK port named %s (check dpdk.eal-params: --vdev or the PCI allow list)", name);
        return r < 0 ? r : -ENODEV;
    }
    struct rte_eth_dev_info info;
    r = rte_eth_dev_info_get(port, &info);
    if (r != 0) {
        snprintf(err, errlen, "rte_eth_dev_info_get(%s): %s", name, rte_strerror(-r));
        return r;
    }
    uint32_t room = mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + 8 /* 2 VLAN tags */;
    if (room < RTE_MBUF_DEFAULT_DATAROOM)
        room = RTE_MBUF_DEFAULT_DATAROOM;
    char pool_name[RTE_MEMPOOL_NAMESIZE];
    snprintf(pool_name, sizeof pool_name, "mk_rx_%u", port);
    struct rte_mempool *pool = rte_pktmbuf_pool_create(
        pool_name, pool_size, cache_size, 0, (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
        rte_eth_dev_socket_id(port) < 0 ? (int)rte_socket_id() : rte_eth_dev_socket_id(port));
    if (pool == NULL) {
        snprintf(err, errlen, "cannot create a mempool of %u mbufs: %s (dpdk.interfaces.mempool-size, EAL -m)",
                 pool_size, rte_strerror(rte_errno));
        return -rte_errno;
    }
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof conf);
    *ts_usec = 0;
    if ((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0 && room + RTE_PKTMBUF_HEADROOM > RTE_MBUF_DEFAULT_BUF_SIZE)
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    /* net_pcap stamps each mbuf with the pcap record's time in microseconds (through the
     * standard Rx timestamp dynamic field, without advertising the offload), which makes
     * a replayed file look exactly like `-r FILE` to the workers. Other ports' stamps are
     * in NIC clock units, so they are not used; those packets get the host's clock. */
    if (strcmp(info.driver_name, "net_pcap") == 0 &&
        rte_mbuf_dyn_rx_timestamp_register(&ts_offset, &ts_flag) == 0)
        *ts_usec = 1;
    r = rte_eth_dev_configure(port, 1, 0, &conf);
    if (r != 0) {
        snprintf(err, errlen, "rte_eth_dev_configure(%s): %s", name, rte_strerror(-r));
        return r;
    }
    uint16_t rxd = nb_rxd, txd = 0;
    r = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
    if (r != 0) {
        snprintf(err, errlen, "rte_eth_dev_adjust_nb_rx_tx_desc(%s): %s", name, rte_strerror(-r));
        return r;
    }
    r = rte_eth_rx_queue_setup(port, 0, rxd, rte_eth_dev_socket_id(port), NULL, pool);
    if (r != 0) {
        snprintf(err, errlen, "rte_eth_rx_queue_setup(%s, %u descriptors): %s", name, rxd, rte_strerror(-r));
        return r;
    }
    r = rte_eth_dev_start(port);
    if (r != 0) {
        snprintf(err, errlen, "rte_eth_dev_start(%s): %s", name, rte_strerror(-r));
        return r;
    }
    if (promisc) {
        /* Not every virtual device has the notion; that is not an error. */
        (void)rte_eth_promiscuous_enable(port);
    }
    rte_eth_stats_reset(port);
    *port_out = port;
    return 0;
}

uint16_t mk_dpdk_rx(uint16_t port, struct rte_mbuf **bufs, uint16_t n) {
    return rte_eth_rx_burst(port, 0, bufs, n);
}

/* The first segment's bytes, and what the Rust side needs to know about the packet. */
const uint8_t *mk_dpdk_mbuf(const struct rte_mbuf *m, uint32_t *data_len, uint32_t *pkt_len,
                            uint16_t *nb_segs, uint64_t *ts, int *has_ts) {
    *data_len = m->data_len;
    *pkt_len = m->pkt_len;
    *nb_segs = m->nb_segs;
    *has_ts = 0;
    if (ts_offset >= 0 && (m->ol_flags & ts_flag) != 0) {
        *ts = *RTE_MBUF_DYNFIELD(m, ts_offset, const rte_mbuf_timestamp_t *);
        *has_ts = 1;
    }
    return rte_pktmbuf_mtod(m, const uint8_t *);
}

/* Copies a multi-segment packet into `dst` (at most `cap` bytes); returns the bytes copied. */
uint32_t mk_dpdk_copy(const struct rte_mbuf *m, uint8_t *dst, uint32_t cap) {
    uint32_t len = m->pkt_len < cap ? m->pkt_len : cap;
    const void *p = rte_pktmbuf_read(m, 0, len, dst);
    if (p == NULL)
        return 0;
    if (p != dst)
        memcpy(dst, p, len);
    return len;
}

void mk_dpdk_free(struct rte_mbuf **bufs, uint16_t n) {
    for (uint16_t i = 0; i < n; i++)
        rte_pktmbuf_free(bufs[i]);
}

int mk_dpdk_stats(uint16_t port, uint64_t *ipackets, uint64_t *imissed, uint64_t *ierrors,
                  uint64_t *nombuf) {
    struct rte_eth_stats st;
    int r = rte_eth_stats_get(port, &st);
    if (r != 0)
        return r;
    *ipackets = st.ipackets;
    *imissed = st.imissed;
    *ierrors = st.ierrors;
    *nombuf = st.rx_nombuf;
    return 0;
}

void mk_dpdk_close(uint16_t port) {
    (void)rte_eth_dev_stop(port);
    (void)rte_eth_dev_close(port);
}

void mk_dpdk_cleanup(void) { (void)rte_eal_cleanup(); }
