// Link-disjoint paths between two routers: max-flow, greedy Dijkstra and segment-limited (sps).
// docs/method.md §5. Disjointness is on undirected links (arc / 2).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "tpcstudy/paths.hpp"

namespace tpc {

namespace {

struct PathOut {
    std::vector<int32_t> nodes, waypoints, links;
    double cost = 0.0;
};

// Everything one thread needs for one pair at a time; buffers are reused across pairs.
class Worker {
public:
    Worker(const Graph& g, const Routing* r, int32_t k)
        : g_(g), r_(r), k_(k), m_(g.num_arcs()), arc_alive_(m_, 1), flow_(m_, 0),
          used_(m_, 0), parent_(g.n, -1), seen_(g.n, 0), pos_(g.n, -1), dist_(g.n, kInf) {
        if (r_) {
            size_t nn = static_cast<size_t>(g.n) * g.n;
            blocked_.assign(nn, 0);
            blocked_stamp_.assign(g.n, 0);
            gk_.assign(static_cast<size_t>(k_ + 1) * g.n, kInf);
            predn_.assign(static_cast<size_t>(k_ + 1) * g.n, -1);
            mark_.assign(g.n, 0);
        }
    }

    // `paths` false: only how many (max skips its flow decomposition; the others find the
    // paths anyway, since each path's links decide the next one). Then `out` holds that many
    // empty records.
    std::vector<PathOut> run(int32_t s, int32_t t, DisjointMethod method, bool paths = true) {
        std::vector<PathOut> out;
        if (s == t) return out;
        std::fill(arc_alive_.begin(), arc_alive_.end(), 1);
        dead_arcs_.clear();
        switch (method) {
            case DisjointMethod::max: max_flow(s, t, out, paths); break;
            case DisjointMethod::greedy: greedy(s, t, out); break;
            case DisjointMethod::sps: sps(s, t, out); break;
        }
        return out;
    }

private:
    const Graph& g_;
    const Routing* r_;
    int32_t k_, m_;
    std::vector<uint8_t> arc_alive_;
    std::vector<uint8_t> flow_, used_;
    std::vector<int32_t> parent_, queue_;
    std::vector<uint32_t> seen_;
    uint32_t stamp_ = 0;
    std::vector<int32_t> pos_;
    // Dijkstra buffers
    std::vector<double> dist_;
    std::vector<int32_t> touched_;
    std::vector<std::pair<double, int32_t>> heap_;
    std::vector<double> full_dist_;  // greedy: distances to full_target_ on the whole graph
    int32_t full_target_ = -1;
    // sps buffers
    std::vector<uint8_t> blocked_;          // blocked_[x * n + b]: segment x -> b unusable
    std::vector<uint32_t> blocked_stamp_;   // row x valid when == iter_stamp_
    uint32_t iter_stamp_ = 0;
    std::vector<double> gk_;                // gk_[j * n + x]: best cost reaching x with j segments
    std::vector<int32_t> predn_;            // predecessor node of (j, x)
    std::vector<int32_t> gk_touched_;
    std::vector<uint8_t> mark_;
    std::vector<int32_t> dead_arcs_;        // arcs killed for the current pair
    std::vector<int32_t> xdead_;            // heads of the dead arcs in one source's DAG
    std::vector<int32_t> path_;             // live_path_bound's path
    std::vector<int32_t> open_, frontier_, next_;  // second_segments' search

    uint32_t next_stamp() {
        if (++stamp_ == 0) {
            std::fill(seen_.begin(), seen_.end(), 0);
            stamp_ = 1;
        }
        return stamp_;
    }

    void kill_links(const std::vector<int32_t>& links) {
        for (int32_t l : links) {
            arc_alive_[2 * l] = arc_alive_[2 * l + 1] = 0;
            dead_arcs_.push_back(2 * l);
            dead_arcs_.push_back(2 * l + 1);
        }
    }

    static void finish(PathOut& p) {
        std::sort(p.links.begin(), p.links.end());
        p.links.erase(std::unique(p.links.begin(), p.links.end()), p.links.end());
    }

