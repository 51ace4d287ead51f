// Shortest paths, ECMP splitting and segment-routing paths (docs/method.md §3).
//
// Everything here works on a tpc::Graph. "Shortest" always means by IGP weight with the equal-cost
// rule of Graph::same_cost. An arc a = (u -> v) is a *next hop* of u towards t when
// d(u, t) == w(a) + d(v, t) under that rule (and d(v, t) < d(u, t), which keeps the next-hop graph
// acyclic whatever the rounding). The shortest-path DAG of a pair (s, t) is the set of next-hop
// arcs towards t reachable from s through next hops: in exact arithmetic exactly the arcs with
// d(s, u) + w(a) + d(v, t) == d(s, t).
//
// Ties are always broken by the smallest node id, then the smallest arc id: no result depends on
// hash order or on anything but the graph's numbering.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <thread>
#include <vector>

#ifdef __linux__
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#endif

#include "tpcstudy/graph.hpp"

namespace tpc {

// The CPUs this process may run on: its CPU affinity (taskset, cgroup cpusets, a batch
// scheduler's allocation), else std::thread::hardware_concurrency. Read on every call, not
// once, because the affinity can change while the process lives (os.sched_setaffinity); it is
// one system call, and the entry points ask only when they have more than one item to share.
inline int32_t hardware_threads() {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    // Fails (EINVAL) only on machines with more CPUs than a cpu_set_t holds (1,024): then the
    // count of all hardware threads below is the best answer there is.
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int count = CPU_COUNT(&set);
        if (count > 0) return count;
    }
#endif
    return std::max(1, static_cast<int32_t>(std::thread::hardware_concurrency()));
}

// The CPUs free right now: the machine's online CPUs less the tasks running on it besides the
// calling thread, from the instant count of runnable tasks in /proc/loadavg ("0.52 0.40 0.31
// 3/612 4242": 3 runnable now, the caller one of them), not the 1-minute average, so a busy
// process started a moment ago counts. At least 1; when the count cannot be read, every CPU
// counts as free (the budget and the affinity still bound the threads). About 10 us: asked only
// by a call with work for more than one thread.
inline int32_t free_cpus() {
    constexpr int32_t kUnknown = 1 << 20;
#ifdef __linux__
    const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return kUnknown;
    char buf[128];
    const ssize_t len = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (len <= 0) return kUnknown;
    buf[len] = '\0';
    const char* p = buf;
    for (int field = 0; field < 3; ++field) {  // the fourth field: running/total
        p = std::strchr(p, ' ');
        if (!p) return kUnknown;
        ++p;
    }
    char* end = nullptr;
    const long running = std::strtol(p, &end, 10);
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (end == p || *end != '/' || running < 1 || online < 1) return kUnknown;
    return static_cast<int32_t>(std::max<long>(1, online - (running - 1)));
#else
    return kUnknown;
#endif
}

// Threads to share `items` independent work items under a budget of `threads` (<= 0: every
// CPU this process may run on): never more than those CPUs, since more would only take turns on
// them (a worker process of a pool gets a share of the CPUs as its budget, so the pool never
// runs more busy threads than there are CPUs), never more than the items, and never more than
// the CPUs free now (free_cpus): a thread that has to wait for a busy CPU holds its share of
// the work until it gets one, and the call waits for it (Kdl's distance matrix beside one busy
// CPU: 6.6 ms on two threads, 4.2 ms on one). Callers size `items` by work, so that a call
// too small for two threads to pay (starting one costs ~50 us) passes 1.
// Whether thread_count reads the load (default: yes). Off only where the thread counts
// themselves are under test (tests/test_paths_threads.py), so that they do not depend on what
// else the machine runs.
inline std::atomic<bool>& load_aware() {
    static std::atomic<bool> on{true};
    return on;
}

inline int32_t thread_count(int32_t threads, size_t items) {
    if (items <= 1) return 1;  // nothing to share: no system call for single-pair calls
    const int32_t cpus = hardware_threads();
    int32_t nt = threads > 0 ? std::min(threads, cpus) : cpus;
    nt = static_cast<int32_t>(std::max<size_t>(1, std::min<size_t>(nt, items)));
    if (nt > 1 && load_aware().load(std::memory_order_relaxed)) nt = std::min(nt, free_cpus());
    return nt;
}

