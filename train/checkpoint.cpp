#include "train/checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <fmt/format.h>
#include <torch/serialize.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <span>

#include "base/atomic_file.h"

namespace dgcn {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFormat = 1;
constexpr const char* kPrefix = "checkpoint-";
constexpr const char* kSuffix = ".pt";
constexpr const char* kExtra = "extra.";

// The epoch in "checkpoint-000012.pt", or -1 for any other name.
int64_t epoch_of(const std::string& name) {
  std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

std::string checkpoint_name(int64_t epoch) {
  return fmt::format("{}{:06d}{}", kPrefix, epoch, kSuffix);
}

std::map<int64_t, fs::path> checkpoints_in(const std::string& dir) {
  std::map<int64_t, fs::path> found;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    int64_t epoch = epoch_of(entry.path().filename().string());
    if (epoch >= 0 && entry.is_regular_file()) found[epoch] = entry.path();
  }
  return found;
}

std::vector<char> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  TORCH_CHECK(in, "checkpoint ", path.string(), ": cannot open: ", std::strerror(errno));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TORCH_CHECK(!in.bad(), "checkpoint ", path.string(), ": read failed");
  return bytes;
}

// Every parameter and buffer under its module name.
std::vector<std::pair<std::string, at::Tensor>> model_tensors(const torch::nn::Module& model) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : model.named_parameters(true)) out.emplace_back(item.key(), item.value());
  for (const auto& item : model.named_buffers(true)) out.emplace_back(item.key(), item.value());
  return out;
}

at::Tensor scalar(int64_t v) {
  return at::scalar_tensor(v, at::TensorOptions().dtype(at::kLong));
}

int64_t read_scalar(const c10::Dict<std::string, at::Tensor>& dict, const std::string& key,
                    const std::string& what) {
  TORCH_CHECK(dict.contains(key), "checkpoint ", what, ": no '", key, "' entry");
  at::Tensor t = dict.at(key);
  TORCH_CHECK(t.numel() == 1 && t.scalar_type() == at::kLong, "checkpoint ", what, ": '", key,
              "' must be an int64 scalar, got ", t.numel(), " x ", t.scalar_type());
  return t.item<int64_t>();
}

// Restores from checkpoint bytes; the same on every rank.
CheckpointState restore(const std::vector<char>& bytes, const std::string& what, torch::nn::Module& model,
                        torch::optim::Optimizer& optimizer, const c10::Device& device) {
  c10::IValue loaded;
  try {
    loaded = torch::pickle_load(bytes);
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, "checkpoint ", what, ": not a readable pickle archive: ", e.what_without_backtrace());
  }
  TORCH_CHECK(loaded.isGenericDict(), "checkpoint ", what, ": expected a dict of tensors, got ",
              loaded.tagKind());
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& entry : loaded.toGenericDict()) {
    TORCH_CHECK(entry.key().isString() && entry.value().isTensor(), "checkpoint ", what,
                ": every entry must map a string to a tensor");
    dict.insert(entry.key().toStringRef(), entry.value().toTensor());
  }
  int64_t format = read_scalar(dict, "format", what);
  TORCH_CHECK(format == kFormat, "checkpoint ", what, ": format ", format,
              " is not supported (this build reads ", kFormat, ")");
  CheckpointState state;
  state.epoch = read_scalar(dict, "epoch", what);
  state.seed = read_scalar(dict, "seed", what);
  state.world_size = read_scalar(dict, "world_size", what);
  for (const auto& entry : dict) {
    const std::string& key = entry.key();
    if (key.rfind(kExtra, 0) != 0) continue;
    const at::Tensor& t = entry.value();
    TORCH_CHECK(t.numel() == 1 && t.scalar_type() == at::kDouble, "checkpoint ", what, ": '", key,
                "' must be a float64 scalar, got ", t.numel(), " x ", t.scalar_type());
    state.extra[key.substr(std::strlen(kExtra))] = t.item<double>();
  }

  std::set<std::string> expected;
  {
    at::NoGradGuard no_grad;
    for (auto& [name, tensor] : model_tensors(model)) {
      std::string key = "model." + name;
      expected.insert(key);
      TORCH_CHECK(dict.contains(key), "checkpoint ", what, ": no '", key, "' entry for the model's ", name);
      at::Tensor saved = dict.at(key);
      TORCH_CHECK(saved.sizes() == tensor.sizes() && saved.scalar_type() == tensor.scalar_type(),
                  "checkpoint ", what, ": '", key, "' is ", saved.sizes(), " ", saved.scalar_type(),
                  " but the model's is ", tensor.sizes(), " ", tensor.scalar_type());
      tensor.copy_(saved);
    }
  }
  for (const auto& entry : dict) {
    const std::string& key = entry.key();
    TORCH_CHECK(key.rfind("model.", 0) != 0 || expected.count(key), "checkpoint ", what, ": '", key,
                "' matches nothing in the model (a different architecture?)");
  }
  TORCH_CHECK(dict.contains("optimizer"), "checkpoint ", what, ": no 'optimizer' entry");
  at::Tensor archive_bytes = dict.at("optimizer").contiguous();
  // The optimizer state goes where the parameters are (a single CUDA
  // process may run over a CPU-only Gloo group).
  const auto params = model.parameters();
  torch::serialize::InputArchive archive;
  archive.load_from(static_cast<const char*>(archive_bytes.data_ptr()),
                    static_cast<size_t>(archive_bytes.numel()),
                    params.empty() ? device : params.front().device());
  optimizer.load(archive);
  return state;
}

}  // namespace

