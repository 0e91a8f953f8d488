#include "bench/sampler_bench.h"

#include <sys/resource.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <numeric>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/random.h"
#include "base/timing.h"
#include "sampling/batch_memory.h"
#include "sampling/loader.h"
#include "sampling/seed_partition.h"

namespace dgcn {

namespace {

struct ProcessUsage {
  double cpu_s = 0;
  int64_t minor_faults = 0;
};

ProcessUsage process_usage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return {s(u.ru_utime) + s(u.ru_stime), static_cast<int64_t>(u.ru_minflt)};
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double load_average_1m() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

// The bench's batches: epochs 0, 1, ... of plan_epoch over `nodes`, cut off
// after `total` batches, so every run sees the same batch sequence.
std::vector<EpochPlan> bench_plans(std::span<const int64_t> nodes, const SamplerBenchOptions& o,
                                   int64_t total) {
  std::vector<EpochPlan> plans;
  for (int64_t epoch = 0; total > 0; ++epoch) {
    EpochPlan p = plan_epoch(nodes, {.seed = o.seed, .epoch = epoch, .batch_size = o.batch_size});
    DGCN_CHECK(p.num_batches > 0, "sampler bench: no batches (the graph has no seed nodes)");
    p.num_batches = std::min(p.num_batches, total);
    total -= p.num_batches;
    plans.push_back(std::move(p));
  }
  return plans;
}

void digest_batch(Digest& d, const SampledBatch& b) {
  d.update(std::span<const int64_t>(b.n_id));
  d.update(std::span<const int64_t>(b.num_nodes_per_hop));
  for (const Block& blk : b.blocks) {
    d.update(std::span<const int64_t>(blk.indptr));
    d.update(std::span<const int32_t>(blk.indices));
  }
}

int64_t edges_of(const SampledBatch& b) {
  return std::accumulate(b.num_edges_per_hop.begin(), b.num_edges_per_hop.end(), int64_t{0});
}

struct LoaderRun {
  double wall_s = 0, cpu_s = 0;
  int64_t page_faults = 0;
  int64_t batches = 0, edges = 0, nodes = 0;
  uint64_t checksum = 0;
  std::string digest;
  LoaderStats stats;
};

// Runs the loader over `plans` with `threads` workers after a short warm-up,
// recycling every batch as a trainer should. With gathering on, the
// consumer reads every feature value, as a copy to the device would.
LoaderRun run_loader(const GraphStore& store, const SamplerBenchOptions& o, int threads, bool gather,
                     const std::vector<EpochPlan>& plans) {
  NeighborLoader loader(store, {.sampler = {.fanouts = o.fanouts, .replace = o.replace},
                                .num_workers = threads,
                                .queue_depth = o.queue_depth,
                                .gather = gather});
  EpochPlan warm = plans.front();
  warm.epoch = -1;
  // Long enough that every worker's scratch and the recycled batches exist.
  warm.num_batches = std::min<int64_t>(warm.num_batches, o.queue_depth + 2 * threads);
  loader.start_epoch(warm);
  while (auto batch = loader.next()) loader.recycle(std::move(*batch));
  const LoaderStats before = loader.stats();

  LoaderRun r;
  Digest digest;
  const ProcessUsage usage0 = process_usage();
  const auto t0 = Clock::now();
  for (const EpochPlan& plan : plans) {
    loader.start_epoch(plan);
    while (auto batch = loader.next()) {
      ++r.batches;
      r.edges += edges_of(batch->sample);
      r.nodes += static_cast<int64_t>(batch->sample.n_id.size());
      digest_batch(digest, batch->sample);
      if (gather) {
        // Read every byte, as a copy to the device would; an integer sum
        // vectorizes (a float sum would be one dependent add per value).
        const auto* words = reinterpret_cast<const uint32_t*>(batch->features.data());
        uint64_t sum = 0;
        for (size_t i = 0; i < batch->features.size(); ++i) sum += words[i];
        r.checksum += sum;
      }
      loader.recycle(std::move(*batch));
    }
  }
  r.wall_s = seconds_since(t0);
  const ProcessUsage usage1 = process_usage();
  r.cpu_s = usage1.cpu_s - usage0.cpu_s;
  r.page_faults = usage1.minor_faults - usage0.minor_faults;
  r.digest = digest.hex();
  r.stats = loader.stats();
  r.stats.consumer_wait_s -= before.consumer_wait_s;
  r.stats.worker_blocked_s -= before.worker_blocked_s;
  r.stats.worker_busy_s -= before.worker_busy_s;
  return r;
}

// One batch at a time, `threads` threads inside each batch.
double intra_batch_edges_per_s(const GraphStore& store, const SamplerBenchOptions& o, int threads,
                               const std::vector<EpochPlan>& plans, int64_t max_batches) {
  SamplerOptions so{.fanouts = o.fanouts, .replace = o.replace, .num_threads = threads};
  SamplerScratch scratch;
  SampledBatch batch;
  sample_neighbors(store.graph, plans.front().batch(0), so, plans.front().key(0), scratch, batch);  // warm-up
  int64_t edges = 0, done = 0;
  const auto t0 = Clock::now();
  for (const EpochPlan& plan : plans) {
    for (int64_t b = 0; b < plan.num_batches && done < max_batches; ++b, ++done) {
      sample_neighbors(store.graph, plan.batch(b), so, plan.key(b), scratch, batch);
      edges += edges_of(batch);
    }
  }
  return static_cast<double>(edges) / seconds_since(t0);
}

}  // namespace

ReadRate random_read_rate(std::span<const uint32_t> array, int threads, double seconds) {
  DGCN_CHECK(!array.empty() && threads >= 1, "random_read_rate: empty array or threads = {}", threads);
  constexpr int64_t kBlock = 1 << 20;  // reads between clock checks
  std::vector<int64_t> reads(threads, 0);
  std::vector<double> cpu(threads, 0);
  std::atomic<uint64_t> sink{0};
  const auto t0 = Clock::now();
  parallel_for(threads, threads, [&](int64_t, int64_t, int t) {
    const double cpu0 = thread_cpu_seconds();
    Rng rng(stream_key(12345, {static_cast<uint64_t>(t)}));
    const uint32_t* a = array.data();
    const auto n = static_cast<uint64_t>(array.size());
    uint64_t sum = 0;
    int64_t done = 0;
    do {
      // Independent loads: the out-of-order core overlaps their misses.
      for (int64_t i = 0; i < kBlock; ++i) {
        sum += a[static_cast<uint64_t>((static_cast<unsigned __int128>(rng.next()) * n) >> 64)];
      }
      done += kBlock;
    } while (seconds_since(t0) < seconds);
    reads[t] = done;
    cpu[t] = thread_cpu_seconds() - cpu0;
    sink += sum;
  });
  const double elapsed = seconds_since(t0);
  const auto total = static_cast<double>(std::accumulate(reads.begin(), reads.end(), int64_t{0}));
  return {total / elapsed, total / std::accumulate(cpu.begin(), cpu.end(), 0.0)};
}

nlohmann::json run_sampler_bench(const GraphStore& store, const SamplerBenchOptions& o,
                                 const std::string& what) {
  DGCN_CHECK(o.batches >= 1, "sampler bench: batches = {}, expected >= 1", o.batches);
  DGCN_CHECK(!o.threads.empty(), "sampler bench: no thread counts given");
  for (int t : o.threads) DGCN_CHECK(t >= 1, "sampler bench: thread count {} is not >= 1", t);
  // A part's rows are its own nodes only, while its neighbours are global
  // ids: sampling one would fail at its first batch with a message about a
  // node id rather than about the file.
  DGCN_CHECK(
      !store.part.is_part(),
      "sampler bench: {} is part {} of {} of a partitioned graph (dgcn-prep partition); the bench samples "
      "a whole store: give the store it was partitioned from (its partition.json names it, source_path)",
      what, store.part.index, store.part.count);
  std::vector<int64_t> all_nodes;
  std::span<const int64_t> seeds = store.train_nodes();
  if (seeds.empty()) {
    all_nodes.resize(store.num_nodes());
    std::iota(all_nodes.begin(), all_nodes.end(), int64_t{0});
    seeds = all_nodes;
  }
  const std::vector<EpochPlan> plans = bench_plans(seeds, o, o.batches);

  nlohmann::json result;
  result["graph"] = {{"file", what},
                     {"nodes", store.num_nodes()},
                     {"csr_entries", store.num_edges()},
                     {"index_bits", 8 * static_cast<int>(store.graph.id_width())},
                     {"seed_nodes", seeds.size()},
                     {"num_features", store.num_features}};
  result["config"] = {{"fanouts", o.fanouts},
                      {"replace", o.replace},
                      {"batch_size", o.batch_size},
                      {"batches", o.batches},
                      {"seed", o.seed},
                      {"queue_depth", o.queue_depth},
                      {"gather", o.gather},
                      {"limit_seconds", o.limit_seconds}};
  result["machine"] = {{"hardware_threads", std::thread::hardware_concurrency()},
                       {"load_average_1m_at_start", load_average_1m()}};

  // The random-access limit reads an array as large as the CSR indices.
  spdlog::info("sampler bench: filling a {:.0f} MiB array for the random-access limit",
               static_cast<double>(store.num_edges()) * 4 / (1 << 20));
  // Huge pages like a privately loaded store's arrays (load_store advises them).
  MutableBuffer limit_array =
      allocate_huge_page_buffer(static_cast<size_t>(std::max<int64_t>(store.num_edges(), 1)) * 4);
  {
    auto a = limit_array.as_mutable<uint32_t>();
    parallel_for(static_cast<int64_t>(a.size()), default_num_threads(), [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) a[i] = static_cast<uint32_t>(i);
    });
  }