// Run work(failed) on nt threads, the calling thread one of them, and wait for them. work()
// takes items from a shared counter until none is left, so any number of threads finishes it:
// a thread that cannot be started (EAGAIN, no memory) leaves its share to the others.
//
// An exception must not leave a thread's function: that is std::terminate, which kills the
// Python process with no message. The first exception a worker throws (std::bad_alloc on a
// large graph, a broken invariant) is kept, `failed` tells the others to stop taking items
// (work() polls it between items: one relaxed load), and after every thread has joined it is
// rethrown on the calling thread, where nanobind turns it into a Python exception (MemoryError
// for std::bad_alloc, RuntimeError for most others).
template <class Work>
void run_threads(int32_t nt, Work&& work) {
    std::atomic<bool> failed{false};
    const std::atomic<bool>& stop = failed;  // what work() sees: it only reads the flag
    std::exception_ptr error;  // written only by the thread that set `failed` first
    auto guarded = [&]() noexcept {
        try {
            work(stop);
        } catch (...) {
            if (!failed.exchange(true)) error = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    if (nt > 1) {
        pool.reserve(static_cast<size_t>(nt) - 1);  // before any thread: may throw, harmlessly
        for (int32_t i = 1; i < nt; ++i) {
            try {
                pool.emplace_back(guarded);
            } catch (const std::exception&) {
                break;  // fewer threads: the ones running finish the work
            }
        }
    }
    guarded();
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);  // join() ordered the write before this read
}

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The breadth-first search from a over a graph whose arcs all weigh w, straight into the row d
// (n entries, kInf where not reached; each level's value the previous one's plus w, one
// addition at a time); queue holds n ids.
inline void bfs_row(const Graph& g, int32_t a, double w, double* d, int32_t* queue) {
    std::fill(d, d + g.n, kInf);
    size_t tail = 0;
    queue[tail++] = a;
    d[a] = 0.0;
    for (size_t head = 0; head < tail; ++head) {
        const int32_t u = queue[head];
        const double du = d[u] + w;
        for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i) {
            const int32_t v = g.out_heads[i];
            if (d[v] == kInf) {
                d[v] = du;
                queue[tail++] = v;
            }
        }
    }
}

// A list of lists: list i is items[offsets[i] .. offsets[i + 1]).
template <typename T>
struct Csr {
    std::vector<int64_t> offsets{0};
    std::vector<T> items;
    void close() { offsets.push_back(static_cast<int64_t>(items.size())); }
    int64_t size() const { return static_cast<int64_t>(offsets.size()) - 1; }
};

// ------------------------------------------------------------------ single source / target
// Dijkstra distances from `source` (forwards) or to `target` (backwards), inf where unreachable.
// `alive` (optional, one flag per arc) restricts the search to arcs whose flag is non-zero.
std::vector<double> distances_from(const Graph& g, int32_t source, const uint8_t* alive = nullptr);
std::vector<double> distances_to(const Graph& g, int32_t target, const uint8_t* alive = nullptr);

// Is arc a a next hop towards the target whose distances are `dt`?
inline bool is_next_hop(const Graph& g, const double* dt, int32_t a) {
    double du = dt[g.src[a]], dv = dt[g.dst[a]];
    return dv < du && g.same_cost(du, g.weight[a] + dv);
}

// Arcs of the shortest-path DAG of (s, t), sorted by id (empty when t is unreachable or s == t).
std::vector<int32_t> dag_arcs(const Graph& g, int32_t s, int32_t t);

// Every shortest s -> t path as a node list, in lexicographic order of node ids, at most `limit`.
Csr<int32_t> shortest_paths(const Graph& g, int32_t s, int32_t t, int64_t limit);

// ECMP fractions r_st(a) of the segment s -> t (arcs sorted by id, fractions > 0).
void ecmp_ratios(const Graph& g, int32_t s, int32_t t, std::vector<int32_t>& arcs,
                 std::vector<double>& fractions);

