#include "train/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <set>
#include <utility>

#include "base/error.h"

namespace dgcn {
namespace {

std::unique_ptr<torch::optim::OptimizerOptions> group_options(const OptimizerOptions& o, double decay) {
  if (o.kind == OptimizerKind::kAdam) {
    return std::make_unique<torch::optim::AdamOptions>(torch::optim::AdamOptions(o.lr).weight_decay(decay));
  }
  return std::make_unique<torch::optim::SGDOptions>(
      torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(decay));
}

}  // namespace

const char* optimizer_name(OptimizerKind kind) {
  return kind == OptimizerKind::kAdam ? "adam" : "sgd";
}

OptimizerKind parse_optimizer(const std::string& name) {
  if (name == "adam") return OptimizerKind::kAdam;
  if (name == "sgd") return OptimizerKind::kSgd;
  throw Error(fmt::format("optimizer: unknown optimizer '{}' (expected 'adam' or 'sgd')", name));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o,
                                                        std::vector<at::Tensor> decayed,
                                                        std::vector<at::Tensor> undecayed) {
  TORCH_CHECK(o.lr > 0 && o.momentum >= 0 && o.weight_decay >= 0, "make_optimizer: lr ", o.lr, ", momentum ",
              o.momentum, ", weight decay ", o.weight_decay, ": expected > 0, >= 0, >= 0");
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::move(decayed), group_options(o, o.weight_decay));
  if (!undecayed.empty()) groups.emplace_back(std::move(undecayed), group_options(o, 0.0));
  if (o.kind == OptimizerKind::kAdam) {
    return std::make_unique<torch::optim::Adam>(groups, torch::optim::AdamOptions(o.lr));
  }
  return std::make_unique<torch::optim::SGD>(groups, torch::optim::SGDOptions(o.lr));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer_decaying(
    const OptimizerOptions& options, const std::vector<at::Tensor>& parameters,
    const std::vector<at::Tensor>& decayed_only) {
  if (decayed_only.empty()) return make_optimizer(options, parameters);
  std::set<const c10::TensorImpl*> chosen;
  for (const auto& p : decayed_only) chosen.insert(p.unsafeGetTensorImpl());
  std::vector<at::Tensor> decayed, rest;
  for (const auto& p : parameters) (chosen.count(p.unsafeGetTensorImpl()) ? decayed : rest).push_back(p);
  return make_optimizer(options, std::move(decayed), std::move(rest));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

nlohmann::json optimizer_record(const OptimizerOptions& o) {
  nlohmann::json j = {{"name", optimizer_name(o.kind)}, {"lr", o.lr}, {"weight_decay", o.weight_decay}};
  if (o.kind == OptimizerKind::kSgd) j["momentum"] = o.momentum;
  return j;
}

}  // namespace dgcn
