#include "protocol/self_contained_spec.h"

#include <cmath>
#include <cstring>

#include "protocol/json_fields.h"

namespace ptxb {

using namespace protocol_detail;

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for test inputs; the
// stream for tensor `index` starts from a hash of (seed, index) so tensors are independent.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1]: never 0, so log() below is finite.
  double uniform() {
    return (static_cast<double>(next() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  }
};

std::uint32_t float_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace

std::uint16_t float_to_bf16_bits(float value) {
  std::uint32_t bits = float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

std::uint16_t float_to_f16_bits(float value) {
  const std::uint32_t bits = float_bits(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  std::uint32_t mantissa = bits & 0x7fffffu;
  const int exponent = static_cast<int>((bits >> 23) & 0xffu);
  if (exponent == 0xff)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  const int half_exponent = exponent - 127 + 15;
  if (half_exponent >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow → inf
  if (half_exponent <= 0) {  // subnormal half (or zero)
    if (half_exponent < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const std::uint32_t shift = static_cast<std::uint32_t>(14 - half_exponent);
    std::uint32_t half_mantissa = mantissa >> shift;
    const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<std::uint16_t>(sign | half_mantissa);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  const std::uint32_t remainder = mantissa & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u)))
    ++half;  // may carry into inf: correct
  return static_cast<std::uint16_t>(half);
}

std::size_t dtype_element_bytes(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "int64") return 8;
  if (dtype == "bfloat16" || dtype == "float16") return 2;
  if (dtype == "float8_e4m3fn" || dtype == "bool") return 1;
  return 0;
}

Result<SelfContainedSpec> self_contained_spec_from_json(const Json& json) {
  const std::string what = "params json";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  SelfContainedSpec spec;
  if (json.contains("signature")) {
    PTXB_ASSIGN_OR_RETURN(spec.signature, get_string(json, "signature", what));
  }
  if (json.contains("warmup_calls")) {
    PTXB_ASSIGN_OR_RETURN(spec.warmup_calls, get_u64(json, "warmup_calls", what));
    if (spec.warmup_calls > 100)
      return make_error("params", "{}: warmup_calls must be at most 100", what);
  }
  if (json.contains("seed")) {
    PTXB_ASSIGN_OR_RETURN(spec.seed, get_u64(json, "seed", what));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* params, get_array(json, "params", what));
  for (std::size_t i = 0; i < params->size(); ++i) {
    const Json& item = (*params)[i];
    const std::string item_what = fmt::format("{}.params[{}]", what, i);
    PTXB_RETURN_IF_ERROR(require_object(item, item_what));
    SelfContainedParam param;
    Json value = item;
    if (item.contains("name")) {
      PTXB_ASSIGN_OR_RETURN(param.name, get_string(item, "name", item_what));
      value.erase("name");
    }
    if (value.contains("tensor")) {
      const Json& tensor_json = value["tensor"];
      PTXB_RETURN_IF_ERROR(require_object(tensor_json, item_what + ".tensor"));
      SelfContainedTensor tensor;
      PTXB_ASSIGN_OR_RETURN(tensor.dtype, get_string(tensor_json, "dtype", item_what + ".tensor"));
      PTXB_ASSIGN_OR_RETURN(tensor.elements,
                            get_u64(tensor_json, "elements", item_what + ".tensor"));
      tensor.init = "zeros";
      if (tensor_json.contains("init")) {
        PTXB_ASSIGN_OR_RETURN(tensor.init, get_string(tensor_json, "init", item_what));
      }
      const std::size_t element_bytes = dtype_element_bytes(tensor.dtype);
      if (element_bytes == 0)
        return make_error("protocol", "{}: unknown dtype '{}'", item_what, tensor.dtype);
      if (tensor.elements == 0 || tensor.elements > kMaxSelfContainedTensorBytes / element_bytes) {
        return make_error("protocol", "{}: {} elements of {} is outside 1..{} bytes", item_what,
                          tensor.elements, tensor.dtype, kMaxSelfContainedTensorBytes);
      }
      if (tensor.init != "zeros" && tensor.init != "normal" && tensor.init != "data") {
        return make_error("protocol",
                          "{}: init must be \"normal\", \"zeros\" or \"data\", got '{}'", item_what,
                          tensor.init);
      }
      if (tensor.init == "data") {
        PTXB_ASSIGN_OR_RETURN(std::string hex,
                              get_string(tensor_json, "data_hex", item_what + ".tensor"));
        auto decoded = from_hex(hex);
        if (!decoded.ok()) return decoded.error().with_context(item_what + ".tensor.data_hex");
        if (decoded->size() != tensor.elements * element_bytes)
          return make_error("protocol", "{}: data_hex holds {} bytes, {} {} elements need {}",
                            item_what, decoded->size(), tensor.elements, tensor.dtype,
                            tensor.elements * element_bytes);
        tensor.data = std::move(decoded).value();
      }
      if (tensor.init == "normal" && tensor.dtype != "float32" && tensor.dtype != "bfloat16" &&
          tensor.dtype != "float16") {
        return make_error("protocol", "{}: init \"normal\" needs a float dtype, got '{}'",
                          item_what, tensor.dtype);
      }
      param.tensor = tensor;
    } else {
      auto scalar = param_value_from_json(value);
      if (!scalar.ok()) return scalar.error().with_context(item_what);
      if (scalar->is_buffer)
        return make_error("protocol", "{}: use \"tensor\" for buffers", item_what);
      param.scalar = std::move(scalar).value();
    }
    spec.params.push_back(std::move(param));
  }
  return spec;
}

Result<std::string> generate_tensor_bytes(const SelfContainedTensor& tensor, std::uint64_t seed,
                                          std::size_t index) {
  const std::size_t element_bytes = dtype_element_bytes(tensor.dtype);
  if (element_bytes == 0) return make_error("protocol", "unknown dtype '{}'", tensor.dtype);
  std::string bytes(tensor.elements * element_bytes, '\0');
  if (tensor.init == "zeros") return bytes;
  if (tensor.init == "data") return tensor.data;
  SplitMix64 rng{seed ^ (0x5851f42d4c957f2dull * (index + 1))};
  for (std::uint64_t i = 0; i < tensor.elements; i += 2) {
    // Box–Muller: two independent N(0, 1) values per pair of uniforms.
    const double radius = std::sqrt(-2.0 * std::log(rng.uniform()));
    const double angle = 6.283185307179586 * rng.uniform();
    const float pair[2] = {static_cast<float>(radius * std::cos(angle)),
                           static_cast<float>(radius * std::sin(angle))};
    for (std::uint64_t k = 0; k < 2 && i + k < tensor.elements; ++k) {
      char* out = bytes.data() + (i + k) * element_bytes;
      if (tensor.dtype == "float32") {
        std::memcpy(out, &pair[k], 4);
      } else {
        const std::uint16_t half =
            tensor.dtype == "bfloat16" ? float_to_bf16_bits(pair[k]) : float_to_f16_bits(pair[k]);
        std::memcpy(out, &half, 2);
      }
    }
  }
  return bytes;
}

}  // namespace ptxb
