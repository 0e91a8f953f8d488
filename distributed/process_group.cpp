#include "distributed/process_group.h"

#include "base/error.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

// ProcessGroupGloo and ProcessGroupNCCL derive from c10d::Backend (the
// c10d::ProcessGroup of LibTorch 2.x is a wrapper that dispatches to
// backends); we hold them as Backends.
#include <torch/csrc/distributed/c10d/Backend.hpp>
using C10dBackend = c10d::Backend;

// The c10d headers guard each backend with USE_C10D_<NAME>: Gloo comes with
// every LibTorch target, NCCL with a CUDA LibTorch and the toolkit (CMake).
#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace dgcn {

const char* backend_name(CommBackend backend) {
  return backend == CommBackend::kNccl ? "nccl" : "gloo";
}

CommBackend parse_backend(const std::string& name, const c10::Device& device) {
  CommBackend backend;
  if (name == "auto") {
    backend = device.is_cuda() ? CommBackend::kNccl : CommBackend::kGloo;
  } else if (name == "gloo") {
    backend = CommBackend::kGloo;
  } else if (name == "nccl") {
    backend = CommBackend::kNccl;
  } else {
    TORCH_CHECK(false, "backend '", name, "' is unknown (choose gloo, nccl or auto)");
  }
#ifndef USE_C10D_NCCL
  TORCH_CHECK(backend != CommBackend::kNccl,
              "backend nccl: this build of dgcn has no NCCL (it needs a CUDA LibTorch and the NCCL "
              "headers at configure time); use gloo");
#endif
#ifndef USE_C10D_GLOO
  TORCH_CHECK(backend != CommBackend::kGloo,
              "backend gloo: this build of dgcn has no Gloo (the LibTorch found at configure time ships "
              "no gloo headers); use nccl");
#endif
  TORCH_CHECK(backend != CommBackend::kNccl || device.is_cuda(),
              "backend nccl needs CUDA tensors, but the training device is ", device.str());
  TORCH_CHECK(backend != CommBackend::kGloo || device.is_cpu(),
              "backend gloo: dgcn syncs CPU tensors over Gloo, but the training device is ", device.str(),
              "; use nccl (or auto)");
  return backend;
}

// ---------------------------------------------------------------------------
// Work

// Note [Who is stuck]
// A collective that fails or times out says which ranks never reached it,
// so a hung rank (alive, stuck in its own work) is named by its peers.
// Every rank numbers the collectives it issues; they match by order, so the
// n-th is the same collective everywhere. When waiting for one fails, the
// rank writes "dgcn-stuck/<n>/<rank>" into the rendezvous store and, for a
// short grace, looks for the other ranks' keys of the same collective:
// ranks that failed in it too write theirs; one that has not by then never
// reached it. Nothing is written while all goes well.
struct Peers {
  c10::intrusive_ptr<c10d::Store> store;
  int rank = 0;
  int size = 1;
};

