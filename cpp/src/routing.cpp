// Shortest paths, ECMP ratios, the all-pairs routing table and the segment-cost pass.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "tpcstudy/paths.hpp"

namespace tpc {

namespace {

void check_node(const Graph& g, int32_t u, const char* what) {
    if (u < 0 || u >= g.n)
        throw std::out_of_range(std::string(what) + " " + std::to_string(u) +
                                " is not a node id (the graph has " + std::to_string(g.n) +
                                " nodes)");
}

// With stop >= 0 the search ends when `stop` is settled: every node closer is settled then,
// which is all the DAG between root and `stop` reads (its next hops are strictly closer than
// the node they leave, which is at most as far as `stop`); the others keep a tentative
// distance no smaller than `stop`'s, or kInf, so no next-hop test takes them.
template <bool Forward>
std::vector<double> dijkstra(const Graph& g, int32_t root, const uint8_t* alive,
                             int32_t stop = -1) {
    std::vector<double> d(g.n, kInf);
    using Item = std::pair<double, int32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
    d[root] = 0.0;
    pq.push({0.0, root});
    const auto& off = Forward ? g.out_offsets : g.in_offsets;
    const auto& arcs = Forward ? g.out_arcs : g.in_arcs;
    const auto& other = Forward ? g.dst : g.src;
    while (!pq.empty()) {
        auto [du, u] = pq.top();
        pq.pop();
        if (du > d[u]) continue;
        if (u == stop) break;
        for (int32_t i = off[u]; i < off[u + 1]; ++i) {
            int32_t a = arcs[i];
            if (alive && !alive[a]) continue;
            int32_t v = other[a];
            double nd = du + g.weight[a];
            if (nd < d[v]) {
                d[v] = nd;
                pq.push({nd, v});
            }
        }
    }
    return d;
}

// One shortest-path search at a time, its buffers reused from one root to the next (reset()
// clears only what the last search touched). Breadth-first when every weight is the same
// (Graph::uniform_weights: a node's distance is its parent's plus that weight, the value
// Dijkstra's method computes too, whichever parent), else Dijkstra's method with a binary heap
// of (distance, node).
//
// Early stop: the search ends once every node marked with want() is settled. Every node closer
// than the last one settled is settled then, with its exact distance; the others keep a
// tentative distance no smaller than the last settled one's, or kInf. A next-hop test (d(v) <
// d(u)) from a settled u never takes them, so the DAGs between the root and the wanted nodes
// read exact values only. Breadth-first: a node's distance is final when it is discovered,
// and when a node of level L is discovered every node of a lower level already is.
// A search's arrays, kept between calls by the single-pair entry points (one set per thread):
// a call on a small graph then allocates nothing but its answer. Clean between calls: every
// d is kInf, every want 0 (Search::release restores that); at least as long as the largest
// graph searched, which is all a search reads.
struct SearchBuffers {
    std::vector<double> d;
    std::vector<uint8_t> want;
    std::vector<int32_t> touched, wanted;
    std::vector<std::pair<double, int32_t>> heap;
};

template <bool Forward>
class Search {
public:
    explicit Search(const Graph& g) : g_(g), d_(g.n, kInf), want_(g.n, 0) {}
    // Borrow clean buffers (give them back with release()).
    Search(const Graph& g, SearchBuffers&& b)
        : g_(g), d_(std::move(b.d)), want_(std::move(b.want)), touched_(std::move(b.touched)),
          wanted_(std::move(b.wanted)), heap_(std::move(b.heap)) {
        if (d_.size() < static_cast<size_t>(g.n)) d_.resize(g.n, kInf);
        if (want_.size() < static_cast<size_t>(g.n)) want_.resize(g.n, 0);
    }
    SearchBuffers release() {
        reset();
        return SearchBuffers{std::move(d_), std::move(want_), std::move(touched_),
                             std::move(wanted_), std::move(heap_)};
    }

    const double* dist() const { return d_.data(); }
    std::vector<double>& dist_vector() { return d_; }
    // Mark u as a node the next run() must settle; false when it already was.
    bool want(int32_t u) {
        if (want_[u]) return false;
        want_[u] = 1;
        wanted_.push_back(u);
        return true;
    }
    // Search from root; with no node wanted, to the end.
    void run(int32_t root) {
        int32_t left = static_cast<int32_t>(wanted_.size());
        const bool all = left == 0;
        const auto& off = Forward ? g_.out_offsets : g_.in_offsets;
        const auto& other = Forward ? g_.out_heads : g_.in_tails;
        const auto& arcs = Forward ? g_.out_arcs : g_.in_arcs;
        double* d = d_.data();
        d[root] = 0.0;
        touched_.push_back(root);
        if (!all && want_[root] && --left == 0) return;
        if (g_.uniform_weights) {
            const double w = g_.weight.empty() ? 1.0 : g_.weight[0];
            for (size_t head = touched_.size() - 1; head < touched_.size(); ++head) {
                const int32_t u = touched_[head];
                const double du = d[u] + w;
                for (int32_t i = off[u]; i < off[u + 1]; ++i) {
                    const int32_t v = other[i];
                    if (d[v] != kInf) continue;
                    d[v] = du;
                    touched_.push_back(v);
                    if (!all && want_[v] && --left == 0) return;
                }
            }
            return;
        }
        using Item = std::pair<double, int32_t>;
        heap_.clear();
        heap_.push_back({0.0, root});
        while (!heap_.empty()) {
            std::pop_heap(heap_.begin(), heap_.end(), std::greater<Item>());
            const auto [du, u] = heap_.back();
            heap_.pop_back();
            if (du > d[u]) continue;
            if (!all && u != root && want_[u] && --left == 0) return;
            for (int32_t i = off[u]; i < off[u + 1]; ++i) {
                const int32_t v = other[i];
                const double nd = du + g_.weight[arcs[i]];
                if (nd < d[v]) {
                    if (d[v] == kInf) touched_.push_back(v);
                    d[v] = nd;
                    heap_.push_back({nd, v});
                    std::push_heap(heap_.begin(), heap_.end(), std::greater<Item>());
                }
            }
        }
    }
    // Back to all kInf and nothing wanted, in time proportional to what the last run touched.
    void reset() {
        for (int32_t u : touched_) d_[u] = kInf;
        for (int32_t u : wanted_) want_[u] = 0;
        touched_.clear();
        wanted_.clear();
    }

private:
    const Graph& g_;
    std::vector<double> d_;
    std::vector<uint8_t> want_;
    std::vector<int32_t> touched_, wanted_;
    std::vector<std::pair<double, int32_t>> heap_;
};

// Sparse ECMP propagation of one unit from s towards t over the next-hop DAG given by dt.
// Nodes are processed in decreasing distance to t (ties: node id), so all inflow has arrived.
class Propagator {
public:
    explicit Propagator(const Graph& g) : g_(g), flow_(g.n, 0.0), queued_(g.n, 0) {}

