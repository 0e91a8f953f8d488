// See Note [Partitioned sampling] in partitioned_sampler.h.
//
// Round trips to the owners (partition/owner_exchange.h; all integers int64
// unless said, arrays back to back):
//   pick request header:  seed epoch batch hop fanout replace
//   pick answer:          n, counts[n], picks[sum counts] (whole-graph ids, draw order)
//   row request header:   want_features
//   row answer:           n, features[n x F] (float, if wanted), degrees[n] (int32),
//                         labels[n x label bytes]
#include "sampling/partitioned_sampler.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "sampling/cpu/neighbor_kernel.h"

namespace dgcn {

namespace {

using detail::hop_key;
using detail::pick_positions;
using detail::sampled_count;

}  // namespace

PartitionedSampler::PartitionedSampler(const GraphStore& part, const PartMap& map, Collectives& comm,
                                       SamplerOptions options)
    : part_(part),
      map_(map),
      comm_(comm),
      options_(std::move(options)),
      label_bytes_(part.label_bytes()),
      round_trip_(comm, map, "partitioned sampler") {
  check_sampler_options(options_, "partitioned sampler");
  DGCN_CHECK(part.part.is_part(), "partitioned sampler: the store is a whole graph, not a part");
  DGCN_CHECK(comm.size() == part.part.count && comm.rank() == part.part.index,
             "partitioned sampler: rank {} of {} holds part {} of {}; each rank must hold its own part",
             comm.rank(), comm.size(), part.part.index, part.part.count);
  DGCN_CHECK(map.num_nodes() <= INT32_MAX, "partitioned sampler: {} nodes; the sampler supports at most {}",
             map.num_nodes(), INT32_MAX);
}

void PartitionedSampler::add(const RoundTripCost& cost, int64_t& answer_counter) {
  counters_.id_bytes += cost.request_bytes;
  answer_counter += cost.answer_bytes;
  counters_.exchanges += 2;
  counters_.seconds += cost.seconds;
}

void PartitionedSampler::sample(std::span<const int64_t> seeds, const BatchKey& key, SampledBatch& out) {
  const int64_t n = map_.num_nodes();
  for (size_t i = 0; i < seeds.size(); ++i) {
    DGCN_CHECK(seeds[i] >= 0 && seeds[i] < n,
               "partitioned sampler: seeds[{}] = {} is not a node id in [0, {})", i, seeds[i], n);
  }
  if (local_of_.size() != static_cast<size_t>(n)) local_of_.assign(static_cast<size_t>(n), -1);
  out.epoch = key.epoch;
  out.index = key.batch;
  out.num_seeds = static_cast<int64_t>(seeds.size());
  out.n_id.assign(seeds.begin(), seeds.end());
  out.num_nodes_per_hop.assign(1, out.num_seeds);
  out.num_edges_per_hop.clear();
  out.degrees.clear();
  const int layers = static_cast<int>(options_.fanouts.size());
  out.blocks.resize(static_cast<size_t>(layers));
  Block& full = out.blocks[0];
  full.indptr.assign(1, 0);
  full.indices.clear();
  // However the batch ends, the map is left all -1 for the next one.
  struct ResetMap {
    std::vector<int32_t>& map;
    const std::vector<int64_t>& nodes;
    ~ResetMap() {
      for (int64_t v : nodes) map[static_cast<size_t>(v)] = -1;
    }
  } reset{local_of_, out.n_id};
  for (size_t i = 0; i < seeds.size(); ++i) {
    int32_t& local = local_of_[static_cast<size_t>(seeds[i])];
    DGCN_CHECK(local < 0,
               "partitioned sampler: seed {} appears twice (seeds[{}] and seeds[{}]); seeds must be distinct",
               seeds[i], local, i);
    local = static_cast<int32_t>(i);
  }

  int64_t hop_begin = 0;
  for (int h = 0; h < layers; ++h) {
    const int64_t hop_end = static_cast<int64_t>(out.n_id.size());
    groups_.group(std::span<const int64_t>(out.n_id).subspan(static_cast<size_t>(hop_begin),
                                                             static_cast<size_t>(hop_end - hop_begin)),
                  map_);
    const int64_t header[] = {
        static_cast<int64_t>(key.seed), key.epoch, key.batch, h, options_.fanouts[static_cast<size_t>(h)],
        options_.replace ? 1 : 0};
    add(round_trip_.run(header, groups_, /*ask_self=*/true,
                        [&](int peer, std::span<const int64_t> peer_header, std::span<const int64_t> ids,
                            Messages& answers) { serve_picks(peer, peer_header, ids, h, answers); }),
        counters_.pick_bytes);

    // Each owner's answer: counts, then picks, for its rows in frontier order.
    std::vector<std::span<const int64_t>> counts(static_cast<size_t>(comm_.size())),
        picks(static_cast<size_t>(comm_.size()));
    for (int q = 0; q < comm_.size(); ++q) {
      MessageReader r(round_trip_.answer(q), "partitioned sampler: a pick answer");
      const auto asked = static_cast<int64_t>(groups_.of(q).size());
      const auto got = r.value<int64_t>();
      DGCN_CHECK(got == asked, "partitioned sampler: rank {} answered {} rows, asked {}", q, got, asked);
      counts[static_cast<size_t>(q)] = r.take<int64_t>(static_cast<size_t>(got));
      int64_t total = 0;
      for (int64_t c : counts[static_cast<size_t>(q)]) {
        DGCN_CHECK(c >= 0, "partitioned sampler: rank {} answered a negative pick count {}", q, c);
        total += c;
      }
      picks[static_cast<size_t>(q)] = r.take<int64_t>(static_cast<size_t>(total));
    }
    // Walk the frontier in order and relabel by first appearance, exactly
    // as the whole-graph sampler's relabel pass (Note [Sampling a hop]).
    std::vector<size_t> row_cursor(static_cast<size_t>(comm_.size()), 0), pick_cursor(row_cursor);
    const auto edges_before = static_cast<int64_t>(full.indices.size());
    for (int64_t r = 0; r < hop_end - hop_begin; ++r) {
      const auto q = static_cast<size_t>(groups_.owner_of(static_cast<size_t>(r)));
      const int64_t c = counts[q][row_cursor[q]++];
      for (int64_t j = 0; j < c; ++j) {
        const int64_t u = picks[q][pick_cursor[q]++];
        DGCN_CHECK(u >= 0 && u < n, "partitioned sampler: rank {} picked node {}, not in [0, {})", q, u, n);
        int32_t& local = local_of_[static_cast<size_t>(u)];
        if (local < 0) {
          local = static_cast<int32_t>(out.n_id.size());
          out.n_id.push_back(u);
        }
        full.indices.push_back(local);
      }
      full.indptr.push_back(static_cast<int64_t>(full.indices.size()));
    }
    out.num_edges_per_hop.push_back(static_cast<int64_t>(full.indices.size()) - edges_before);
    out.num_nodes_per_hop.push_back(static_cast<int64_t>(out.n_id.size()) - hop_end);
    hop_begin = hop_end;
  }
  detail::build_prefix_blocks(out);
}

void PartitionedSampler::serve_picks(int peer, std::span<const int64_t> header, std::span<const int64_t> ids,
                                     int hop, Messages& answers) {
  const BatchKey key{static_cast<uint64_t>(header[0]), header[1], header[2]};
  const int64_t fanout = header[4];
  const bool replace = header[5] != 0;
  DGCN_CHECK(
      header[3] == hop && fanout >= -1,
      "partitioned sampler: rank {} sent a pick request for hop {} (fanout {}) while this rank samples "
      "hop {}",
      peer, header[3], fanout, hop);
  const uint64_t stream = hop_key(key, header[3]);
  const auto indptr = part_.graph.indptr();
  part_.graph.visit_indices([&](auto indices) {
    // Counts first (they size the answer), then the picks in place.
    const auto count_at = answers.bytes.size() + sizeof(int64_t);
    answers.append_value<int64_t>(static_cast<int64_t>(ids.size()));
    answers.bytes.resize(count_at + ids.size() * sizeof(int64_t));
    int64_t total = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t row = map_.row(ids[i]);
      const int64_t c = sampled_count(indptr[row + 1] - indptr[row], fanout, replace);
      std::memcpy(answers.bytes.data() + count_at + i * sizeof(int64_t), &c, sizeof(c));
      total += c;
    }
    const size_t picks_at = answers.bytes.size();
    answers.bytes.resize(picks_at + static_cast<size_t>(total) * sizeof(int64_t));
    auto* out = reinterpret_cast<int64_t*>(answers.bytes.data() + picks_at);
    for (int64_t v : ids) {
      const int64_t row = map_.row(v);
      const int64_t start = indptr[row], degree = indptr[row + 1] - start;
      const int64_t c = sampled_count(degree, fanout, replace);
      if (positions_.size() < static_cast<size_t>(std::max(c, degree)))
        positions_.resize(std::max(c, degree));
      pick_positions(stream, v, degree, c, fanout, replace, positions_.data(), marks_);
      for (int64_t j = 0; j < c; ++j) *out++ = indices[start + positions_[static_cast<size_t>(j)]];
    }
  });
}

