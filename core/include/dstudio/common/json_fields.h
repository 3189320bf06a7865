#pragma once
/// \file
/// One description per serialised type. A `JsonFields<T>` table lists a type's fields once, each
/// with its key, its member and what values it takes; the table writes the type as a JSON object
/// (keys in the table's order), reads it back, checks every value and names the key of the first
/// that is wrong. A key missing from a file keeps the member's default, so files written before a
/// field existed still read (unless the table says the key is `required`). Objects are read in the
/// file's order, so that a free-form object kept as text (a sweep cell's overrides) keeps the order
/// of its keys. Enums are written by their names in an `EnumNames<E>` table (enum_names.h). No Qt,
/// no LibTorch.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
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

/// What a number read from a file may be: within [min, max] (an `above` minimum and a `below`
/// maximum are excluded).
struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool above = false;
  bool below = false;
};

/// What a table says of one field, for forms and help texts: its key, what it means, the names a
/// text takes (empty: any) and the range of a number.
struct FieldDescription {
  std::string key;
  std::string description;
  std::vector<std::string> choices;
  NumberRange range;
};

namespace detail {
/// What a table throws while reading; `JsonFields::read` turns it into the table's own kind of
/// error (`Error` unless `errors_as` says otherwise).
struct FieldError : Error {
  using Error::Error;
};
}  // namespace detail

/// The fields of `T`, each written and read by its key. Reading throws `Error` with
/// "<where>: <key> ..." for a value of the wrong kind or outside its range.
template <class T>
class JsonFields {
 public:
  // What is read is ordered too: a caller's nlohmann::json converts to it.
  using Json = nlohmann::ordered_json;
  using OrderedJson = nlohmann::ordered_json;

