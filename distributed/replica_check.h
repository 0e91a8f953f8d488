// Checked replicas: before the first broadcast, every rank of a job checks
// that all ranks hold the same model (parameter names, shapes, dtypes) and
// the same settings (dataset digest, model and sampling settings), so two
// machines reading different copies of a store, or launched with different
// flags, stop with one clear error on every rank instead of training apart
// or hanging in a collective of another size.
//
// Note [Replica check exchange]
// c10d's verify_replica0_across_processes compares shapes against rank 0's
// after a broadcast of sizes; we need text (a message naming the field and
// both values on every rank), so every rank's fields travel, in one
// all-gather (partition/collectives.h) of each rank's row of fixed-size
// field slots. A slot holds a 64-bit digest of the whole name and value (so
// long values differing past the slot still differ) and their first bytes
// for the message, four bytes per double (exact in float64). The all-gather
// runs under the group's collective timeout: a rank that is absent or on
// another protocol fails the check by timeout, never hangs it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "partition/collectives.h"

namespace dgcn {

struct ReplicaField {
  std::string name;   // e.g. "data.digest", "param fc1.weight"
  std::string value;  // e.g. "3f0c...", "[32, 8] float"
};

// What a field slot keeps of a name and value for the message (bytes).
inline constexpr size_t kReplicaFieldTextBytes = 152;

// A rank's row of slots: `max_fields` slots, `fields` first, the rest empty. Doubles of 4-byte words (Note
// [Replica check exchange]).
std::vector<double> encode_replica_row(const std::vector<ReplicaField>& fields, size_t max_fields);

// One rank's fields as the message shows them, and their digests.
struct ReplicaRow {
  std::vector<ReplicaField> fields;  // name and value, cut at kReplicaFieldTextBytes
  std::vector<uint64_t> digests;     // of the whole name and value
};
ReplicaRow decode_replica_row(const double* row, size_t max_fields);

// Compares every rank's row with rank 0's, field by field, by name.
// Returns "" when all agree, else one message naming, for up to four
// differences, the rank, the field and both values, e.g.
//   replicas differ: rank 1 has data.digest = "9a.." where rank 0 has "1f.."
std::string replica_differences(const std::vector<ReplicaRow>& rows);

// Collective over `comm`: every rank passes its fields. Returns
// replica_differences() of the gathered rows: the same text on every rank.
std::string check_replicas(Collectives& comm, const std::vector<ReplicaField>& fields);

}  // namespace dgcn