void PartitionedSampler::fetch(SampledBatch& batch, std::span<float> features, std::span<std::byte> labels) {
  const int64_t f = part_.num_features;
  const auto rows = static_cast<int64_t>(batch.n_id.size());
  const bool want_features = !features.empty();
  DGCN_CHECK(!want_features || static_cast<int64_t>(features.size()) >= rows * f,
             "partitioned sampler: {} floats for the features of {} rows x {}", features.size(), rows, f);
  DGCN_CHECK(static_cast<int64_t>(labels.size()) >= batch.num_seeds * label_bytes_,
             "partitioned sampler: {} bytes for the labels of {} seeds x {}", labels.size(), batch.num_seeds,
             label_bytes_);
  groups_.group(batch.n_id, map_);
  const int self = comm_.rank();
  // This rank's own rows are copied from its part below, not sent to itself.
  const int64_t header[] = {want_features ? 1 : 0};
  add(round_trip_.run(header, groups_, /*ask_self=*/false,
                      [&](int, std::span<const int64_t> peer_header, std::span<const int64_t> ids,
                          Messages& answers) { serve_rows(peer_header, ids, answers); }),
      counters_.feature_bytes);

  struct Answer {
    std::span<const float> features;
    std::span<const int32_t> degrees;
    std::span<const std::byte> labels;
    size_t next = 0;
  };
  std::vector<Answer> answers(static_cast<size_t>(comm_.size()));
  for (int q = 0; q < comm_.size(); ++q) {
    MessageReader r(round_trip_.answer(q), "partitioned sampler: a row answer");
    const auto m = q == self ? int64_t{0} : static_cast<int64_t>(groups_.of(q).size());
    const auto got = r.value<int64_t>();
    DGCN_CHECK(got == m, "partitioned sampler: rank {} answered {} rows, asked {}", q, got, m);
    Answer& a = answers[static_cast<size_t>(q)];
    if (want_features) a.features = r.take<float>(static_cast<size_t>(m * f));
    a.degrees = r.take<int32_t>(static_cast<size_t>(m));
    a.labels = r.take<std::byte>(static_cast<size_t>(m * label_bytes_));
  }
  batch.degrees.resize(static_cast<size_t>(rows));
  const auto own_degree = part_.degrees();
  const size_t feature_row_bytes = static_cast<size_t>(f) * sizeof(float);
  const auto label_row = static_cast<size_t>(label_bytes_);
  for (int64_t i = 0; i < rows; ++i) {
    const int owner = groups_.owner_of(static_cast<size_t>(i));
    const float* feature_row = nullptr;
    const std::byte* label;
    int32_t degree;
    if (owner == self) {
      const int64_t row = map_.row(batch.n_id[static_cast<size_t>(i)]);
      if (f > 0) feature_row = part_.features_of(row).data();
      degree = own_degree[static_cast<size_t>(row)];
      label = part_.labels.data() + static_cast<size_t>(row) * label_row;
    } else {
      Answer& a = answers[static_cast<size_t>(owner)];
      const size_t k = a.next++;
      if (want_features) feature_row = a.features.data() + k * static_cast<size_t>(f);
      degree = a.degrees[k];
      label = a.labels.data() + k * label_row;
    }
    if (want_features && f > 0) std::memcpy(features.data() + i * f, feature_row, feature_row_bytes);
    batch.degrees[static_cast<size_t>(i)] = degree;
    if (i < batch.num_seeds && label_row > 0) std::memcpy(labels.data() + i * label_bytes_, label, label_row);
  }
}

