#pragma once
/// \file
/// One description per serialised type. A `JsonFields<T>` table lists a type's fields once, each
/// with its key, its member and what values it takes; the table writes the type as a JSON object
/// (keys in the table's order), reads it back, checks every value and names the key of the first
/// that is wrong. A key missing from a file keeps the member's default, so files written before a
/// field existed still read. Enums are written by their names in an `EnumNames<E>` table
/// (enum_names.h). No Qt, no LibTorch.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dstudio/common/enum_names.h"
#include "dstudio/common/error.h"
#include "dstudio/common/text.h"

namespace dstudio {

/// What a number read from a file may be: within [min, max] (an `above` minimum is excluded).
struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool above = false;
};

/// The fields of `T`, each written and read by its key. Reading throws `Error` with
/// "<where>: <key> ..." for a value of the wrong kind or outside its range.
template <class T>
class JsonFields {
 public:
  using Json = nlohmann::json;
  using OrderedJson = nlohmann::ordered_json;

  /// A number, a whole number, a flag, a text or a list of them; numbers within `range`.
  template <class M>
  JsonFields& field(const char* key, M T::*member, NumberRange range = {}) {
    fields_.push_back(
        {key, [member](const T& t, OrderedJson& out, const char* k) { out[k] = t.*member; },
         [member, range](T& t, const Json& value, const std::string& where) {
           t.*member = read_value<M>(value, where, range);
         }});
    return *this;
  }
  /// An enum written by its name in `names` (which must outlive the table).
  template <class E>
  JsonFields& named(const char* key, E T::*member, const EnumNames<E>& names) {
    fields_.push_back({key,
                       [member, &names](const T& t, OrderedJson& out, const char* k) {
                         out[k] = names.name(t.*member);
                       },
                       [member, &names](T& t, const Json& value, const std::string& where) {
                         if (!value.is_string())
                           throw Error(where + " is not a name (" + names.joined() + ")");
                         const auto parsed = names.parse(value.get<std::string>());
                         if (!parsed)
                           throw Error(where + " is '" + value.get<std::string>() +
                                       "', not one of " + names.joined());
                         t.*member = *parsed;
                       }});
    return *this;
  }
  /// A value of a type with a table of its own, as a nested JSON object.
  template <class M>
  JsonFields& object(const char* key, M T::*member, const JsonFields<M>& fields) {
    fields_.push_back({key,
                       [member, &fields](const T& t, OrderedJson& out, const char* k) {
                         out[k] = fields.write(t.*member);
                       },
                       [member, &fields](T& t, const Json& value, const std::string& where) {
                         t.*member = fields.read(value, where, t.*member);
                       }});
    return *this;
  }

  /// A list of values of a type with a table of its own, as a JSON array of objects.
  template <class M>
  JsonFields& objects(const char* key, std::vector<M> T::*member, const JsonFields<M>& fields) {
    fields_.push_back({key,
                       [member, &fields](const T& t, OrderedJson& out, const char* k) {
                         auto& list = out[k] = OrderedJson::array();
                         for (const auto& m : t.*member) list.push_back(fields.write(m));
                       },
                       [member, &fields](T& t, const Json& value, const std::string& where) {
                         if (!value.is_array()) throw Error(where + " is not a list");
                         std::vector<M> out;
                         for (std::size_t i = 0; i < value.size(); ++i)
                           out.push_back(
                               fields.read(value[i], where + "[" + std::to_string(i) + "]"));
                         t.*member = std::move(out);
                       }});
    return *this;
  }
  /// A text every file of the kind holds (its format's name): written as is; a file whose value
  /// differs, or that lacks it, is refused as not of this kind.
  JsonFields& constant(const char* key, std::string value) {
    required_.emplace_back(key, value);
    fields_.push_back({key, [value](const T&, OrderedJson& out, const char* k) { out[k] = value; },
                       [value](T&, const Json& found, const std::string& where) {
                         if (!found.is_string() || found.get<std::string>() != value)
                           throw Error(where + " is not '" + value + "'");
                       }});
    return *this;
  }
  /// A value kept elsewhere than one member (a member's member, a derived value): `get` gives
  /// what is written, `set` reads it (throwing Error for a wrong value; `where` names the key).
  JsonFields& computed(const char* key, std::function<OrderedJson(const T&)> get,
                       std::function<void(T&, const Json&, const std::string& where)> set) {
    fields_.push_back(
        {key,
         [get = std::move(get)](const T& t, OrderedJson& out, const char* k) { out[k] = get(t); },
         std::move(set)});
    return *this;
  }

