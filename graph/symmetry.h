// Whether a CSR is symmetric (every entry u -> v has its reverse v -> u),
// and an undirected version of any CSR. Boost.Graph's undirected algorithms
// (components, Cuthill-McKee; see Note [Undirected CSR] in
// graph/boost_adaptor.h) need the symmetric form.
#pragma once

#include "graph/csr.h"

namespace dgcn {

// True when every row is sorted by neighbour id and, for every entry u -> v,
// row v contains u (repeats are not counted: a set, not a multiset, check).
// Rows must be sorted for the check to be a binary search; a CSR with an
// unsorted row answers false. O(entries * log(degree)), on `num_threads`.
bool is_symmetric(const Csr& g, int num_threads);

// `g` itself (sharing its arrays) when is_symmetric(g), else a new CSR with
// the reverse of every entry added, sorted rows, repeats dropped, and self
// loops kept (they do not change connectivity). `copied` (optional) says
// which happened.
Csr undirected_csr(const Csr& g, int num_threads, bool* copied = nullptr);

}  // namespace dgcn