    void run(const double* dt, int32_t s, int32_t t, std::vector<std::pair<int32_t, double>>& out) {
        out.clear();
        if (s == t || !(dt[s] < kInf)) return;
        auto later = [dt](int32_t a, int32_t b) {  // heap order: largest dt first, then node id
            if (dt[a] != dt[b]) return dt[a] < dt[b];
            return a > b;
        };
        heap_.clear();
        touched_.clear();
        flow_[s] = 1.0;
        queued_[s] = 1;
        touched_.push_back(s);
        heap_.push_back(s);
        while (!heap_.empty()) {
            std::pop_heap(heap_.begin(), heap_.end(), later);
            int32_t u = heap_.back();
            heap_.pop_back();
            if (u == t) continue;
            int32_t nh = 0;
            for (int32_t i = g_.out_offsets[u]; i < g_.out_offsets[u + 1]; ++i)
                if (is_next_hop(g_, dt, g_.out_arcs[i])) ++nh;
            if (nh == 0) continue;  // cannot happen for a node that reaches t
            double share = flow_[u] / nh;
            for (int32_t i = g_.out_offsets[u]; i < g_.out_offsets[u + 1]; ++i) {
                int32_t a = g_.out_arcs[i];
                if (!is_next_hop(g_, dt, a)) continue;
                out.emplace_back(a, share);
                int32_t v = g_.dst[a];
                flow_[v] += share;
                if (!queued_[v]) {
                    queued_[v] = 1;
                    touched_.push_back(v);
                    heap_.push_back(v);
                    std::push_heap(heap_.begin(), heap_.end(), later);
                }
            }
        }
        for (int32_t u : touched_) {
            flow_[u] = 0.0;
            queued_[u] = 0;
        }
        std::sort(out.begin(), out.end());
    }

private:
    const Graph& g_;
    std::vector<double> flow_;
    std::vector<uint8_t> queued_;
    std::vector<int32_t> heap_, touched_;
};

}  // namespace

std::vector<double> distances_from(const Graph& g, int32_t source, const uint8_t* alive) {
    check_node(g, source, "source");
    if (alive) return dijkstra<true>(g, source, alive);
    // per-thread search arrays (as shortest_paths): only the answer is allocated per call
    thread_local SearchBuffers search_buffers;
    Search<true> search(g, std::move(search_buffers));
    search.run(source);
    std::vector<double> out(search.dist(), search.dist() + g.n);
    search_buffers = search.release();
    return out;
}

std::vector<double> distances_to(const Graph& g, int32_t target, const uint8_t* alive) {
    check_node(g, target, "target");
    if (alive) return dijkstra<false>(g, target, alive);
    Search<false> search(g);
    search.run(target);
    return std::move(search.dist_vector());
}

// Distances to t for one pair's DAG: exact for every node closer than s (the search stops
// when s is settled), which is all the DAG from s reads.
static std::vector<double> distances_for_pair(const Graph& g, int32_t s, int32_t t) {
    check_node(g, s, "source");
    check_node(g, t, "target");
    Search<false> search(g);
    search.want(s);
    search.run(t);
    return std::move(search.dist_vector());
}

std::vector<int32_t> dag_arcs(const Graph& g, int32_t s, int32_t t) {
    std::vector<double> dt = distances_for_pair(g, s, t);
    std::vector<int32_t> out;
    if (s == t || !(dt[s] < kInf)) return out;
    std::vector<uint8_t> seen(g.n, 0);
    std::vector<int32_t> stack{s};
    seen[s] = 1;
    while (!stack.empty()) {
        int32_t u = stack.back();
        stack.pop_back();
        for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i) {
            int32_t a = g.out_arcs[i];
            if (!is_next_hop(g, dt.data(), a)) continue;
            out.push_back(a);
            int32_t v = g.dst[a];
            if (!seen[v]) {
                seen[v] = 1;
                stack.push_back(v);
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

Csr<int32_t> shortest_paths(const Graph& g, int32_t s, int32_t t, int64_t limit) {
    check_node(g, s, "source");
    check_node(g, t, "target");
    // The distances to t (the search stops once s is settled) and the DFS's lists live in
    // per-thread buffers: one pair on a small graph allocates only its answer.
    struct DfsBuffers {
        std::vector<int32_t> start;  // first of u's next nodes in items, -1: not listed yet
        std::vector<int32_t> count, items, listed, path, child;
    };
    thread_local SearchBuffers search_buffers;
    thread_local DfsBuffers dfs;
    Search<false> search(g, std::move(search_buffers));
    search.want(s);
    search.run(t);
    const double* dt = search.dist();
    Csr<int32_t> out;
    if (dt[s] < kInf && limit > 0 && s == t) {
        out.items.push_back(s);
        out.close();
    } else if (dt[s] < kInf && limit > 0) {
        if (dfs.start.size() < static_cast<size_t>(g.n)) {
            dfs.start.resize(g.n, -1);
            dfs.count.resize(g.n, 0);
        }
        for (int32_t u : dfs.listed) dfs.start[u] = -1;  // a call that threw left some
        dfs.items.clear();
        dfs.listed.clear();
        // Distinct next nodes of u, sorted by id (parallel arcs give the same node), listed
        // on first visit.
        auto list = [&](int32_t u) {
            const int32_t first = static_cast<int32_t>(dfs.items.size());
            for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i)
                if (is_next_hop(g, dt, g.out_arcs[i])) dfs.items.push_back(g.out_heads[i]);
            std::sort(dfs.items.begin() + first, dfs.items.end());
            dfs.items.erase(std::unique(dfs.items.begin() + first, dfs.items.end()), dfs.items.end());
            dfs.start[u] = first;
            dfs.count[u] = static_cast<int32_t>(dfs.items.size()) - first;
            dfs.listed.push_back(u);
        };
        // Iterative DFS: path nodes and, per depth, the index of the next child to try.
        auto& path = dfs.path;
        auto& child = dfs.child;
        path.assign(1, s);
        child.assign(1, 0);
        list(s);
        while (!path.empty()) {
            const int32_t u = path.back();
            if (u == t) {
                out.items.insert(out.items.end(), path.begin(), path.end());
                out.close();
                if (out.size() >= limit) break;
                path.pop_back();
                child.pop_back();
                continue;
            }
            int32_t& c = child.back();
            if (c >= dfs.count[u]) {
                path.pop_back();
                child.pop_back();
                continue;
            }
            const int32_t v = dfs.items[static_cast<size_t>(dfs.start[u] + c++)];
            if (dfs.start[v] < 0) list(v);
            path.push_back(v);
            child.push_back(0);
        }
        for (int32_t u : dfs.listed) dfs.start[u] = -1;
    }
    search_buffers = search.release();
    return out;
}

void ecmp_ratios(const Graph& g, int32_t s, int32_t t, std::vector<int32_t>& arcs,
                 std::vector<double>& fractions) {
    check_node(g, s, "source");
    check_node(g, t, "target");
    thread_local SearchBuffers search_buffers;  // as in shortest_paths: no allocation per pair
    thread_local std::vector<std::pair<int32_t, double>> out;
    Search<false> search(g, std::move(search_buffers));
    search.want(s);
    search.run(t);
    Propagator prop(g);
    prop.run(search.dist(), s, t, out);
    search_buffers = search.release();
    arcs.clear();
    fractions.clear();
    arcs.reserve(out.size());
    fractions.reserve(out.size());
    for (auto& [a, f] : out) {
        arcs.push_back(a);
        fractions.push_back(f);
    }
}

SegmentRatios segment_ratios(const Graph& g, const std::vector<int32_t>& sources,
                             const std::vector<int32_t>& targets, int32_t threads) {
    if (sources.size() != targets.size())
        throw std::invalid_argument("sources and targets differ in length (" +
                                    std::to_string(sources.size()) + " vs " +
                                    std::to_string(targets.size()) + ")");
    const size_t p = sources.size();
    for (size_t i = 0; i < p; ++i) {
        check_node(g, sources[i], "source");
        check_node(g, targets[i], "target");
    }
    std::vector<size_t> idx(p);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return targets[a] < targets[b]; });
    std::vector<size_t> groups;  // the pairs of one target: idx[groups[k] .. groups[k + 1])
    for (size_t q = 0; q < p;) {
        groups.push_back(q);
        const int32_t t = targets[idx[q]];
        while (q < p && targets[idx[q]] == t) ++q;
    }
    groups.push_back(p);
    const size_t ng = groups.size() - 1;
    // Each thread appends its pairs' entries to a buffer of its own and notes where each pair's
    // entries start; the result is assembled in pair order afterwards, so it does not depend on
    // which thread took which target.
    // A thread per ~20,000 node and arc visits at most (a search per target, ~100-200 us): a
    // small batch runs inline rather than wait ~50 us for a thread to start.
    const size_t visits = ng * (static_cast<size_t>(g.n) + static_cast<size_t>(g.num_arcs()));
    const int32_t nt = thread_count(threads, std::min(ng, visits / 20000));
    std::vector<std::vector<int32_t>> arcs(nt);
    std::vector<std::vector<double>> fractions(nt);
    std::vector<int32_t> owner(p, 0);
    std::vector<int64_t> start(p, 0), count(p, 0);
    std::atomic<size_t> next{0};
    std::atomic<int32_t> next_thread{0};
    auto work = [&](const std::atomic<bool>& failed) {
        const int32_t me = next_thread.fetch_add(1);
        auto& my_arcs = arcs[me];
        auto& my_fractions = fractions[me];
        Search<false> search(g);
        Propagator prop(g);
        std::vector<std::pair<int32_t, double>> out;
        for (;;) {
            const size_t k = next.fetch_add(1);
            if (k >= ng || failed.load(std::memory_order_relaxed)) break;
            const int32_t t = targets[idx[groups[k]]];
            search.reset();
            for (size_t q = groups[k]; q < groups[k + 1]; ++q) search.want(sources[idx[q]]);
            search.run(t);
            for (size_t q = groups[k]; q < groups[k + 1]; ++q) {
                const size_t i = idx[q];
                prop.run(search.dist(), sources[i], t, out);
                owner[i] = me;
                start[i] = static_cast<int64_t>(my_arcs.size());
                count[i] = static_cast<int64_t>(out.size());
                for (auto& [a, f] : out) {
                    my_arcs.push_back(a);
                    my_fractions.push_back(f);
                }
            }
        }
    };
    run_threads(nt, work);
    SegmentRatios r;
    r.offsets.assign(p + 1, 0);
    for (size_t i = 0; i < p; ++i) r.offsets[i + 1] = r.offsets[i] + count[i];
    r.arcs.resize(static_cast<size_t>(r.offsets[p]));
    r.fractions.resize(static_cast<size_t>(r.offsets[p]));
    for (size_t i = 0; i < p; ++i) {
        const auto& a = arcs[owner[i]];
        const auto& f = fractions[owner[i]];
        std::copy(a.begin() + start[i], a.begin() + start[i] + count[i], r.arcs.begin() + r.offsets[i]);
        std::copy(f.begin() + start[i], f.begin() + start[i] + count[i],
                  r.fractions.begin() + r.offsets[i]);
    }
    return r;
}

std::vector<double> distance_matrix(const Graph& g, int32_t threads) {
    const bool uniform = g.uniform_weights;
    // Symmetric, one weight: by structure (cpp/src/distances.cpp), past the size where setting
    // it up (neighbour lists, peeling, chains) costs more than the searches it saves (Abilene,
    // 11 routers: 1.15 against 0.99 us; Geant2012, 40: 3.9 against 3.5; Cogentco, 197: 50
    // against 61).
    constexpr int32_t kStructureFrom = 64;
    if (uniform && g.arcs_paired && !g.weight.empty() && g.n >= kStructureFrom)
        return distance_matrix_symmetric(g, threads);
    const size_t n = static_cast<size_t>(g.n);
    const size_t m = static_cast<size_t>(g.num_arcs());
    std::vector<double> out(n * n);
    if (n == 0) return out;
    const double w = g.weight.empty() ? 1.0 : g.weight[0];
    // Uniform weights (a directed graph, or a symmetric one below kStructureFrom routers):
    // the rows of an independent set of low out-degree nodes are derived from
    // their out-neighbours' rows instead of searched: d(u, b) = w + min over out-neighbours v
    // of d(v, b) (b != u), the same sum the breadth-first search makes (w added to the
    // previous level's value), bit for bit, at a few cycles per entry, vectorised. No two
    // derived nodes are adjacent (either way), so their neighbours' rows are all searched
    // first. Greedy by out-degree, then id; on the Zoo's pruned networks, where most routers
    // have two neighbours, it derives about 45 % of the rows (Kdl: 316 of 680; Kdl now takes
    // distances.cpp's way, 226 searches of 754).
    constexpr int32_t kMaxDerivedDegree = 8;
    std::vector<int32_t> derived, searched;
    if (uniform) {
        std::vector<int32_t> by_degree(n);
        std::iota(by_degree.begin(), by_degree.end(), 0);
        auto outdeg = [&](int32_t u) { return g.out_offsets[u + 1] - g.out_offsets[u]; };
        std::stable_sort(by_degree.begin(), by_degree.end(),
                         [&](int32_t a, int32_t b) { return outdeg(a) < outdeg(b); });
        std::vector<uint8_t> blocked(n, 0);
        for (int32_t u : by_degree) {
            if (blocked[u] || outdeg(u) > kMaxDerivedDegree) continue;
            derived.push_back(u);
            blocked[u] = 1;
            for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i) blocked[g.out_heads[i]] = 1;
            for (int32_t i = g.in_offsets[u]; i < g.in_offsets[u + 1]; ++i) blocked[g.in_tails[i]] = 1;
        }
        std::vector<uint8_t> is_derived(n, 0);
        for (int32_t u : derived) is_derived[u] = 1;
        for (size_t u = 0; u < n; ++u)
            if (!is_derived[u]) searched.push_back(static_cast<int32_t>(u));
    } else {
        searched.resize(n);
        std::iota(searched.begin(), searched.end(), 0);
    }
    // Searches in blocks of kBlock; one thread per kWork node and arc visits at most, so a
    // small graph is not slowed down by starting threads (~50 us each) for ~100 us of work.
    constexpr size_t kBlock = 8;
    constexpr size_t kWork = 100000;
    {
        const size_t nblocks = (searched.size() + kBlock - 1) / kBlock;
        std::atomic<size_t> next{0};
        auto work = [&](const std::atomic<bool>& failed) {
            std::vector<int32_t> queue(uniform ? n : 0);
            // the Dijkstra search only for real weights: its arrays are two allocations of n,
            // a third of a small graph's whole matrix
            std::optional<Search<false>> search;
            if (!uniform) search.emplace(g);
            for (;;) {
                const size_t blk = next.fetch_add(1);
                if (blk >= nblocks || failed.load(std::memory_order_relaxed)) break;
                for (size_t q = blk * kBlock; q < std::min(searched.size(), (blk + 1) * kBlock); ++q) {
                    const int32_t a = searched[q];
                    double* d = out.data() + static_cast<size_t>(a) * n;
                    if (uniform) {
                        bfs_row(g, a, w, d, queue.data());
                    } else {  // row a of the transpose: distances *to* a (see below)
                        search->reset();
                        search->run(a);
                        std::copy(search->dist(), search->dist() + n, d);
                    }
                }
            }
        };
        const size_t total = searched.size() * (n + m);
        run_threads(thread_count(threads, std::min(nblocks, total / kWork)), work);
    }
    if (!derived.empty()) {
        const size_t nblocks = (derived.size() + kBlock - 1) / kBlock;
        std::atomic<size_t> next{0};
        auto work = [&](const std::atomic<bool>& failed) {
            for (;;) {
                const size_t blk = next.fetch_add(1);
                if (blk >= nblocks || failed.load(std::memory_order_relaxed)) break;
                for (size_t q = blk * kBlock; q < std::min(derived.size(), (blk + 1) * kBlock); ++q) {
                    const int32_t u = derived[q];
                    double* d = out.data() + static_cast<size_t>(u) * n;
                    std::fill(d, d + n, kInf);
                    for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i) {
                        const double* r = out.data() + static_cast<size_t>(g.out_heads[i]) * n;
                        for (size_t b = 0; b < n; ++b) d[b] = r[b] < d[b] ? r[b] : d[b];
                    }
                    for (size_t b = 0; b < n; ++b) d[b] += w;  // inf stays inf
                    d[u] = 0.0;
                }
            }
        };
        // About a tenth of a search's cost per neighbour row, per entry.
        const size_t total = derived.size() * n / 4;
        run_threads(thread_count(threads, std::min(nblocks, total / kWork)), work);
    }
    if (!uniform) {
        // Other weights: the distances to each b, by a search backwards from b (the sums
        // Routing makes, in the same order, so the two matrices are equal to the last bit;
        // a forward search from a adds the same weights in another order, which can differ
        // in the last bit for weights such as 0.1), transposed in tiles.
        std::vector<double> to(std::move(out));
        out.assign(n * n, kInf);
        constexpr size_t kTile = 64;
        for (size_t b0 = 0; b0 < n; b0 += kTile)
            for (size_t a0 = 0; a0 < n; a0 += kTile)
                for (size_t b = b0; b < std::min(n, b0 + kTile); ++b)
                    for (size_t a = a0; a < std::min(n, a0 + kTile); ++a)
                        out[a * n + b] = to[b * n + a];
    }
    return out;
}

