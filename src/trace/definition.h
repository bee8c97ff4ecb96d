// FlashInfer-Trace Definition: the computation a task asks for (design.md §3.1).
//
// The order of `axes`, `inputs` and `outputs` is the calling convention of the solution's `run`
// function (design.md §3.2), so each is kept as a vector in document order; `raw` keeps the whole
// document (unknown fields included) so that writing it back is lossless.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "trace/diagnostics.h"
#include "trace/dtype.h"

namespace ptxb {

struct Axis {
  std::string name;
  bool is_var = false;                // "type": "var" (bound by each workload) or "const"
  std::optional<std::int64_t> value;  // set for const axes
};

struct TensorSpec {
  std::string name;
  // Axis names, outer to inner (row-major); nullopt for a scalar ("shape": null).
  std::optional<std::vector<std::string>> shape;
  DType dtype = DType::kFloat32;

  bool is_scalar() const { return !shape.has_value(); }
};

struct Definition {
  std::string name;
  std::string op_type;
  std::string description;
  std::vector<std::string> tags;
  std::vector<Axis> axes;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string reference;                 // PyTorch-style reference code (schema: required)
  std::vector<std::string> constraints;  // Python expressions over axes/tensors (optional)
  Json raw;  // the document as read (order and unknown fields preserved)

  const Axis* find_axis(const std::string& axis_name) const;
  const TensorSpec* find_tensor(const std::string& tensor_name) const;
  std::vector<std::string> var_axis_names() const;
};

// Parses and fully validates a definition document. `origin` names the file in errors; every
// error names the JSON path and what is wrong ("x.json: $.inputs.A.shape[1]: axis 'Q' is not
// declared in $.axes").
Result<Definition> parse_definition(const Json& document, const std::string& origin);
// The same, recording every finding in `diagnostics` (attributed to diagnostics.file()). The
// returned Definition is complete only when no finding was added.
Definition parse_definition(const Json& document, Diagnostics& diagnostics);

// The document to write back: `raw` (lossless round trip).
Json definition_to_json(const Definition& definition);

}  // namespace ptxb
