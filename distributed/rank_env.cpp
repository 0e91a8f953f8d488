#include "distributed/rank_env.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "base/error.h"

namespace dgcn {
namespace {

constexpr const char* kAllVariables =
    "RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT";

std::string require(const EnvLookup& lookup, const char* name) {
  auto value = lookup(name);
  DGCN_CHECK(value.has_value() && !value->empty(),
             "rank environment: RANK is set but {} is not; a rank needs all of {} (as torchrun sets them)",
             name, kAllVariables);
  return *value;
}

int parse_int(const std::string& text, const char* name) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  DGCN_CHECK(ec == std::errc() && end == text.data() + text.size(),
             "rank environment: {}='{}' is not an integer", name, text);
  return value;
}

}  // namespace

std::string RankEnv::describe() const {
  if (!from_environment) return "rank 0/1 (single process)";
  return fmt::format("rank {}/{} (local {}/{}, master {}:{}{})", rank, world_size, local_rank,
                     local_world_size, master_addr, master_port, use_agent_store ? ", torchrun store" : "");
}

RankEnv parse_rank_env(const EnvLookup& lookup) {
  RankEnv env;
  if (!lookup("RANK").has_value()) return env;
  env.from_environment = true;
  env.rank = parse_int(require(lookup, "RANK"), "RANK");
  env.world_size = parse_int(require(lookup, "WORLD_SIZE"), "WORLD_SIZE");
  env.local_rank = parse_int(require(lookup, "LOCAL_RANK"), "LOCAL_RANK");
  env.local_world_size = parse_int(require(lookup, "LOCAL_WORLD_SIZE"), "LOCAL_WORLD_SIZE");
  env.master_addr = require(lookup, "MASTER_ADDR");
  env.master_port = parse_int(require(lookup, "MASTER_PORT"), "MASTER_PORT");

  DGCN_CHECK(env.world_size >= 1, "rank environment: WORLD_SIZE={} must be at least 1", env.world_size);
  DGCN_CHECK(env.rank >= 0 && env.rank < env.world_size,
             "rank environment: RANK={} is outside [0, WORLD_SIZE={})", env.rank, env.world_size);
  DGCN_CHECK(env.local_world_size >= 1 && env.local_world_size <= env.world_size,
             "rank environment: LOCAL_WORLD_SIZE={} must be in [1, WORLD_SIZE={}]", env.local_world_size,
             env.world_size);
  DGCN_CHECK(env.local_rank >= 0 && env.local_rank < env.local_world_size,
             "rank environment: LOCAL_RANK={} is outside [0, LOCAL_WORLD_SIZE={})", env.local_rank,
             env.local_world_size);
  DGCN_CHECK(env.master_port >= 1 && env.master_port <= 65535,
             "rank environment: MASTER_PORT={} is outside [1, 65535]", env.master_port);

  auto agent = lookup("TORCHELASTIC_USE_AGENT_STORE");
  env.use_agent_store = agent.has_value() && *agent == "True";
  // torchrun and dgcn's launcher both number the starts of a job (Note [Restarts]).
  auto restarts = lookup("TORCHELASTIC_RESTART_COUNT");
  env.restart_count = restarts ? parse_int(*restarts, "TORCHELASTIC_RESTART_COUNT") : 0;
  DGCN_CHECK(env.restart_count >= 0, "rank environment: TORCHELASTIC_RESTART_COUNT={} is negative",
             env.restart_count);
  return env;
}

RankEnv rank_env_from_process() {
  return parse_rank_env([](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

bool started_as_rank() {
  return std::getenv("RANK") != nullptr;
}

void resume_after_restart(const RankEnv& env, const std::string& checkpoint_dir, bool& resume) {
  if (env.restart_count == 0) return;
  if (checkpoint_dir.empty() || !std::filesystem::is_directory(checkpoint_dir)) {
    spdlog::warn(
        "restart {}: {}, so training starts again from epoch 1", env.restart_count,
        checkpoint_dir.empty() ? "no --checkpoint folder" : "no checkpoint yet in " + checkpoint_dir);
    return;
  }
  if (!resume)
    spdlog::info("restart {}: resuming from the newest checkpoint in {}", env.restart_count, checkpoint_dir);
  resume = true;
}

}  // namespace dgcn