// ------------------------------------------------------------------ Routing
namespace {
// The nodes with d[u] < kInf in increasing distance, ties by node id, into out; returns how
// many. With whole-number distances below 16 n (hop weights, small integer weights) a counting
// sort by distance (stable: ids ascend within a distance), else a comparison sort.
int32_t order_by_distance(const double* d, int32_t n, bool integer, int32_t* out,
                          std::vector<int32_t>& tmp, std::vector<int32_t>& counts) {
    double top = 0.0;
    int32_t len = 0;
    for (int32_t u = 0; u < n; ++u)
        if (d[u] < kInf) {
            ++len;
            top = std::max(top, d[u]);
        }
    const double limit = 16.0 * std::max(n, 1);
    if (integer && top < limit) {
        const size_t buckets = static_cast<size_t>(top) + 2;
        counts.assign(buckets, 0);
        for (int32_t u = 0; u < n; ++u)
            if (d[u] < kInf) ++counts[static_cast<size_t>(d[u]) + 1];
        for (size_t b = 1; b < buckets; ++b) counts[b] += counts[b - 1];
        for (int32_t u = 0; u < n; ++u)
            if (d[u] < kInf) out[counts[static_cast<size_t>(d[u])]++] = u;
        return len;
    }
    tmp.clear();
    for (int32_t u = 0; u < n; ++u)
        if (d[u] < kInf) tmp.push_back(u);
    std::sort(tmp.begin(), tmp.end(),
              [&](int32_t x, int32_t y) { return d[x] != d[y] ? d[x] < d[y] : x < y; });
    std::copy(tmp.begin(), tmp.end(), out);
    return len;
}
}  // namespace

