// The directed graph every algorithm of the core works on.
//
// Node ids are 0..n-1. Arcs are directed and numbered 0..m-1 in the order given; the Python layer
// numbers arc 2i as link i forwards and arc 2i+1 as link i backwards, so arc ^ 1 is the reverse arc
// and arc / 2 the undirected link. Weights are positive IGP weights.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace tpc {

struct Graph {
    int32_t n = 0;
    std::vector<int32_t> src, dst;   // arc endpoints
    std::vector<double> weight;      // arc IGP weight (> 0)
    // Outgoing and incoming arcs of each node, CSR, arcs sorted by id within a node
    // (deterministic: results never depend on hash order).
    std::vector<int32_t> out_offsets, out_arcs;
    std::vector<int32_t> in_offsets, in_arcs;
    // The other end of each arc of out_arcs (its head) and of in_arcs (its tail), in the same
    // CSR order: a search reads one array instead of two.
    std::vector<int32_t> out_heads, in_tails;
    bool integer_weights = true;     // every weight is a whole number: compare exactly
    // Every arc has the same weight (hop weights): breadth-first searches give the same
    // distances as Dijkstra's, bit for bit (each level's distance is the previous one's plus
    // that weight, whichever path reaches it).
    bool uniform_weights = true;
    // Arcs come in reverse pairs (arc 2i + 1 is arc 2i backwards), as the Python Topology
    // numbers them: what the link-disjoint paths need (checked once here, not on every call).
    bool arcs_paired = true;

    Graph() = default;
    Graph(int32_t n, std::vector<int32_t> src, std::vector<int32_t> dst, std::vector<double> weight);

    int32_t num_arcs() const { return static_cast<int32_t>(src.size()); }
    // a == b under the equal-cost rule of docs/method.md §3.
    bool same_cost(double a, double b) const;
    // a < b, strictly, under the same rule.
    bool less_cost(double a, double b) const { return a < b && !same_cost(a, b); }
};

// Nodes kept by repeatedly removing nodes of degree <= 1, degree counted on the undirected simple
// graph (parallel arcs and both directions count once, self-loops not at all): the 2-core.
std::vector<uint8_t> two_core(const Graph& g);

// Connected component id of every node (undirected view), numbered by smallest member node.
std::vector<int32_t> connected_components(const Graph& g);

}  // namespace tpc