namespace {

constexpr auto kStuckGrace = std::chrono::milliseconds(2000);

std::string stuck_key(int64_t collective, int rank) {
  return c10::str("dgcn-stuck/", collective, "/", rank);
}

// "; ranks 1, 3 did not reach it (stuck in their own work, or gone)", or why that is unknown.
std::string who_is_stuck(const Peers& peers, int64_t collective) {
  if (!peers.store || peers.size == 1) return "";
  try {
    peers.store->set(stuck_key(collective, peers.rank), std::vector<uint8_t>{1});
    const auto deadline = std::chrono::steady_clock::now() + kStuckGrace;
    std::vector<int> missing;
    for (;;) {
      missing.clear();
      for (int r = 0; r < peers.size; ++r) {
        if (r != peers.rank && !peers.store->check({stuck_key(collective, r)})) missing.push_back(r);
      }
      if (missing.empty() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (missing.empty())
      return c10::str("; every rank reached collective #", collective, " and failed in it");
    std::string list;
    for (int r : missing) list += (list.empty() ? "" : ", ") + std::to_string(r);
    return c10::str("; rank", missing.size() > 1 ? "s " : " ", list, " did not reach collective #",
                    collective, " (stuck in ", missing.size() > 1 ? "their" : "its", " own work, or gone)");
  } catch (const std::exception&) {
    return c10::str(
        "; the rendezvous store does not answer, so which rank is stuck is unknown (rank 0 hosts "
        "it: it may be stopped or gone)");
  }
}

}  // namespace

struct Work::State {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;  // "allreduce of 1024 x Float (gloo, rank 1 of 4)"
  std::shared_ptr<const Peers> peers;
  int64_t collective = 0;  // its number among this group's collectives (Note [Who is stuck])
};

Work::Work() = default;
Work::~Work() = default;
Work::Work(Work&&) noexcept = default;
Work& Work::operator=(Work&&) noexcept = default;

bool Work::pending() const {
  return state_ != nullptr;
}

void Work::wait() {
  if (!state_) return;
  std::unique_ptr<State> state = std::move(state_);
  std::string error;
  try {
    state->work->wait();
    return;
  } catch (const c10::Error& e) {
    error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    error = e.what();
  }
  TORCH_CHECK(false, state->what, " failed: ", error,
              state->peers ? who_is_stuck(*state->peers, state->collective) : std::string());
}

// ---------------------------------------------------------------------------
// ProcessGroup

struct ProcessGroup::Impl {
  int rank = 0;
  int size = 1;
  CommBackend backend = CommBackend::kGloo;
  c10::Device device{c10::kCPU};
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<C10dBackend> group;
  std::shared_ptr<const Peers> peers;
  int64_t issued = 0;  // collectives issued so far (Note [Who is stuck])
  RankEnv env;         // what made this group, for another()
  ProcessGroupOptions options;

  Work start(std::string what, c10::intrusive_ptr<c10d::Work> work) {
    Work out;
    out.state_ = std::make_unique<Work::State>();
    out.state_->what = std::move(what);
    out.state_->work = std::move(work);
    out.state_->peers = peers;
    out.state_->collective = ++issued;
    return out;
  }

  std::string describe(const char* op, const at::Tensor& t) const {
    return c10::str(op, " of ", t.numel(), " x ", t.scalar_type(), " (", backend_name(backend), ", rank ",
                    rank, " of ", size, ")");
  }
  void check_tensor(const char* op, const at::Tensor& t) const {
    TORCH_CHECK(group, op, ": the process group was shut down");
    TORCH_CHECK(t.defined() && t.layout() == c10::kStrided && t.is_contiguous(), op, " (",
                backend_name(backend), "): the tensor must be dense and contiguous");
    TORCH_CHECK(t.device() == device, op, " (", backend_name(backend), "): the tensor is on ",
                t.device().str(), " but this process group works on ", device.str());
  }
};

namespace {

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr == "::1" || addr.rfind("127.", 0) == 0;
}

#ifdef USE_C10D_GLOO
// The local address this host uses to reach `master` (a connected UDP socket
// sends nothing; getsockname reports the interface routing chose). Gloo binds
// its device there, so two nodes find each other even when the hostname
// resolves to a loopback address (Debian's 127.0.1.1).
std::string local_address_toward(const std::string& master) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(master.c_str(), "9", &hints, &found);
  TORCH_CHECK(rc == 0, "rendezvous: cannot resolve MASTER_ADDR '", master, "': ", gai_strerror(rc));
  std::string local;
  for (addrinfo* a = found; a != nullptr && local.empty(); a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage self{};
    socklen_t len = sizeof(self);
    char host[NI_MAXHOST];
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&self), &len) == 0 &&
        getnameinfo(reinterpret_cast<sockaddr*>(&self), len, host, sizeof(host), nullptr, 0,
                    NI_NUMERICHOST) == 0) {
      local = host;
    }
    close(fd);
  }
  freeaddrinfo(found);
  TORCH_CHECK(!local.empty(), "rendezvous: no local interface routes to MASTER_ADDR '", master,
              "'; set GLOO_SOCKET_IFNAME to the interface to use");
  return local;
}

c10::intrusive_ptr<C10dBackend> make_gloo(const c10::intrusive_ptr<c10d::Store>& store, const RankEnv& env,
                                          std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  } else if (!env.from_environment || is_loopback(env.master_addr)) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname(local_address_toward(env.master_addr)));
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
}
#endif

#ifdef USE_C10D_NCCL
c10::intrusive_ptr<C10dBackend> make_nccl(const c10::intrusive_ptr<c10d::Store>& store, const RankEnv& env,
                                          std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
}
#endif