Routing::Routing(const Graph& g, int32_t threads) : g_(g) {
    const int32_t n = g_.n;
    const size_t nz = static_cast<size_t>(n);
    const size_t nn = nz * nz;
    // Whole-number distances (integer weights, sums below 2^53): the counting sort applies.
    const bool integer = g_.integer_weights;
    dist_.assign(nn, kInf);
    dist_to_.assign(nn, kInf);
    to_order_.assign(nn, 0);
    to_len_.assign(n, 0);
    from_order_.assign(nn, 0);
    from_len_.assign(n, 0);
    nh_off_.assign(nz * (nz + 1), 0);
    // A thread per 8 destinations and per ~50,000 node and arc visits at most (a search and
    // a DAG per destination): a small table is built inline, not after a thread's ~50 us start.
    const size_t visits = nz * (nz + static_cast<size_t>(g_.num_arcs()));
    const int32_t nt = thread_count(threads, std::min(nz / 8, visits / 50000));
    // Destinations: distances to b, the nodes by distance to b, the next hops towards b. Each
    // destination's next-hop arcs go to a list of its own (offsets relative to it), joined in
    // destination order below, so the tables do not depend on the threads.
    std::vector<std::vector<int32_t>> nh(nz);
    {
        std::atomic<size_t> next{0};
        run_threads(nt, [&](const std::atomic<bool>& failed) {
            Search<false> search(g_);
            std::vector<int32_t> tmp, counts;
            for (;;) {
                const size_t b = next.fetch_add(1);
                if (b >= nz || failed.load(std::memory_order_relaxed)) break;
                search.reset();
                search.run(static_cast<int32_t>(b));
                const double* dt = search.dist();
                std::copy(dt, dt + nz, dist_to_.begin() + b * nz);
                to_len_[b] = order_by_distance(dt, n, integer, &to_order_[b * nz], tmp, counts);
                auto& mine = nh[b];
                int64_t* off = &nh_off_[b * (nz + 1)];
                for (int32_t u = 0; u < n; ++u) {
                    for (int32_t i = g_.out_offsets[u]; i < g_.out_offsets[u + 1]; ++i)
                        if (is_next_hop(g_, dt, g_.out_arcs[i])) mine.push_back(g_.out_arcs[i]);
                    off[u + 1] = static_cast<int64_t>(mine.size());
                }
            }
        });
    }
    size_t total = 0;
    for (size_t b = 0; b < nz; ++b) total += nh[b].size();
    nh_arcs_.reserve(total);
    for (size_t b = 0; b < nz; ++b) {
        const int64_t base = static_cast<int64_t>(nh_arcs_.size());
        for (size_t u = 0; u <= nz; ++u) nh_off_[b * (nz + 1) + u] += base;
        nh_arcs_.insert(nh_arcs_.end(), nh[b].begin(), nh[b].end());
        std::vector<int32_t>().swap(nh[b]);
    }
    // dist_ = the transpose of dist_to_, in tiles that stay in cache.
    constexpr size_t kTile = 64;
    for (size_t b0 = 0; b0 < nz; b0 += kTile)
        for (size_t a0 = 0; a0 < nz; a0 += kTile)
            for (size_t b = b0; b < std::min(nz, b0 + kTile); ++b)
                for (size_t a = a0; a < std::min(nz, a0 + kTile); ++a)
                    dist_[a * nz + b] = dist_to_[b * nz + a];
    // Sources: the nodes by distance from a, and the tree-DAG out of a, its arcs (u -> v)
    // sorted by the position of v in that order, then arc id: v in order, and v's incoming
    // arcs in id order (in_arcs is sorted by id within a node), with no sort.
    std::vector<std::vector<int32_t>> dag(nz);
    {
        std::atomic<size_t> next{0};
        run_threads(nt, [&](const std::atomic<bool>& failed) {
            std::vector<int32_t> tmp, counts;
            for (;;) {
                const size_t a = next.fetch_add(1);
                if (a >= nz || failed.load(std::memory_order_relaxed)) break;
                const double* row = &dist_[a * nz];
                int32_t* order = &from_order_[a * nz];
                const int32_t len = order_by_distance(row, n, integer, order, tmp, counts);
                from_len_[a] = len;
                auto& mine = dag[a];
                for (int32_t i = 0; i < len; ++i) {
                    const int32_t v = order[i];
                    const double dv = row[v];
                    for (int32_t j = g_.in_offsets[v]; j < g_.in_offsets[v + 1]; ++j) {
                        const int32_t e = g_.in_arcs[j];
                        const double du = row[g_.src[e]];
                        if (du < dv && g_.same_cost(du + g_.weight[e], dv)) mine.push_back(e);
                    }
                }
            }
        });
    }
    from_off_.assign(nz + 1, 0);
    for (size_t a = 0; a < nz; ++a) from_off_[a + 1] = from_off_[a] + static_cast<int64_t>(dag[a].size());
    from_arcs_.reserve(static_cast<size_t>(from_off_[nz]));
    for (size_t a = 0; a < nz; ++a) {
        from_arcs_.insert(from_arcs_.end(), dag[a].begin(), dag[a].end());
        std::vector<int32_t>().swap(dag[a]);
    }
}

