// Result-or-error values for library code. One error model for the core library: functions
// that can fail return Result<T>; an Error carries a human message that already names its
// context ("definitions/gemm.json: $.axes.M.type: ..."), and an optional machine-readable code.
// Front ends turn an Error into one line and a non-zero exit; nothing in the library throws
// across its API.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace ptxb {

struct Error {
  std::string message;
  std::string code;  // machine-readable, e.g. "io", "parse", "validation", "toolchain"

  // Returns a copy with `context` prepended ("context: message").
  Error with_context(const std::string& context) const {
    return Error{context + ": " + message, code};
  }
};

template <typename... Args>
Error make_error(std::string code, fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...), std::move(code)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() {
  return Ok{};
}

}  // namespace ptxb

// Propagates an error from an expression returning Result<T>/Status.
#define PTXB_CONCAT_INNER(a, b) a##b
#define PTXB_CONCAT(a, b) PTXB_CONCAT_INNER(a, b)
#define PTXB_RETURN_IF_ERROR(expr)                       \
  do {                                                   \
    auto&& ptxb_status_ = (expr);                        \
    if (!ptxb_status_.ok()) return ptxb_status_.error(); \
  } while (0)
// PTXB_ASSIGN_OR_RETURN(auto x, f()) : declares x from a successful Result or returns its error.
#define PTXB_ASSIGN_OR_RETURN(decl, expr) \
  PTXB_ASSIGN_OR_RETURN_IMPL(PTXB_CONCAT(ptxb_result_, __LINE__), decl, expr)
#define PTXB_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.error();                \
  decl = std::move(tmp).value()
