#pragma once
/// \file
/// The names an enum is written with, in one table per enum: what files, recipes, messages and
/// the command line say for each value, and the value a name reads back as. No Qt, no LibTorch.

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dstudio/common/error.h"

namespace dstudio {

/// The names an enum is written with, in one table: `{{Mode::A, "a"}, {Mode::B, "b"}}`.
template <class E>
class EnumNames {
 public:
  EnumNames(std::initializer_list<std::pair<E, const char*>> names) : names_(names) {}
  /// The name of `value`; a value without one is a defect, reported as such.
  [[nodiscard]] const char* name(E value) const {
    for (const auto& [v, n] : names_)
      if (v == value) return n;
    throw Error("a value without a name in its enum's table (" +
                std::to_string(static_cast<long long>(value)) + ")");
  }
  /// The value named `text`, if any.
  [[nodiscard]] std::optional<E> parse(std::string_view text) const {
    for (const auto& [v, n] : names_)
      if (text == n) return v;
    return std::nullopt;
  }
  /// "a, b, c": what a message lists as the names known.
  [[nodiscard]] std::string joined(const char* separator = ", ") const {
    std::string out;
    for (const auto& [v, n] : names_) out += (out.empty() ? "" : separator) + std::string(n);
    return out;
  }
  /// The names, in the table's order.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [v, n] : names_) out.emplace_back(n);
    return out;
  }
  /// Every value with its name, in the table's order.
  [[nodiscard]] const std::vector<std::pair<E, const char*>>& entries() const { return names_; }

 private:
  std::vector<std::pair<E, const char*>> names_;
};

}  // namespace dstudio