const int32_t* Routing::dag_from(int32_t a, int32_t& len) const {
    len = static_cast<int32_t>(from_off_[a + 1] - from_off_[a]);
    return from_arcs_.data() + from_off_[a];
}

const int32_t* Routing::order_to(int32_t b, int32_t& len) const {
    len = to_len_[b];
    return &to_order_[static_cast<size_t>(b) * g_.n];
}

const int32_t* Routing::order_from(int32_t a, int32_t& len) const {
    len = from_len_[a];
    return &from_order_[static_cast<size_t>(a) * g_.n];
}

const int32_t* Routing::next_hops(int32_t b, int32_t u, int32_t& len) const {
    size_t base = static_cast<size_t>(b) * (g_.n + 1) + u;
    len = static_cast<int32_t>(nh_off_[base + 1] - nh_off_[base]);
    return nh_arcs_.data() + nh_off_[base];
}

void Routing::segment_costs(const double* price, double* out) const {
    const int32_t n = g_.n;
    std::fill(out, out + static_cast<size_t>(n) * n, kInf);
    std::vector<double> col(n, kInf);
    for (int32_t b = 0; b < n; ++b) {
        int32_t len;
        const int32_t* order = order_to(b, len);
        for (int32_t i = 0; i < len; ++i) {
            int32_t u = order[i];
            double c = 0.0;
            if (u != b) {
                int32_t nh;
                const int32_t* arcs = next_hops(b, u, nh);
                for (int32_t j = 0; j < nh; ++j) c += price[arcs[j]] + col[g_.dst[arcs[j]]];
                c /= nh;
            }
            col[u] = c;
            out[static_cast<size_t>(u) * n + b] = c;
        }
    }
}

