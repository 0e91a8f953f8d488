#include "train/checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <utility>

#include "base/atomic_file.h"
#include "graph/file_kind.h"

namespace dgcn {
namespace {

namespace fs = std::filesystem;

// 2: "config" (a JSON string) next to the tensors.
constexpr int64_t kFormat = 2;
constexpr const char* kPrefix = "checkpoint-";
constexpr const char* kSuffix = ".pt";
constexpr const char* kExtra = "extra.";

// How far a checkpoint is: (epochs done, batches done of the next epoch).
using Position = std::pair<int64_t, int64_t>;

std::optional<int64_t> digits_of(const std::string& s) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(s);
}

// The position of "checkpoint-000012.pt" (12, 0) or "checkpoint-000013-b000040.pt"
// (12, 40); nullopt for any other name (temporary files included).
std::optional<Position> position_of(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  const size_t b = middle.find("-b");
  if (b == std::string::npos) {
    auto epoch = digits_of(middle);
    if (!epoch) return std::nullopt;
    return Position{*epoch, 0};
  }
  auto epoch = digits_of(middle.substr(0, b)), batch = digits_of(middle.substr(b + 2));
  if (!epoch || !batch || *epoch < 1 || *batch < 1) return std::nullopt;
  return Position{*epoch - 1, *batch};
}

std::string checkpoint_name(const CheckpointState& state) {
  if (state.batch == 0) return fmt::format("{}{:06d}{}", kPrefix, state.epoch, kSuffix);
  return fmt::format("{}{:06d}-b{:06d}{}", kPrefix, state.epoch + 1, state.batch, kSuffix);
}

std::map<Position, fs::path> checkpoints_in(const std::string& dir) {
  std::map<Position, fs::path> found;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto position = position_of(entry.path().filename().string());
    if (position && entry.is_regular_file()) found[*position] = entry.path();
  }
  return found;
}

std::vector<char> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  TORCH_CHECK(in, "checkpoint ", path.string(), ": cannot open: ", std::strerror(errno));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TORCH_CHECK(!in.bad(), "checkpoint ", path.string(), ": read failed");
  // The reverse of the hint a checkpoint given as --data gets.
  const auto head = std::as_bytes(std::span<const char>(bytes.data(), std::min<size_t>(bytes.size(), 64)));
  TORCH_CHECK(file_kind(head) != FileKind::kStore, "checkpoint ", path.string(),
              ": is a .gcn graph store, not a checkpoint (pass it as --data; a checkpoint is one of "
              "dgcn-train's --checkpoint folder's .pt files, or the folder itself)");
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

// A handle (shares the dict's storage).
c10::impl::GenericDict dict_of(const LoadedCheckpoint& c) {
  return c.dict.toGenericDict();
}

std::optional<c10::IValue> entry(const c10::impl::GenericDict& dict, const std::string& key) {
  auto it = dict.find(c10::IValue(key));
  if (it == dict.end()) return std::nullopt;
  return it->value();
}

at::Tensor tensor_entry(const c10::impl::GenericDict& dict, const std::string& key, const std::string& what) {
  auto v = entry(dict, key);
  TORCH_CHECK(v.has_value(), "checkpoint ", what, ": no '", key, "' entry");
  TORCH_CHECK(v->isTensor(), "checkpoint ", what, ": '", key, "' is not a tensor");
  return v->toTensor();
}

int64_t read_scalar(const c10::impl::GenericDict& dict, const std::string& key, const std::string& what) {
  at::Tensor t = tensor_entry(dict, key, what);
  TORCH_CHECK(t.numel() == 1 && t.scalar_type() == at::kLong, "checkpoint ", what, ": '", key,
              "' must be an int64 scalar, got ", t.numel(), " x ", t.scalar_type());
  return t.item<int64_t>();
}

