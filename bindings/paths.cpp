// nanobind bindings of the path core (cpp/include/tpcstudy/paths.hpp): type conversion and GIL
// release only (the rule: gil.hpp, tpcb::call). Node and arc ids are int32, values float64,
// offsets int64.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>

#include "gil.hpp"
#include "tpcstudy/paths.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using I32In = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F64In = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F64In2 = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
template <typename T>
using Out1 = nb::ndarray<nb::numpy, T, nb::ndim<1>>;
using Out2 = nb::ndarray<nb::numpy, double, nb::ndim<2>>;

template <typename T>
Out1<T> arr(std::vector<T>&& v) {
    auto* heap = new std::vector<T>(std::move(v));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return Out1<T>(heap->data(), {heap->size()}, owner);
}

template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<2>> matrix(std::vector<T>&& v, size_t rows, size_t cols) {
    auto* heap = new std::vector<T>(std::move(v));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::ndarray<nb::numpy, T, nb::ndim<2>>(heap->data(), {rows, cols}, owner);
}

std::vector<int32_t> vec(const I32In& a) { return std::vector<int32_t>(a.data(), a.data() + a.shape(0)); }

// The light call path of single-pair calls (issue 42): Python lists and dicts built with the C
// API, no numpy array per call (creating one costs about as much as a small graph's search).
// `labels`, when given, is a list of at least n objects (the router names): node x comes out as
// labels[x] (a new reference to the same object), else as the int x.
PyObject* node_object(PyObject* labels, int32_t x) {
    if (labels) {
        PyObject* o = PyList_GET_ITEM(labels, x);
        Py_INCREF(o);
        return o;
    }
    return PyLong_FromLong(x);
}

PyObject* labels_of(const tpc::Graph& g, const nb::object& labels) {
    if (labels.is_none()) return nullptr;
    if (!PyList_Check(labels.ptr()) || PyList_GET_SIZE(labels.ptr()) < g.n)
        throw nb::value_error("labels must be a list with one entry per node");
    return labels.ptr();
}

// A list of lists: list i holds items[offsets[i] .. offsets[i + 1]) as node objects.
nb::object node_lists(const tpc::Csr<int32_t>& c, PyObject* labels) {
    const int64_t count = c.size();
    nb::object out = nb::steal(PyList_New(count));
    if (!out.is_valid()) throw nb::python_error();
    for (int64_t p = 0; p < count; ++p) {
        const int64_t a = c.offsets[p], b = c.offsets[p + 1];
        PyObject* path = PyList_New(b - a);
        if (!path) throw nb::python_error();
        PyList_SET_ITEM(out.ptr(), p, path);  // owned by out from here
        for (int64_t i = a; i < b; ++i) {
            PyObject* o = node_object(labels, c.items[static_cast<size_t>(i)]);
            if (!o) throw nb::python_error();
            PyList_SET_ITEM(path, i - a, o);
        }
    }
    return out;
}

void check_node(const tpc::Graph& g, int32_t x) {
    if (x < 0 || x >= g.n) throw nb::index_error("node id out of range");
}

// The work estimates of gil.hpp: one search (n + m), a batch of `items` searches, a table.
double search_work(const tpc::Graph& g) { return static_cast<double>(g.n) + g.num_arcs(); }
double batch_work(const tpc::Graph& g, size_t items) { return static_cast<double>(items) * search_work(g); }
double table_work(const tpc::Graph& g) { return batch_work(g, static_cast<size_t>(g.n)); }

}  // namespace

