// See Note [What a resume may change] in run_config.h.
#include "train/run_config.h"

#include <map>

namespace dgcn {
namespace {

// Leaves by dotted path; arrays are leaves (fanouts compare as a whole).
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) flatten(value, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  out[prefix] = j;
}

bool may_change(const std::string& field) {
  return field == "version" || field == "optimizer.lr" || field == "data.path" || field.rfind("run.", 0) == 0;
}

}  // namespace

ConfigComparison compare_configs(const nlohmann::json& checkpoint, const nlohmann::json& run) {
  std::map<std::string, nlohmann::json> a, b;
  flatten(checkpoint, "", a);
  flatten(run, "", b);
  // Records written before model.precision existed were fp32 runs.
  for (auto* side : {&a, &b}) {
    if (!side->count("model.precision") && (a.count("model.precision") || b.count("model.precision")))
      (*side)["model.precision"] = "fp32";
  }
  std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> both;
  for (const auto& [k, v] : a) both[k].first = v;
  for (const auto& [k, v] : b) both[k].second = v;
  ConfigComparison out;
  // Another model (model.kind): its other settings are another model's, not
  // changes; the kind alone says why the checkpoint is refused.
  const bool other_model = both["model.kind"].first != both["model.kind"].second;
  for (const auto& [field, values] : both) {
    if (values.first == values.second) continue;
    if (other_model && field != "model.kind" && field.rfind("model.", 0) == 0) continue;
    ConfigChange c{field, values.first.dump(), values.second.dump()};
    (may_change(field) ? out.allowed : out.forbidden).push_back(std::move(c));
  }
  return out;
}

std::vector<ReplicaField> replica_settings(const nlohmann::json& config) {
  std::map<std::string, nlohmann::json> leaves;
  flatten(config, "", leaves);
  std::vector<ReplicaField> out;
  for (const auto& [field, value] : leaves) {
    if (field == "data.path" || field == "run.threads" || field == "run.device") continue;
    out.push_back({field, value.is_string() ? value.get<std::string>() : value.dump()});
  }
  return out;
}

std::string describe_changes(const std::vector<ConfigChange>& changes) {
  std::string s;
  for (const ConfigChange& c : changes) {
    if (!s.empty()) s += "; ";
    s += c.field + " was " + c.before + ", this run has " + c.after;
  }
  return s;
}

}  // namespace dgcn
