// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * tpcstudy's BPF host agent: the path tables `tpcstudy export --format bpf` writes, used by the
 * TCP connections of a stock Linux host (>= 6.1), unmodified programs included.
 *
 * Written from the map layout of docs/srh-map.md (the TPC agent's maps, byte for byte); it
 * shares no code with the TPC agent.
 *
 * - sockops (one cgroup v2 per host): when a connection opens (TCP_CONNECT_CB, before its SYN)
 *   or is accepted (PASSIVE_ESTABLISHED_CB), the destination's entry of the host's table (key:
 *   the top 64 bits of the remote address) gives the path slots; the load-time policy picks
 *   one (the first valid slot, a given slot, or a draw by the entry's weights with EXP3's
 *   Gamma). The program first tries bpf_setsockopt(IPV6_RTHDR), which works on the TPC agent's
 *   patched kernels; mainline refuses it, so the chosen SRH is stored for the connection
 *   (keyed by its addresses and ports) and the MSS lowered by the SRH's length (TCP_MAXSEG), so
 *   that the packets the tc program grows still fit the MTU. With NRTOChanger(N) configured,
 *   the N-th consecutive RTO (RTO_CB) and every later one without progress move the
 *   connection to the next valid slot. With a minimum RTO configured (tpcstudy agent load
 *   --rto-min-ms), every connection given a path gets it (TCP_BPF_RTO_MIN: the kernel's
 *   rto_min for that socket, 200 ms by default; it accepts 2 jiffies to 200 ms). A listening
 *   socket reserves room for the longest SRH of the table (TCP_LISTEN_CB: its MSS is fixed
 *   before the connection is established).
 * - tc egress (the host's interfaces): a TCP packet of a connection with a stored SRH gets it
 *   inline after its IPv6 header (segments[0] = the real destination, next header TCP), its
 *   destination becomes the first segment, and it is routed again for that destination
 *   (bpf_fib_lookup, bpf_redirect): the kernel had chosen the route for the original
 *   destination. The TCP checksum needs no change: its pseudo-header uses the final destination.
 *
 * Build: clang -O2 -target bpf -DVALUE_SIZE={1556,1652,1684} -DMAP_NAME={dest_map,
 * short_dest_map} (one object per exported layout).
 */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef VALUE_SIZE
#define VALUE_SIZE 1556
#endif
#ifndef MAP_NAME
#define MAP_NAME dest_map
#endif

#define MAX_PATHS 8
#define SRH_ADDRESSES 10
#define SRH_FIELD 168
#define SRH_TYPE 4 /* RFC 8754 */
#define NEXTHDR_ROUTING 43
#define SOL_TCP_ 6
#define SOL_IPV6_ 41
#define IPV6_RTHDR_ 57
#define TCP_MAXSEG_ 2
#define TCP_BPF_RTO_MIN_ 1004 /* uapi bpf.h (Linux >= 5.10): icsk_rto_min, in microseconds */
#define AF_INET6_ 10
#define TCP_CLOSE_ 7
#define IPV6_TCP_HEADERS 60 /* IPv6 (40) + TCP (20): MSS = MTU - 60, options come off it */

/* ------------------------------------------------------------ the exported layouts */
struct srh_field {
	__u8 nexthdr;
	__u8 hdrlen;
	__u8 type;
	__u8 segments_left;
	__u8 first_segment;
	__u8 flags;
	__u16 tag;
	__u8 addr[SRH_ADDRESSES][16];
} __attribute__((packed));

struct path_slot {
	__u32 srh_id;
	__u32 is_valid;
	__u64 curr_bw;
	__u64 delay;
	struct srh_field srh;
} __attribute__((packed));

struct weight {
	__u64 mantissa;
	__u32 exponent;
} __attribute__((packed));

struct dest_value {
	__u8 dest[16];
	__u32 max_reward;
	struct path_slot slot[MAX_PATHS];
#if VALUE_SIZE >= 1652
	struct weight weight[MAX_PATHS];
#endif
#if VALUE_SIZE >= 1684
	__u32 last_srtt[MAX_PATHS];
#endif
} __attribute__((packed));

_Static_assert(sizeof(struct srh_field) == SRH_FIELD, "SRH field: 168 bytes");
_Static_assert(sizeof(struct path_slot) == 192, "path record: 192 bytes");
_Static_assert(sizeof(struct dest_value) == VALUE_SIZE, "value size of the exported layout");
_Static_assert(VALUE_SIZE == 1556 || VALUE_SIZE == 1652 || VALUE_SIZE == 1684,
	       "one of the three exported layouts");

/* ------------------------------------------------------------ this program's own state */
/* One TCP connection of this host: addresses and ports as on its packets (network order). */
struct conn_key {
	__u32 saddr[4];
	__u32 daddr[4];
	__u16 sport;
	__u16 dport;
};

struct conn {
	__u32 len;       /* SRH bytes, (hdrlen + 1) * 8 */
	__u32 slot;      /* the table slot in use */
	__u32 moves;     /* NRTOChanger moves so far */
	__u32 kernel;    /* 1: the kernel took the SRH (IPV6_RTHDR), tc leaves it alone */
	__u8 dkey[8];    /* its table entry */
	__u8 first[16];  /* the first segment: the packets' new destination */
	__u8 srh[SRH_FIELD];
	__u32 gen;       /* the table generation its path was last checked against */
	__u32 room;      /* SRH bytes its MSS leaves room for (a new path must fit) */
	__u32 stale;     /* ON_UPDATE_KEEP: its path left the table, move at the next RTO */
	__u32 pad;
};

/* Set by the loader (one entry). */
struct config {
	__u32 policy;    /* POLICY_* */
	__u32 slot;      /* POLICY_SLOT: the slot */
	__u32 gamma_q20; /* POLICY_WEIGHTED: EXP3's Gamma x 2^20 */
	__u32 nrto;      /* NRTOChanger's N; 0: no failover */
	__u32 mtu;       /* the interfaces' MTU */
	__u32 max_srh;   /* the longest SRH of the table (listeners reserve it) */
	__u32 on_update; /* ON_UPDATE_*: a connection whose path a table update removed */
	__u32 room;      /* ROOM_*: the SRH room a connection's MSS leaves */
	__u32 rto_min_us; /* TCP_BPF_RTO_MIN for the connections given a path; 0: the kernel's */
};

/* ROOM_PATH: its own path's SRH (the entry's longest with NRTOChanger); ROOM_ENTRY: the
 * entry's longest, so that a table update can move it to any path of its entry; ROOM_MAX: the
 * longest SRH there is (9 segments, SRH_FIELD bytes), so that it can take any path a later
 * table gives its entry (a controller's reoptimised paths may be longer than today's). */
enum { ROOM_PATH = 0, ROOM_ENTRY = 1, ROOM_MAX = 2 };

/* REPATH: the entry's first valid slot that fits; KEEP: that, at the next RTO; REHASH: the
 * slot a weighted draw by the new table's weights gives, drawn with the connection's hash
 * (stable: the same connection and table give the same slot), so the moved connections spread
 * over the entry's paths in the proportions of the weights (hostagent/slots.py mirrors it). */
enum { ON_UPDATE_REPATH = 0, ON_UPDATE_KEEP = 1, ON_UPDATE_REHASH = 2 };

enum { POLICY_FIRST = 0, POLICY_SLOT = 1, POLICY_WEIGHTED = 2, POLICY_WRR = 3 };

/* Counters (tpcstudy agent status): indexes of tpc_stats. */
enum {
	ST_CONNECTIONS = 0, /* connections given a path */
	ST_NO_ENTRY,        /* destination without an entry: plain routing */
	ST_NO_VALID,        /* entry without a valid slot: plain routing */
	ST_KERNEL_SRH,      /* bpf_setsockopt(IPV6_RTHDR) accepted (a TPC kernel) */
	ST_FALLBACK,        /* refused: SRH stored for the tc program (stock kernel) */
	ST_MOVES,           /* NRTOChanger moves */
	ST_ERRORS,          /* map full, MSS refused, SRH malformed */
	ST_INSERTED,        /* packets given an SRH by tc */
	ST_REROUTED,        /* ... and sent to another interface */
	ST_FIB_KEPT,        /* fib lookup unusable (host not forwarding): left on its route */
	ST_INSERT_FAILED,   /* room or bytes refused by the kernel */
	ST_LISTENERS,       /* listeners given SRH room */
	ST_SLOT_INVALID,    /* POLICY_SLOT's slot not valid for the entry: first valid instead */
	ST_UPDATE_KEPT,     /* after a table update, the connection's slot holds the same SRH */
	ST_REPATHED,        /* its path was removed: moved to the first valid slot at once */
	ST_UPDATE_DEFERRED, /* its path was removed, ON_UPDATE_KEEP: moved at its next RTO */
	ST_REPATHED_RTO,    /* ... moved at that RTO */
	ST_REPATH_PLAIN,    /* its path was removed and no valid slot fits: plain routing */
	ST_REHASHED,        /* its path was removed: ON_UPDATE_REHASH moved it by the weights */
	ST_RTO_MIN_SET,     /* connections given the configured minimum RTO */
	ST_RTO_MIN_FAILED,  /* ... refused by the kernel (bpf_setsockopt(TCP_BPF_RTO_MIN)) */
	ST_COUNT = 24
};

struct stat_key {
	__u8 dkey[8];
	__u32 slot;
};

/* Two tables, the exported map (MAP_NAME, the one loaded first) and a standby of the same
 * layout, inner maps of tpc_tables; tpc_gen holds the generation of the table in use, which is
 * tpc_tables[generation & 1]. An update (tpcstudy agent update) fills the standby, then swaps
 * with ONE map update: tpc_gen = generation + 1. A program reads tpc_gen once per event and
 * takes that table (current_table), so every entry it reads comes from one table. The table
 * left is emptied only after an RCU grace period (no program still reads it): a table is
 * never written while a program may read it. */
struct dest_table {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct dest_value);
} MAP_NAME SEC(".maps"), tpc_standby SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct dest_table);
} tpc_tables SEC(".maps") = {
	.values = {[0] = &tpc_standby, [1] = &MAP_NAME},
};