void bind_paths(nb::module_& m) {
    m.def("distances_from",
          [](const tpc::Graph& g, int32_t source) {
              return arr(tpcb::call(search_work(g), [&] { return tpc::distances_from(g, source); }));
          },
          "graph"_a, "source"_a, "IGP distance from source to every node (inf: unreachable).");
    m.def("dag_arcs",
          [](const tpc::Graph& g, int32_t s, int32_t t) {
              return arr(tpcb::call(search_work(g), [&] { return tpc::dag_arcs(g, s, t); }));
          },
          "graph"_a, "source"_a, "target"_a, "Arcs on at least one shortest path, sorted.");
    m.def("shortest_paths",
          [](const tpc::Graph& g, int32_t s, int32_t t, int64_t limit) {
              tpc::Csr<int32_t> c =
                  tpcb::call(search_work(g), [&] { return tpc::shortest_paths(g, s, t, limit); });
              return nb::make_tuple(arr(std::move(c.offsets)), arr(std::move(c.items)));
          },
          "graph"_a, "source"_a, "target"_a, "limit"_a,
          "Every shortest path (lexicographic), at most limit: (offsets, nodes).");
    m.def("shortest_paths_list",
          [](const tpc::Graph& g, int32_t s, int32_t t, int64_t limit, nb::object labels) {
              check_node(g, s);
              check_node(g, t);
              PyObject* lab = labels_of(g, labels);
              tpc::Csr<int32_t> c =
                  tpcb::call(search_work(g), [&] { return tpc::shortest_paths(g, s, t, limit); });
              return node_lists(c, lab);
          },
          "graph"_a, "source"_a, "target"_a, "limit"_a, "labels"_a.none() = nb::none(),
          "Every shortest path (lexicographic), at most limit, as lists of labels[x] (or ids).");
    // The named API's fast path: router names looked up in the topology's name -> id dict
    // here, not by two Python calls. Only exact str names found in the dict; anything else
    // (ids, names that are not there) returns None and the caller takes its general path,
    // so the node-id rule stays the topology's (Topology.index_of).
    m.def("shortest_paths_named",
          [](const tpc::Graph& g, nb::dict index, nb::object labels, nb::handle source,
             nb::handle target, int64_t limit) -> nb::object {
              if (!PyUnicode_CheckExact(source.ptr()) || !PyUnicode_CheckExact(target.ptr()))
                  return nb::none();
              PyObject* so = PyDict_GetItemWithError(index.ptr(), source.ptr());
              if (!so) {
                  if (PyErr_Occurred()) throw nb::python_error();
                  return nb::none();
              }
              PyObject* to = PyDict_GetItemWithError(index.ptr(), target.ptr());
              if (!to) {
                  if (PyErr_Occurred()) throw nb::python_error();
                  return nb::none();
              }
              const long s = PyLong_AsLong(so), t = PyLong_AsLong(to);
              if ((s == -1 || t == -1) && PyErr_Occurred()) throw nb::python_error();
              if (s < 0 || s >= g.n || t < 0 || t >= g.n) return nb::none();
              PyObject* lab = labels_of(g, labels);
              tpc::Csr<int32_t> c = tpcb::call(search_work(g), [&] {
                  return tpc::shortest_paths(g, static_cast<int32_t>(s), static_cast<int32_t>(t), limit);
              });
              return node_lists(c, lab);
          },
          "graph"_a, "index"_a, "labels"_a, "source"_a, "target"_a, "limit"_a,
          "shortest_paths_list for routers named by exact str keys of index; None otherwise.");
    m.def("ecmp_ratios_dict",
          [](const tpc::Graph& g, int32_t s, int32_t t, nb::object keys) {
              check_node(g, s);
              check_node(g, t);
              if (!PyList_Check(keys.ptr()) || PyList_GET_SIZE(keys.ptr()) < g.num_arcs())
                  throw nb::value_error("keys must be a list with one entry per arc");
              std::vector<int32_t> arcs;
              std::vector<double> fr;
              tpcb::call(search_work(g), [&] { tpc::ecmp_ratios(g, s, t, arcs, fr); });
              nb::dict out;
              for (size_t i = 0; i < arcs.size(); ++i) {
                  nb::object f = nb::steal(PyFloat_FromDouble(fr[i]));
                  if (PyDict_SetItem(out.ptr(), PyList_GET_ITEM(keys.ptr(), arcs[i]), f.ptr()) != 0)
                      throw nb::python_error();
              }
              return out;
          },
          "graph"_a, "source"_a, "target"_a, "keys"_a,
          "ECMP fraction per arc of segment s -> t as {keys[arc]: fraction}.");
    m.def("ecmp_ratios",
          [](const tpc::Graph& g, int32_t s, int32_t t) {
              std::vector<int32_t> arcs;
              std::vector<double> fr;
              tpcb::call(search_work(g), [&] { tpc::ecmp_ratios(g, s, t, arcs, fr); });
              return nb::make_tuple(arr(std::move(arcs)), arr(std::move(fr)));
          },
          "graph"_a, "source"_a, "target"_a, "ECMP fraction per arc of segment s -> t: (arcs, fractions).");
    m.def("segment_ratios",
          [](const tpc::Graph& g, I32In sources, I32In targets, int32_t threads) {
              auto s = vec(sources), t = vec(targets);
              tpc::SegmentRatios r = tpcb::call(batch_work(g, s.size()), [&] {
                  return tpc::segment_ratios(g, s, t, threads);
              });
              return nb::make_tuple(arr(std::move(r.offsets)), arr(std::move(r.arcs)),
                                    arr(std::move(r.fractions)));
          },
          "graph"_a, "sources"_a, "targets"_a, "threads"_a = 0,
          "ECMP ratios of many segments: (offsets, arcs, fractions), CSR per segment.");
    m.def("distance_matrix",
          [](const tpc::Graph& g, int32_t threads) {
              const size_t n = static_cast<size_t>(g.n);
              return matrix(tpcb::call(table_work(g), [&] { return tpc::distance_matrix(g, threads); }),
                            n, n);
          },
          "graph"_a, "threads"_a = 0,
          "All-pairs IGP distances d[a, b] (inf: unreachable), without the routing tables.");

    nb::class_<tpc::Routing>(m, "Routing",
                             "All-pairs IGP distances and next-hop DAGs of a graph (n Dijkstras).")
        .def("__init__",
             [](tpc::Routing* self, const tpc::Graph& g, int32_t threads) {
                 tpcb::call(table_work(g), [&] { new (self) tpc::Routing(g, threads); });
             },
             // the table references the graph (no copy of the topology): keep it alive
             nb::keep_alive<1, 2>(), "graph"_a, "threads"_a = 0)
        .def_prop_ro("n", &tpc::Routing::n)
        .def("distances",
             [](const tpc::Routing& r) {
                 size_t n = static_cast<size_t>(r.n());
                 std::vector<double> d(r.dist_row(0), r.dist_row(0) + n * n);
                 return matrix(std::move(d), n, n);
             },
             "All-pairs distance matrix d[a, b] (a copy).")
        .def("segment_costs",
             [](const tpc::Routing& r, F64In price) {
                 size_t n = static_cast<size_t>(r.n());
                 if (price.shape(0) != static_cast<size_t>(r.graph().num_arcs()))
                     throw nb::value_error("need one price per arc");
                 std::vector<double> out(n * n);
                 tpcb::call(table_work(r.graph()), [&] { r.segment_costs(price.data(), out.data()); });
                 return matrix(std::move(out), n, n);
             },
             "prices"_a, "cost[u, v] = sum_l r_uv(l) * prices[l] for all u, v.")
        .def("dag_min_costs",
             [](const tpc::Routing& r, F64In price) {
                 size_t n = static_cast<size_t>(r.n());
                 if (price.shape(0) != static_cast<size_t>(r.graph().num_arcs()))
                     throw nb::value_error("need one price per arc");
                 std::vector<double> out(n * n);
                 std::vector<int32_t> next(n * n);
                 tpcb::call(table_work(r.graph()),
                            [&] { r.dag_min_costs(price.data(), out.data(), next.data()); });
                 return nb::make_tuple(matrix(std::move(out), n, n), matrix(std::move(next), n, n));
             },
             "prices"_a,
             "(cost, next): cheapest single shortest path of every pair by price, and its first arc.");

    m.def("free_cpus", &tpc::free_cpus,
          "CPUs free now: online CPUs less the other runnable tasks (/proc/loadavg), at least 1.");
    m.def("set_load_aware",
          [](bool on) { return tpc::load_aware().exchange(on); }, "on"_a,
          "Whether batch calls cap their threads at the CPUs free now (default True); returns "
          "the previous setting. For tests of the thread counts only.");
    m.def("hardware_threads", &tpc::hardware_threads,
          "CPUs this process may run on (its CPU affinity), the most threads any call uses.");

    m.def("path_price_bounds",
          [](const tpc::Graph& g, F64In price, I32In sources, I32In targets, double limit,
             int32_t threads) {
              if (price.shape(0) != static_cast<size_t>(g.num_arcs()))
                  throw nb::value_error("need one price per arc");
              auto s = vec(sources), t = vec(targets);
              return arr(tpcb::call(batch_work(g, s.size()), [&] {
                  return tpc::path_price_bounds(g, price.data(), s, t, limit, threads);
              }));
          },
          "graph"_a, "prices"_a, "sources"_a, "targets"_a, "limit"_a, "threads"_a = 0,
          "Cheapest path price of each pair when below limit (else inf).");

    m.def("best_sr_path_one",
          [](F64In2 cost, int32_t s, int32_t t, int32_t k, nb::object labels) {
              if (cost.shape(0) != cost.shape(1)) throw nb::value_error("cost matrix is not square");
              const int32_t n = static_cast<int32_t>(cost.shape(0));
              if (s < 0 || s >= n || t < 0 || t >= n) throw nb::index_error("node id out of range");
              PyObject* lab = nullptr;
              if (!labels.is_none()) {
                  if (!PyList_Check(labels.ptr()) || PyList_GET_SIZE(labels.ptr()) < n)
                      throw nb::value_error("labels must be a list with one entry per node");
                  lab = labels.ptr();
              }
              tpc::SrPaths r = tpcb::call(std::max(k - 1, 1) * static_cast<double>(n) * n / 40.0, [&] {
                  return tpc::best_sr_paths(n, cost.data(), {s}, {t}, k, 1);
              });
              tpc::Csr<int32_t> wp;
              wp.items = std::move(r.waypoints);
              wp.close();
              nb::object lists = node_lists(wp, lab);
              return nb::make_tuple(r.values[0], nb::borrow(PyList_GET_ITEM(lists.ptr(), 0)));
          },
          "costs"_a, "source"_a, "target"_a, "k"_a, "labels"_a.none() = nb::none(),
          "Cheapest sr-path of one pair with at most k segments: (value, waypoints).");
    m.def("best_sr_paths",
          [](F64In2 cost, I32In sources, I32In targets, int32_t k, int32_t threads) {
              if (cost.shape(0) != cost.shape(1)) throw nb::value_error("cost matrix is not square");
              auto s = vec(sources), t = vec(targets);
              const double n = static_cast<double>(cost.shape(0));
              std::vector<uint8_t> seen(cost.shape(0), 0);
              double distinct = 0;  // distinct sources: one DP each
              for (int32_t x : s)
                  if (x >= 0 && x < static_cast<int32_t>(seen.size()) && !seen[x]) {
                      seen[x] = 1;
                      distinct += 1;
                  }
              tpc::SrPaths r = tpcb::call(distinct * std::max(k - 1, 1) * n * n / 40.0, [&] {
                  return tpc::best_sr_paths(static_cast<int32_t>(cost.shape(0)), cost.data(), s, t,
                                            k, threads);
              });
              return nb::make_tuple(arr(std::move(r.values)), arr(std::move(r.offsets)),
                                    arr(std::move(r.waypoints)));
          },
          "costs"_a, "sources"_a, "targets"_a, "k"_a, "threads"_a = 0,
          "Cheapest sr-path with at most k segments per pair: (values, offsets, waypoints).");

    m.def("disjoint_paths",
          [](const tpc::Graph& g, const tpc::Routing* routing, I32In sources, I32In targets,
             int32_t method, int32_t k, int32_t threads) {
              if (method < 0 || method > 2) throw nb::value_error("method must be 0, 1 or 2");
              auto s = vec(sources), t = vec(targets);
              tpc::DisjointPaths r = tpcb::call(batch_work(g, s.size()), [&] {
                  return tpc::disjoint_paths(g, routing, s, t,
                                             static_cast<tpc::DisjointMethod>(method), k, threads);
              });
              return nb::make_tuple(
                  arr(std::move(r.pair_offsets)), arr(std::move(r.nodes.offsets)),
                  arr(std::move(r.nodes.items)), arr(std::move(r.waypoints.offsets)),
                  arr(std::move(r.waypoints.items)), arr(std::move(r.links.offsets)),
                  arr(std::move(r.links.items)), arr(std::move(r.cost)));
          },
          "graph"_a, "routing"_a.none(), "sources"_a, "targets"_a, "method"_a, "k"_a,
          "threads"_a = 0,
          "Link-disjoint paths per pair (method 0 max, 1 greedy, 2 sps): (pair_offsets, "
          "node_offsets, nodes, waypoint_offsets, waypoints, link_offsets, links, costs).");

    m.def("sps_second_segments",
          [](const tpc::Graph& g, const tpc::Routing& routing, I32In sources, I32In targets,
             int32_t kmax, int32_t threads) {
              auto s = vec(sources), t = vec(targets);
              return arr(tpcb::call(batch_work(g, s.size()), [&] {
                  return tpc::sps_second_segments(g, routing, s, t, kmax, threads);
              }));
          },
          "graph"_a, "routing"_a, "sources"_a, "targets"_a, "kmax"_a, "threads"_a = 0,
          "Fewest segments (<= kmax) of each pair's second sps path; 0 none, -1 no path.");

    // One pair, answered as Python lists: the named API's call costs the core's few
    // microseconds, not the array wrapping of the batch call.
    m.def("disjoint_paths_one",
          [](const tpc::Graph& g, const tpc::Routing* routing, int32_t source, int32_t target,
             int32_t method, int32_t k, nb::object labels) {
              if (method < 0 || method > 2) throw nb::value_error("method must be 0, 1 or 2");
              PyObject* lab = labels_of(g, labels);
              tpc::Csr<int32_t> r = tpcb::call(search_work(g), [&] {
                  return tpc::disjoint_paths_one(g, routing, source, target,
                                                 static_cast<tpc::DisjointMethod>(method), k);
              });
              return node_lists(r, lab);
          },
          "graph"_a, "routing"_a.none(), "source"_a, "target"_a, "method"_a, "k"_a,
          "labels"_a.none() = nb::none(),
          "Link-disjoint paths of one pair as lists of labels[x] (or node ids), in the order found.");
    m.def("disjoint_count_one",
          [](const tpc::Graph& g, const tpc::Routing* routing, int32_t source, int32_t target,
             int32_t method, int32_t k) {
              if (method < 0 || method > 2) throw nb::value_error("method must be 0, 1 or 2");
              return tpcb::call(search_work(g), [&] {
                  return tpc::disjoint_count_one(g, routing, source, target,
                                                 static_cast<tpc::DisjointMethod>(method), k);
              });
          },
          "graph"_a, "routing"_a.none(), "source"_a, "target"_a, "method"_a, "k"_a,
          "How many link-disjoint paths one pair has (max: no flow decomposition).");
}