// Batch: the ratios of segment i (sources[i] -> targets[i]) are arcs/fractions
// [offsets[i], offsets[i + 1]). Each distinct target's distances are computed once, by a
// search that stops when the farthest of that target's sources is settled (breadth-first for
// uniform weights); distinct targets are shared among `threads` threads (see below).
struct SegmentRatios {
    std::vector<int64_t> offsets;
    std::vector<int32_t> arcs;
    std::vector<double> fractions;
};
SegmentRatios segment_ratios(const Graph& g, const std::vector<int32_t>& sources,
                             const std::vector<int32_t>& targets, int32_t threads = 1);

// All-pairs distances only, row-major n x n (d[a * n + b] = d(a, b), inf where unreachable):
// one breadth-first search per source for uniform weights (each level's value is the same
// sum whichever way it is reached), else one Dijkstra search backwards per destination (the
// sums Routing makes), searches shared among `threads` threads. The same values as Routing's
// matrix to the last bit, without its next-hop tables.
std::vector<double> distance_matrix(const Graph& g, int32_t threads);
// distance_matrix of a graph whose arcs come in reverse pairs and share one weight, by its
// structure (cpp/src/distances.cpp): the same values, fewer searches.
std::vector<double> distance_matrix_symmetric(const Graph& g, int32_t threads);

// ------------------------------------------------------------------ all-pairs routing table
// All-pairs IGP distances and the next-hop DAG of every destination (n Dijkstras). Independent of
// prices, so the LP's pricing reuses it across iterations.
class Routing {
public:
    // Destinations, then sources, shared among `threads` threads (see thread_count); the
    // tables do not depend on the count. The graph is referenced, not copied: it must outlive
    // the table (the bindings keep it alive).
    explicit Routing(const Graph& g, int32_t threads = 1);

    const Graph& graph() const { return g_; }
    int32_t n() const { return g_.n; }
    double dist(int32_t a, int32_t b) const { return dist_[static_cast<size_t>(a) * g_.n + b]; }
    const double* dist_row(int32_t a) const { return &dist_[static_cast<size_t>(a) * g_.n]; }
    // Column b of the distance matrix (distances *to* b), contiguous.
    const double* dist_to(int32_t b) const { return &dist_to_[static_cast<size_t>(b) * g_.n]; }

    // Nodes that reach b, in increasing distance to b (b first, ties by node id).
    const int32_t* order_to(int32_t b, int32_t& len) const;
    // Next-hop arcs of u towards b, sorted by arc id.
    const int32_t* next_hops(int32_t b, int32_t u, int32_t& len) const;
    // Nodes reachable from a, in increasing distance from a (a first, ties by node id).
    const int32_t* order_from(int32_t a, int32_t& len) const;
    // Arcs (u -> v) of the shortest-path tree-DAG out of a (d(a, u) + w == d(a, v)), sorted by the
    // position of v in order_from(a), then arc id: the ECMP DAG of a -> b is the set of these
    // arcs from which b is reached.
    const int32_t* dag_from(int32_t a, int32_t& len) const;

    // cost(u, v) = sum_l r_uv(l) * price[l] for all u, v, row-major n x n (inf where v is
    // unreachable from u, 0 on the diagonal). One pass per destination over its DAG.
    void segment_costs(const double* price, double* out) const;
    // The cheapest single shortest path (by `price`) of every pair, for the multipath model's
    // pricing: out[u * n + v] = min over next hops a of u towards v of price[a] + out[head(a), v]
    // (0 on the diagonal, inf where unreachable); next[u * n + v] = the arc achieving it (the
    // smallest arc id on ties; -1 on the diagonal or where unreachable).
    void dag_min_costs(const double* price, double* out, int32_t* next) const;

private:
    const Graph& g_;
    std::vector<double> dist_;      // dist_[a * n + b] = d(a, b)
    std::vector<double> dist_to_;   // dist_to_[b * n + a] = d(a, b)
    std::vector<int32_t> to_order_, to_len_;      // per destination: n slots, to_len_ used
    std::vector<int32_t> from_order_, from_len_;  // per source: n slots, from_len_ used
    std::vector<int64_t> from_off_;  // a -> start of its forward DAG in from_arcs_
    std::vector<int32_t> from_arcs_;
    std::vector<int64_t> nh_off_;   // (b * (n + 1) + u) -> start in nh_arcs_
    std::vector<int32_t> nh_arcs_;
};