/* The generation of the table in use (1 at load: MAP_NAME); a connection checks its path
 * again when it differs from the one it was checked against. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tpc_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct conn_key);
	__type(value, struct conn);
} tpc_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} tpc_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} tpc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct stat_key);
	__type(value, __u64);
} tpc_slot_use SEC(".maps");

/* Smooth weighted round robin's state per destination (POLICY_WRR). */
struct wrr_state {
	__s64 cur[MAX_PATHS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct wrr_state);
} tpc_wrr SEC(".maps");

/* Room for one connection's state: too large for the 512-byte stack beside the rest. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct conn);
} tpc_scratch SEC(".maps");

/* The SRH being written into a packet (tc; its own room: it may run inside a socket call). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct srh_field);
} tpc_pkt_srh SEC(".maps");

/* An SRH length the verifier can bound: clang merges `len >= 24 && len <= 168` into one
 * unsigned compare on a copy of the register, which leaves the original unbounded; checking
 * the upper bound alone on the value itself keeps the bound where the helper call reads it. */
static __always_inline __u64 srh_len(__u32 raw)
{
	__u64 len = raw;

	asm volatile("" : "+r"(len));
	if (len > SRH_FIELD)
		return 0;
	asm volatile("" : "+r"(len));
	return len < 24 ? 0 : len;
}

