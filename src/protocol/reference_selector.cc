#include "protocol/reference_selector.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "core/strings.h"

namespace ptxb {
namespace {

constexpr std::string_view kPinMark = "@pin=";

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

Result<GemmPin> parse_pin(const std::string& text) {
  // "MxNxK:H"
  const std::size_t colon = text.rfind(':');
  const std::vector<std::string> dims =
      split(text.substr(0, colon == std::string::npos ? text.size() : colon), 'x');
  GemmPin pin;
  const auto m = dims.size() == 3 ? parse_int(dims[0]) : std::nullopt;
  const auto n = dims.size() == 3 ? parse_int(dims[1]) : std::nullopt;
  const auto k = dims.size() == 3 ? parse_int(dims[2]) : std::nullopt;
  const auto h = colon == std::string::npos ? std::nullopt : parse_int(text.substr(colon + 1));
  if (!m || !n || !k || !h || *m <= 0 || *n <= 0 || *k <= 0 || *h < 0 || *h > 1000)
    return make_error("parse", "reference selector: pin '{}' is not MxNxK:HEURISTIC", text);
  pin.m = *m;
  pin.n = *n;
  pin.k = *k;
  pin.heuristic_index = static_cast<int>(*h);
  return pin;
}

}  // namespace

std::string ReferenceSelector::to_string() const {
  std::string out = backend + (causal ? ":causal" : "");
  for (std::size_t i = 0; i < pins.size(); ++i)
    out += fmt::format("{}{}x{}x{}:{}", i == 0 ? std::string(kPinMark) : ";", pins[i].m, pins[i].n,
                       pins[i].k, pins[i].heuristic_index);
  return out;
}

Result<ReferenceSelector> parse_reference_selector(const std::string& text) {
  ReferenceSelector selector;
  std::string head = text;
  if (const std::size_t mark = text.find(kPinMark); mark != std::string::npos) {
    head = text.substr(0, mark);
    for (const std::string& entry : split(text.substr(mark + kPinMark.size()), ';')) {
      PTXB_ASSIGN_OR_RETURN(GemmPin pin, parse_pin(entry));
      selector.pins.push_back(pin);
    }
  }
  if (const std::size_t colon = head.find(':'); colon != std::string::npos) {
    if (head.substr(colon + 1) != "causal")
      return make_error("parse", "reference selector '{}': only ':causal' may follow the name",
                        text);
    selector.causal = true;
    head = head.substr(0, colon);
  }
  if (head.empty()) return make_error("parse", "reference selector '{}' names no backend", text);
  selector.backend = head;
  return selector;
}

Json prepared_description_in_log(const std::string& log) {
  const std::size_t at = log.rfind(kPreparedLinePrefix);
  if (at == std::string::npos) return nullptr;
  const std::size_t start = at + kPreparedLinePrefix.size();
  const std::size_t end = log.find('\n', start);
  try {
    return Json::parse(
        log.substr(start, end == std::string::npos ? std::string::npos : end - start));
  } catch (const std::exception&) {
    return nullptr;
  }
}

std::vector<GemmPin> gemm_pins_of(const Json& description) {
  std::vector<GemmPin> pins;
  if (!description.is_object() || description.value("backend", "") != "cublaslt_gemm" ||
      !description.contains("shapes") || !description["shapes"].is_array())
    return pins;
  for (const Json& shape : description["shapes"]) {
    const Json* algorithm = shape.contains("algorithm") ? &shape["algorithm"] : nullptr;
    if (algorithm == nullptr || !algorithm->contains("heuristic_index") || !shape.contains("m") ||
        !shape.contains("n") || !shape.contains("k"))
      continue;
    pins.push_back(GemmPin{shape["m"].get<std::int64_t>(), shape["n"].get<std::int64_t>(),
                           shape["k"].get<std::int64_t>(),
                           (*algorithm)["heuristic_index"].get<int>()});
  }
  return pins;
}

}  // namespace ptxb