std::string save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                            const torch::optim::Optimizer& optimizer, const CheckpointState& state) {
  TORCH_CHECK(state.epoch >= 0, "save_checkpoint: epoch ", state.epoch, " is negative");
  std::error_code ec;
  fs::create_directories(dir, ec);
  TORCH_CHECK(!ec, "checkpoint dir ", dir, ": cannot create: ", ec.message());

  c10::Dict<std::string, at::Tensor> dict;
  dict.insert("format", scalar(kFormat));
  dict.insert("epoch", scalar(state.epoch));
  dict.insert("seed", scalar(state.seed));
  dict.insert("world_size", scalar(state.world_size));
  for (const auto& [name, value] : state.extra) {
    dict.insert(kExtra + name, at::scalar_tensor(value, at::TensorOptions().dtype(at::kDouble)));
  }
  for (const auto& [name, tensor] : model_tensors(model)) dict.insert("model." + name, tensor.detach().cpu());

  std::string archive_bytes;
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  archive.save_to([&archive_bytes](const void* data, size_t size) {
    archive_bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  at::Tensor blob =
      at::empty({static_cast<int64_t>(archive_bytes.size())}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(blob.data_ptr(), archive_bytes.data(), archive_bytes.size());
  dict.insert("optimizer", blob);

  fs::path path = fs::path(dir) / checkpoint_name(state.epoch);
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  write_file_atomically(path.string(), std::as_bytes(std::span<const char>(bytes)));

  // Keep this one and the newest earlier one.
  auto found = checkpoints_in(dir);
  int kept_older = 0;
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    if (it->first >= state.epoch) continue;
    if (kept_older++ == 0) continue;
    fs::remove(it->second, ec);
  }
  return path.string();
}

std::optional<std::string> newest_checkpoint(const std::string& dir) {
  auto found = checkpoints_in(dir);
  if (found.empty()) return std::nullopt;
  return found.rbegin()->second.string();
}

std::optional<CheckpointState> load_checkpoint(const std::string& dir, torch::nn::Module& model,
                                               torch::optim::Optimizer& optimizer, ProcessGroup& group) {
  constexpr int64_t kNone = -1, kReadFailed = -2;
  std::vector<char> bytes;
  std::string what = dir;
  int64_t size = kNone;
  std::string read_error;
  if (group.rank() == 0) {
    if (auto path = newest_checkpoint(dir)) {
      what = *path;
      try {
        bytes = read_file(*path);
        size = static_cast<int64_t>(bytes.size());
      } catch (const c10::Error& e) {
        read_error = e.what_without_backtrace();
        size = kReadFailed;
      }
    }
  }
  at::Tensor header = at::full({1}, size, at::TensorOptions().dtype(at::kLong)).to(group.device());
  group.broadcast(header, 0).wait();
  size = header.cpu().item<int64_t>();
  TORCH_CHECK(size != kReadFailed,
              group.rank() == 0 ? read_error : "rank 0 could not read the newest checkpoint in " + dir);
  if (size == kNone) return std::nullopt;

  at::Tensor payload = at::empty({size}, at::TensorOptions().dtype(at::kByte));
  if (group.rank() == 0) std::memcpy(payload.data_ptr(), bytes.data(), bytes.size());
  payload = payload.to(group.device());
  group.broadcast(payload, 0).wait();
  payload = payload.cpu();
  if (group.rank() != 0) {
    bytes.assign(static_cast<const char*>(payload.data_ptr()),
                 static_cast<const char*>(payload.data_ptr()) + size);
    what = "from rank 0 (" + dir + ")";
  }
  return restore(bytes, what, model, optimizer, group.device());
}

}  // namespace dgcn