static __always_inline __u32 table_gen(void)
{
	__u32 zero = 0, *g = bpf_map_lookup_elem(&tpc_gen, &zero);

	return g ? *(volatile __u32 *)g : 0;
}

/* The table of generation gen (read once by the caller). */
static __always_inline void *current_table(__u32 gen)
{
	__u32 slot = gen & 1;

	return bpf_map_lookup_elem(&tpc_tables, &slot);
}

static __always_inline struct dest_value *lookup_dest(__u32 gen, const void *dkey)
{
	void *table = current_table(gen);

	return table ? bpf_map_lookup_elem(table, dkey) : NULL;
}

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&tpc_stats, &what);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline void count_slot(const __u8 *dkey, __u32 slot)
{
	struct stat_key k = {};
	__u64 one = 1, *v;

	__builtin_memcpy(k.dkey, dkey, 8);
	k.slot = slot;
	v = bpf_map_lookup_elem(&tpc_slot_use, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&tpc_slot_use, &k, &one, BPF_NOEXIST);
}

static __always_inline int slot_ok(const struct dest_value *v, __u32 i)
{
	if (i >= MAX_PATHS)
		return 0;
	return v->slot[i].is_valid && v->slot[i].srh.type == SRH_TYPE && v->slot[i].srh.first_segment >= 1
	       && v->slot[i].srh.first_segment <= SRH_ADDRESSES - 1
	       && v->slot[i].srh.hdrlen == 2 * (v->slot[i].srh.first_segment + 1);
}

static __always_inline int first_valid(const struct dest_value *v, __u32 from)
{
	for (__u32 j = 0; j < MAX_PATHS; j++) {
		__u32 i = (from + j) % MAX_PATHS;

		if (slot_ok(v, i))
			return i;
	}
	return -1;
}

#if VALUE_SIZE >= 1652
/* A slot's weight m 2^(e - 1024 - 63) in fixed point: 31 bits at the largest exponent. */
static __always_inline __u64 wfix(const struct dest_value *v, __u32 i, __u32 emax)
{
	if (!slot_ok(v, i) || !v->weight[i].mantissa || v->weight[i].exponent > emax)
		return 0;
	__u64 shift = 32 + (__u64)(emax - v->weight[i].exponent);

	return shift > 63 ? 0 : v->weight[i].mantissa >> shift;
}