c10::intrusive_ptr<c10d::Store> make_store(const RankEnv& env, std::chrono::milliseconds timeout) {
  if (!env.from_environment) {
    TORCH_INTERNAL_ASSERT(env.world_size == 1);
    return c10::make_intrusive<c10d::HashStore>();
  }
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(env.master_port);
  options.isServer = env.rank == 0 && !env.use_agent_store;
  options.numWorkers = static_cast<size_t>(env.world_size);
  options.waitWorkers = true;
  options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    TORCH_CHECK(false, "rendezvous at ", env.master_addr, ":", env.master_port, " failed for ",
                env.describe(), options.isServer ? " (hosting the store)" : " (connecting to the store)",
                ": ", c10_error ? c10_error->what_without_backtrace() : e.what());
  }
  if (env.use_agent_store) {
    store =
        c10::make_intrusive<c10d::PrefixStore>("/worker/attempt_" + std::to_string(env.restart_count), store);
  }
  return c10::make_intrusive<c10d::PrefixStore>("dgcn", store);
}

}  // namespace

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() {
  // Without shutdown() (an error path): abort rather than wait for peers that
  // may be gone; abort() never blocks on them.
  if (impl_ && impl_->group) {
    try {
      impl_->group->abort();
    } catch (...) {  // a destructor must not throw; the process is ending its use of the group
    }
  }
}

std::unique_ptr<ProcessGroup> ProcessGroup::create(const RankEnv& env, const ProcessGroupOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->store = make_store(env, options.timeout);
  return over_store(std::move(impl), env, options);
}

std::unique_ptr<ProcessGroup> ProcessGroup::over_store(std::unique_ptr<Impl> impl, const RankEnv& env,
                                                       const ProcessGroupOptions& options) {
  impl->rank = env.rank;
  impl->size = env.world_size;
  impl->backend = options.backend;
  impl->env = env;
  impl->options = options;
  try {
    if (options.backend == CommBackend::kNccl) {
#ifdef USE_C10D_NCCL
      int devices = static_cast<int>(c10::cuda::device_count());
      TORCH_CHECK(env.local_rank < devices, "nccl: LOCAL_RANK=", env.local_rank, " but this node has ",
                  devices, " CUDA device(s); NCCL needs one GPU per local rank");
      c10::cuda::set_device(static_cast<c10::DeviceIndex>(env.local_rank));
      impl->device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
      impl->group = make_nccl(impl->store, env, options.timeout);
#else
      TORCH_CHECK(false, "nccl: this build of dgcn has no NCCL");
#endif
    } else {
#ifdef USE_C10D_GLOO
      impl->group = make_gloo(impl->store, env, options.timeout);
#else
      TORCH_CHECK(false, "gloo: this build of dgcn has no Gloo");
#endif
    }
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, "creating the ", backend_name(options.backend), " process group for ", env.describe(),
                " failed: ", e.what_without_backtrace());
  }
  impl->peers = std::make_shared<const Peers>(Peers{impl->store, env.rank, env.world_size});
  spdlog::debug("process group: {} over {}", env.describe(), backend_name(options.backend));
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

std::unique_ptr<ProcessGroup> ProcessGroup::another(const std::string& name) {
  TORCH_CHECK(impl_->group, "another: the process group was shut down");
  auto impl = std::make_unique<Impl>();
  impl->store = c10::make_intrusive<c10d::PrefixStore>(name, impl_->store);
  return over_store(std::move(impl), impl_->env, impl_->options);
}

int ProcessGroup::rank() const {
  return impl_->rank;
}
int ProcessGroup::size() const {
  return impl_->size;
}
CommBackend ProcessGroup::backend() const {
  return impl_->backend;
}
c10::Device ProcessGroup::device() const {
  return impl_->device;
}

Work ProcessGroup::allreduce_sum(at::Tensor tensor) {
  impl_->check_tensor("allreduce", tensor);
  std::vector<at::Tensor> tensors{tensor};
  return impl_->start(impl_->describe("allreduce", tensor),
                      impl_->group->allreduce(tensors, c10d::AllreduceOptions()));
}

