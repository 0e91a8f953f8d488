// See Note [Asking the owners] in owner_exchange.h.
#include "partition/owner_exchange.h"

#include "base/error.h"
#include "base/timing.h"

namespace dgcn {

void OwnerGroups::group(std::span<const int64_t> nodes, const PartMap& map) {
  const int parts = map.parts();
  owner_begin_.assign(static_cast<size_t>(parts) + 1, 0);
  node_owner_.resize(nodes.size());
  for (size_t r = 0; r < nodes.size(); ++r) {
    node_owner_[r] = map.owner(nodes[r]);
    ++owner_begin_[static_cast<size_t>(node_owner_[r]) + 1];
  }
  for (int q = 0; q < parts; ++q)
    owner_begin_[static_cast<size_t>(q) + 1] += owner_begin_[static_cast<size_t>(q)];
  ids_.resize(nodes.size());
  next_.assign(owner_begin_.begin(), owner_begin_.end() - 1);
  for (size_t r = 0; r < nodes.size(); ++r)
    ids_[static_cast<size_t>(next_[static_cast<size_t>(node_owner_[r])]++)] = nodes[r];
}

std::span<const int64_t> OwnerGroups::of(int q) const {
  const auto b = static_cast<size_t>(owner_begin_[static_cast<size_t>(q)]);
  const auto e = static_cast<size_t>(owner_begin_[static_cast<size_t>(q) + 1]);
  return std::span<const int64_t>(ids_).subspan(b, e - b);
}

OwnerRoundTrip::OwnerRoundTrip(Collectives& comm, const PartMap& map, const char* what)
    : comm_(comm), map_(map), what_(what) {
  DGCN_CHECK(comm.size() == map.parts(), "{}: {} ranks for a graph of {} parts; one rank per part", what,
             comm.size(), map.parts());
}

RoundTripCost OwnerRoundTrip::run(std::span<const int64_t> header, const OwnerGroups& groups, bool ask_self,
                                  const ServeRequest& serve) {
  const int self = comm_.rank(), w = comm_.size();
  RoundTripCost cost;
  requests_.begin();
  for (int q = 0; q < w; ++q) {
    const auto ids = q == self && !ask_self ? std::span<const int64_t>() : groups.of(q);
    requests_.append(header);
    requests_.append_value<int64_t>(static_cast<int64_t>(ids.size()));
    requests_.append(ids);
    requests_.end_message();
  }
  auto t = Clock::now();
  comm_.exchange(requests_, received_);
  cost.seconds += seconds_since(t);
  cost.request_bytes = static_cast<int64_t>(requests_.bytes.size()) - requests_.size_of(self);

  answers_.begin();
  for (int q = 0; q < w; ++q) {
    MessageReader r(received_.of(q), what_);
    const auto peer_header = r.take<int64_t>(header.size());
    const auto n = r.value<int64_t>();
    DGCN_CHECK(n >= 0, "{}: rank {} asked for {} nodes", what_, q, n);
    const auto ids = r.take<int64_t>(static_cast<size_t>(n));
    for (int64_t v : ids) {
      DGCN_CHECK(map_.owns(self, v), "{}: rank {} asked part {} for node {}, which it does not own", what_, q,
                 self, v);
    }
    serve(q, peer_header, ids, answers_);
    answers_.end_message();
  }
  t = Clock::now();
  // received_ is free again: the answers come back into it.
  comm_.exchange(answers_, received_);
  cost.seconds += seconds_since(t);
  cost.answer_bytes = static_cast<int64_t>(answers_.bytes.size()) - answers_.size_of(self);
  std::swap(answers_, received_);  // answer(q) reads what came back
  return cost;
}

}  // namespace dgcn