/* EXP3's draw: p_i = (1 - gamma) w_i / sum w + gamma / K over the K valid slots, in fixed point
 * (2^20). All weights zero: the default path (as the TPC agent). */
static __always_inline int weighted(const struct dest_value *v, __u32 gamma_q20)
{
	__u64 total = 0, sum = 0, acc = 0, r;
	__u32 emax = 0, k = 0;

	for (__u32 i = 0; i < MAX_PATHS; i++) {
		if (!slot_ok(v, i))
			continue;
		k++;
		if (v->weight[i].mantissa && v->weight[i].exponent > emax)
			emax = v->weight[i].exponent;
	}
	if (!k)
		return -1;
	for (__u32 i = 0; i < MAX_PATHS; i++)
		total += wfix(v, i, emax);
	if (!total)
		return first_valid(v, 0);
	if (gamma_q20 > (1u << 20))
		gamma_q20 = 1u << 20;
	__u64 keep = (1u << 20) - gamma_q20, even = gamma_q20 / k;

	for (__u32 i = 0; i < MAX_PATHS; i++)
		if (slot_ok(v, i))
			sum += keep * wfix(v, i, emax) / total + even;
	if (!sum)
		return first_valid(v, 0);
	r = bpf_get_prandom_u32() % sum;
	for (__u32 i = 0; i < MAX_PATHS; i++) {
		if (!slot_ok(v, i))
			continue;
		acc += keep * wfix(v, i, emax) / total + even;
		if (r < acc)
			return i;
	}
	return first_valid(v, 0);
}
#endif

/* A slot's weight for WRR: the entry's weights brought to 31 bits (1 each without weights). */
static __always_inline __s64 wrr_weight(const struct dest_value *v, __u32 i, __u32 emax)
{
	if (!slot_ok(v, i))
		return 0;
#if VALUE_SIZE >= 1652
	return (__s64)wfix(v, i, emax);
#else
	return 1;
#endif
}

/* Smooth weighted round robin (nginx's): every valid slot gains its weight, the largest is
 * picked and loses the total; over W picks of integer weights summing to W, slot i is picked
 * exactly w_i times. State per destination in tpc_wrr. */
static __always_inline int wrr(const struct dest_value *v, const __u32 *dkey)
{
	struct wrr_state fresh = {}, *st;
	__s64 total = 0, best = 0;
	__u32 emax = 0;
	int pick = -1;

	st = bpf_map_lookup_elem(&tpc_wrr, dkey);
	if (!st) {
		bpf_map_update_elem(&tpc_wrr, dkey, &fresh, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&tpc_wrr, dkey);
		if (!st)
			return first_valid(v, 0);
	}
#if VALUE_SIZE >= 1652
	for (__u32 i = 0; i < MAX_PATHS; i++)
		if (slot_ok(v, i) && v->weight[i].mantissa && v->weight[i].exponent > emax)
			emax = v->weight[i].exponent;
#endif
	for (__u32 i = 0; i < MAX_PATHS; i++) {
		__s64 w = wrr_weight(v, i, emax);

		if (w <= 0)
			continue;
		st->cur[i] += w;
		total += w;
		if (pick < 0 || st->cur[i] > best) {
			best = st->cur[i];
			pick = i;
		}
	}
	if (pick < 0)
		return first_valid(v, 0);
	if (pick < MAX_PATHS)
		st->cur[pick] -= total;
	return pick;
}

static __always_inline int choose(const struct dest_value *v, const struct config *cfg,
				  const __u32 *dkey)
{
	if (cfg->policy == POLICY_WRR)
		return wrr(v, dkey);
	if (cfg->policy == POLICY_SLOT) {
		if (slot_ok(v, cfg->slot))
			return cfg->slot;
		count(ST_SLOT_INVALID);
		return first_valid(v, 0);
	}
#if VALUE_SIZE >= 1652
	if (cfg->policy == POLICY_WEIGHTED)
		return weighted(v, cfg->gamma_q20);
#else
	if (cfg->policy == POLICY_WEIGHTED) { /* no weights in this layout: uniform */
		__u32 n = 0, pick;

		for (__u32 i = 0; i < MAX_PATHS; i++)
			n += slot_ok(v, i);
		if (!n)
			return -1;
		pick = bpf_get_prandom_u32() % n;
		for (__u32 i = 0; i < MAX_PATHS; i++) {
			if (!slot_ok(v, i))
				continue;
			if (pick == 0)
				return i;
			pick--;
		}
		return -1;
	}
#endif
	return first_valid(v, 0);
}

