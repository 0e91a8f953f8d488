// The optimizers a run can choose, as a closed set (like GcnNorm): the name
// on the command line, the settings a checkpoint records, and the
// construction with an undecayed parameter group.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace dgcn {

enum class OptimizerKind { kAdam, kSgd };
const char* optimizer_name(OptimizerKind kind);          // "adam", "sgd"
OptimizerKind parse_optimizer(const std::string& name);  // inverse; throws dgcn::Error on other names

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 0.01;
  double momentum = 0.0;      // sgd only
  double weight_decay = 0.0;  // L2, on the decayed group
};

// `decayed` with options.weight_decay and, when not empty, `undecayed` with
// none (e.g. Kipf & Welling's decay of the first GCN layer only), in that
// group order. Throws c10::Error on a negative lr, momentum or decay.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        std::vector<at::Tensor> decayed,
                                                        std::vector<at::Tensor> undecayed = {});

// The optimizer of `parameters`, all with options.weight_decay, or, with
// `decayed_only` not empty, only those (e.g. the first GCN layer's, Kipf &
// Welling's Cora setup) while the rest get none; `parameters` keep their
// order within each group.
std::unique_ptr<torch::optim::Optimizer> make_optimizer_decaying(const OptimizerOptions& options,
                                                                 const std::vector<at::Tensor>& parameters,
                                                                 const std::vector<at::Tensor>& decayed_only);

// Sets the learning rate of every parameter group (a resumed run may change it).
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

// The settings as the run record keeps them (train/run_config.h).
nlohmann::json optimizer_record(const OptimizerOptions& options);

}  // namespace dgcn