void PartitionedSampler::serve_rows(std::span<const int64_t> header, std::span<const int64_t> ids,
                                    Messages& answers) const {
  const int64_t f = part_.num_features;
  const auto degree = part_.degrees();
  const std::byte* labels = part_.labels.data();
  const bool want_features = header[0] != 0;
  const size_t m = ids.size();
  const size_t at = answers.bytes.size();
  const size_t feature_bytes = want_features ? m * static_cast<size_t>(f) * sizeof(float) : 0;
  answers.bytes.resize(at + sizeof(int64_t) + feature_bytes + m * sizeof(int32_t) +
                       m * static_cast<size_t>(label_bytes_));
  std::byte* out = answers.bytes.data() + at;
  const auto count = static_cast<int64_t>(m);
  std::memcpy(out, &count, sizeof(count));
  auto* feature_out = reinterpret_cast<float*>(out + sizeof(int64_t));
  auto* degree_out = reinterpret_cast<int32_t*>(out + sizeof(int64_t) + feature_bytes);
  std::byte* label_out = out + sizeof(int64_t) + feature_bytes + m * sizeof(int32_t);
  for (size_t i = 0; i < m; ++i) {
    const int64_t row = map_.row(ids[i]);
    if (want_features && f > 0) {
      const auto src = part_.features_of(row);
      std::memcpy(feature_out + i * static_cast<size_t>(f), src.data(), src.size_bytes());
    }
    degree_out[i] = degree[static_cast<size_t>(row)];
    if (label_bytes_ > 0) {
      std::memcpy(label_out + i * static_cast<size_t>(label_bytes_),
                  labels + static_cast<size_t>(row) * static_cast<size_t>(label_bytes_),
                  static_cast<size_t>(label_bytes_));
    }
  }
}

