// The distance matrix of a symmetric graph with one weight on every arc (hop weights: the
// Zoo's default), by its structure: a breadth-first search from the routers that branch only.
//
// Routers are of three kinds:
//  - *tree* routers, peeled off as leaves (repeatedly: whole trees hanging off the rest): every
//    path from a leaf u leaves through its one neighbour p, so d(u, x) = w + d(p, x) for x
//    outside u's own subtree, and d(u, y) = t w for y t levels below u in it;
//  - *chain* routers, of exactly two neighbours in what is left and nowhere else, on a chain
//    a - c1 - ... - ck - b between two others: every path from ci to a router x off the chain
//    leaves through a or b, so d(ci, x) = min(i w + d(a, x), (k + 1 - i) w + d(b, x)), and
//    d(ci, cj) also allows |i - j| w along the chain;
//  - the others (and one router of each cycle with no other kind), searched.
// Every value is a sum of w's added one at a time, as the search makes them, so the matrix is
// the searches' to the last bit (w = 0.1 included: the sum of m + i w's is (the sum of m) plus
// w, i times). On the Zoo, where most routers have two neighbours, this searches a third of
// them (Kdl: 226 of 754, against 438 with the independent-set rule it replaces here).
#include <algorithm>
#include <atomic>
#include <vector>

#include "tpcstudy/paths.hpp"

