#include "bench/products_batch.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dgcn {
namespace {

TEST(ProductsBatch, HopsNestAndEveryIdIsANodeSeenByThen) {
  ProductsBatchSpec spec;
  spec.fanouts = {4, 3, 2};
  spec.seeds = 50;
  const ProductsBatch b = products_batch(spec);
  ASSERT_EQ(b.num_layers(), 3);
  EXPECT_EQ(b.within.front(), 50);
  // Rows are the nodes within 2 hops, each with exactly its hop's fanout.
  EXPECT_EQ(b.num_rows(), b.within[2]);
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    const int64_t hop = r < b.within[0] ? 0 : r < b.within[1] ? 1 : 2;
    EXPECT_EQ(b.indptr[r + 1] - b.indptr[r], spec.fanouts[hop]) << "row " << r;
    // A neighbour of a hop-h row is a node reached by hop h + 1.
    for (int64_t e = b.indptr[r]; e < b.indptr[r + 1]; ++e) {
      EXPECT_GE(b.indices[e], 0);
      EXPECT_LT(b.indices[e], b.within[hop + 1]) << "row " << r;
    }
  }
  // Layer l reads the rows within L-1-l hops over the nodes within L-l.
  EXPECT_EQ(b.layer_rows(0), b.within[2]);
  EXPECT_EQ(b.layer_cols(0), b.within[3]);
  EXPECT_EQ(b.layer_rows(2), 50);
  EXPECT_EQ(b.layer_nnz(2), 50 * 4);
}

TEST(ProductsBatch, TheSeedFixesTheBatchAndNewFractionsSetTheGrowth) {
  ProductsBatchSpec spec;
  spec.seeds = 200;
  spec.fanouts = {10, 5};
  EXPECT_EQ(products_batch(spec).indices, products_batch(spec).indices);
  ProductsBatchSpec other = spec;
  other.seed = 2;
  EXPECT_NE(products_batch(other).indices, products_batch(spec).indices);
  // All new at hop 0: 2000 fresh nodes; none new at hop 1: no growth.
  spec.new_fraction = {1.0, 0.0};
  const ProductsBatch b = products_batch(spec);
  EXPECT_EQ(b.within[1], 200 + 2000);
  EXPECT_EQ(b.within[2], b.within[1]);
  spec.fanouts = {};
  EXPECT_THROW(products_batch(spec), Error);
}

}  // namespace
}  // namespace dgcn
