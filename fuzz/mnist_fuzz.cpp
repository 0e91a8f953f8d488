// The four MNIST IDX files (one of them gzip, as Debian ships them).
#include "datasets/mnist_idx.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  const std::string dir = dgcn::fuzz::write_files({"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                                   "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte"},
                                                  data, size);
  (void)dgcn::read_mnist_dir(dir);
})