void Routing::dag_min_costs(const double* price, double* out, int32_t* next) const {
    const int32_t n = g_.n;
    const size_t nz = static_cast<size_t>(n);
    std::fill(out, out + nz * nz, kInf);
    std::fill(next, next + nz * nz, -1);
    std::vector<double> col(n, kInf);
    for (int32_t b = 0; b < n; ++b) {
        int32_t len;
        const int32_t* order = order_to(b, len);
        for (int32_t i = 0; i < len; ++i) {
            int32_t u = order[i];
            double c = 0.0;
            int32_t best = -1;
            if (u != b) {
                c = kInf;
                int32_t nh;
                const int32_t* arcs = next_hops(b, u, nh);
                for (int32_t j = 0; j < nh; ++j) {
                    double x = price[arcs[j]] + col[g_.dst[arcs[j]]];
                    if (x < c || (x == c && arcs[j] < best)) { c = x; best = arcs[j]; }
                }
            }
            col[u] = c;
            out[static_cast<size_t>(u) * nz + b] = c;
            next[static_cast<size_t>(u) * nz + b] = best;
        }
    }
}

// ------------------------------------------------------------------ sr-paths
namespace {
inline bool improves(double cand, double cur) {
    if (!(cand < cur)) return false;
    if (cur == kInf) return true;
    return cur - cand > 1e-9 * std::max(std::fabs(cand), std::fabs(cur));
}
}  // namespace