// The header fields of checkpoint bytes; the same on every rank.
LoadedCheckpoint parse(const std::vector<char>& bytes, const std::string& what) {
  LoadedCheckpoint out;
  out.what = what;
  try {
    out.dict = torch::pickle_load(bytes);
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, "checkpoint ", what, ": not a readable pickle archive: ", e.what_without_backtrace());
  }
  TORCH_CHECK(out.dict.isGenericDict(), "checkpoint ", what, ": expected a dict, got ", out.dict.tagKind());
  const auto& dict = out.dict.toGenericDict();
  for (const auto& e : dict) {
    TORCH_CHECK(e.key().isString(), "checkpoint ", what, ": every key must be a string");
  }
  const int64_t format = read_scalar(dict, "format", what);
  TORCH_CHECK(format == kFormat, "checkpoint ", what, ": format ", format,
              " is not supported (this build reads ", kFormat,
              "; format 1 came from a dgcn that did not record the run's configuration)");
  CheckpointState& state = out.state;
  state.epoch = read_scalar(dict, "epoch", what);
  state.batch = entry(dict, "batch") ? read_scalar(dict, "batch", what) : 0;
  TORCH_CHECK(state.epoch >= 0 && state.batch >= 0, "checkpoint ", what, ": epoch ", state.epoch, ", batch ",
              state.batch, ": negative");
  if (state.batch > 0) {
    const at::Tensor mid = tensor_entry(dict, "mid_epoch", what);
    TORCH_CHECK(mid.dim() == 1 && mid.scalar_type() == at::kDouble, "checkpoint ", what,
                ": 'mid_epoch' must be a float64 vector, got ", mid.sizes(), " x ", mid.scalar_type());
    const at::Tensor c = mid.contiguous();
    state.mid_epoch.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  }
  state.seed = read_scalar(dict, "seed", what);
  state.world_size = read_scalar(dict, "world_size", what);
  auto config = entry(dict, "config");
  TORCH_CHECK(config.has_value() && config->isString(), "checkpoint ", what, ": no 'config' string");
  try {
    state.config = nlohmann::json::parse(config->toStringRef());
  } catch (const nlohmann::json::exception& e) {
    TORCH_CHECK(false, "checkpoint ", what, ": 'config' is not JSON: ", e.what());
  }
  TORCH_CHECK(state.config.is_object(), "checkpoint ", what, ": 'config' is not a JSON object");
  for (const auto& e : dict) {
    const std::string& key = e.key().toStringRef();
    if (key.rfind(kExtra, 0) != 0) continue;
    TORCH_CHECK(e.value().isTensor(), "checkpoint ", what, ": '", key, "' is not a tensor");
    const at::Tensor t = e.value().toTensor();
    TORCH_CHECK(t.numel() == 1 && t.scalar_type() == at::kDouble, "checkpoint ", what, ": '", key,
                "' must be a float64 scalar, got ", t.numel(), " x ", t.scalar_type());
    state.extra[key.substr(std::strlen(kExtra))] = t.item<double>();
  }
  return out;
}

// Note [Checkpoints torch.load reads]
// torch::pickle_save's pickler tags every dict with its TorchScript type
// (a call of torch.jit._pickle.restore_type_tag), which Python's torch.load
// refuses by default since PyTorch 2.6 (weights_only=True allows no such
// call). The archive is written as pickle_save writes it (data.pkl and
// data/N in a zip), from a pickler that leaves the tags out: plain
// `torch.load(path)` reads it, and torch::pickle_load reads it back the same.
std::vector<char> pickle_save_untagged(const c10::IValue& value) {
  std::vector<char> pickled;
  torch::jit::Pickler pickler(
      [&pickled](const char* data, size_t size) { pickled.insert(pickled.end(), data, data + size); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr,
      /*memoized_class_types=*/nullptr, /*get_tensor_id=*/nullptr,
      /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> archive;
  caffe2::serialize::PyTorchStreamWriter writer([&archive](const void* data, size_t size) {
    const char* bytes = static_cast<const char*>(data);
    archive.insert(archive.end(), bytes, bytes + size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return archive;
}

}  // namespace

std::vector<char> encode_checkpoint(const torch::nn::Module& model, const torch::optim::Optimizer& optimizer,
                                    const CheckpointState& state) {
  TORCH_CHECK(state.epoch >= 0 && state.batch >= 0, "save_checkpoint: epoch ", state.epoch, ", batch ",
              state.batch, ": negative");
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("format", scalar(kFormat));
  dict.insert("epoch", scalar(state.epoch));
  dict.insert("batch", scalar(state.batch));
  if (state.batch > 0) {
    at::Tensor mid =
        at::empty({static_cast<int64_t>(state.mid_epoch.size())}, at::TensorOptions().dtype(at::kDouble));
    std::copy(state.mid_epoch.begin(), state.mid_epoch.end(), mid.data_ptr<double>());
    dict.insert("mid_epoch", mid);
  }
  dict.insert("seed", scalar(state.seed));
  dict.insert("world_size", scalar(state.world_size));
  dict.insert("config", c10::IValue(state.config.dump()));
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
  return pickle_save_untagged(c10::IValue(dict));  // Note [Checkpoints torch.load reads]
}

std::string write_checkpoint(const std::string& dir, const CheckpointState& state,
                             const std::vector<char>& bytes, bool best) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  TORCH_CHECK(!ec, "checkpoint dir ", dir, ": cannot create: ", ec.message());
  const fs::path path = fs::path(dir) / checkpoint_name(state);
  const auto view = std::as_bytes(std::span<const char>(bytes));
  write_file_atomically(path.string(), view);
  if (best) write_file_atomically((fs::path(dir) / kBestCheckpoint).string(), view);

  // Keep this one and the newest earlier one (best.pt is not numbered).
  const Position mine{state.epoch, state.batch};
  auto found = checkpoints_in(dir);
  int kept_older = 0;
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    if (it->first >= mine) continue;
    if (kept_older++ == 0) continue;
    fs::remove(it->second, ec);
  }
  return path.string();
}

std::string save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                            const torch::optim::Optimizer& optimizer, const CheckpointState& state,
                            bool best) {
  return write_checkpoint(dir, state, encode_checkpoint(model, optimizer, state), best);
}

std::optional<std::string> newest_checkpoint(const std::string& dir) {
  auto found = checkpoints_in(dir);
  if (found.empty()) return std::nullopt;
  return found.rbegin()->second.string();
}

std::vector<std::string> checkpoint_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& [epochs, path] : checkpoints_in(dir)) out.push_back(path.string());
  std::error_code ec;
  const fs::path best = fs::path(dir) / kBestCheckpoint;
  if (fs::is_regular_file(best, ec)) out.push_back(best.string());
  return out;
}