static __always_inline void key_of(const struct bpf_sock_ops *skops, struct conn_key *k)
{
	k->saddr[0] = skops->local_ip6[0];
	k->saddr[1] = skops->local_ip6[1];
	k->saddr[2] = skops->local_ip6[2];
	k->saddr[3] = skops->local_ip6[3];
	k->daddr[0] = skops->remote_ip6[0];
	k->daddr[1] = skops->remote_ip6[1];
	k->daddr[2] = skops->remote_ip6[2];
	k->daddr[3] = skops->remote_ip6[3];
	k->sport = bpf_htons((__u16)skops->local_port);
	k->dport = bpf_htons((__u16)bpf_ntohl(skops->remote_port));
}

/* The slot's SRH into the connection's state; 0 on success. */
static __always_inline int take_slot(struct conn *c, const struct dest_value *v, __u32 i)
{
	if (i >= MAX_PATHS)
		return -1;
	__u64 n = v->slot[i].srh.first_segment;

	asm volatile("" : "+r"(n)); /* two separate checks on n itself (see srh_len) */
	if (n > SRH_ADDRESSES - 1)
		return -1;
	asm volatile("" : "+r"(n));
	if (n == 0)
		return -1;
	__builtin_memcpy(c->srh, &v->slot[i].srh, SRH_FIELD);
	__builtin_memcpy(c->first, v->slot[i].srh.addr[n], 16);
	c->len = (v->slot[i].srh.hdrlen + 1) * 8;
	c->slot = i;
	return 0;
}

static __always_inline void set_mss(struct bpf_sock_ops *skops, const struct config *cfg,
				    __u32 srh_len)
{
	int mss = (int)cfg->mtu - IPV6_TCP_HEADERS - (int)srh_len;

	if (mss < 536 || bpf_setsockopt(skops, SOL_TCP_, TCP_MAXSEG_, &mss, sizeof(mss)))
		count(ST_ERRORS);
}

/* The longest SRH among the entry's valid slots (a moving connection may take any). */
static __always_inline __u32 longest(const struct dest_value *v)
{
	__u32 m = 0;

	for (__u32 i = 0; i < MAX_PATHS; i++)
		if (slot_ok(v, i) && (__u32)(v->slot[i].srh.hdrlen + 1) * 8 > m)
			m = (v->slot[i].srh.hdrlen + 1) * 8;
	return m;
}

/* The configured minimum RTO on this connection (the kernel's RTO is then SRTT + max(4 RTTVAR,
 * this) instead of SRTT + max(4 RTTVAR, 200 ms); backoff doubles it as before). */
static __always_inline void set_rto_min(struct bpf_sock_ops *skops, const struct config *cfg)
{
	int usecs = (int)cfg->rto_min_us;

	if (!cfg->rto_min_us)
		return;
	if (bpf_setsockopt(skops, SOL_TCP_, TCP_BPF_RTO_MIN_, &usecs, sizeof(usecs)))
		count(ST_RTO_MIN_FAILED);
	else
		count(ST_RTO_MIN_SET);
}

static __always_inline void start(struct bpf_sock_ops *skops, const struct config *cfg)
{
	__u32 dkey[2] = {skops->remote_ip6[0], skops->remote_ip6[1]};
	__u32 gen = table_gen();
	struct dest_value *v = lookup_dest(gen, dkey);
	struct conn_key k = {};
	__u32 zero = 0;
	struct conn *c = bpf_map_lookup_elem(&tpc_scratch, &zero);
	int i;

	if (skops->family != AF_INET6_ || !c)
		return;
	if (!v) {
		count(ST_NO_ENTRY);
		return;
	}
	i = choose(v, cfg, dkey);
	if (i < 0 || take_slot(c, v, (__u32)i)) {
		count(ST_NO_VALID);
		return;
	}
	c->moves = 0;
	c->kernel = 0;
	c->gen = gen;
	c->stale = 0;
	c->room = cfg->room == ROOM_MAX ? SRH_FIELD
		  : (cfg->nrto || cfg->room == ROOM_ENTRY) ? longest(v) : c->len;
	__builtin_memcpy(c->dkey, dkey, 8);
	key_of(skops, &k);
	count(ST_CONNECTIONS);
	count_slot(c->dkey, c->slot);
	set_rto_min(skops, cfg);
	__u64 len = srh_len(c->len);

	if (len && bpf_setsockopt(skops, SOL_IPV6_, IPV6_RTHDR_, c->srh, len) == 0) {
		c->kernel = 1; /* a TPC kernel: the socket sends the SRH itself */
		count(ST_KERNEL_SRH);
	} else {
		count(ST_FALLBACK);
		set_mss(skops, cfg, c->room);
	}
	if (bpf_map_update_elem(&tpc_conns, &k, c, BPF_ANY))
		count(ST_ERRORS);
	/* RTO callbacks always: NRTOChanger, and ON_UPDATE_KEEP's move after a table update */
	bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_STATE_CB_FLAG | BPF_SOCK_OPS_RTO_CB_FLAG);
}