  /// `t` as a JSON object, keys in the table's order.
  [[nodiscard]] OrderedJson write(const T& t) const {
    OrderedJson out = OrderedJson::object();
    for (const auto& f : fields_) f.write(t, out, f.key);
    return out;
  }
  /// The object `j` read over `start` (whose values stay for keys `j` lacks). Keys the table does
  /// not know are left alone: a newer file still reads. Throws Error "<where>: <key> ...".
  [[nodiscard]] T read(const Json& j, const std::string& where, T start = T{}) const {
    if (!j.is_object()) throw Error(where + ": not a JSON object");
    for (const auto& [key, value] : required_)
      if (!j.contains(key)) throw Error(where + ": no " + key + " (not a '" + value + "' file)");
    for (const auto& f : fields_)
      if (const auto it = j.find(f.key); it != j.end()) f.read(start, *it, where + ": " + f.key);
    return start;
  }
  /// The keys, in order.
  [[nodiscard]] std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) out.emplace_back(f.key);
    return out;
  }

 private:
  struct Field {
    const char* key;
    std::function<void(const T&, OrderedJson&, const char*)> write;
    std::function<void(T&, const Json&, const std::string&)> read;
  };

  template <class M>
  static M read_value(const Json& value, const std::string& where, const NumberRange& range) {
    if constexpr (std::is_same_v<M, bool>) {
      if (!value.is_boolean()) throw Error(where + " is not true or false");
      return value.get<bool>();
    } else if constexpr (std::is_same_v<M, std::string>) {
      if (!value.is_string()) throw Error(where + " is not a text");
      return value.get<std::string>();
    } else if constexpr (std::is_arithmetic_v<M>) {
      if (!value.is_number()) throw Error(where + " is not a number");
      const double d = value.get<double>();
      if (!std::isfinite(d)) throw Error(where + " is not a finite number");
      if constexpr (std::is_integral_v<M>) {
        if (!value.is_number_integer()) throw Error(where + " is not a whole number");
        if (value.is_number_unsigned()) {
          if (value.get<std::uint64_t>() >
              static_cast<std::uint64_t>(std::numeric_limits<M>::max()))
            throw Error(where + " is too large");
        } else if (value.get<std::int64_t>() <
                       static_cast<std::int64_t>(std::numeric_limits<M>::min()) ||
                   (std::is_signed_v<M> &&
                    value.get<std::int64_t>() >
                        static_cast<std::int64_t>(std::numeric_limits<M>::max()))) {
          throw Error(where + " is out of range");
        }
      }
      if (range.above ? !(d > range.min) : !(d >= range.min))
        throw Error(where + " must be " + (range.above ? "above " : "at least ") +
                    number_text(range.min) + " (is " + number_text(d) + ")");
      if (!(d <= range.max))
        throw Error(where + " must be at most " + number_text(range.max) + " (is " +
                    number_text(d) + ")");
      return value.get<M>();
    } else {
      // Lists of the kinds above.
      using V = typename M::value_type;
      if (!value.is_array()) throw Error(where + " is not a list");
      M out;
      for (std::size_t i = 0; i < value.size(); ++i)
        out.push_back(read_value<V>(value[i], where + "[" + std::to_string(i) + "]", range));
      return out;
    }
  }
  static std::string number_text(double d) { return exact_number(d); }

  std::vector<Field> fields_;
  std::vector<std::pair<std::string, std::string>> required_;  // constants: key, value
};

}  // namespace dstudio
