// The partitioned graph's exchanges (base/all_to_all.h) over a process
// group (implemented in process_group.cpp): per exchange one all-to-all of the message sizes, then one of the
// bytes, as uint8 tensors wrapping the messages' buffers (copied to the GPU
// and back for NCCL).
#pragma once

#include "base/all_to_all.h"
#include "distributed/process_group.h"

namespace dgcn {

class GroupAllToAll final : public AllToAll {
 public:
  // `group` must outlive this object; exchanges are collectives of it.
  explicit GroupAllToAll(ProcessGroup& group) : group_(group) {}
  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  // Throws dgcn::Error naming the collective and the rank when it fails.
  void exchange(const Messages& send, Messages& received) override;

 private:
  ProcessGroup& group_;
};

}  // namespace dgcn