/* The connection's path is gone from the table: the entry's first valid slot whose SRH fits
 * the room its MSS left, else plain routing (len 0: tc leaves its packets alone). 0: moved to
 * a slot; 1: plain routing. */
static __always_inline int repath(struct conn *c, __u32 gen)
{
	struct dest_value *v = lookup_dest(gen, c->dkey);

	if (v) {
		for (__u32 i = 0; i < MAX_PATHS; i++) {
			if (!slot_ok(v, i) || (__u32)(v->slot[i].srh.hdrlen + 1) * 8 > c->room)
				continue;
			if (take_slot(c, v, i) == 0) {
				count_slot(c->dkey, c->slot);
				return 0;
			}
		}
	}
	c->len = 0;
	count(ST_REPATH_PLAIN);
	return 1;
}

/* A stable 32-bit hash of a connection (its key as on its packets): FNV-1a over the 36 bytes,
 * then murmur3's finaliser (the multiply-shift draw below uses the high bits). */
static __always_inline __u32 conn_hash(const struct conn_key *k)
{
	const __u8 *b = (const __u8 *)k;
	__u32 h = 2166136261u;

	for (__u32 i = 0; i < sizeof(*k); i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* Slot i is valid and its SRH fits room bytes. */
static __always_inline int fits(const struct dest_value *v, __u32 i, __u32 room)
{
	return i < MAX_PATHS && slot_ok(v, i) && (__u32)(v->slot[i].srh.hdrlen + 1) * 8 <= room;
}

/* A fitting slot's weight for the keyed draw: wfix's 32 bits brought to 17 (so hash x total
 * stays within 64 bits); 1 each in the layout without weights. */
static __always_inline __u64 draw_weight(const struct dest_value *v, __u32 i, __u32 room,
					 __u32 emax)
{
	if (!fits(v, i, room))
		return 0;
#if VALUE_SIZE >= 1652
	return wfix(v, i, emax) >> 15;
#else
	return 1;
#endif
}

/* ON_UPDATE_REHASH's choice: among the fitting slots, slot i with probability w_i / sum w over
 * the connection hashes (r = hash x total / 2^32; uniform when every weight is zero); -1 when
 * no slot fits. */
static __always_inline int keyed_pick(const struct dest_value *v, __u32 room, __u32 h)
{
	__u64 total = 0, acc = 0, r, w;
	__u32 emax = 0, n = 0;
	int uniform;

	for (__u32 i = 0; i < MAX_PATHS; i++) {
		if (!fits(v, i, room))
			continue;
		n++;
#if VALUE_SIZE >= 1652
		if (v->weight[i].mantissa && v->weight[i].exponent > emax)
			emax = v->weight[i].exponent;
#endif
	}
	if (!n)
		return -1;
	for (__u32 i = 0; i < MAX_PATHS; i++)
		total += draw_weight(v, i, room, emax);
	uniform = total == 0;
	if (uniform)
		total = n;
	r = ((__u64)h * total) >> 32;
	for (__u32 i = 0; i < MAX_PATHS; i++) {
		w = uniform ? (__u64)fits(v, i, room) : draw_weight(v, i, room, emax);
		acc += w;
		if (w && r < acc)
			return i;
	}
	return -1;
}

/* ON_UPDATE_REHASH: the connection's path is gone; keyed_pick's slot, else plain routing.
 * 0: moved to a slot; 1: plain routing. */
static __always_inline int rehash(struct conn *c, __u32 gen, __u32 h)
{
	struct dest_value *v = lookup_dest(gen, c->dkey);

	if (v) {
		int i = keyed_pick(v, c->room, h);

		if (i >= 0 && take_slot(c, v, (__u32)i) == 0) {
			count_slot(c->dkey, c->slot);
			return 0;
		}
	}
	c->len = 0;
	count(ST_REPATH_PLAIN);
	return 1;
}

/* The SRH field of slot i equals the connection's (the same waypoints, in the same order). */
static __always_inline int same_srh(const struct dest_value *v, __u32 i, const struct conn *c)
{
	if (i >= MAX_PATHS || !slot_ok(v, i))
		return 0;
	for (__u32 b = 0; b < SRH_FIELD; b++)
		if (((const __u8 *)&v->slot[i].srh)[b] != c->srh[b])
			return 0;
	return 1;
}

/* A table update happened since this connection's path was checked (tc egress, per packet:
 * at once): it keeps its path when its slot still holds the same SRH, else it moves now
 * (ON_UPDATE_REPATH: the first valid slot; ON_UPDATE_REHASH: by the weights, keyed on k) or is
 * marked for its next RTO (ON_UPDATE_KEEP). */
static __always_inline void recheck(struct conn *c, const struct config *cfg, __u32 gen,
				    const struct conn_key *k)
{
	struct dest_value *v = lookup_dest(gen, c->dkey);

	c->gen = gen;
	if (!c->len || c->stale)
		return;
	if (v && same_srh(v, c->slot, c)) {
		count(ST_UPDATE_KEPT);
		return;
	}
	if (cfg->on_update == ON_UPDATE_KEEP) {
		c->stale = 1;
		count(ST_UPDATE_DEFERRED);
		return;
	}
	if (cfg->on_update == ON_UPDATE_REHASH) {
		if (rehash(c, gen, conn_hash(k)) == 0)
			count(ST_REHASHED);
		return;
	}
	if (repath(c, gen) == 0)
		count(ST_REPATHED);
}

/* NRTOChanger: args[0] is the count of consecutive RTOs before this one. */
static __always_inline void on_rto(struct bpf_sock_ops *skops, const struct config *cfg)
{
	struct conn_key k = {};
	struct conn *c;
	struct dest_value *v;
	int i;

	key_of(skops, &k);
	c = bpf_map_lookup_elem(&tpc_conns, &k);
	if (!c)
		return;
	if (c->stale) { /* ON_UPDATE_KEEP: its path left the table, this is its next RTO */
		c->stale = 0;
		c->gen = table_gen();
		if (repath(c, c->gen) == 0)
			count(ST_REPATHED_RTO);
		if (c->kernel) {
			__u64 len = srh_len(c->len);

			if (len)
				bpf_setsockopt(skops, SOL_IPV6_, IPV6_RTHDR_, c->srh, len);
		}
		return;
	}
	if (!cfg->nrto || skops->args[0] + 1 < cfg->nrto)
		return;
	v = lookup_dest(table_gen(), c->dkey);
	if (!v)
		return;
	i = first_valid(v, c->slot + 1);
	if (i < 0 || (__u32)i == c->slot)
		return;
	if (take_slot(c, v, (__u32)i))
		return;
	c->moves++;
	count(ST_MOVES);
	count_slot(c->dkey, c->slot);
	if (c->kernel) {
		__u64 len = srh_len(c->len);

		if (len)
			bpf_setsockopt(skops, SOL_IPV6_, IPV6_RTHDR_, c->srh, len);
	}
}

SEC("sockops")
int tpc_sockops(struct bpf_sock_ops *skops)
{
	__u32 zero = 0;
	struct config *cfg = bpf_map_lookup_elem(&tpc_config, &zero);
	struct conn_key k = {};

	if (!cfg || !cfg->mtu)
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		start(skops, cfg);
		break;
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		if (skops->family == AF_INET6_ && cfg->max_srh) {
			set_mss(skops, cfg, cfg->max_srh);
			count(ST_LISTENERS);
		}
		break;
	case BPF_SOCK_OPS_RTO_CB:
		on_rto(skops, cfg);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] == TCP_CLOSE_) {
			key_of(skops, &k);
			bpf_map_delete_elem(&tpc_conns, &k);
		}
		break;
	}
	return 1;
}

