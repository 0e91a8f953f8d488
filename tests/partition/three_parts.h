// A small partitioned graph the partition/ tests share.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fixtures.h"
#include "partition/part_map.h"
#include "partition/partition.h"

namespace dgcn::testing {

// The 30-node cycle cut into 3 parts by v % 3, and each rank's map.
struct ThreeParts {
  GraphStore whole = testing::make_store(testing::cycle_edges(30));
  std::vector<GraphStore> parts;
  std::vector<std::unique_ptr<PartMap>> maps;
  ThreeParts() {
    std::vector<int32_t> owner(30);
    for (int v = 0; v < 30; ++v) owner[static_cast<size_t>(v)] = v % 3;
    const Buffer owners = Buffer::from_vector(std::move(owner));
    for (int r = 0; r < 3; ++r) parts.push_back(extract_part(whole, owners, r, 3, "{}", 1));
    for (int r = 0; r < 3; ++r) maps.push_back(std::make_unique<PartMap>(parts[static_cast<size_t>(r)].part));
  }
};

}  // namespace dgcn::testing
