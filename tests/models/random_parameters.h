// Oracle tests draw every parameter of the model at random: GCNConv starts
// with a zero bias (PyG's reset), so an oracle run on fresh parameters
// could not see a forward pass that forgot the bias.
#pragma once

#include <torch/torch.h>

namespace dgcn::testing {

// Every parameter of `module` (and its submodules) uniform in [-scale,
// scale], from torch's global generator (seed it with torch::manual_seed).
inline void randomize_parameters(torch::nn::Module& module, double scale = 0.5) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) p.uniform_(-scale, scale);
}

}  // namespace dgcn::testing