std::vector<double> path_price_bounds(const Graph& g, const double* price,
                                      const std::vector<int32_t>& sources,
                                      const std::vector<int32_t>& targets, double limit,
                                      int32_t threads) {
    if (sources.size() != targets.size())
        throw std::invalid_argument("sources and targets differ in length");
    const size_t p = sources.size();
    for (size_t i = 0; i < p; ++i) {
        check_node(g, sources[i], "source");
        check_node(g, targets[i], "target");
    }
    for (int32_t a = 0; a < g.num_arcs(); ++a)
        if (!(price[a] >= 0.0)) throw std::invalid_argument("prices must be >= 0");
    std::vector<size_t> idx(p);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return sources[a] < sources[b]; });
    std::vector<size_t> groups;
    for (size_t q = 0; q < p;) {
        groups.push_back(q);
        const int32_t s = sources[idx[q]];
        while (q < p && sources[idx[q]] == s) ++q;
    }
    groups.push_back(p);
    const size_t ng = groups.size() - 1;
    std::vector<double> out(p, kInf);
    std::atomic<size_t> next{0};
    auto work = [&](const std::atomic<bool>& failed) {
        std::vector<double> d(g.n, kInf);
        std::vector<int32_t> touched;
        using Item = std::pair<double, int32_t>;
        std::vector<Item> heap;
        for (;;) {
            const size_t gi = next.fetch_add(1);
            if (gi >= ng || failed.load(std::memory_order_relaxed)) break;
            for (int32_t u : touched) d[u] = kInf;
            touched.clear();
            heap.clear();
            const int32_t s = sources[idx[groups[gi]]];
            d[s] = 0.0;
            touched.push_back(s);
            heap.push_back({0.0, s});
            while (!heap.empty()) {  // stops at the limit: farther nodes keep kInf
                std::pop_heap(heap.begin(), heap.end(), std::greater<Item>());
                auto [du, u] = heap.back();
                heap.pop_back();
                if (du > d[u]) continue;
                if (du >= limit) break;
                for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i) {
                    const int32_t v = g.out_heads[i];
                    const double nd = du + price[g.out_arcs[i]];
                    if (nd < d[v]) {
                        if (d[v] == kInf) touched.push_back(v);
                        d[v] = nd;
                        heap.push_back({nd, v});
                        std::push_heap(heap.begin(), heap.end(), std::greater<Item>());
                    }
                }
            }
            for (size_t q = groups[gi]; q < groups[gi + 1]; ++q) {
                const double v = d[targets[idx[q]]];
                out[idx[q]] = v < limit ? v : kInf;
            }
        }
    };
    // One thread per 8 sources and per ~50,000 node and arc visits at most.
    const size_t visits = ng * (static_cast<size_t>(g.n) + static_cast<size_t>(g.num_arcs()));
    run_threads(thread_count(threads, std::min(ng / 8, visits / 50000)), work);
    return out;
}

// best[q][t] = min_w prev[q][w] + cost[w][t] for nb rows q (min over nothing: inf), tiled so a
// tile of cost rows is reused by every row q while it is in cache. x86-64 with GCC gets an AVX2
// copy chosen at run time (the loop is plain C++; the values are the same: min is exact).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
void minplus_block(const double* prev, size_t nb, const double* cost, size_t n, double* best) {
    constexpr size_t kTile = 256;
    std::fill(best, best + nb * n, kInf);
    for (size_t t0 = 0; t0 < n; t0 += kTile) {
        const size_t len = std::min(kTile, n - t0);
        for (size_t w = 0; w < n; ++w) {
            const double* row = cost + w * n + t0;
            for (size_t q = 0; q < nb; ++q) {
                const double dw = prev[q * n + w];
                if (!(dw < kInf)) continue;
                double* b = best + q * n + t0;
                for (size_t t = 0; t < len; ++t) {  // branch-free: vectorises
                    const double c = dw + row[t];
                    b[t] = c < b[t] ? c : b[t];
                }
            }
        }
    }
}