    // ---------------------------------------------------------------- max: Edmonds-Karp
    // Unit capacity in each direction of a link; pushing along a cancels flow on a ^ 1 first, so
    // at most one direction of a link carries flow and the residual capacity of a is 1 iff
    // flow[a] == 0.
    void max_flow(int32_t s, int32_t t, std::vector<PathOut>& out, bool paths) {
        std::fill(flow_.begin(), flow_.end(), 0);
        int32_t count = 0;
        // No more paths than links at either end: stop there and skip the final, failing search.
        const int32_t bound = std::min(g_.out_offsets[s + 1] - g_.out_offsets[s],
                                       g_.in_offsets[t + 1] - g_.in_offsets[t]);
        while (count < bound) {
            uint32_t st = next_stamp();
            queue_.clear();
            queue_.push_back(s);
            seen_[s] = st;
            bool found = false;
            for (size_t qi = 0; qi < queue_.size() && !found; ++qi) {
                int32_t u = queue_[qi];
                for (int32_t i = g_.out_offsets[u]; i < g_.out_offsets[u + 1]; ++i) {
                    int32_t a = g_.out_arcs[i];
                    int32_t v = g_.dst[a];
                    if (flow_[a] || seen_[v] == st) continue;
                    seen_[v] = st;
                    parent_[v] = a;
                    if (v == t) {
                        found = true;
                        break;
                    }
                    queue_.push_back(v);
                }
            }
            if (!found) break;
            for (int32_t v = t; v != s;) {
                int32_t a = parent_[v];
                if (flow_[a ^ 1]) flow_[a ^ 1] = 0;
                else flow_[a] = 1;
                v = g_.src[a];
            }
            ++count;
        }
        if (!paths) {
            out.resize(static_cast<size_t>(count));
            return;
        }
        // Decompose: walk from s along unused flow arcs (smallest arc id first), cutting cycles.
        std::fill(used_.begin(), used_.end(), 0);
        for (int32_t c = 0; c < count; ++c) {
            std::vector<int32_t> nodes{s}, arcs;
            pos_[s] = 0;
            int32_t u = s;
            while (u != t) {
                int32_t pick = -1;
                for (int32_t i = g_.out_offsets[u]; i < g_.out_offsets[u + 1]; ++i) {
                    int32_t a = g_.out_arcs[i];
                    if (flow_[a] && !used_[a]) {
                        pick = a;
                        break;
                    }
                }
                if (pick < 0) throw std::logic_error("flow decomposition lost conservation");
                used_[pick] = 1;
                int32_t v = g_.dst[pick];
                if (pos_[v] >= 0) {  // a cycle: drop it
                    for (size_t i = pos_[v] + 1; i < nodes.size(); ++i) pos_[nodes[i]] = -1;
                    nodes.resize(pos_[v] + 1);
                    arcs.resize(pos_[v]);
                } else {
                    pos_[v] = static_cast<int32_t>(nodes.size());
                    nodes.push_back(v);
                    arcs.push_back(pick);
                }
                u = v;
            }
            for (int32_t x : nodes) pos_[x] = -1;
            PathOut p;
            p.nodes = std::move(nodes);
            for (int32_t a : arcs) {
                p.links.push_back(a / 2);
                p.cost += g_.weight[a];
            }
            finish(p);
            out.push_back(std::move(p));
        }
    }

    // ---------------------------------------------------------------- greedy
    // Reverse Dijkstra from t over live arcs, stopped once s is settled (every node with a
    // smaller distance is then final, which is all the next-hop test needs).
    void dijkstra_to(int32_t t, int32_t stop) {
        for (int32_t u : touched_) dist_[u] = kInf;
        touched_.clear();
        heap_.clear();
        auto cmp = [](const std::pair<double, int32_t>& a, const std::pair<double, int32_t>& b) {
            return a > b;
        };
        dist_[t] = 0.0;
        touched_.push_back(t);
        heap_.push_back({0.0, t});
        while (!heap_.empty()) {
            std::pop_heap(heap_.begin(), heap_.end(), cmp);
            auto [du, u] = heap_.back();
            heap_.pop_back();
            if (du > dist_[u]) continue;
            if (u == stop) break;
            for (int32_t i = g_.in_offsets[u]; i < g_.in_offsets[u + 1]; ++i) {
                int32_t a = g_.in_arcs[i];
                if (!arc_alive_[a]) continue;
                int32_t v = g_.src[a];
                double nd = du + g_.weight[a];
                if (nd < dist_[v]) {
                    if (dist_[v] == kInf) touched_.push_back(v);
                    dist_[v] = nd;
                    heap_.push_back({nd, v});
                    std::push_heap(heap_.begin(), heap_.end(), cmp);
                }
            }
        }
    }