namespace tpc {

std::vector<double> distance_matrix_symmetric(const Graph& g, int32_t threads) {
    const int32_t n = g.n;
    const size_t nz = static_cast<size_t>(n);
    std::vector<double> out(nz * nz);  // every row is written below
    if (n == 0) return out;
    const double w = g.weight[0];
    // distinct neighbours (arcs paired: out-neighbours are the in-neighbours), no self loop
    std::vector<int32_t> nb_off(nz + 1, 0), nb;
    nb.reserve(g.out_heads.size());
    for (int32_t u = 0; u < n; ++u) {
        const size_t at = nb.size();
        for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i)
            if (g.out_heads[i] != u) nb.push_back(g.out_heads[i]);
        std::sort(nb.begin() + static_cast<std::ptrdiff_t>(at), nb.end());
        nb.erase(std::unique(nb.begin() + static_cast<std::ptrdiff_t>(at), nb.end()), nb.end());
        nb_off[u + 1] = static_cast<int32_t>(nb.size());
    }
    auto deg = [&](int32_t u) { return nb_off[u + 1] - nb_off[u]; };
    // trees: leaves peeled repeatedly; a router left with no neighbour is searched
    std::vector<int32_t> rem(nz), parent(nz, -1), peel_order, stack;
    std::vector<uint8_t> peeled(nz, 0);
    for (int32_t u = 0; u < n; ++u) {
        rem[u] = deg(u);
        if (rem[u] == 1) stack.push_back(u);
    }
    while (!stack.empty()) {
        const int32_t u = stack.back();
        stack.pop_back();
        if (peeled[u] || rem[u] != 1) continue;
        int32_t p = -1;
        for (int32_t i = nb_off[u]; i < nb_off[u + 1]; ++i)
            if (!peeled[nb[i]]) p = nb[i];
        peeled[u] = 1;
        parent[u] = p;
        peel_order.push_back(u);
        if (--rem[p] == 1) stack.push_back(p);
    }
    // chains
    // chain[u]: a chain router not yet placed in a chain (cleared as a walk places it)
    std::vector<uint8_t> chain(nz, 0);
    for (int32_t u = 0; u < n; ++u) chain[u] = !peeled[u] && rem[u] == 2 && deg(u) == 2;
    struct Chain {
        int32_t a, b;
        size_t first, len;  // into chain_nodes
    };
    std::vector<Chain> chains;
    std::vector<int32_t> chain_nodes, searched;
    auto walk = [&](int32_t a) {
        for (int32_t i = nb_off[a]; i < nb_off[a + 1]; ++i) {
            int32_t cur = nb[i], prev = a;
            if (!chain[cur]) continue;
            const size_t first = chain_nodes.size();
            while (chain[cur]) {
                chain[cur] = 0;
                chain_nodes.push_back(cur);
                const int32_t x = nb[nb_off[cur]], y = nb[nb_off[cur] + 1];
                const int32_t next = x == prev ? y : x;
                prev = cur;
                cur = next;
            }
            chains.push_back({a, cur, first, chain_nodes.size() - first});
        }
    };
    for (int32_t u = 0; u < n; ++u)
        if (!peeled[u] && !chain[u]) searched.push_back(u);
    for (int32_t a : searched) walk(a);  // (walk adds no searched router)
    for (int32_t u = 0; u < n; ++u)  // cycles of chain routers only: one of each is searched
        if (chain[u]) {
            chain[u] = 0;
            searched.push_back(u);
            walk(u);
        }
    // S[t]: t w's added one at a time (the searches' sums)
    std::vector<double> S(nz + 1, 0.0);
    for (size_t t = 1; t <= nz; ++t) S[t] = S[t - 1] + w;
    constexpr size_t kWork = 100000;
    {  // the searches, straight into the rows
        const size_t ns = searched.size();
        std::atomic<size_t> next{0};
        auto work = [&](const std::atomic<bool>& failed) {
            std::vector<int32_t> queue(nz);
            for (;;) {
                const size_t q = next.fetch_add(1);
                if (q >= ns || failed.load(std::memory_order_relaxed)) break;
                const int32_t a = searched[q];
                // (filled here, not beforehand: the row stays in cache)
                bfs_row(g, a, w, out.data() + static_cast<size_t>(a) * nz, queue.data());
            }
        };
        const size_t total = ns * (nz + static_cast<size_t>(g.num_arcs()));
        run_threads(thread_count(threads, std::min(ns, total / kWork)), work);
    }
    {  // the chains, from their two ends' rows
        std::atomic<size_t> next{0};
        auto work = [&](const std::atomic<bool>& failed) {
            std::vector<double> buf(nz);
            for (;;) {
                const size_t q = next.fetch_add(1);
                if (q >= chains.size() || failed.load(std::memory_order_relaxed)) break;
                const Chain& c = chains[q];
                const int32_t* cn = chain_nodes.data() + c.first;
                const double* prev = out.data() + static_cast<size_t>(c.a) * nz;
                for (size_t i = 0; i < c.len; ++i) {
                    double* row = out.data() + static_cast<size_t>(cn[i]) * nz;
                    for (size_t x = 0; x < nz; ++x) row[x] = prev[x] + w;
                    prev = row;
                }
                const double* rb = out.data() + static_cast<size_t>(c.b) * nz;
                std::copy(rb, rb + nz, buf.begin());
                for (size_t i = c.len; i-- > 0;) {
                    double* row = out.data() + static_cast<size_t>(cn[i]) * nz;
                    for (size_t x = 0; x < nz; ++x) {
                        buf[x] += w;
                        row[x] = buf[x] < row[x] ? buf[x] : row[x];
                    }
                }
                for (size_t i = 0; i < c.len; ++i) {  // along the chain itself
                    double* row = out.data() + static_cast<size_t>(cn[i]) * nz;
                    for (size_t j = 0; j < c.len; ++j) {
                        const double along = S[i > j ? i - j : j - i];
                        double& e = row[cn[j]];
                        e = along < e ? along : e;
                    }
                }
            }
        };
        const size_t total = chain_nodes.size() * nz / 4;
        run_threads(thread_count(threads, std::min(chains.size(), total / kWork)), work);
    }
    // the trees, parents first; each row's own subtree by its levels
    std::vector<int32_t> child_off(nz + 1, 0), children(peel_order.size());
    for (int32_t u : peel_order) ++child_off[static_cast<size_t>(parent[u]) + 1];
    for (size_t u = 0; u < nz; ++u) child_off[u + 1] += child_off[u];
    {
        std::vector<int32_t> fill(child_off.begin(), child_off.end() - 1);
        for (int32_t u : peel_order) children[static_cast<size_t>(fill[parent[u]]++)] = u;
    }
    std::vector<std::pair<int32_t, int32_t>> todo;
    for (size_t q = peel_order.size(); q-- > 0;) {
        const int32_t u = peel_order[q];
        double* row = out.data() + static_cast<size_t>(u) * nz;
        const double* rp = out.data() + static_cast<size_t>(parent[u]) * nz;
        for (size_t x = 0; x < nz; ++x) row[x] = rp[x] + w;
        todo.assign(1, {u, 0});
        while (!todo.empty()) {
            const auto [y, t] = todo.back();
            todo.pop_back();
            row[y] = S[static_cast<size_t>(t)];
            for (int32_t i = child_off[y]; i < child_off[y + 1]; ++i) todo.push_back({children[i], t + 1});
        }
    }
    return out;
}

}  // namespace tpc