  /// A number, a whole number, a flag, a text, a list of them or a map from names to them; numbers
  /// within `range`. A `std::optional` of one is written as null when it holds nothing.
  template <class M>
  JsonFields& field(const char* key, M T::*member, NumberRange range = {}) {
    auto choices = std::make_shared<Choices>();
    fields_.push_back(
        {key,
         [member](const T& t, OrderedJson& out, const char* k) { out[k] = json_value(t.*member); },
         [member, range, choices](T& t, const Json& value, const std::string& where) {
           auto read = read_value<M>(value, where, range);
           if constexpr (std::is_same_v<M, std::string>) check_choice(*choices, read, where);
           if constexpr (std::is_same_v<M, std::optional<std::string>>)
             if (read) check_choice(*choices, *read, where);
           t.*member = std::move(read);
         },
         range, choices});
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
                           refuse(where + " is not a name (" + names.joined() + ")");
                         const auto parsed = names.parse(value.get<std::string>());
                         if (!parsed)
                           refuse(where + " is '" + value.get<std::string>() + "', not one of " +
                                  names.joined());
                         t.*member = *parsed;
                       }});
    *fields_.back().choices = [&names] { return names.names(); };
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
                         t.*member = fields.read_fields(value, where, t.*member);
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
                         if (!value.is_array()) refuse(where + " is not a list");
                         std::vector<M> out;
                         for (std::size_t i = 0; i < value.size(); ++i)
                           out.push_back(
                               fields.read_fields(value[i], where + "[" + std::to_string(i) + "]"));
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
                           refuse(where + " is not '" + value + "'");
                       }});
    return *this;
  }
  /// A value kept elsewhere than one member (a member's member, a derived value): `get` gives
  /// what is written, `set` reads it (calling `refuse` for a wrong value; `where` names the key).
  JsonFields& computed(const char* key, std::function<OrderedJson(const T&)> get,
                       std::function<void(T&, const Json&, const std::string& where)> set) {
    fields_.push_back(
        {key,
         [get = std::move(get)](const T& t, OrderedJson& out, const char* k) { out[k] = get(t); },
         std::move(set)});
    return *this;
  }

  /// The last field added: what it means (a field with a description is one a user sets, listed
  /// by `described`).
  JsonFields& says(std::string description) {
    fields_.back().description = std::move(description);
    return *this;
  }
  /// The last field added (a text) takes only these names; `names` is asked anew each time, so a
  /// list that grows (plugins' mixers) stays current.
  JsonFields& choices(std::function<std::vector<std::string>()> names) {
    *fields_.back().choices = std::move(names);
    return *this;
  }
  /// The last field added is written only when `when` holds (a plugin's additions, so that the
  /// studio's own values write exactly as before they existed).
  JsonFields& written_if(std::function<bool(const T&)> when) {
    fields_.back().written_if = std::move(when);
    return *this;
  }
  /// The last field added must be in every file (when `yes`): one without it is refused
  /// ("<where>: <key> is missing").
  JsonFields& required(bool yes = true) {
    fields_.back().required = yes;
    return *this;
  }
  /// The last field added (a text) is written as null when empty, and null reads as the empty
  /// text: for files where null says "none".
  JsonFields& empty_as_null() {
    auto& f = fields_.back();
    f.write = [write = std::move(f.write)](const T& t, OrderedJson& out, const char* k) {
      write(t, out, k);
      if (out[k] == "") out[k] = nullptr;
    };
    f.read = [read = std::move(f.read)](T& t, const Json& value, const std::string& where) {
      read(t, value.is_null() ? Json("") : value, where);
    };
    return *this;
  }
  /// The last field added is checked by `check` once it is read, or found absent (so that two
  /// fields may require each other: a path and its hash); `check` calls `refuse` for a wrong
  /// value, and `where` names the key.
  JsonFields& checked(std::function<void(const T&, const std::string& where)> check) {
    fields_.back().check = std::move(check);
    return *this;
  }
  /// The last field added is read before the others, whatever its place in the order written: a
  /// value that another field's check names (the program that wrote a file, named when the file's
  /// version is refused).
  JsonFields& read_first() {
    fields_.back().first = true;
    return *this;
  }
  /// A key the table does not know is refused ("<where>: unknown key 'k'") rather than left
  /// alone: for settings a user writes, where a misspelt key must not pass unnoticed.
  JsonFields& refuse_unknown_keys() {
    refuse_unknown_ = true;
    return *this;
  }
  /// What `read` throws for a wrong value: `E` (constructed from the message) instead of Error.
  template <class E>
  JsonFields& errors_as() {
    fail_ = [](const std::string& message) { throw E(message); };
    return *this;
  }

  /// Throws the error every reader of a table throws for a wrong value; for `computed` setters.
  [[noreturn]] static void refuse(const std::string& message) { throw detail::FieldError(message); }

  /// `t` as a JSON object, keys in the table's order.
  [[nodiscard]] OrderedJson write(const T& t) const {
    OrderedJson out = OrderedJson::object();
    for (const auto& f : fields_)
      if (!f.written_if || f.written_if(t)) f.write(t, out, f.key);
    return out;
  }
  /// The object `j` read over `start` (whose values stay for keys `j` lacks). Keys the table does
  /// not know are left alone (a newer file still reads) unless `refuse_unknown_keys`. Throws
  /// Error (or `errors_as`'s kind) "<where>: <key> ...".
  [[nodiscard]] T read(const Json& j, const std::string& where, T start = T{}) const {
    try {
      return read_fields(j, where, std::move(start));
    } catch (const detail::FieldError& e) {
      if (fail_) fail_(e.what());
      throw Error(e.what());
    }
  }
  /// Throws as `read` would for the first value of `t` outside its field's range or choices.
  void check(const T& t, const std::string& where) const { (void)read(write(t), where, t); }
  /// The keys, in order.
  [[nodiscard]] std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) out.emplace_back(f.key);
    return out;
  }
  /// The fields that `says` describes, in order.
  [[nodiscard]] std::vector<FieldDescription> described() const {
    std::vector<FieldDescription> out;
    for (const auto& f : fields_)
      if (!f.description.empty())
        out.push_back({f.key, f.description,
                       *f.choices ? (*f.choices)() : std::vector<std::string>{}, f.range});
    return out;
  }

 private:
  template <class>
  friend class JsonFields;

  using Choices = std::function<std::vector<std::string>()>;
  struct Field {
    const char* key;
    std::function<void(const T&, OrderedJson&, const char*)> write;
    std::function<void(T&, const Json&, const std::string&)> read;
    NumberRange range{};
    // Shared with the field's reader, which checks a text against it (tables are copied).
    std::shared_ptr<Choices> choices = std::make_shared<Choices>();
    std::string description{};
    std::function<bool(const T&)> written_if{};
    bool required = false;
    bool first = false;
    std::function<void(const T&, const std::string&)> check{};
  };

  [[nodiscard]] T read_fields(const Json& j, const std::string& where, T start = T{}) const {
    if (!j.is_object()) refuse(where + ": not a JSON object");
    for (const auto& [key, value] : required_)
      if (!j.contains(key)) refuse(where + ": no " + key + " (not a '" + value + "' file)");
    if (refuse_unknown_)
      for (const auto& item : j.items())
        if (!has_key(item.key())) refuse(where + ": unknown key '" + item.key() + "'");
    for (const bool first : {true, false})
      for (const auto& f : fields_) {
        if (f.first != first) continue;
        const std::string at = where + ": " + f.key;
        if (const auto it = j.find(f.key); it != j.end())
          f.read(start, *it, at);
        else if (f.required)
          refuse(at + " is missing");
        if (f.check) f.check(start, at);
      }
    return start;
  }
  [[nodiscard]] bool has_key(const std::string& key) const {
    for (const auto& f : fields_)
      if (key == f.key) return true;
    return false;
  }
  static void check_choice(const Choices& choices, const std::string& value,
                           const std::string& where) {
    if (!choices) return;
    const auto names = choices();
    if (names.empty()) return;
    std::string known;
    for (const auto& n : names) {
      if (n == value) return;
      known += (known.empty() ? "" : ", ") + n;
    }
    refuse(where + " is '" + value + "', not one of " + known);
  }

  template <class M>
  static OrderedJson json_value(const M& value) {
    if constexpr (is_optional<M>::value) {
      return value ? OrderedJson(*value) : OrderedJson(nullptr);
    } else {
      return OrderedJson(value);
    }
  }

  template <class M>
  static M read_value(const Json& value, const std::string& where, const NumberRange& range) {
    if constexpr (is_optional<M>::value) {
      if (value.is_null()) return std::nullopt;
      return read_value<typename M::value_type>(value, where, range);
    } else if constexpr (std::is_same_v<M, bool>) {
      if (!value.is_boolean()) refuse(where + " is not true or false");
      return value.get<bool>();
    } else if constexpr (std::is_same_v<M, std::string>) {
      if (!value.is_string()) refuse(where + " is not a text");
      return value.get<std::string>();
    } else if constexpr (std::is_arithmetic_v<M>) {
      if (!value.is_number()) refuse(where + " is not a number");
      const double d = value.get<double>();
      if (!std::isfinite(d)) refuse(where + " is not a finite number");
      if constexpr (std::is_integral_v<M>) {
        if (value.is_number_float()) {
          // A whole number written as 1e5 is one; 2.5 is not, and nothing is cut to fit.
          if (std::floor(d) != d) refuse(where + " is not a whole number");
          if (d < static_cast<double>(std::numeric_limits<M>::min()))
            refuse(where + " is out of range");
          if (d >= std::ldexp(1.0, std::numeric_limits<M>::digits)) refuse(where + " is too large");
        } else if (value.is_number_unsigned()) {
          if (value.get<std::uint64_t>() >
              static_cast<std::uint64_t>(std::numeric_limits<M>::max()))
            refuse(where + " is too large");
        } else if (value.get<std::int64_t>() <
                       static_cast<std::int64_t>(std::numeric_limits<M>::min()) ||
                   (std::is_signed_v<M> &&
                    value.get<std::int64_t>() >
                        static_cast<std::int64_t>(std::numeric_limits<M>::max()))) {
          refuse(where + " is out of range");
        }
      }
      if (range.above ? !(d > range.min) : !(d >= range.min))
        refuse(where + " must be " + (range.above ? "above " : "at least ") +
               number_text(range.min) + " (is " + number_text(d) + ")");
      if (range.below ? !(d < range.max) : !(d <= range.max))
        refuse(where + " must be " + (range.below ? "below " : "at most ") +
               number_text(range.max) + " (is " + number_text(d) + ")");
      if constexpr (std::is_integral_v<M>)
        if (value.is_number_float()) return static_cast<M>(d);
      return value.get<M>();
    } else if constexpr (is_map<M>::value) {
      // Objects of named values of the kinds above.
      if (!value.is_object()) refuse(where + " is not a JSON object");
      M out;
      for (const auto& [k, v] : value.items())
        out.emplace(k, read_value<typename M::mapped_type>(v, where + "." + k, range));
      return out;
    } else {
      // Lists of the kinds above.
      using V = typename M::value_type;
      if (!value.is_array()) refuse(where + " is not a list");
      M out;
      for (std::size_t i = 0; i < value.size(); ++i)
        out.push_back(read_value<V>(value[i], where + "[" + std::to_string(i) + "]", range));
      return out;
    }
  }
  static std::string number_text(double d) { return exact_number(d); }
  template <class M>
  struct is_optional : std::false_type {};
  template <class V>
  struct is_optional<std::optional<V>> : std::true_type {};
  template <class M>
  struct is_map : std::false_type {};
  template <class V>
  struct is_map<std::map<std::string, V>> : std::true_type {};

  std::vector<Field> fields_;
  std::vector<std::pair<std::string, std::string>> required_;  // constants: key, value
  bool refuse_unknown_ = false;
  std::function<void(const std::string&)> fail_;
};

}  // namespace dstudio