    void greedy(int32_t s, int32_t t, std::vector<PathOut>& out) {
        // The first search runs on the whole graph: its distances to t are shared by every pair
        // with this target (pairs arrive grouped by target).
        if (full_target_ != t) {
            full_dist_ = distances_to(g_, t);
            full_target_ = t;
        }
        for (bool first = true;; first = false) {
            if (!first) dijkstra_to(t, s);
            const double* d = first ? full_dist_.data() : dist_.data();
            if (!(d[s] < kInf)) break;
            PathOut p;
            p.cost = d[s];
            p.nodes.push_back(s);
            for (int32_t u = s; u != t;) {
                int32_t pick = -1;
                for (int32_t i = g_.out_offsets[u]; i < g_.out_offsets[u + 1]; ++i) {
                    int32_t a = g_.out_arcs[i];
                    if (!arc_alive_[a] || !is_next_hop(g_, d, a)) continue;
                    if (pick < 0 || g_.dst[a] < g_.dst[pick]) pick = a;
                }
                if (pick < 0) throw std::logic_error("greedy: no next hop on a shortest path");
                p.links.push_back(pick / 2);
                u = g_.dst[pick];
                p.nodes.push_back(u);
            }
            finish(p);
            kill_links(p.links);
            out.push_back(std::move(p));
        }
    }

    // ---------------------------------------------------------------- sps
    // Row x of blocked_: segment x -> b is unusable iff some arc of its ECMP DAG (the arcs
    // (u -> v) with d(x, u) + w + d(v, b) == d(x, b) of the ORIGINAL IGP) is dead. The DAG of
    // x -> b is the set of forward-DAG arcs of x from which b is reached, so one pass over the
    // forward DAG of x in increasing distance decides every b at once.
    const uint8_t* blocked_row(int32_t x) {
        uint8_t* row = &blocked_[static_cast<size_t>(x) * g_.n];
        if (blocked_stamp_[x] == iter_stamp_) return row;
        blocked_stamp_[x] = iter_stamp_;
        int32_t len, na;
        const int32_t* order = r_->order_from(x, len);
        const int32_t* arcs = r_->dag_from(x, na);
        std::fill(row, row + g_.n, 1);  // unreachable nodes count as blocked
        for (int32_t i = 0; i < len; ++i) row[order[i]] = 0;
        for (int32_t i = 0; i < na; ++i) {  // arcs in topological order of their heads
            int32_t a = arcs[i];
            if (!arc_alive_[a] || row[g_.src[a]]) row[g_.dst[a]] = 1;
        }
        return row;
    }

    // Undirected links of the ECMP DAG of segment x -> b (original IGP): the forward-DAG arcs of
    // x from which b is reached, found walking the DAG backwards from b.
    void segment_links(int32_t x, int32_t b, std::vector<int32_t>& links) {
        int32_t na;
        const int32_t* arcs = r_->dag_from(x, na);
        std::vector<int32_t> marked{b};
        mark_[b] = 1;
        for (int32_t i = na - 1; i >= 0; --i) {
            int32_t a = arcs[i];
            if (!mark_[g_.dst[a]]) continue;
            links.push_back(a / 2);
            int32_t u = g_.src[a];
            if (!mark_[u]) {
                mark_[u] = 1;
                marked.push_back(u);
            }
        }
        for (int32_t u : marked) mark_[u] = 0;
    }

    // One concrete route of segment x -> b: the lexicographically smallest shortest path.
    void segment_route(int32_t x, int32_t b, std::vector<int32_t>& nodes) {
        for (int32_t u = x; u != b;) {
            int32_t len;
            const int32_t* nh = r_->next_hops(b, u, len);
            int32_t pick = -1;
            for (int32_t i = 0; i < len; ++i)
                if (pick < 0 || g_.dst[nh[i]] < g_.dst[pick]) pick = nh[i];
            u = g_.dst[pick];
            nodes.push_back(u);
        }
    }

