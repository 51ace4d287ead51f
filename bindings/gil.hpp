// The one GIL rule of the bindings (issue 29): a call into the core keeps the GIL when its work
// is below about a millisecond, and releases it otherwise.
//
// Why: releasing the GIL is free when no other Python thread wants it, but beside a busy Python
// thread every release hands the GIL over, and getting it back waits for that thread's switch
// interval (5 ms by default): a 10 us single-pair call then takes milliseconds (the convoy
// effect, measured at 30-107x). Holding it for a call below a millisecond delays the other
// thread by at most that much, which it would wait at its next switch anyway. Batches and table
// builds release it: they run long (and on several threads), so other Python threads run
// meanwhile, and the cost of getting the GIL back is small beside their work.
//
// The work is estimated before the call, in node and arc visits of a graph search (about
// 15 ns each on this project's machines, a Dijkstra's pace):
//   one pair or one source (a search, a DAG, the paths of a pair):  n + m
//   a batch of p pairs or sources:                                  p (n + m)
//   a table over every node (Routing, distance_matrix, segment_costs): n (n + m)
//   the sr-path DP, s distinct sources, k segments:                 s (k - 1) n^2 / 40
//     (its (min, +) products run at about 0.4 ns a cell, vectorised)
// So every single-pair call on the Zoo keeps the GIL (Kdl: n + m = 2,322), every batch of a
// few dozen pairs or more and every table build releases it.
#pragma once

#include <cstddef>
#include <nanobind/nanobind.h>

namespace tpcb {

// About 1 ms of visits at ~15 ns each.
inline constexpr double kReleaseWork = 65536.0;

inline bool releases_gil(double work) { return work >= kReleaseWork; }

// Run f() under the rule: with the GIL released when `work` reaches kReleaseWork.
template <class F>
auto call(double work, F&& f) -> decltype(f()) {
    if (releases_gil(work)) {
        nanobind::gil_scoped_release release;
        return f();
    }
    return f();
}

}  // namespace tpcb