  result["runs"] = nlohmann::json::array();
  for (int threads : o.threads) {
    nlohmann::json run{{"threads", threads}};
    spdlog::info("sampler bench: {} thread(s): sampling {} batches", threads, o.batches);
    LoaderRun sampled = run_loader(store, o, threads, /*gather=*/false, plans);
    const double edges_per_s = static_cast<double>(sampled.edges) / sampled.wall_s;
    run["batches_per_s"] = static_cast<double>(sampled.batches) / sampled.wall_s;
    run["sampled_edges_per_s"] = edges_per_s;
    run["nodes_per_batch"] = static_cast<double>(sampled.nodes) / static_cast<double>(sampled.batches);
    run["edges_per_batch"] = static_cast<double>(sampled.edges) / static_cast<double>(sampled.batches);
    run["cpu_utilization"] = sampled.cpu_s / (sampled.wall_s * threads);
    run["sampled_edges_per_cpu_s"] = static_cast<double>(sampled.edges) / sampled.cpu_s;
    run["page_faults_per_batch"] =
        static_cast<double>(sampled.page_faults) / static_cast<double>(sampled.batches);
    run["digest"] = sampled.digest;

    spdlog::info("sampler bench: {} thread(s): one batch at a time, {} threads inside it", threads, threads);
    run["intra_batch_edges_per_s"] =
        intra_batch_edges_per_s(store, o, threads, plans, std::min<int64_t>(o.batches, 20));

    if (o.gather) {
      spdlog::info("sampler bench: {} thread(s): loader gathering features", threads);
      LoaderRun loaded = run_loader(store, o, threads, /*gather=*/true, plans);
      DGCN_ASSERT(loaded.digest == sampled.digest);
      run["loader_batches_per_s"] = static_cast<double>(loaded.batches) / loaded.wall_s;
      run["feature_checksum"] = fmt::format("{:016x}", loaded.checksum);
      run["consumer_wait_fraction"] = loaded.stats.consumer_wait_s / loaded.wall_s;
      run["worker_blocked_fraction"] = loaded.stats.worker_blocked_s / (loaded.wall_s * threads);
      run["loader_page_faults_per_batch"] =
          static_cast<double>(loaded.page_faults) / static_cast<double>(loaded.batches);
      run["feature_bytes_per_s"] = static_cast<double>(loaded.nodes) *
                                   static_cast<double>(store.num_features) * sizeof(float) / loaded.wall_s;
    }

    spdlog::info("sampler bench: {} thread(s): random-access limit", threads);
    const ReadRate limit = random_read_rate(limit_array.as<uint32_t>(), threads, o.limit_seconds);
    run["limit_reads_per_s"] = limit.per_s;
    run["ratio_to_limit"] = edges_per_s / limit.per_s;
    run["limit_reads_per_cpu_s"] = limit.per_cpu_s;
    run["ratio_to_limit_cpu"] = run["sampled_edges_per_cpu_s"].get<double>() / limit.per_cpu_s;
    result["runs"].push_back(run);
  }
  result["machine"]["load_average_1m_at_end"] = load_average_1m();
  return result;
}