    // Is segment x -> b unusable? Most candidates b are turned down on cost, dominance or a
    // visit first, so the question is asked of few b: with integer weights it is answered per b
    // from the dead arcs in x's DAG (b is blocked iff one of them, u -> v, has d(x, v) +
    // d(v, b) == d(x, b): v is then on a shortest x -> b path), and the whole row is built
    // (blocked_row) only once that would cost more.
    struct BlockTest {
        const uint8_t* row;
        int32_t budget;
        size_t count;  // x's dead-arc heads: xdead_[0, count)
    };

    BlockTest block_test(int32_t x, const double* dx) {
        BlockTest bt{blocked_stamp_[x] == iter_stamp_ ? blocked_row(x) : nullptr, 0, 0};
        if (!bt.row && g_.integer_weights) {
            xdead_.clear();
            for (int32_t a : dead_arcs_) {
                const double du = dx[g_.src[a]], dv = dx[g_.dst[a]];
                if (du < dv && du + g_.weight[a] == dv) xdead_.push_back(g_.dst[a]);
            }
            bt.count = xdead_.size();
            bt.budget = 2 * g_.n / (2 + static_cast<int32_t>(bt.count));
        }
        return bt;
    }

    bool is_blocked(BlockTest& bt, int32_t x, const double* dx, int32_t b) {
        if (!bt.row && bt.budget-- <= 0) bt.row = blocked_row(x);
        if (bt.row) return bt.row[b] != 0;
        for (size_t i = 0; i < bt.count; ++i) {
            const int32_t v = xdead_[i];
            if (v == b || dx[v] + r_->dist_row(v)[b] == dx[b]) return true;
        }
        return false;
    }

    void new_iteration() {
        if (++iter_stamp_ == 0) {
            std::fill(blocked_stamp_.begin(), blocked_stamp_.end(), 0);
            iter_stamp_ = 1;
        }
    }

public:
    // Whether (s, t) has a second sps path within kmax segments: the first is the direct
    // segment at every limit (docs/method.md §5), so with its DAG's links removed, whether some
    // sr-path of at most kmax usable segments reaches t, by a breadth-first search over segment
    // counts (each router settled at the fewest segments that reach it: more segments from the
    // same router never reach more). Returns the fewest segments, 0 when there is none within
    // kmax, -1 when t is unreachable (no path at all). Where s or t has degree <= 2 (at most two
    // disjoint paths) the sps count at limit kmax is 1 + (answer > 0), or 0 for -1.
    int32_t second_segments(int32_t s, int32_t t, int32_t kmax) {
        std::fill(arc_alive_.begin(), arc_alive_.end(), 1);
        dead_arcs_.clear();
        const double* dt = r_->dist_to(t);
        if (s == t || !(dt[s] < kInf)) return -1;
        std::vector<int32_t> links;
        segment_links(s, t, links);
        kill_links(links);
        new_iteration();
        dijkstra_to(t, -1);  // dist_: distance to t on live links (kInf: cannot reach t)
        if (!(dist_[s] < kInf)) return 0;
        const uint32_t st = next_stamp();  // seen_[v] == st: v reached
        seen_[s] = st;
        open_.clear();
        for (int32_t b = 0; b < g_.n; ++b)
            if (b != s && dist_[b] < kInf) open_.push_back(b);
        frontier_.assign(1, s);
        for (int32_t depth = 1; depth <= kmax; ++depth) {
            next_.clear();
            for (int32_t x : frontier_) {
                const double* dx = r_->dist_row(x);
                BlockTest bt = block_test(x, dx);
                if (depth == kmax) {  // only the last segment is left: it must end at t
                    if (t != x && dx[t] < kInf && !is_blocked(bt, x, dx, t)) return depth;
                    continue;
                }
                for (int32_t b : open_) {
                    if (b == x || seen_[b] == st || !(dx[b] < kInf) || is_blocked(bt, x, dx, b))
                        continue;
                    if (b == t) return depth;
                    seen_[b] = st;
                    next_.push_back(b);
                }
                size_t keep = 0;  // drop the routers reached
                for (int32_t b : open_)
                    if (seen_[b] != st) open_[keep++] = b;
                open_.resize(keep);
            }
            if (next_.empty()) break;
            frontier_.swap(next_);
        }
        return 0;
    }

private:
    // The cost of the shortest s -> t path on live links (h: distances to t on them) when it
    // can be written with at most k usable segments, cut greedily at the farthest router each
    // segment still reaches on a shortest path; kInf when that takes more (integer weights).
    double live_path_bound(int32_t s, int32_t t, const double* h) {
        path_.assign(1, s);
        for (int32_t u = s; u != t;) {
            int32_t pick = -1;
            for (int32_t i = g_.out_offsets[u]; i < g_.out_offsets[u + 1]; ++i) {
                const int32_t a = g_.out_arcs[i];
                const int32_t v = g_.dst[a];
                if (arc_alive_[a] && h[v] < kInf && h[u] == g_.weight[a] + h[v] &&
                    (pick < 0 || a < pick))
                    pick = a;
            }
            if (pick < 0) return kInf;
            u = g_.dst[pick];
            path_.push_back(u);
        }
        int32_t segments = 0;
        for (size_t i = 0; i + 1 < path_.size();) {
            const int32_t u = path_[i];
            const uint8_t* row = blocked_row(u);
            const double* du = r_->dist_row(u);
            size_t reach = i;
            for (size_t j = i + 1; j < path_.size(); ++j) {
                if (du[path_[j]] != h[u] - h[path_[j]]) break;  // no longer a shortest path
                if (!row[path_[j]]) reach = j;
            }
            if (reach == i || ++segments > k_) return kInf;
            i = reach;
        }
        return h[s];
    }

