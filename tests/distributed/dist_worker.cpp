// One rank of a distributed test scenario. The torch-free tests start it
// through dgcn's launcher (N ranks on localhost over Gloo) and check what
// each rank writes to OUT/rank<r>.json against values worked out by hand.
//
//   dgcn_dist_worker collectives --out DIR
//   dgcn_dist_worker ddp --out DIR [--variant plain|unused|nosync] [--small-buckets] [--steps K]
//   dgcn_dist_worker fail --out DIR --victim R --how exit|signal|hang|absent|stall
//   dgcn_dist_worker checkpoint --out DIR
//   dgcn_dist_worker replicas --out DIR --variant same|shape|setting
#include <c10/util/Exception.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/atomic_file.h"
#include "base/digest.h"
#include "distributed/ddp.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "train/checkpoint.h"

namespace dgcn {
namespace {

using json = nlohmann::json;

// Written atomically: the launcher may kill this rank at any moment once a
// peer has failed, and a half-written file would read as a broken result
// instead of none.
void write_result(const std::string& dir, int rank, const json& result) {
  write_file_atomically(dir + "/rank" + std::to_string(rank) + ".json", result.dump(1) + "\n");
}

std::string digest_of(const std::vector<at::Tensor>& tensors) {
  Digest d;
  for (const auto& t : tensors) {
    at::Tensor c = t.detach().cpu().contiguous();
    d.update(c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  }
  return d.hex();
}

// ---------------------------------------------------------------------------
// collectives: values worked out by hand.

json run_collectives(ProcessGroup& group) {
  const int r = group.rank(), n = group.size();
  // Three all-reduces in flight at once, of different sizes, waited in reverse.
  std::vector<at::Tensor> tensors;
  std::vector<Work> works;
  for (int64_t size : {1, 1000, 100000}) {
    tensors.push_back(torch::full({size}, static_cast<float>(r + 1)));
    works.push_back(group.allreduce_sum(tensors.back()));
  }
  for (auto it = works.rbegin(); it != works.rend(); ++it) it->wait();
  json allreduce = json::array();
  for (const auto& t : tensors) allreduce.push_back({t.min().item<double>(), t.max().item<double>()});

  at::Tensor b = torch::full({7}, static_cast<double>(r * 10), torch::kDouble);
  group.broadcast(b, n - 1).wait();
  group.barrier();
  auto sums = group.sum({static_cast<double>(r), 1.0});

  // All-to-all of byte messages, on this group and on another() one: rank r
  // sends rank q r + q values of 100 r + q (none from rank 0 to itself).
  std::unique_ptr<ProcessGroup> second = group.another("second");
  json alltoall = json::array();
  for (ProcessGroup* g : {&group, second.get()}) {
    Collectives& comm = *g;
    Messages send, received;
    for (int q = 0; q < n; ++q) {
      const std::vector<int64_t> values(static_cast<size_t>(r + q), 100 * r + q);
      send.append(std::span<const int64_t>(values));
      send.end_message();
    }
    comm.exchange(send, received);
    json from = json::array();
    for (int q = 0; q < n; ++q) {
      const auto got = MessageReader(received.of(q), "test").take<int64_t>(received.of(q).size() / 8);
      from.push_back(std::vector<int64_t>(got.begin(), got.end()));
    }
    alltoall.push_back(from);
  }
  second->shutdown();
  return {{"allreduce", allreduce},
          {"broadcast", {b.min().item<double>(), b.max().item<double>()}},
          {"sum_of_ranks", sums[0]},
          {"count", sums[1]},
          {"alltoall", alltoall}};
}

// ---------------------------------------------------------------------------
// ddp: N ranks on their shards vs one process on the union batch.

struct Net : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr}, extra{nullptr}, never{nullptr};
  // Registered first, so they land in the last buckets: the earlier ones
  // fill during backward and must launch there.
  Net() {
    extra = register_module("extra", torch::nn::Linear(32, 4));  // used on rank 0 only (variant unused)
    never = register_module("never", torch::nn::Linear(32, 4));  // used nowhere
    fc1 = register_module("fc1", torch::nn::Linear(8, 32));
    fc2 = register_module("fc2", torch::nn::Linear(32, 32));
    fc3 = register_module("fc3", torch::nn::Linear(32, 4));
  }
  at::Tensor forward(const at::Tensor& x, bool use_extra) {
    at::Tensor h = torch::relu(fc2(torch::relu(fc1(x))));
    at::Tensor out = fc3(h);
    return use_extra ? out + extra(h) : out;
  }
};

at::Tensor loss_of(Net& net, const at::Tensor& x, const at::Tensor& y, bool use_extra) {
  return torch::nn::functional::cross_entropy(net.forward(x, use_extra), y);
}

json run_ddp(ProcessGroup& group, const std::string& variant, bool small_buckets, int steps) {
  const int r = group.rank(), n = group.size();
  constexpr int64_t kPerRank = 12;
  torch::manual_seed(100 + r);  // different on every rank: DDP must broadcast rank 0's
  auto net = std::make_shared<Net>();
  torch::manual_seed(100);
  auto reference = std::make_shared<Net>();  // rank 0's initial weights

  DdpOptions options;
  if (small_buckets) options.caps = {600, 1500};  // four buckets for this 8.6 KB net
  DistributedDataParallel ddp(*net, group, options);
  auto sgd = torch::optim::SGDOptions(0.1).momentum(0.9);
  torch::optim::SGD opt(net->parameters(), sgd), ref_opt(reference->parameters(), sgd);

  json diffs = json::array(), digests = json::array();
  auto max_diff = [&] {
    double m = 0;
    auto a = net->parameters(), b = reference->parameters();
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
    return m;
  };
  diffs.push_back(max_diff());
  digests.push_back(digest_of(net->parameters()));
  for (int step = 0; step < steps; ++step) {
    torch::manual_seed(1000 + step);  // the same union batch on every rank
    at::Tensor x = torch::randn({n * kPerRank, 8});
    at::Tensor y = torch::randint(0, 4, {n * kPerRank});
    auto mine = [&](const at::Tensor& t, int64_t part, int64_t parts) {
      int64_t len = kPerRank / parts;
      return t.narrow(0, r * kPerRank + part * len, len);
    };
    opt.zero_grad();
    ref_opt.zero_grad();
    if (variant == "plain") {
      ddp.backward(loss_of(*net, mine(x, 0, 1), mine(y, 0, 1), false));
      loss_of(*reference, x, y, false).backward();  // mean over the union batch
    } else if (variant == "unused") {
      ddp.backward(loss_of(*net, mine(x, 0, 1), mine(y, 0, 1), r == 0));
      at::Tensor total = torch::zeros({});
      for (int q = 0; q < n; ++q) {
        total = total + loss_of(*reference, x.narrow(0, q * kPerRank, kPerRank),
                                y.narrow(0, q * kPerRank, kPerRank), q == 0);
      }
      (total / n).backward();
    } else if (variant == "nosync") {
      {
        auto guard = ddp.no_sync();
        ddp.backward(loss_of(*net, mine(x, 0, 2), mine(y, 0, 2), false));
      }
      ddp.backward(loss_of(*net, mine(x, 1, 2), mine(y, 1, 2), false));
      at::Tensor total = torch::zeros({});
      for (int q = 0; q < n; ++q) {
        for (int part = 0; part < 2; ++part) {
          int64_t begin = q * kPerRank + part * kPerRank / 2;
          total = total + loss_of(*reference, x.narrow(0, begin, kPerRank / 2),
                                  y.narrow(0, begin, kPerRank / 2), false);
        }
      }
      (total / n).backward();
    } else {
      TORCH_CHECK(false, "unknown variant ", variant);
    }
    opt.step();
    ref_opt.step();
    diffs.push_back(max_diff());
    digests.push_back(digest_of(net->parameters()));
  }
  auto stats = ddp.stats();
  return {{"max_abs_diff", diffs},
          {"digests", digests},
          {"buckets", ddp.buckets().size()},
          {"syncs", stats.syncs},
          {"buckets_launched", stats.buckets_launched},
          {"launched_during_backward", stats.launched_during_backward},
          {"never_grad_defined", net->never->weight.grad().defined()},
          {"extra_grad_defined", net->extra->weight.grad().defined()}};
}

// ---------------------------------------------------------------------------
// replicas: rank 1 builds another model (shape) or reads other data (setting).

struct WiderNet : Net {
  torch::nn::Linear wide{nullptr};
  WiderNet() {
    fc2 = replace_module("fc2", torch::nn::Linear(32, 33));
    wide = register_module("wide", torch::nn::Linear(33, 4));
  }
};

json run_replicas(ProcessGroup& group, const std::string& variant, const std::string& out) {
  const int r = group.rank();
  std::shared_ptr<Net> net =
      variant == "shape" && r == 1 ? std::make_shared<WiderNet>() : std::make_shared<Net>();
  DdpOptions options;
  options.replica_settings = {{"data.digest", variant == "setting" && r == 1 ? "9a9a9a9a" : "1f1f1f1f"},
                              {"sampling.fanouts", "[15,10,5]"}};
  try {
    DistributedDataParallel ddp(*net, group, options);
  } catch (const c10::Error& e) {
    write_result(out, r, {{"error", e.what_without_backtrace()}});
    // Every rank fails at the same moment; give the others time to write
    // theirs before the launcher stops them for this rank's exit.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    _exit(1);
  }
  return {{"checked", true}};
}

// ---------------------------------------------------------------------------
// fail: one rank dies, hangs or never joins a collective.

json run_fail(ProcessGroup& group, int victim, const std::string& how, const std::string& out) {
  const int r = group.rank();
  at::Tensor t = torch::ones({16});
  group.allreduce_sum(t).wait();  // everyone is connected
  if (r == victim) {
    spdlog::info("rank {} (pid {}): failing now ({})", r, getpid(), how);
    if (how == "exit") _exit(3);
    if (how == "signal") raise(SIGKILL);
    if (how == "stall") {
      // Alive and stuck in its own work: the peers' collective times out and names this rank.
      std::this_thread::sleep_for(std::chrono::hours(1));
    }
    if (how == "hang" || how == "absent") {
      signal(SIGTERM, SIG_IGN);  // the launcher must escalate to SIGKILL
      std::this_thread::sleep_for(std::chrono::hours(1));
    }
  }
  if (how == "hang" && r != victim) {
    // A peer fails on its own while the victim hangs outside any collective.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    _exit(5);
  }
  try {
    group.allreduce_sum(t).wait();
  } catch (const c10::Error& e) {
    spdlog::info("rank {}: the collective failed: {}", r, e.what_without_backtrace());
    write_result(out, r, {{"error", e.what_without_backtrace()}});
    // Leave time for the launcher to see the victim's exit first, so the
    // test's attribution does not depend on scheduling.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    _exit(1);
  }
  return {{"unexpected", "the collective after the failure succeeded"}};
}

// ---------------------------------------------------------------------------
// checkpoint: a small model after one SGD-with-momentum step, for torch.load.

json run_checkpoint(ProcessGroup& group, const std::string& out) {
  torch::manual_seed(7);
  auto net = std::make_shared<Net>();
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  net->forward(torch::randn({5, 8}), true).sum().backward();
  opt.step();
  json params = json::object();
  for (const auto& item : net->named_parameters()) {
    params[item.key()] = {{"sum", item.value().sum().item<double>()}, {"shape", item.value().sizes().vec()}};
  }
  std::string path;
  CheckpointState saved;
  saved.epoch = 4;
  saved.seed = 1234;
  saved.world_size = group.size();
  saved.config = {{"model", {{"kind", "test-net"}}}};
  if (group.rank() == 0) path = save_checkpoint(out + "/ckpt", *net, opt, saved);

  // Every rank restores into a fresh model and compares.
  torch::manual_seed(8);
  auto fresh = std::make_shared<Net>();
  torch::optim::SGD fresh_opt(fresh->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  group.barrier();
  auto checkpoint = read_checkpoint(out + "/ckpt", group);
  TORCH_CHECK(checkpoint.has_value(), "no checkpoint found after saving one");
  restore_checkpoint(*checkpoint, *fresh, &fresh_opt);
  const CheckpointState* state = &checkpoint->state;
  // One more identical step on both must agree: the momentum buffers came back too.
  opt.zero_grad();
  fresh_opt.zero_grad();
  for (auto* n : {net.get(), fresh.get()}) n->forward(torch::ones({5, 8}), true).sum().backward();
  opt.step();
  fresh_opt.step();
  bool same = digest_of(net->parameters()) == digest_of(fresh->parameters());
  return {{"path", path},        {"params", params},        {"epoch", state->epoch},
          {"seed", state->seed}, {"config", state->config}, {"same_after_step", same}};
}

}  // namespace
}  // namespace dgcn