// ------------------------------------------------------------------ sr-paths
// The cheapest sr-path with at most k segments for each pair (sources[i], targets[i]) under the
// segment cost matrix `cost` (row-major n x n, cost(u, u) = 0, inf = unusable):
// D_1(s, t) = cost(s, t), D_j(s, t) = min(D_{j-1}(s, t), min_{w != s} D_{j-1}(s, w) + cost(w, t))
// (the source is never its own waypoint; with costs >= 0 it would gain nothing anyway).
// Ties prefer fewer segments (a candidate must beat the incumbent by more than a relative 1e-9),
// then the smallest waypoint id. Each distinct source's DP row is computed once (O(k n^2)).
struct SrPaths {
    std::vector<double> values;        // inf when t is unreachable
    std::vector<int64_t> offsets;      // waypoints of pair i: [offsets[i], offsets[i + 1])
    std::vector<int32_t> waypoints;
};
// The cheapest path of each pair under arc prices (>= 0), when below limit (else infinity):
// no sr-path of the pair costs less, since a segment's price is the mean over its ECMP paths'
// prices, none below the cheapest. Column generation skips the pairs at or above the
// threshold of a useful column.
//
// `threads` here and in every batch entry point below: at most that many threads (<= 0: one
// per CPU this process may run on), never more than those CPUs (thread_count). Results do not
// depend on it.
std::vector<double> path_price_bounds(const Graph& g, const double* price,
                                      const std::vector<int32_t>& sources,
                                      const std::vector<int32_t>& targets, double limit,
                                      int32_t threads);

SrPaths best_sr_paths(int32_t n, const double* cost, const std::vector<int32_t>& sources,
                      const std::vector<int32_t>& targets, int32_t k, int32_t threads);

// ------------------------------------------------------------------ link-disjoint paths
// Paths are disjoint on undirected links; arcs must come in pairs (2i, 2i + 1 reverse of each
// other), as the Python Topology numbers them. docs/method.md §5.
enum class DisjointMethod : int32_t { max = 0, greedy = 1, sps = 2 };

struct DisjointPaths {
    // Per pair: its paths are [pair_offsets[i], pair_offsets[i + 1]) of the path lists below.
    std::vector<int64_t> pair_offsets{0};
    Csr<int32_t> nodes;       // node list of each path (source ... target)
    Csr<int32_t> waypoints;   // sps: waypoints of each path (empty lists for max / greedy)
    Csr<int32_t> links;       // undirected link ids each path occupies, sorted
    std::vector<double> cost; // IGP cost of each path (sps: sum of its segment distances)
};

// `routing` is needed for sps only (may be null otherwise).
// Per pair, the fewest segments (<= kmax) of a second sps path once the first (the direct
// segment) is taken; 0: none within kmax; -1: no path at all. See Worker::second_segments.
std::vector<int32_t> sps_second_segments(const Graph& g, const Routing& routing,
                                         const std::vector<int32_t>& sources,
                                         const std::vector<int32_t>& targets, int32_t kmax,
                                         int32_t threads);

DisjointPaths disjoint_paths(const Graph& g, const Routing* routing,
                             const std::vector<int32_t>& sources,
                             const std::vector<int32_t>& targets, DisjointMethod method,
                             int32_t k, int32_t threads);

// One pair, without the batch's machinery (no pair lists, no threads): the node list of each
// path in the order found (the same paths as disjoint_paths), or only how many there are
// (max then skips its flow decomposition).
Csr<int32_t> disjoint_paths_one(const Graph& g, const Routing* routing, int32_t s, int32_t t,
                                DisjointMethod method, int32_t k);
int32_t disjoint_count_one(const Graph& g, const Routing* routing, int32_t s, int32_t t,
                           DisjointMethod method, int32_t k);

}  // namespace tpc