SrPaths best_sr_paths(int32_t n, const double* cost, const std::vector<int32_t>& sources,
                      const std::vector<int32_t>& targets, int32_t k, int32_t threads) {
    if (sources.size() != targets.size())
        throw std::invalid_argument("sources and targets differ in length");
    if (k < 1) throw std::invalid_argument("segment limit k = " + std::to_string(k) + " < 1");
    size_t p = sources.size();
    for (size_t i = 0; i < p; ++i)
        if (sources[i] < 0 || sources[i] >= n || targets[i] < 0 || targets[i] >= n)
            throw std::out_of_range("pair " + std::to_string(i) + " (" +
                                    std::to_string(sources[i]) + ", " +
                                    std::to_string(targets[i]) + ") has a node id out of range");
    std::vector<size_t> idx(p);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return sources[a] < sources[b]; });
    const size_t nz = static_cast<size_t>(n);
    std::vector<std::vector<int32_t>> wps(p);
    SrPaths r;
    r.values.assign(p, kInf);
    // The groups of pairs sharing a source (contiguous in idx): each group's DP is independent
    // and writes only its own pairs' results, so threads take whole groups.
    std::vector<size_t> groups;
    for (size_t g = 0; g < p;) {
        groups.push_back(g);
        const int32_t s = sources[idx[g]];
        while (g < p && sources[idx[g]] == s) ++g;
    }
    groups.push_back(p);
    const size_t ng = groups.size() - 1;
    // One source at a time: layers 1..k-2 of the DP for every target, the last layer only for
    // the targets this source's pairs ask for. The layers keep only values (a branch-free min
    // that vectorises); a waypoint is recovered afterwards, for the few (layer, node) a path
    // takes, as the smallest w whose candidate equals the layer's minimum: the same w the
    // scan "first strictly smaller, in increasing w" picks, so the ties stay as documented.
    // Layer j improved at t exactly when D_j(s, t) < D_{j-1}(s, t) (improves() is strict).
    // The last layer reads, per target t, the column cost[., t]: transposed once into
    // costT[col[t] * n + w] = cost[w * n + t], contiguous, for the distinct targets only (a
    // single sr_path call transposes one column, not the whole matrix).
    std::vector<int32_t> col(k > 1 ? nz : 0, -1), distinct;
    if (k > 1)
        for (size_t i = 0; i < p; ++i)
            if (col[targets[i]] < 0) {
                col[targets[i]] = static_cast<int32_t>(distinct.size());
                distinct.push_back(targets[i]);
            }
    std::vector<double> costT(distinct.size() * nz);
    for (size_t w = 0; w < nz; ++w)
        for (size_t c = 0; c < distinct.size(); ++c)
            costT[c * nz + w] = cost[w * nz + static_cast<size_t>(distinct[c])];
    // Sources are taken kSourceBlock at a time: the full layers of a block are one (min, +)
    // product of its rows with the cost matrix (minplus_block), which reads each cost row once
    // per block instead of once per source; a min is exact, so the values are the same.
    constexpr size_t kSourceBlock = 16;
    const size_t nblocks = (ng + kSourceBlock - 1) / kSourceBlock;
    std::atomic<size_t> next{0};
    auto work = [&](const std::atomic<bool>& failed) {
        std::vector<double> D(kSourceBlock * static_cast<size_t>(k) * nz);  // [src][j-1][t]
        std::vector<double> prevs(kSourceBlock * nz), best(kSourceBlock * nz);
        for (;;) {
            const size_t bi = next.fetch_add(1);
            if (bi >= nblocks || failed.load(std::memory_order_relaxed)) break;
            const size_t g0 = bi * kSourceBlock, g1 = std::min(ng, g0 + kSourceBlock);
            const size_t nb = g1 - g0;
            for (size_t q = 0; q < nb; ++q) {
                const int32_t s = sources[idx[groups[g0 + q]]];
                double* Dq = &D[q * k * nz];
                std::copy(cost + s * nz, cost + (s + 1) * nz, Dq);
                Dq[s] = 0.0;
            }
            for (int32_t j = 1; j < k; ++j) {
                if (j < k - 1) {
                    for (size_t q = 0; q < nb; ++q) {  // w = s is never a waypoint
                        const int32_t s = sources[idx[groups[g0 + q]]];
                        const double* prev = &D[(q * k + j - 1) * nz];
                        std::copy(prev, prev + nz, &prevs[q * nz]);
                        prevs[q * nz + s] = kInf;
                    }
                    minplus_block(prevs.data(), nb, cost, nz, best.data());
                    for (size_t q = 0; q < nb; ++q) {
                        const double* prev = &D[(q * k + j - 1) * nz];
                        double* cur = &D[(q * k + j) * nz];
                        const double* bq = &best[q * nz];
                        for (size_t t = 0; t < nz; ++t)
                            cur[t] = improves(bq[t], prev[t]) ? bq[t] : prev[t];
                    }
                } else {
                    for (size_t q = 0; q < nb; ++q) {
                        const size_t g = groups[g0 + q], g_end = groups[g0 + q + 1];
                        const size_t s = static_cast<size_t>(sources[idx[g]]);
                        const double* prev = &D[(q * k + j - 1) * nz];
                        double* cur = &D[(q * k + j) * nz];
                        // w = s is never a waypoint here either: the recovery below never
                        // picks it, so the value must not come from it. With costs >= 0 it
                        // changes nothing (D_{j-1}(s, s) = 0, so w = s gives D_1(s, t), no
                        // gain); a negative cost could make it the only minimum, and the
                        // recovery would then find no waypoint.
                        auto min_over = [&](const double* ct, size_t w0, size_t w1, double bt) {
                            for (size_t w = w0; w < w1; ++w) {
                                const double c = prev[w] + ct[w];
                                bt = c < bt ? c : bt;
                            }
                            return bt;
                        };
                        for (size_t pq = g; pq < g_end; ++pq) {
                            const size_t t = static_cast<size_t>(targets[idx[pq]]);
                            const double* ct = &costT[static_cast<size_t>(col[t]) * nz];
                            const double bt = min_over(ct, s + 1, nz, min_over(ct, 0, s, kInf));
                            cur[t] = improves(bt, prev[t]) ? bt : prev[t];
                        }
                    }
                }
            }
            for (size_t q = 0; q < nb; ++q) {
                const size_t g = groups[g0 + q], g_end = groups[g0 + q + 1];
                const int32_t s = sources[idx[g]];
                const double* Dq = &D[q * k * nz];
                for (size_t pq = g; pq < g_end; ++pq) {
                    const size_t i = idx[pq];
                    const int32_t t = targets[i];
                    r.values[i] = s == t ? 0.0 : Dq[(k - 1) * nz + t];
                    if (s == t || !(r.values[i] < kInf)) continue;
                    int32_t node = t;
                    for (int32_t j = k - 1; j >= 1; --j) {
                        const double* prev = &Dq[(j - 1) * nz];
                        const double want = Dq[j * nz + node];
                        if (!(want < prev[node])) continue;  // layer j kept the shorter path
                        int32_t w = 0;
                        for (; w < n; ++w)
                            if (w != s && prev[w] < kInf &&
                                prev[w] + cost[static_cast<size_t>(w) * nz + node] == want)
                                break;
                        // Layer j took its value from one of exactly these candidates, with
                        // the same additions, so one matches. If none did, w would be n, no
                        // node: pushed as a waypoint it would index past the matrices in the
                        // next step and in the caller, so fail loudly instead.
                        if (w == n)
                            throw std::logic_error(
                                "best_sr_paths: no waypoint gives D_" + std::to_string(j + 1) +
                                "(" + std::to_string(s) + ", " + std::to_string(node) +
                                ") = " + std::to_string(want) +
                                ": the DP and its waypoint recovery disagree (a bug)");
                        wps[i].push_back(w);
                        node = w;
                    }
                    std::reverse(wps[i].begin(), wps[i].end());
                }
            }
        }
    };
    // Threads: a source block each at most, within the budget.
    run_threads(thread_count(threads, nblocks), work);
    r.offsets.assign(p + 1, 0);
    for (size_t i = 0; i < p; ++i) {
        r.offsets[i + 1] = r.offsets[i] + wps[i].size();
        r.waypoints.insert(r.waypoints.end(), wps[i].begin(), wps[i].end());
    }
    return r;
}

}  // namespace tpc