void remove_checkpoints(const std::string& dir) {
  for (const std::string& file : checkpoint_files(dir)) {
    std::error_code ec;
    fs::remove(file, ec);
    TORCH_CHECK(!ec, "checkpoints ", dir, ": cannot remove ", file, ": ", ec.message());
  }
}

std::optional<LoadedCheckpoint> read_checkpoint(const std::string& path, Collectives& ranks,
                                                bool prefer_best) {
  // Rank 0 tells the others what it found before the bytes: a size, or one of these.
  constexpr int64_t kNone = -1, kReadFailed = -2, kMissing = -3;
  std::vector<char> bytes;
  std::string what = path;
  int64_t size = kNone;
  std::string read_error;
  if (ranks.rank() == 0) {
    std::error_code ec;
    std::optional<std::string> file;
    if (fs::is_regular_file(path, ec)) {
      file = path;
    } else if (fs::is_directory(path, ec)) {
      const fs::path best = fs::path(path) / kBestCheckpoint;
      file = prefer_best && fs::is_regular_file(best, ec) ? std::optional<std::string>(best.string())
                                                          : newest_checkpoint(path);
    } else {
      size = kMissing;
    }
    if (file) {
      what = *file;
      try {
        bytes = read_file(*file);
        size = static_cast<int64_t>(bytes.size());
      } catch (const c10::Error& e) {
        read_error = e.what_without_backtrace();
        size = kReadFailed;
      }
    }
  }
  size = broadcast_values(ranks, 0, std::vector<int64_t>{size})[0];
  TORCH_CHECK(size != kMissing, "checkpoint ", path, ": no such file or folder");
  TORCH_CHECK(size != kReadFailed,
              ranks.rank() == 0 ? read_error : "rank 0 could not read the checkpoint in " + path);
  if (size == kNone) return std::nullopt;

  bytes = broadcast_values(ranks, 0, bytes);
  if (ranks.rank() != 0) what = "from rank 0 (" + path + ")";
  return parse(bytes, what);
}

void restore_checkpoint(const LoadedCheckpoint& checkpoint, torch::nn::Module& model,
                        torch::optim::Optimizer* optimizer) {
  const c10::impl::GenericDict dict = dict_of(checkpoint);
  const std::string& what = checkpoint.what;
  std::set<std::string> expected;
  {
    at::NoGradGuard no_grad;
    for (auto& [name, tensor] : model_tensors(model)) {
      std::string key = "model." + name;
      expected.insert(key);
      TORCH_CHECK(entry(dict, key).has_value(), "checkpoint ", what, ": no '", key,
                  "' entry for the model's ", name);
      at::Tensor saved = tensor_entry(dict, key, what);
      TORCH_CHECK(saved.sizes() == tensor.sizes() && saved.scalar_type() == tensor.scalar_type(),
                  "checkpoint ", what, ": '", key, "' is ", saved.sizes(), " ", saved.scalar_type(),
                  " but the model's is ", tensor.sizes(), " ", tensor.scalar_type());
      tensor.copy_(saved);
    }
  }
  for (const auto& e : dict) {
    const std::string& key = e.key().toStringRef();
    TORCH_CHECK(key.rfind("model.", 0) != 0 || expected.count(key), "checkpoint ", what, ": '", key,
                "' matches nothing in the model (a different architecture?)");
  }
  if (optimizer == nullptr) return;
  at::Tensor archive_bytes = tensor_entry(dict, "optimizer", what).contiguous();
  // The optimizer state goes where the parameters are (a single CUDA
  // process may run over a CPU-only Gloo group).
  const auto params = model.parameters();
  torch::serialize::InputArchive archive;
  archive.load_from(static_cast<const char*>(archive_bytes.data_ptr()),
                    static_cast<size_t>(archive_bytes.numel()),
                    params.empty() ? c10::Device(c10::kCPU) : params.front().device());
  optimizer->load(archive);
}

}  // namespace dgcn
