#include "models/model_options.h"

#include "base/error.h"

namespace dgcn {

const char* model_kind_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::kGcn:
      return "gcn";
    case ModelKind::kSage:
      return "sage";
    case ModelKind::kGat:
      return "gat";
  }
  return "?";
}

ModelKind parse_model_kind(const std::string& s) {
  if (s == "gcn") return ModelKind::kGcn;
  if (s == "sage") return ModelKind::kSage;
  DGCN_CHECK(s == "gat", "model '{}' is not one of gcn, sage, gat", s);
  return ModelKind::kGat;
}

}  // namespace dgcn
