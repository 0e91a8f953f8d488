// dgcn-mnist: the DDP baseline (Flatten + Linear(784, 10) on MNIST-format
// data), one JSON line per epoch and a summary line on stdout (rank 0).
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

#include "base/error.h"
#include "datasets/mnist_idx.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "train/mnist.h"

int main(int argc, char** argv) {
  using namespace dgcn;
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn"));

  CLI::App app{
      "dgcn-mnist: the classic DDP example in C++ - Flatten + Linear(784, 10), SGD, cross-entropy, each rank "
      "on its shard of the shuffled training set. Prints one JSON line per epoch (epoch, loss, test_acc) and "
      "a "
      "summary line with param_digest on stdout."};
  LaunchOptions launch;
  MnistOptions options;
  std::string data_dir = kDebianFashionMnistDir;
  std::string backend = "auto";
  std::string device_name = "cpu";
  app.add_option(
      "--data", data_dir,
      "Directory with the four MNIST-format IDX files, gzip or raw (default: Debian's Fashion-MNIST)");
  app.add_option("--epochs", options.epochs, "Epochs to train in total (default 3)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--batch-size", options.batch_size, "Batch size per rank (default 64)")
      ->check(CLI::PositiveNumber);
  app.add_option("--lr", options.lr, "SGD learning rate (default 0.01)")->check(CLI::PositiveNumber);
  app.add_option("--seed", options.seed,
                 "Seed of the initial weights and of every epoch's shuffle (default 0)");
  app.add_option("--train-limit", options.train_limit, "Train on the first N training images only (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint", options.checkpoint_dir,
                 "Save a checkpoint into this directory after every epoch (rank 0; keeps the previous one)");
  app.add_flag("--resume", options.resume, "Continue from the newest checkpoint in --checkpoint DIR");
  app.add_option("--device", device_name, "cpu or cuda (cuda:LOCAL_RANK; default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--backend", backend, "Collective backend: gloo (CPU), nccl (CUDA) or auto (default)")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  add_launch_flags(app, launch);
  CLI11_PARSE(app, argc, argv);
  if (options.resume && options.checkpoint_dir.empty()) {
    spdlog::error("--resume needs --checkpoint DIR (the folder to resume from)");
    return 1;
  }

  try {
    if (auto code = launch_if_requested(launch, argc, argv)) return *code;
    RankEnv env = rank_env_from_process();
    spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}] [%^%l%$] %v", env.rank));
    c10::Device device = device_name == "cuda"
                             ? c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank))
                             : c10::Device(c10::kCPU);
    CommBackend comm;
    try {
      comm = parse_backend(backend, device);
    } catch (const c10::Error& e) {
      throw Error(fmt::format("--backend {}: {}", backend, e.what_without_backtrace()));
    }
    auto group = ProcessGroup::create(env, {comm, launch.timeout});
    spdlog::info("{} over {}; reading {}", env.describe(), backend_name(group->backend()), data_dir);
    MnistData data = read_mnist_dir(data_dir);

    MnistSummary summary = train_mnist(data, options, *group, [&](const MnistEpoch& e) {
      if (group->rank() != 0) return;
      nlohmann::json line = {{"epoch", e.epoch},
                             {"loss", e.loss},
                             {"test_acc", e.test_acc},
                             {"test_loss", e.test_loss},
                             {"seconds", e.seconds}};
      std::cout << line.dump() << std::endl;
    });
    group->shutdown();
    if (env.rank == 0) {
      nlohmann::json line = {{"summary", "dgcn-mnist"},
                             {"world_size", env.world_size},
                             {"backend", backend_name(group->backend())},
                             {"data", data_dir},
                             {"first_epoch", summary.first_epoch},
                             {"epochs", summary.epochs},
                             {"test_acc", summary.test_acc},
                             {"param_digest", summary.param_digest},
                             {"train_seconds", summary.train_seconds}};
      std::cout << line.dump() << std::endl;
    }
    return 0;
  } catch (const c10::Error& e) {
    spdlog::error("{}", e.what_without_backtrace());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
  return 1;
}
