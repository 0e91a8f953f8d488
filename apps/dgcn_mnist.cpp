// dgcn-mnist: the DDP baseline (Flatten + Linear(784, 10) on MNIST-format
// data), one JSON line per epoch and a summary line on stdout (rank 0).
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

#include "apps/cli/cli.h"
#include "apps/cli/omp_waits.h"
#include "apps/cli/torch_cli.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "datasets/mnist_idx.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "train/mnist.h"

int main(int argc, char** argv) {
  // The same weights for any thread count, as dgcn-train's (Note [Results
  // independent of the thread count] in apps/cli/omp_waits.h): the ranks of
  // one launcher get 1 thread each on 2 cores, those of two launchers 2.
  dgcn::cli::reexec_with_training_environment(argv);
  using namespace dgcn;
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn"));

  CLI::App app{
      "dgcn-mnist: the classic DDP example in C++ - Flatten + Linear(784, 10), SGD, cross-entropy, each rank "
      "on its shard of the shuffled training set. Prints one JSON line per epoch (epoch from 1, loss, "
      "test_acc) "
      "and a summary line with param_digest and the run's configuration on stdout."};
  cli::setup(app, "dgcn-mnist");
  LaunchOptions launch;
  MnistOptions options;
  std::string data_dir = kDebianFashionMnistDir;
  std::string backend = "auto";
  std::string device_name = "cpu";
  app.add_option("--data", data_dir,
                 "Folder with the four MNIST-format IDX files, gzip or raw (Debian's "
                 "Fashion-MNIST by default)");
  app.add_option("--epochs", options.epochs, "Epochs to train in total")->check(cli::kNonNegative);
  app.add_option("--batch-size", options.batch_size, "Batch size per rank")->check(cli::kPositive);
  app.add_option("--lr", options.lr, "SGD learning rate")->check(cli::kPositive);
  app.add_option("--seed", options.seed, "Seed of the initial weights and of every epoch's shuffle");
  app.add_option("--train-limit", options.train_limit, "Train on the first N training images only (0: all)")
      ->check(cli::kNonNegative);
  app.add_option("--checkpoint", options.checkpoint_dir,
                 "Save a checkpoint into this folder after every epoch (rank 0; keeps the newest two)");
  app.add_flag("--resume", options.resume, "Continue from the newest checkpoint in --checkpoint DIR");
  cli::add_device(app, device_name, "cpu, cuda (rank r of a node on cuda:r) or cuda:N (one rank per node)");
  app.add_option("--backend", backend, "Collective backend: gloo (CPU), nccl (CUDA) or auto")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  add_launch_flags(app, launch);
  if (auto code = cli::parse(app, argc, argv)) return *code;
  options.data_path = data_dir;

  return cli::run_main(
      "dgcn-mnist",
      [&] {
        if (options.resume && options.checkpoint_dir.empty())
          throw cli::UsageError("--resume needs --checkpoint DIR (the folder to resume from)");
        if (auto code = launch_if_requested(launch, argc, argv)) return *code;
        remove_temporary_files_on_signals();  // a rank, not the launcher
        RankEnv env = rank_env_from_process();
        spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}] [%^%l%$] %v", env.rank));
        const c10::Device device = cli::device_for_rank(device_name, env, /*sparse=*/false);
        resume_after_restart(env, options.checkpoint_dir, options.resume);  // Note [Restarts]
        if (!options.checkpoint_dir.empty() && !options.resume && env.rank == 0) {
          cli::check_output_folder("--checkpoint", options.checkpoint_dir);
        }
        auto group = ProcessGroup::create(env, {cli::backend_flag(backend, device), launch.timeout});
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
                                 {"train_seconds", summary.train_seconds},
                                 {"config", summary.config}};
          std::cout << line.dump() << std::endl;
        }
        return 0;
      },
      cli::torch_message);
}
