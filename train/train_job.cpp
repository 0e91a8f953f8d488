#include "train/train_job.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/timing.h"
#include "models/cpu_allocator.h"
#include "train/gcn_run.h"
#include "train/metrics_log.h"
#include "train/training_plot.h"

namespace dgcn {
namespace {

// What one epoch's batches exchanged on a partitioned graph: totals over
// ranks, and per batch of one rank (bytes that rank sent to the others;
// seconds its loader spent in the all-to-alls).
nlohmann::json exchange_json(const EpochReport& r, int world_size) {
  const ExchangeCounters& x = r.exchange;
  const double batches = std::max<double>(1.0, static_cast<double>(r.batches) * world_size);
  return {{"id_bytes", x.id_bytes},
          {"pick_bytes", x.pick_bytes},
          {"feature_bytes", x.feature_bytes},
          {"exchanges", x.exchanges},
          {"seconds", x.seconds},
          {"per_batch",
           {{"id_bytes", x.id_bytes / batches},
            {"pick_bytes", x.pick_bytes / batches},
            {"feature_bytes", x.feature_bytes / batches},
            {"bytes", (x.id_bytes + x.pick_bytes + x.feature_bytes) / batches},
            {"seconds", x.seconds / batches}}}};
}

// The bytes of the feature matrix the model reads (Note [Mixed precision]
// in models/gcn.h: bf16 runs hold it in half the bytes).
double feature_bytes(const GraphStore& store, Precision p) {
  return static_cast<double>(store.num_nodes()) * static_cast<double>(store.num_features) *
         (p == Precision::kBf16 ? 2.0 : 4.0);
}

// The run's precision and, for bf16 on the CPU, whether the CPU's bf16
// instructions (AVX512-BF16, AMX-BF16) carried it or it ran slower without.
nlohmann::json precision_summary(const TrainOptions& o) {
  nlohmann::json j = {{"name", precision_name(o.precision)}};
  if (o.precision == Precision::kBf16 && o.device.is_cpu()) {
    const CpuBf16Support cpu = cpu_bf16_support();
    j["cpu_bf16_instructions"] = cpu.fast();
    if (!cpu.fast()) j["note"] = "this CPU lacks AVX512-BF16: bf16 ran correctly but slower than fp32";
  }
  return j;
}

nlohmann::json epoch_json(const EpochReport& r, const std::string& metric, int world_size) {
  nlohmann::json j = {{"epoch", r.epoch},
                      {"loss", r.loss},
                      {"train_" + metric, r.train_metric},
                      {"batches", r.batches},
                      {"epoch_s", r.epoch_s},
                      {"sampling_wait_s", r.sampling_wait_s},
                      {"compute_s", r.compute_s},
                      {"other_s", r.other_s},
                      {"eval_s", r.eval_s},
                      {"end_time", r.end_time},
                      {"cpu_s", r.usage.cpu_s},
                      {"system_s", r.usage.system_s},
                      {"minor_faults", r.usage.minor_faults}};
  if (r.valid_metric) j["valid_" + metric] = *r.valid_metric;
  if (r.test_metric) j["test_" + metric] = *r.test_metric;
  if (r.partitioned) j["exchange"] = exchange_json(r, world_size);
  return j;
}

// Seconds with three significant digits below 100 s, so a Cora epoch of
// 0.012 s does not print as "0.0".
std::string secs(double s) {
  if (s >= 100) return fmt::format("{:.0f}", s);
  if (s >= 10) return fmt::format("{:.1f}", s);
  if (s >= 1) return fmt::format("{:.2f}", s);
  return fmt::format("{:.3f}", s);
}

void log_epoch(const EpochReport& r, const std::string& metric, int world_size) {
  std::string eval;
  if (r.valid_metric) {
    eval = fmt::format("  valid {} {:.4f}  test {:.4f}  (evaluation {} s)", metric, *r.valid_metric,
                       *r.test_metric, secs(r.eval_s));
  }
  spdlog::info(
      "epoch {:>3}  loss {:.4f}  train {} {:.4f}{}  | training {} s: sampling wait {}, compute {}, other {}",
      r.epoch, r.loss, metric, r.train_metric, eval, secs(r.epoch_s), secs(r.sampling_wait_s),
      secs(r.compute_s), secs(r.other_s));
  if (!r.partitioned) return;
  const nlohmann::json per_batch = exchange_json(r, world_size)["per_batch"];
  spdlog::info(
      "epoch {:>3}  exchanged per batch: {:.2f} MB ({:.2f} ids, {:.2f} picks, {:.2f} rows), {:.3f} s",
      r.epoch, per_batch["bytes"].get<double>() / 1e6, per_batch["id_bytes"].get<double>() / 1e6,
      per_batch["pick_bytes"].get<double>() / 1e6, per_batch["feature_bytes"].get<double>() / 1e6,
      per_batch["seconds"].get<double>());
}

// This process's peak resident memory (getrusage), in bytes.
double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

nlohmann::json or_null(bool present, double value) {
  return present ? nlohmann::json(value) : nlohmann::json();
}

}  // namespace

std::string plot_title(const std::string& prefix, const std::string& source, const TrainOptions& o) {
  std::string fanouts;
  for (int64_t f : o.fanouts) fanouts += (fanouts.empty() ? "" : ",") + std::to_string(f);
  return fmt::format("{}: {}, {}-layer GCN [{}] hidden {}{}", prefix, source, o.fanouts.size(), fanouts,
                     o.hidden, o.linear_head ? ", linear head" : "");
}

TrainJobResult run_train_job(const TrainJobOptions& job, ProcessGroup& group,
                             const SummaryCallback& on_summary) {
  const auto start = std::chrono::steady_clock::now();
  const bool rank0 = group.rank() == 0;
  TrainOptions o = job.train;
  const int threads = std::max(1, compute_threads_of(o));
  OpenSettings open;
  open.threads = threads;
  open.local_world_size = job.local_world_size;
  if (job.seeds) {
    const std::string misfit = seed_mode_misfit(job.data.path);
    DGCN_CHECK(misfit.empty(), "seed mode {}: {}", seed_mode_name(*job.seeds), misfit);
  }
  OpenedData data = open_data(job.data, group, open);
  const GraphStore& store = data.store;
  GcnRunOptions run;
  run.checkpoint_dir = job.checkpoint_dir;
  run.resume = job.resume;
  run.checkpoint_every_batches = job.checkpoint_every_batches;
  run.start_gate = job.start_gate;
  run.data_path = data.path;
  if (data.partition) {
    o.seeds = job.seeds.value_or(SeedMode::kLocal);
    run.partition = &*data.partition;
    spdlog::info("{}: part {} of {} ({} of {} nodes, {} CSR entries), seeds {}", data.path, store.part.index,
                 store.part.count, store.num_nodes(), store.part.num_global_nodes, store.num_edges(),
                 seed_mode_name(o.seeds));
  }
  spdlog::info("{}: {} nodes, {} edges, {} features, {} classes ({}), train/valid/test {}/{}/{}", data.path,
               store.num_nodes(), store.num_edges(), store.num_features, store.num_classes,
               task_name(store.task), store.train_nodes().size(), store.valid_nodes().size(),
               store.test_nodes().size());

  run.config = gcn_run_config(o, store, run.data_path, group.size(), run.partition);
  if (rank0 && o.precision == Precision::kBf16 && o.device.is_cpu() && !cpu_bf16_support().fast()) {
    spdlog::warn(
        "--precision bf16: this CPU lacks AVX512-BF16; bf16 runs correctly but slower than "
        "fp32 here");
  }
  const std::string metric = metric_name(store.task);
  std::unique_ptr<MetricsLog> metrics;
  std::vector<CurvePoint> earlier;  // a resumed run's epochs before its first, from --metrics-out
  std::vector<CurvePoint> curve;
  const GcnRunSummary summary =
      train_gcn(store, o, run, group, [&](const EpochReport& r, const Trainer& trainer) {
        if (!rank0) return;
        if (!job.metrics_out.empty() && !metrics) {
          // Opened at the first epoch this run trains: a resumed run keeps the lines before it.
          const int64_t before = r.epoch - 1;
          const bool resumed = run.resume && before > 0;
          metrics = std::make_unique<MetricsLog>(job.metrics_out, resumed ? before : -1);
          if (resumed) {
            for (const CurvePoint& p : curve_of_metrics_file(job.metrics_out, metric)) {
              if (p.epoch < r.epoch) earlier.push_back(p);
            }
          }
          metrics->write({{"config", run.config}, {"first_epoch", r.epoch}});
        }
        curve = earlier;
        curve.insert(curve.end(), trainer.curve().begin(), trainer.curve().end());
        if (metrics) metrics->write(epoch_json(r, metric, group.size()));
        log_epoch(r, metric, group.size());
      });
  // What each rank held: the graph's arrays and its peak resident memory.
  std::vector<double> graph_bytes, peak_rss, cache_peak;
  for (const auto& rank_memory :
       all_gather(group, std::vector<double>{static_cast<double>(store.bytes()), peak_rss_bytes(),
                                             static_cast<double>(cpu_allocator_stats().peak_mapped_bytes)})) {
    graph_bytes.push_back(rank_memory[0]);
    peak_rss.push_back(rank_memory[1]);
    cache_peak.push_back(rank_memory[2]);
  }
  TrainJobResult result;
  result.train = summary.train;
  if (!rank0) return result;

  const TrainSummary& s = summary.train;
  const bool evaluated_now = o.eval_mode != EvalMode::kNone;
  const bool ever_evaluated = s.best_epoch >= 1;
  result.summary = {{"data", run.data_path},
                    {"device", o.device.str()},
                    {"world_size", summary.world_size},
                    {"backend", backend_name(group.backend())},
                    {"first_epoch", summary.first_epoch},
                    {"checkpoint_wait_s", summary.checkpoint_wait_s},
                    {"epochs", s.epochs},
                    {"valid_" + metric, or_null(evaluated_now, s.valid_metric)},
                    {"test_" + metric, or_null(evaluated_now, s.test_metric)},
                    {"best_valid_" + metric, or_null(ever_evaluated, s.best_valid_metric)},
                    {"test_" + metric + "_at_best_valid", or_null(ever_evaluated, s.test_at_best_valid)},
                    {"best_epoch", ever_evaluated ? nlohmann::json(s.best_epoch) : nlohmann::json()},
                    {"train_s", s.train_s},
                    {"eval_s", s.eval_s},
                    {"total_s", seconds_since(start)},
                    {"param_digest", s.param_digest},
                    {"memory",
                     {{"graph_bytes", graph_bytes},
                      {"peak_rss_bytes", peak_rss},
                      {"cpu_cache_peak_mapped_bytes", cache_peak},
                      {"feature_bytes", feature_bytes(store, o.precision)}}},
                    {"precision", precision_summary(o)},
                    {"config", summary.config}};
  if (metrics) result.files_written.push_back(job.metrics_out);
  result.curve = curve;
  if (on_summary) on_summary(result.summary);
  if (!job.plot.empty() && !curve.empty()) {
    plot_training_curves(curve, metric, job.plot, plot_title(job.plot_title_prefix, run.data_path, o));
    spdlog::info("wrote {}", job.plot);
    result.files_written.push_back(job.plot);
  }
  return result;
}

}  // namespace dgcn
