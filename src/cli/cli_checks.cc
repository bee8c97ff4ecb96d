// Flag checks with plain messages. CLI11 2.1's PositiveNumber and NonNegativeNumber print their
// upper bound, the largest double, in full: "--fast-p: Value -1 not in range 0 to 1797...
// (309 digits)". These say what was wrong in words.
#include <cmath>
#include <string>

#include "cli/command.h"

namespace ptxb::cli {

CLI::Validator number_at_least(double minimum, bool inclusive) {
  const std::string bound = fmt::format("{} {:g}", inclusive ? ">=" : ">", minimum);
  return CLI::Validator(
      [minimum, inclusive, bound](std::string& input) -> std::string {
        double value = 0;
        std::size_t used = 0;
        try {
          value = std::stod(input, &used);
        } catch (const std::exception&) {
          return fmt::format("expected a number, got '{}'", input);
        }
        if (used != input.size() || !std::isfinite(value))
          return fmt::format("expected a finite number, got '{}'", input);
        const bool fits = inclusive ? value >= minimum : value > minimum;
        if (!fits) return fmt::format("must be {}, got {}", bound, input);
        return {};
      },
      "NUMBER " + bound);
}

}  // namespace ptxb::cli