Work ProcessGroup::broadcast(at::Tensor tensor, int root) {
  impl_->check_tensor("broadcast", tensor);
  TORCH_CHECK(root >= 0 && root < impl_->size, "broadcast: root ", root, " is outside [0, ", impl_->size,
              ")");
  std::vector<at::Tensor> tensors{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  return impl_->start(impl_->describe("broadcast", tensor), impl_->group->broadcast(tensors, options));
}

Work ProcessGroup::alltoall(at::Tensor output, at::Tensor input, std::vector<int64_t> output_splits,
                            std::vector<int64_t> input_splits) {
  impl_->check_tensor("alltoall", input);
  impl_->check_tensor("alltoall", output);
  TORCH_CHECK(input.dim() == 1 && output.dim() == 1 && input.scalar_type() == output.scalar_type(),
              "alltoall: input and output must be 1-D tensors of one dtype (got ", input.sizes(), " ",
              input.scalar_type(), ", ", output.sizes(), " ", output.scalar_type(), ")");
  const auto sum = [](const std::vector<int64_t>& v) {
    return std::accumulate(v.begin(), v.end(), int64_t{0});
  };
  TORCH_CHECK(static_cast<int>(input_splits.size()) == impl_->size &&
                  static_cast<int>(output_splits.size()) == impl_->size &&
                  sum(input_splits) == input.numel() && sum(output_splits) == output.numel(),
              "alltoall: splits (", input_splits.size(), " in, ", output_splits.size(),
              " out) must give one slice per rank ", "and add up to the tensors (", input.numel(), " in, ",
              output.numel(), " out)");
  return impl_->start(
      impl_->describe("alltoall", input),
      impl_->group->alltoall_base(output, input, output_splits, input_splits, c10d::AllToAllOptions()));
}

void ProcessGroup::barrier() {
  // A one-element all-reduce: every backend has it, and for NCCL it needs no
  // guess of the device (c10d's NCCL barrier does guess).
  at::Tensor token = at::zeros({1}, at::TensorOptions().device(impl_->device));
  allreduce_sum(token).wait();
  token.item<float>();  // for CUDA: the host waits for the stream too
}

std::vector<double> ProcessGroup::sum(std::vector<double> values) {
  if (values.empty()) return values;
  at::Tensor t = at::tensor(values, at::TensorOptions().dtype(at::kDouble)).to(impl_->device);
  allreduce_sum(t).wait();
  t = t.cpu();
  const double* p = t.data_ptr<double>();
  return std::vector<double>(p, p + values.size());
}

void ProcessGroup::shutdown() {
  if (!impl_->group) return;
  barrier();
  // c10d's backends release their communicators in shutdown() (NCCL:
  // ncclCommDestroy after its watchdog stops); dropping the last reference
  // without it leaves that to a destructor that may run after CUDA's own
  // teardown, which is where NCCL exits hang.
  impl_->group->shutdown();
  impl_->group.reset();
  impl_->peers.reset();
  impl_->store.reset();
}

void ProcessGroup::exchange(const Messages& send, Messages& received) {
  const int w = size();
  DGCN_CHECK(send.count() == w, "all-to-all: {} messages for {} ranks", send.count(), w);
  const c10::Device on = device();
  try {
    std::vector<int64_t> send_sizes(static_cast<size_t>(w)), ones(static_cast<size_t>(w), 1);
    for (int q = 0; q < w; ++q) send_sizes[static_cast<size_t>(q)] = send.size_of(q);
    at::Tensor sizes_in = at::tensor(send_sizes, at::kLong).to(on);
    at::Tensor sizes_out = at::empty({w}, sizes_in.options());
    alltoall(sizes_out, sizes_in, ones, ones).wait();
    sizes_out = sizes_out.cpu();
    std::vector<int64_t> receive_sizes(sizes_out.data_ptr<int64_t>(), sizes_out.data_ptr<int64_t>() + w);
    received.offsets.assign(1, 0);
    for (int64_t n : receive_sizes) {
      DGCN_CHECK(n >= 0, "all-to-all: a peer announced a message of {} bytes", n);
      received.offsets.push_back(received.offsets.back() + n);
    }
    received.bytes.resize(static_cast<size_t>(received.offsets.back()));

    const auto bytes = at::TensorOptions().dtype(at::kByte);
    at::Tensor in = at::from_blob(const_cast<std::byte*>(send.bytes.data()),
                                  {static_cast<int64_t>(send.bytes.size())}, bytes);
    at::Tensor out =
        at::from_blob(received.bytes.data(), {static_cast<int64_t>(received.bytes.size())}, bytes);
    if (on.is_cuda()) {
      at::Tensor in_device = in.to(on);
      at::Tensor out_device = at::empty({out.numel()}, in_device.options());
      alltoall(out_device, in_device, receive_sizes, send_sizes).wait();
      out.copy_(out_device);
    } else {
      alltoall(out, in, receive_sizes, send_sizes).wait();
    }
  } catch (const c10::Error& e) {
    throw Error(e.what_without_backtrace());
  }
}

}  // namespace dgcn
