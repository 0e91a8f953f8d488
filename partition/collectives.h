// The collectives the partitioned graph needs, torch-free, so that the
// partitioned sampler (sampling/) and the part loading use them without a
// process group: distributed/process_group.h implements them over c10d
// (Gloo, NCCL), tests in-process (tests/in_process_collectives.h).
//
//   comm.exchange(send, received);              // every rank a message to every rank
//   auto sums = comm.sum({a, b});               // element-wise over ranks
//   auto rows = all_gather<double>(comm, mine); // rows[q]: rank q's values
//   auto bytes = broadcast_values(comm, 0, mine); // rank 0's, on every rank
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "partition/messages.h"

namespace dgcn {

// Every method is collective: every rank calls it, the same number of times
// in the same order. Each throws dgcn::Error when the collective fails or
// times out (naming the peer where known).
class Collectives {
 public:
  virtual ~Collectives() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // send.count() == size(); `received` is overwritten with one message from
  // each rank (received.of(q) is what rank q sent to this one).
  virtual void exchange(const Messages& send, Messages& received) = 0;
  // The element-wise sum over ranks of `values` (as many on every rank).
  virtual std::vector<double> sum(std::vector<double> values) = 0;
  // Returns when every rank has reached it.
  virtual void barrier() = 0;
};

// Collective: every rank's `values` (any count), in rank order (out[q] is rank q's).
template <class T>
std::vector<std::vector<T>> all_gather(Collectives& comm, std::span<const T> values) {
  Messages send;
  for (int q = 0; q < comm.size(); ++q) {
    send.append_value<int64_t>(static_cast<int64_t>(values.size()));
    send.append(values);
    send.end_message();
  }
  Messages received;
  comm.exchange(send, received);
  std::vector<std::vector<T>> out;
  for (int q = 0; q < comm.size(); ++q) {
    MessageReader r(received.of(q), "all_gather");
    const auto n = r.value<int64_t>();
    DGCN_CHECK(n >= 0, "all_gather: rank {} sent {} values", q, n);
    const auto got = r.take<T>(static_cast<size_t>(n));
    out.emplace_back(got.begin(), got.end());
  }
  return out;
}
template <class T>
std::vector<std::vector<T>> all_gather(Collectives& comm, const std::vector<T>& values) {
  return all_gather(comm, std::span<const T>(values));
}

// Collective: `root`'s `values` on every rank (the others' are not read),
// in one exchange in which root sends each other rank a copy: e.g. the
// checkpoint that rank 0 read (train/checkpoint.h).
template <class T>
std::vector<T> broadcast_values(Collectives& comm, int root, std::span<const T> values) {
  DGCN_CHECK(root >= 0 && root < comm.size(), "broadcast: root {} of {} ranks", root, comm.size());
  const bool from_here = comm.rank() == root;
  Messages send;
  for (int q = 0; q < comm.size(); ++q) {
    if (from_here && q != root) {
      send.append_value<int64_t>(static_cast<int64_t>(values.size()));
      send.append(values);
    }
    send.end_message();
  }
  Messages received;
  comm.exchange(send, received);
  if (from_here) return {values.begin(), values.end()};
  MessageReader r(received.of(root), "broadcast");
  const auto n = r.value<int64_t>();
  DGCN_CHECK(n >= 0, "broadcast: rank {} sent {} values", root, n);
  const auto got = r.take<T>(static_cast<size_t>(n));
  return {got.begin(), got.end()};
}
template <class T>
std::vector<T> broadcast_values(Collectives& comm, int root, const std::vector<T>& values) {
  return broadcast_values(comm, root, std::span<const T>(values));
}

// Collective: every rank's `text`, in rank order; e.g. each rank's error
// while loading its part, so that every rank stops naming all of them.
inline std::vector<std::string> all_gather_text(Collectives& comm, const std::string& text) {
  std::vector<std::string> out;
  for (const auto& chars : all_gather(comm, std::span<const char>(text)))
    out.emplace_back(chars.begin(), chars.end());
  return out;
}

}  // namespace dgcn
