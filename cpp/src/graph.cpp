#include "tpcstudy/graph.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace tpc {

namespace {
void build_csr(int32_t n, const std::vector<int32_t>& key, std::vector<int32_t>& offsets,
               std::vector<int32_t>& arcs) {
    offsets.assign(static_cast<size_t>(n) + 1, 0);
    for (int32_t k : key) offsets[k + 1]++;
    for (int32_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
    arcs.assign(key.size(), 0);
    std::vector<int32_t> fill(offsets.begin(), offsets.end() - 1);
    for (int32_t a = 0; a < static_cast<int32_t>(key.size()); ++a) arcs[fill[key[a]]++] = a;
}
}  // namespace

Graph::Graph(int32_t n_, std::vector<int32_t> src_, std::vector<int32_t> dst_,
             std::vector<double> weight_)
    : n(n_), src(std::move(src_)), dst(std::move(dst_)), weight(std::move(weight_)) {
    if (n < 0) throw std::invalid_argument("negative node count");
    if (src.size() != dst.size() || src.size() != weight.size())
        throw std::invalid_argument("arc arrays differ in length");
    for (size_t a = 0; a < src.size(); ++a) {
        if (src[a] < 0 || src[a] >= n || dst[a] < 0 || dst[a] >= n)
            throw std::invalid_argument("arc " + std::to_string(a) + " has a node id out of range");
        if (!(weight[a] > 0) || !std::isfinite(weight[a]))
            throw std::invalid_argument("arc " + std::to_string(a) + " has a non-positive weight");
        if (weight[a] != std::floor(weight[a]) || weight[a] > 9.0e15) integer_weights = false;
    }
    for (size_t a = 1; a < weight.size(); ++a)
        if (weight[a] != weight[0]) uniform_weights = false;
    arcs_paired = src.size() % 2 == 0;
    for (size_t a = 0; arcs_paired && a < src.size(); a += 2)
        arcs_paired = src[a] == dst[a + 1] && dst[a] == src[a + 1];
    build_csr(n, src, out_offsets, out_arcs);
    build_csr(n, dst, in_offsets, in_arcs);
    out_heads.resize(out_arcs.size());
    in_tails.resize(in_arcs.size());
    for (size_t i = 0; i < out_arcs.size(); ++i) out_heads[i] = dst[out_arcs[i]];
    for (size_t i = 0; i < in_arcs.size(); ++i) in_tails[i] = src[in_arcs[i]];
}

bool Graph::same_cost(double a, double b) const {
    if (integer_weights) return a == b;
    return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

std::vector<uint8_t> two_core(const Graph& g) {
    // Undirected simple neighbour sets.
    std::vector<std::vector<int32_t>> nbr(g.n);
    for (int32_t a = 0; a < g.num_arcs(); ++a) {
        int32_t u = g.src[a], v = g.dst[a];
        if (u == v) continue;
        nbr[u].push_back(v);
        nbr[v].push_back(u);
    }
    std::vector<int32_t> deg(g.n);
    for (int32_t u = 0; u < g.n; ++u) {
        auto& l = nbr[u];
        std::sort(l.begin(), l.end());
        l.erase(std::unique(l.begin(), l.end()), l.end());
        deg[u] = static_cast<int32_t>(l.size());
    }
    std::vector<uint8_t> keep(g.n, 1);
    std::vector<int32_t> stack;
    for (int32_t u = 0; u < g.n; ++u)
        if (deg[u] <= 1) { keep[u] = 0; stack.push_back(u); }
    while (!stack.empty()) {
        int32_t u = stack.back();
        stack.pop_back();
        for (int32_t v : nbr[u]) {
            if (!keep[v]) continue;
            if (--deg[v] <= 1) { keep[v] = 0; stack.push_back(v); }
        }
    }
    return keep;
}

std::vector<int32_t> connected_components(const Graph& g) {
    std::vector<int32_t> comp(g.n, -1);
    std::vector<int32_t> stack;
    for (int32_t s = 0; s < g.n; ++s) {
        if (comp[s] >= 0) continue;
        comp[s] = s;
        stack.push_back(s);
        while (!stack.empty()) {
            int32_t u = stack.back();
            stack.pop_back();
            for (int32_t i = g.out_offsets[u]; i < g.out_offsets[u + 1]; ++i) {
                int32_t v = g.dst[g.out_arcs[i]];
                if (comp[v] < 0) { comp[v] = s; stack.push_back(v); }
            }
            for (int32_t i = g.in_offsets[u]; i < g.in_offsets[u + 1]; ++i) {
                int32_t v = g.src[g.in_arcs[i]];
                if (comp[v] < 0) { comp[v] = s; stack.push_back(v); }
            }
        }
    }
    return comp;
}

}  // namespace tpc
