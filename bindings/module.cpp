// nanobind bindings of the C++ core: type conversion and GIL release only, no algorithms.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "tpcstudy/graph.hpp"

namespace nb = nanobind;
using namespace nb::literals;

void bind_paths(nanobind::module_&);  // bindings/paths.cpp
void bind_gml(nanobind::module_&);    // bindings/gml.cpp

using I32In = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F64In = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <typename T>
static nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& v) {
    auto* heap = new std::vector<T>(std::move(v));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner);
}

template <typename T, typename A>
static std::vector<T> to_vector(const A& a) {
    return std::vector<T>(a.data(), a.data() + a.shape(0));
}

NB_MODULE(_core, m) {
    m.doc() = "tpcstudy's compiled core (private: import tpcstudy instead).";

    nb::class_<tpc::Graph>(m, "Graph", "Directed graph with IGP weights, arcs numbered as given.")
        .def("__init__",
             [](tpc::Graph* self, int32_t n, I32In src, I32In dst, F64In weight) {
                 new (self) tpc::Graph(n, to_vector<int32_t>(src), to_vector<int32_t>(dst),
                                       to_vector<double>(weight));
             },
             "n"_a, "src"_a, "dst"_a, "weight"_a)
        .def_ro("n", &tpc::Graph::n)
        .def_prop_ro("num_arcs", &tpc::Graph::num_arcs)
        .def_ro("integer_weights", &tpc::Graph::integer_weights);

    m.def("two_core", [](const tpc::Graph& g) { return to_numpy(tpc::two_core(g)); }, "graph"_a,
          "Mask (uint8) of the nodes of the 2-core of the undirected simple graph.");
    m.def("connected_components",
          [](const tpc::Graph& g) { return to_numpy(tpc::connected_components(g)); }, "graph"_a,
          "Component label of every node: the smallest node id of its component.");

    bind_paths(m);
    bind_gml(m);
}
