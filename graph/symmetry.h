// Whether a CSR is symmetric (every entry u -> v has its reverse v -> u),
// and an undirected version of any CSR. Boost.Graph's undirected algorithms
// (components, Cuthill-McKee; see Note [Undirected CSR] in
// graph/boost_adaptor.h) need the symmetric form.
#pragma once

#include "graph/csr.h"

namespace dgcn {

// True when the entries u -> v, as a multiset, equal their reverses v -> u.
//
// Note [Symmetry fingerprint]: an exact check looks each entry's reverse up
// in another row: a random access per entry, 40 s on products (124 M
// entries) on this machine. Instead we compare sum h(u, v) with sum h(v, u)
// over all entries (wrapping 64-bit sums, for two independent seeds of
// XXH3): one sequential pass, well under a second. A symmetric CSR always
// passes; a non-symmetric one passes only if both 64-bit sums collide, with
// probability about 2^-128 for a hash that behaves randomly. The sums do not
// depend on the order of the entries, so neither does the answer, nor on the
// thread count. Rows need not be sorted.
bool is_symmetric(const Csr& g, int num_threads);

// `g` itself (sharing its arrays) when is_symmetric(g), else a new CSR with
// the reverse of every entry added, sorted rows, repeats dropped, and self
// loops kept (they do not change connectivity). `copied` (optional) says
// which happened.
Csr undirected_csr(const Csr& g, int num_threads, bool* copied = nullptr);

}  // namespace dgcn