/* ------------------------------------------------------------ tc egress */
#define IP6_OFF ETH_HLEN
#define SRH_OFF (ETH_HLEN + sizeof(struct ipv6hdr))

SEC("tc")
int tpc_egress(struct __sk_buff *skb)
{
	struct ipv6hdr ip6;
	struct conn_key k = {};
	struct conn *c;
	__u32 zero = 0;
	__u8 *srh = bpf_map_lookup_elem(&tpc_pkt_srh, &zero);
	__u16 ports[2];

	if (!srh)
		return TC_ACT_OK;
	if (skb->protocol != bpf_htons(ETH_P_IPV6))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, IP6_OFF, &ip6, sizeof(ip6)))
		return TC_ACT_OK;
	if (ip6.nexthdr != IPPROTO_TCP) /* SRH already there (a redirect), or not TCP */
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, SRH_OFF, ports, sizeof(ports)))
		return TC_ACT_OK;
	__builtin_memcpy(k.saddr, &ip6.saddr, 16);
	__builtin_memcpy(k.daddr, &ip6.daddr, 16);
	k.sport = ports[0];
	k.dport = ports[1];
	c = bpf_map_lookup_elem(&tpc_conns, &k);
	if (!c || c->kernel)
		return TC_ACT_OK;
	__u32 gen = table_gen();

	if (c->gen != gen) {
		__u32 zero2 = 0;
		struct config *cfg = bpf_map_lookup_elem(&tpc_config, &zero2);

		if (cfg)
			recheck(c, cfg, gen, &k);
	}
	__u64 len = srh_len(c->len);

	if (!len)
		return TC_ACT_OK;
	__builtin_memcpy(srh, c->srh, SRH_FIELD);
	srh[0] = IPPROTO_TCP;                       /* next header after the SRH */
	__builtin_memcpy(srh + 8, &ip6.daddr, 16);  /* segments[0]: the real destination */
	__u8 first[16];

	__builtin_memcpy(first, c->first, 16);
	if (bpf_skb_adjust_room(skb, (__s32)len, BPF_ADJ_ROOM_NET, BPF_F_ADJ_ROOM_FIXED_GSO)) {
		count(ST_INSERT_FAILED);
		return TC_ACT_OK;
	}
	__u16 plen = bpf_htons(bpf_ntohs(ip6.payload_len) + (__u16)len);
	__u8 nh = NEXTHDR_ROUTING;

	if (bpf_skb_store_bytes(skb, SRH_OFF, srh, len, 0)
	    || bpf_skb_store_bytes(skb, IP6_OFF + offsetof(struct ipv6hdr, payload_len), &plen,
				   sizeof(plen), 0)
	    || bpf_skb_store_bytes(skb, IP6_OFF + offsetof(struct ipv6hdr, nexthdr), &nh, 1, 0)
	    || bpf_skb_store_bytes(skb, IP6_OFF + offsetof(struct ipv6hdr, daddr), first, 16, 0)) {
		count(ST_INSERT_FAILED);
		return TC_ACT_SHOT;
	}
	count(ST_INSERTED);

	/* The route was chosen for the real destination: route again for the first segment. */
	struct bpf_fib_lookup fib = {};

	fib.family = AF_INET6_;
	fib.l4_protocol = IPPROTO_TCP;
	fib.sport = ports[0];
	fib.dport = ports[1];
	fib.ifindex = skb->ifindex;
	__builtin_memcpy(fib.ipv6_src, &ip6.saddr, 16);
	__builtin_memcpy(fib.ipv6_dst, first, 16);
	if (bpf_fib_lookup(skb, &fib, sizeof(fib), 0) != BPF_FIB_LKUP_RET_SUCCESS) {
		count(ST_FIB_KEPT); /* e.g. a host that does not forward: keep the default route */
		return TC_ACT_OK;
	}
	if (bpf_skb_store_bytes(skb, 0, fib.dmac, ETH_ALEN, 0)
	    || bpf_skb_store_bytes(skb, ETH_ALEN, fib.smac, ETH_ALEN, 0))
		return TC_ACT_SHOT;
	if (fib.ifindex == skb->ifindex)
		return TC_ACT_OK;
	count(ST_REROUTED);
	return bpf_redirect(fib.ifindex, 0);
}

