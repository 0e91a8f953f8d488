// The partitioned graph's one round trip: node ids go to the ranks that own
// them, answers come back.
//
// Note [Asking the owners]
// The requester groups its ids by owner, keeping their order within an
// owner (OwnerGroups, a counting sort). One all-to-all carries to each
// owner a header the caller defines and the ids it owns; each owner checks
// that it owns every id it was sent and answers each request in turn (the
// caller's serve function); a second all-to-all brings the answers back:
// answer(q) is owner q's answer, for the ids of(q), in their order. The
// partitioned sampler asks for picks and for rows this way
// (sampling/partitioned_sampler.h), the layer-wise inference for its
// halo's degrees (models/inference.h).
//
//   OwnerGroups groups;
//   groups.group(frontier, map);
//   round_trip.run(header, groups, /*ask_self=*/true, serve);   // collective
//   MessageReader r(round_trip.answer(q), "...");               // q's answer
//
// Request message (int64): header[k], n, ids[n]. The answers are what
// serve() writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "partition/collectives.h"
#include "partition/messages.h"
#include "partition/part_map.h"

namespace dgcn {

// Node ids grouped by owner, each group in the order the ids came.
class OwnerGroups {
 public:
  void group(std::span<const int64_t> nodes, const PartMap& map);
  // Owner q's ids.
  std::span<const int64_t> of(int q) const;
  // The owner of nodes[i] of the last group() call.
  int owner_of(size_t i) const { return node_owner_[i]; }

 private:
  std::vector<int32_t> node_owner_;
  std::vector<int64_t> owner_begin_;  // owner q's ids: [owner_begin_[q], owner_begin_[q + 1])
  std::vector<int64_t> ids_;
  std::vector<int64_t> next_;
};

// What one round trip cost this rank: the bytes it sent to other ranks (its
// own share not counted) and the seconds inside the two all-to-alls.
struct RoundTripCost {
  int64_t request_bytes = 0;
  int64_t answer_bytes = 0;
  double seconds = 0;
};

// An owner's answer to one request: `peer` sent `header` and `ids` (each an
// id this rank owns, checked); append the answer to `answers` (the round
// trip ends the message).
using ServeRequest = std::function<void(int peer, std::span<const int64_t> header,
                                        std::span<const int64_t> ids, Messages& answers)>;

// One rank's end of the round trip; its buffers are reused from call to call.
class OwnerRoundTrip {
 public:
  // `comm` and `map` must outlive this object; comm.rank() is the part this
  // rank owns. `what` names the exchange in errors.
  OwnerRoundTrip(Collectives& comm, const PartMap& map, const char* what);

  // Collective: every rank calls it with a header of the same length. Sends
  // each owner q `header` and groups.of(q) (nothing to this rank itself
  // unless ask_self), serves the requests this rank got, and brings the
  // answers back. Throws dgcn::Error naming the rank when a request is
  // malformed or asks for a node this rank does not own.
  RoundTripCost run(std::span<const int64_t> header, const OwnerGroups& groups, bool ask_self,
                    const ServeRequest& serve);
  // After run(): owner q's answer to this rank (empty for this rank itself
  // without ask_self).
  std::span<const std::byte> answer(int q) const { return answers_.of(q); }

 private:
  Collectives& comm_;
  const PartMap& map_;
  const char* what_;
  Messages requests_, received_, answers_;
};

}  // namespace dgcn