    void sps(int32_t s, int32_t t, std::vector<PathOut>& out) {
        const int32_t n = g_.n;
        const size_t nz = static_cast<size_t>(n);
        const double* dt = r_->dist_to(t);
        if (!(dt[s] < kInf)) return;
        using Item = std::tuple<double, int32_t, int32_t, double>;  // (f, segments, node, g)
        std::vector<Item> heap;
        auto cmp = [](const Item& a, const Item& b) { return a > b; };
        for (;;) {
            // A* heuristic: the IGP distance to t at first, then the distance to t on the links
            // still alive (every usable segment's DAG is alive, so an sr-path is a walk on live
            // links and this never overestimates; it is consistent for the same reason). It is
            // far tighter than the original distance once the first path's links are gone, so
            // the search settles a few states instead of most of them. No path on live links:
            // no search at all. The result does not depend on the heuristic: equal-cost
            // predecessors are ranked explicitly (see relax).
            const double* h = dt;
            if (!out.empty() && k_ == 1) break;  // the one 1-segment sr-path is the first, dead
            if (!out.empty()) {
                dijkstra_to(t, -1);
                if (!(dist_[s] < kInf)) break;
                h = dist_.data();
            }
            new_iteration();
            for (int32_t idx : gk_touched_) {
                gk_[idx] = kInf;
                predn_[idx] = -1;
            }
            gk_touched_.clear();
            heap.clear();
            // A cost no optimal path exceeds, when one is cheap to find (live_path_bound):
            // states above it are never pushed. Pushed or not, they would only be settled
            // after the search stops, so the path found is the same.
            const double bound = out.empty() || !g_.integer_weights ? kInf : live_path_bound(s, t, h);
            auto set = [&](int32_t j, int32_t x, double v, int32_t p) {
                size_t idx = j * nz + x;
                if (gk_[idx] == kInf) gk_touched_.push_back(static_cast<int32_t>(idx));
                gk_[idx] = v;
                predn_[idx] = p;
            };
            set(0, s, 0.0, -1);
            heap.push_back({h[s], 0, s, 0.0});
            int32_t best_j = -1;
            double best_f = kInf;
            if (out.empty()) {  // nothing removed yet: the direct segment is the cheapest
                set(1, t, dt[s], s);
                best_j = 1;
                heap.clear();
            }
            while (!heap.empty()) {
                std::pop_heap(heap.begin(), heap.end(), cmp);
                const double f = std::get<0>(heap.back()), gx = std::get<3>(heap.back());
                const int32_t j = std::get<1>(heap.back()), x = std::get<2>(heap.back());
                heap.pop_back();
                if (gk_[j * nz + x] < gx) continue;  // stale
                if (best_j >= 0 && !(f <= best_f || g_.same_cost(f, best_f))) break;
                bool dominated = false;
                for (int32_t jj = 0; jj < j && !dominated; ++jj)
                    if (gk_[jj * nz + x] <= gx) dominated = true;
                if (dominated) continue;
                if (x == t) {
                    // First arrival is the cheapest; later near-ties only win with fewer segments.
                    if (best_j < 0) best_f = f;
                    if (best_j < 0 || j < best_j) best_j = j;
                    continue;
                }
                if (j >= k_) continue;
                if (best_j >= 0 && j + 1 >= best_j) continue;  // cannot beat on segments
                const double* dx = r_->dist_row(x);
                int32_t jn = j + 1;
                const double fx = gx + dt[x];  // x's rank among equal-cost predecessors
                BlockTest bt = block_test(x, dx);
                auto blocked = [&](int32_t b) { return is_blocked(bt, x, dx, b); };
                auto relax = [&](int32_t b) {
                    if (b == x || !(h[b] < kInf) || !(dx[b] < kInf)) return;
                    double ng = gx + dx[b];
                    if (ng + h[b] > bound) return;
                    const size_t ib = jn * nz + b;
                    if (ng == gk_[ib]) {
                        if (blocked(b)) return;
                        // An equal-cost predecessor: keep the one with the smaller (g + IGP
                        // distance to t, id), the one a search guided by the IGP distance
                        // (this code before the live-link heuristic) settles, so relaxes, first.
                        const int32_t p = predn_[ib];
                        const double fp = gk_[(jn - 1) * nz + p] + dt[p];
                        if (fx < fp || (fx == fp && x < p)) predn_[ib] = x;
                        return;
                    }
                    if (!(ng < gk_[ib])) return;
                    for (int32_t jj = 0; jj < jn; ++jj)
                        if (gk_[jj * nz + b] <= ng) return;
                    if (blocked(b)) return;
                    set(jn, b, ng, x);
                    heap.push_back({ng + h[b], jn, b, ng});
                    std::push_heap(heap.begin(), heap.end(), cmp);
                };
                if (jn == k_) relax(t);
                else
                    for (int32_t b = 0; b < n; ++b) relax(b);
            }
            if (best_j < 0) break;
            // Rebuild the sr-path and what it occupies.
            std::vector<int32_t> seq{t};
            for (int32_t j = best_j, x = t; j > 0; --j) {
                x = predn_[j * nz + x];
                seq.push_back(x);
            }
            std::reverse(seq.begin(), seq.end());  // s, w1, ..., t
            PathOut p;
            p.cost = gk_[best_j * nz + t];
            p.waypoints.assign(seq.begin() + 1, seq.end() - 1);
            p.nodes.push_back(s);
            for (size_t i = 0; i + 1 < seq.size(); ++i) {
                segment_links(seq[i], seq[i + 1], p.links);
                segment_route(seq[i], seq[i + 1], p.nodes);
            }
            finish(p);
            kill_links(p.links);
            out.push_back(std::move(p));
        }
    }
};

void check_pairs(const Graph& g, const std::vector<int32_t>& sources,
                 const std::vector<int32_t>& targets) {
    if (sources.size() != targets.size())
        throw std::invalid_argument("sources and targets differ in length (" +
                                    std::to_string(sources.size()) + " vs " +
                                    std::to_string(targets.size()) + ")");
    for (size_t i = 0; i < sources.size(); ++i)
        if (sources[i] < 0 || sources[i] >= g.n || targets[i] < 0 || targets[i] >= g.n)
            throw std::out_of_range("pair " + std::to_string(i) + " (" +
                                    std::to_string(sources[i]) + ", " +
                                    std::to_string(targets[i]) + ") has a node id out of range");
}

// What every disjoint-path entry point needs of its input (the arcs' pairing was checked once,
// when the graph was built: Graph::arcs_paired).
void check_disjoint(const Graph& g, const Routing* routing, DisjointMethod method, int32_t k) {
    if (!g.arcs_paired)
        throw std::invalid_argument("disjoint paths need arcs in reverse pairs (2i, 2i + 1)");
    if (method == DisjointMethod::sps) {
        if (!routing) throw std::invalid_argument("sps needs the routing table");
        if (routing->n() != g.n) throw std::invalid_argument("routing table of another graph");
        if (k < 1) throw std::invalid_argument("segment limit k = " + std::to_string(k) + " < 1");
    }
}

void check_node(const Graph& g, int32_t x) {
    if (x < 0 || x >= g.n)
        throw std::out_of_range("node id " + std::to_string(x) + " out of range");
}

}  // namespace

Csr<int32_t> disjoint_paths_one(const Graph& g, const Routing* routing, int32_t s, int32_t t,
                                DisjointMethod method, int32_t k) {
    check_node(g, s);
    check_node(g, t);
    check_disjoint(g, routing, method, k);
    Worker w(g, routing, std::max(k, 1));
    Csr<int32_t> out;
    for (auto& p : w.run(s, t, method)) {
        out.items.insert(out.items.end(), p.nodes.begin(), p.nodes.end());
        out.close();
    }
    return out;
}

int32_t disjoint_count_one(const Graph& g, const Routing* routing, int32_t s, int32_t t,
                           DisjointMethod method, int32_t k) {
    check_node(g, s);
    check_node(g, t);
    check_disjoint(g, routing, method, k);
    Worker w(g, routing, std::max(k, 1));
    return static_cast<int32_t>(w.run(s, t, method, false).size());
}

DisjointPaths disjoint_paths(const Graph& g, const Routing* routing,
                             const std::vector<int32_t>& sources,
                             const std::vector<int32_t>& targets, DisjointMethod method,
                             int32_t k, int32_t threads) {
    check_pairs(g, sources, targets);
    check_disjoint(g, routing, method, k);
    size_t p = sources.size();
    std::vector<std::vector<PathOut>> per(p);
    // Hand out pairs grouped by target, so per-target work (greedy's first search) is shared.
    std::vector<size_t> order(p);
    for (size_t i = 0; i < p; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return targets[a] < targets[b]; });
    std::atomic<size_t> next{0};
    auto work = [&](const std::atomic<bool>& failed) {
        Worker w(g, routing, std::max(k, 1));
        for (;;) {
            size_t start = next.fetch_add(64);
            if (start >= p || failed.load(std::memory_order_relaxed)) break;
            for (size_t j = start; j < std::min(p, start + 64); ++j) {
                size_t i = order[j];
                per[i] = w.run(sources[i], targets[i], method);
            }
        }
    };
    run_threads(thread_count(threads, (p + 63) / 64), work);  // 64 pairs a chunk
    DisjointPaths r;
    for (size_t i = 0; i < p; ++i) {
        for (auto& q : per[i]) {
            r.nodes.items.insert(r.nodes.items.end(), q.nodes.begin(), q.nodes.end());
            r.nodes.close();
            r.waypoints.items.insert(r.waypoints.items.end(), q.waypoints.begin(),
                                     q.waypoints.end());
            r.waypoints.close();
            r.links.items.insert(r.links.items.end(), q.links.begin(), q.links.end());
            r.links.close();
            r.cost.push_back(q.cost);
        }
        r.pair_offsets.push_back(r.pair_offsets.back() + static_cast<int64_t>(per[i].size()));
    }
    return r;
}

std::vector<int32_t> sps_second_segments(const Graph& g, const Routing& routing,
                                         const std::vector<int32_t>& sources,
                                         const std::vector<int32_t>& targets, int32_t kmax,
                                         int32_t threads) {
    check_pairs(g, sources, targets);
    if (routing.n() != g.n) throw std::invalid_argument("routing table of another graph");
    if (kmax < 1) throw std::invalid_argument("segment limit k = " + std::to_string(kmax) + " < 1");
    const size_t p = sources.size();
    std::vector<int32_t> out(p, 0);
    std::atomic<size_t> next{0};
    auto work = [&](const std::atomic<bool>& failed) {
        Worker w(g, &routing, kmax);
        for (;;) {
            const size_t start = next.fetch_add(64);
            if (start >= p || failed.load(std::memory_order_relaxed)) break;
            for (size_t i = start; i < std::min(p, start + 64); ++i)
                out[i] = w.second_segments(sources[i], targets[i], kmax);
        }
    };
    run_threads(thread_count(threads, (p + 63) / 64), work);  // 64 pairs a chunk
    return out;
}

}  // namespace tpc