/* ------------------------------------------------------------ the swap's witness */
/* Not attached: run by BPF_PROG_TEST_RUN (tests/hostagent/test_update.py). The packet carries,
 * after its Ethernet and IPv6 headers, up to PROBE_KEYS destination keys; the program takes the
 * table once, as the others do, and reads every key's entry. Returns the tables' mark (every
 * entry's max_reward and slots' curr_bw hold its generation in the test's tables), 0 when a key
 * has no entry, 0xffff when two marks differ: a lookup that mixed two tables. */
#define PROBE_KEYS 4

SEC("tc")
int tpc_probe(struct __sk_buff *skb)
{
	__u64 keys[PROBE_KEYS];
	__u32 mark = 0;
	void *table = current_table(table_gen());

	if (!table || bpf_skb_load_bytes(skb, SRH_OFF, keys, sizeof(keys)))
		return 0;
	for (__u32 j = 0; j < PROBE_KEYS; j++) {
		struct dest_value *v = bpf_map_lookup_elem(table, &keys[j]);

		if (!v)
			return 0;
		if (!mark)
			mark = v->max_reward;
		if (v->max_reward != mark)
			return 0xffff;
		for (__u32 i = 0; i < MAX_PATHS; i++)
			if ((__u32)v->slot[i].curr_bw != mark)
				return 0xffff;
	}
	return mark;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