int main(int argc, char** argv) {
  using namespace dgcn;
  spdlog::set_default_logger(spdlog::stderr_color_mt("worker"));
  CLI::App app{"dgcn_dist_worker: one rank of a distributed test scenario"};
  app.require_subcommand(1);
  LaunchOptions launch;
  add_launch_flags(app, launch);
  std::string out, variant = "plain", how = "exit";
  bool small_buckets = false;
  int steps = 4, victim = 1;
  app.add_option("--out", out, "Directory for rank<r>.json")->required();
  auto* collectives = app.add_subcommand("collectives");
  auto* ddp = app.add_subcommand("ddp");
  ddp->add_option("--variant", variant)->check(CLI::IsMember({"plain", "unused", "nosync"}));
  ddp->add_flag("--small-buckets", small_buckets);
  ddp->add_option("--steps", steps);
  auto* fail = app.add_subcommand("fail");
  fail->add_option("--victim", victim);
  fail->add_option("--how", how)->check(CLI::IsMember({"exit", "signal", "hang", "absent", "stall"}));
  auto* checkpoint = app.add_subcommand("checkpoint");
  auto* replicas = app.add_subcommand("replicas");
  replicas->add_option("--variant", variant)->check(CLI::IsMember({"same", "shape", "setting"}));
  CLI11_PARSE(app, argc, argv);

  try {
    if (auto code = launch_if_requested(launch, argc, argv)) return *code;
    RankEnv env = rank_env_from_process();
    auto group = ProcessGroup::create(env, {CommBackend::kGloo, launch.timeout});
    json result;
    if (collectives->parsed()) result = run_collectives(*group);
    if (ddp->parsed()) result = run_ddp(*group, variant, small_buckets, steps);
    if (fail->parsed()) result = run_fail(*group, victim, how, out);
    if (checkpoint->parsed()) result = run_checkpoint(*group, out);
    if (replicas->parsed()) result = run_replicas(*group, variant, out);
    result["rank"] = env.rank;
    result["world_size"] = env.world_size;
    write_result(out, env.rank, result);
    group->shutdown();
    return 0;
  } catch (const c10::Error& e) {
    spdlog::error("{}", e.what_without_backtrace());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
  return 1;
}
