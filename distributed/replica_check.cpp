#include "distributed/replica_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "base/digest.h"
#include "base/error.h"

namespace dgcn {
namespace {

// A slot: two words of digest, one word of text length, then the text.
constexpr size_t kTextWords = (kReplicaFieldTextBytes + 3) / 4;
constexpr size_t kSlotWords = 3 + kTextWords;

uint64_t field_digest(const ReplicaField& f) {
  Digest d;
  d.update_value(f.name.size());
  d.update(f.name.data(), f.name.size());
  d.update(f.value.data(), f.value.size());
  return d.value();
}

// name, NUL, value: cut to the slot.
std::string field_text(const ReplicaField& f) {
  std::string text = f.name;
  text.push_back('\0');
  text += f.value;
  if (text.size() > kReplicaFieldTextBytes) text.resize(kReplicaFieldTextBytes);
  return text;
}

std::string quoted(const std::string& value) {
  return fmt::format("\"{}\"", value);
}

}  // namespace

std::vector<double> encode_replica_row(const std::vector<ReplicaField>& fields, size_t max_fields) {
  DGCN_ASSERT(fields.size() <= max_fields);
  std::vector<double> row(max_fields * kSlotWords, 0.0);
  for (size_t i = 0; i < fields.size(); ++i) {
    double* slot = row.data() + i * kSlotWords;
    const uint64_t digest = field_digest(fields[i]);
    slot[0] = static_cast<double>(static_cast<uint32_t>(digest));
    slot[1] = static_cast<double>(static_cast<uint32_t>(digest >> 32));
    const std::string text = field_text(fields[i]);
    slot[2] = static_cast<double>(text.size() + 1);  // 0 marks an empty slot
    for (size_t w = 0; w * 4 < text.size(); ++w) {
      uint32_t word = 0;
      std::memcpy(&word, text.data() + w * 4, std::min<size_t>(4, text.size() - w * 4));
      slot[3 + w] = static_cast<double>(word);
    }
  }
  return row;
}

ReplicaRow decode_replica_row(const double* row, size_t max_fields) {
  ReplicaRow out;
  for (size_t i = 0; i < max_fields; ++i) {
    const double* slot = row + i * kSlotWords;
    if (slot[2] == 0) break;
    const auto length = static_cast<size_t>(slot[2]) - 1;
    DGCN_ASSERT(length <= kReplicaFieldTextBytes);
    std::string text(kTextWords * 4, '\0');
    for (size_t w = 0; w < kTextWords; ++w) {
      const auto word = static_cast<uint32_t>(slot[3 + w]);
      std::memcpy(text.data() + w * 4, &word, 4);
    }
    text.resize(length);
    const size_t nul = text.find('\0');
    ReplicaField field;
    field.name = text.substr(0, nul);
    if (nul != std::string::npos) field.value = text.substr(nul + 1);
    out.fields.push_back(std::move(field));
    out.digests.push_back(static_cast<uint64_t>(slot[0]) | (static_cast<uint64_t>(slot[1]) << 32));
  }
  return out;
}

std::string replica_differences(const std::vector<ReplicaRow>& rows) {
  DGCN_ASSERT(!rows.empty());
  // Rank 0's fields by name, in its order; another rank's field rank 0 lacks comes after.
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < rows[0].fields.size(); ++i) index_of.emplace(rows[0].fields[i].name, i);
  std::vector<std::string> lines;
  size_t total = 0;
  auto add = [&](std::string line) {
    if (++total <= 4) lines.push_back(std::move(line));
  };
  for (size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, size_t> mine;
    for (size_t i = 0; i < rows[r].fields.size(); ++i) mine.emplace(rows[r].fields[i].name, i);
    for (size_t i = 0; i < rows[0].fields.size(); ++i) {
      const ReplicaField& f0 = rows[0].fields[i];
      const auto it = mine.find(f0.name);
      if (it == mine.end()) {
        add(fmt::format("rank {} has no {} where rank 0 has {}", r, f0.name, quoted(f0.value)));
      } else if (rows[r].digests[it->second] != rows[0].digests[i]) {
        add(fmt::format("rank {} has {} = {} where rank 0 has {}", r, f0.name,
                        quoted(rows[r].fields[it->second].value), quoted(f0.value)));
      }
    }
    for (const ReplicaField& f : rows[r].fields) {
      if (!index_of.count(f.name))
        add(fmt::format("rank {} has {} = {} where rank 0 has none", r, f.name, quoted(f.value)));
    }
  }
  if (total == 0) return "";
  std::string message = "replicas differ (every rank must train the same model on the same data): ";
  for (size_t i = 0; i < lines.size(); ++i) message += (i ? "; " : "") + lines[i];
  if (total > lines.size()) message += fmt::format("; and {} more", total - lines.size());
  return message;
}

std::string check_replicas(Collectives& comm, const std::vector<ReplicaField>& fields) {
  std::vector<ReplicaRow> rows;
  for (const std::vector<double>& row : all_gather(comm, encode_replica_row(fields, fields.size()))) {
    DGCN_CHECK(row.size() % kSlotWords == 0, "replica check: a row of {} words is not whole slots",
               row.size());
    rows.push_back(decode_replica_row(row.data(), row.size() / kSlotWords));
  }
  return replica_differences(rows);
}

}  // namespace dgcn
