#include "train/model_record.h"

#include "base/error.h"

namespace dgcn {
namespace {

const nlohmann::json& model_field(const nlohmann::json& config, const char* key, const std::string& what) {
  const auto s = config.find("model");
  DGCN_CHECK(s != config.end() && s->is_object() && s->contains(key),
             "checkpoint {} records no model.{} (not written by dgcn-train?)", what, key);
  return (*s)[key];
}

}  // namespace

ModelOptions model_options(const TrainOptions& o, const GraphStore& store) {
  ModelOptions m;
  m.kind = o.model;
  m.in_features = store.num_features;
  m.hidden = o.hidden;
  m.num_classes = store.num_classes;
  m.num_layers = static_cast<int64_t>(o.fanouts.size());
  m.dropout = o.dropout;
  m.input_dropout = o.input_dropout;
  m.linear_head = o.linear_head;
  m.heads = o.heads;
  m.attention_dropout = o.attention_dropout;
  m.precision = o.precision;
  return m;
}

void complete_model_record(nlohmann::json& model, const TrainOptions& o) {
  model["kind"] = model_kind_name(o.model);
  if (o.model == ModelKind::kGcn) return;
  model.erase("norm");
  if (o.model == ModelKind::kGat) {
    model["heads"] = o.heads;
    model["attention_dropout"] = o.attention_dropout;
  }
}

ModelOptions model_options_of_record(const nlohmann::json& config, const std::string& what) {
  ModelOptions m;
  const std::string kind = model_field(config, "kind", what).get<std::string>();
  try {
    m.kind = parse_model_kind(kind);
  } catch (const Error&) {
    DGCN_CHECK(false, "checkpoint {} holds a {} model, which this dgcn cannot build (gcn, sage, gat)", what,
               kind);
  }
  m.in_features = model_field(config, "in_features", what).get<int64_t>();
  m.hidden = model_field(config, "hidden", what).get<int64_t>();
  m.num_classes = model_field(config, "num_classes", what).get<int64_t>();
  m.num_layers = model_field(config, "layers", what).get<int64_t>();
  m.dropout = model_field(config, "dropout", what).get<double>();
  m.input_dropout = model_field(config, "input_dropout", what).get<double>();
  m.linear_head = model_field(config, "head", what).get<std::string>() == "linear";
  if (m.kind == ModelKind::kGat) {
    m.heads = model_field(config, "heads", what).get<int64_t>();
    m.attention_dropout = model_field(config, "attention_dropout", what).get<double>();
  }
  return m;
}

}  // namespace dgcn