PartitionedBatchProducer::PartitionedBatchProducer(const GraphStore& part, const PartMap& map,
                                                   Collectives& comm, SamplerOptions options,
                                                   bool gather_features)
    : sampler_(part, map, comm, std::move(options)),
      gather_features_(gather_features),
      num_features_(part.num_features) {}

void PartitionedBatchProducer::produce(const EpochPlan& plan, int64_t b, const BatchAllocator& allocate,
                                       LoadedBatch& out) {
  sampler_.sample(plan.batch(b), plan.key(b), out.sample);
  out.sample.index = b;
  const auto rows = static_cast<int64_t>(out.sample.n_id.size());
  const int64_t f = gather_features_ ? num_features_ : 0;
  BatchMemory memory = allocate(rows, f, out.sample.num_seeds, sampler_.label_bytes());
  DGCN_CHECK(
      static_cast<int64_t>(memory.features.size()) >= rows * f &&
          static_cast<int64_t>(memory.labels.size()) >= out.sample.num_seeds * sampler_.label_bytes(),
      "partitioned loader: the batch allocator gave {} floats and {} label bytes for {} rows x {} features",
      memory.features.size(), memory.labels.size(), rows, f);
  out.features = memory.features.first(static_cast<size_t>(rows * f));
  out.labels = memory.labels.first(static_cast<size_t>(out.sample.num_seeds * sampler_.label_bytes()));
  sampler_.fetch(out.sample, out.features, out.labels);
  out.lease = std::move(memory.lease);
  MutexLock lock(&mutex_);
  published_ = sampler_.counters();
}

ExchangeCounters PartitionedBatchProducer::counters() const {
  MutexLock lock(&mutex_);
  return published_;
}

}  // namespace dgcn