std::string sampler_bench_columns() {
  return "Columns of the table (JSON field in brackets; M = millions, k = thousands, per cpu-s = per second "
         "of CPU time all threads together):\n"
         "  threads    loader workers of the run (and threads inside one batch for M intra/s)\n"
         "  batch/s    batches sampled per second, without feature gathering [batches_per_s]\n"
         "  M edge/s   sampled edges per second [sampled_edges_per_s]\n"
         "  M e/cpu-s  sampled edges per CPU-second [sampled_edges_per_cpu_s]\n"
         "  M intra/s  sampled edges per second, one batch at a time split over the threads "
         "[intra_batch_edges_per_s]\n"
         "  k node/b   nodes per batch, seeds and sampled neighbours [nodes_per_batch]\n"
         "  cpu        CPU time over wall time x threads [cpu_utilization]\n"
         "  ldr b/s    loader batches per second with features and labels gathered [loader_batches_per_s]\n"
         "  wait       share of the time the consumer waited for a batch [consumer_wait_fraction]\n"
         "  M read/s   this machine's random-access limit: random 4-byte reads per second from an array "
         "as large as the CSR indices, with as many threads [limit_reads_per_s]\n"
         "  M r/cpu-s  the same limit per CPU-second [limit_reads_per_cpu_s]\n"
         "  ratio      M edge/s over M read/s: how close sampling comes to the limit [ratio_to_limit]\n"
         "  r/cpu      M e/cpu-s over M r/cpu-s, the same per CPU-second [ratio_to_limit_cpu]\n"
         "  digest     digest of the sampled batches; equal for every thread count [digest]\n";
}

