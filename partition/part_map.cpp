#include "partition/part_map.h"

#include "base/error.h"

namespace dgcn {

PartMap::PartMap(const GraphPart& part) : owners_(part.owners()), parts_(part.count) {
  DGCN_CHECK(part.is_part(), "partitioned graph: the store is a whole graph, not a part");
  std::vector<int32_t> next(static_cast<size_t>(parts_), 0);
  rows_.resize(owners_.size());
  for (size_t v = 0; v < owners_.size(); ++v) rows_[v] = next[static_cast<size_t>(owners_[v])]++;
}

}  // namespace dgcn