std::string sampler_bench_table(const nlohmann::json& r) {
  std::string out = fmt::format("graph {}: {} nodes, {} CSR entries; fanouts {}, batch size {}\n",
                                r["graph"]["file"].get<std::string>(), r["graph"]["nodes"].get<int64_t>(),
                                r["graph"]["csr_entries"].get<int64_t>(), r["config"]["fanouts"].dump(),
                                r["config"]["batch_size"].get<int64_t>());
  out += fmt::format("{:>7} {:>8} {:>9} {:>9} {:>9} {:>8} {:>5} {:>8} {:>5} {:>9} {:>9} {:>6} {:>6}  {}\n",
                     "threads", "batch/s", "M edge/s", "M e/cpu-s", "M intra/s", "k node/b", "cpu", "ldr b/s",
                     "wait", "M read/s", "M r/cpu-s", "ratio", "r/cpu", "digest");
  for (const auto& run : r["runs"]) {
    auto num = [&](const char* key) { return run.contains(key) ? run[key].get<double>() : 0.0; };
    out += fmt::format(
        "{:>7} {:>8.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>8.1f} {:>4.0f}% {:>8.2f} {:>4.0f}% {:>9.2f} {:>9.2f} "
        "{:>6.2f} "
        "{:>6.2f}  {}\n",
        run["threads"].get<int>(), num("batches_per_s"), num("sampled_edges_per_s") / 1e6,
        num("sampled_edges_per_cpu_s") / 1e6, num("intra_batch_edges_per_s") / 1e6,
        num("nodes_per_batch") / 1e3, 100 * num("cpu_utilization"), num("loader_batches_per_s"),
        100 * num("consumer_wait_fraction"), num("limit_reads_per_s") / 1e6,
        num("limit_reads_per_cpu_s") / 1e6, num("ratio_to_limit"), num("ratio_to_limit_cpu"),
        run["digest"].get<std::string>());
  }
  return out;
}

}  // namespace dgcn
