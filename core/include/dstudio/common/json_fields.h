#pragma once
/// \file
/// One description per serialised type. A `JsonFields<T>` table lists a type's fields once, each
/// with its key, its member and what values it takes; the table writes the type as a JSON object
/// (keys in the table's order), reads it back, checks every value and names the key of the first
/// that is wrong. A key missing from a file keeps the member's default, so files written before a
/// field existed still read (unless the table says the key is required). Objects are read in the
/// file's order, so that a free-form object kept as text (a sweep cell's overrides) keeps the order
/// of its keys. Enums are written by their names in an `EnumNames<E>` table (enum_names.h). Beyond
/// kinds and ranges a field may be required, left out when empty, hold texts of a `TextRule` or at
/// most so many items, or be checked by a function. No Qt, no LibTorch.

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

/// What a text read from a file may be: from `min` to `max` bytes long, on one line when
/// `one_line` (no '\n'), and never with a NUL character (no path or name holds one).
struct TextRule {
  std::size_t min = 0;
  std::size_t max = std::numeric_limits<std::size_t>::max();
  bool one_line = false;
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
  /// An enum written by its name in `names` (which must outlive the table); a `std::optional` of
  /// one is written as null when it holds nothing.
  template <class E>
  JsonFields& named(const char* key, E T::*member, const EnumNames<E>& names) {
    fields_.push_back({key,
                       [member, &names](const T& t, OrderedJson& out, const char* k) {
                         out[k] = names.name(t.*member);
                       },
                       [member, &names](T& t, const Json& value, const std::string& where) {
                         t.*member = name_of(value, where, names);
                       }});
    *fields_.back().choices = [&names] { return names.names(); };
    return *this;
  }
  template <class E>
  JsonFields& named(const char* key, std::optional<E> T::*member, const EnumNames<E>& names) {
    fields_.push_back({key,
                       [member, &names](const T& t, OrderedJson& out, const char* k) {
                         const auto& v = t.*member;
                         out[k] = v ? OrderedJson(names.name(*v)) : OrderedJson(nullptr);
                       },
                       [member, &names](T& t, const Json& value, const std::string& where) {
                         t.*member = value.is_null()
                                         ? std::optional<E>()
                                         : std::optional<E>(name_of(value, where, names));
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

  /// A `std::optional` of a value with a table of its own: the object, or null when it holds
  /// nothing. A file's object is read over the value held (the default when none).
  template <class M>
  JsonFields& object(const char* key, std::optional<M> T::*member, const JsonFields<M>& fields) {
    fields_.push_back({key,
                       [member, &fields](const T& t, OrderedJson& out, const char* k) {
                         const auto& v = t.*member;
                         out[k] = v ? fields.write(*v) : OrderedJson(nullptr);
                       },
                       [member, &fields](T& t, const Json& value, const std::string& where) {
                         if (value.is_null())
                           (t.*member).reset();
                         else
                           t.*member = fields.read_fields(value, where, (t.*member).value_or(M{}));
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
  /// The last field added is in every file: one without it is refused ("<where>: no <key>", with
  /// `why` after it in brackets when given). Given `when`, only in a file whose values, once read,
  /// make `when` hold (a key that one value of another calls for).
  JsonFields& required(std::string why = {}, std::function<bool(const T&)> when = {}) {
    fields_.back().required = std::move(why);
    fields_.back().required_when = std::move(when);
    return *this;
  }
  /// The last field added is required (as `required()`) when `yes`: for tables made for several
  /// kinds of file, of which only some must hold the key.
  JsonFields& required_if(bool yes) {
    if (yes) required();
    return *this;
  }
  /// The last field added is written only when it holds something: a null (an empty optional),
  /// an empty text or an empty list is left out (an object is always written). A file never
  /// holds null for it, so a null read is refused.
  JsonFields& omitted_when_empty() {
    fields_.back().omitted_when_empty = true;
    return before_read([](const Json& value, const std::string& where) {
      if (value.is_null()) refuse(where + " is null");
    });
  }
  /// The texts of the last field added (a text, or the texts of a list or a map) are of `rule`.
  JsonFields& text(TextRule rule) {
    return after_read([rule](T&, const Json& value, const std::string& where) {
      check_texts(value, where, rule);
    });
  }
  /// The last field added (a list) holds at most `n` items; a longer one is refused before any
  /// item is read.
  JsonFields& at_most(std::size_t n) {
    return before_read([n](const Json& value, const std::string& where) {
      if (value.is_array() && value.size() > n)
        refuse(where + " has " + std::to_string(value.size()) + " items, at most " +
               std::to_string(n));
    });
  }
  /// Once the last field added is read, or found absent, `check` sees what is read so far (this
  /// field and those before it) with the field's `where`, and calls `refuse` for a value that the
  /// kinds, ranges and rules above do not describe: a text's pattern, one field against an earlier
  /// one, two fields that require each other (a path and its hash).
  JsonFields& checked(std::function<void(const T&, const std::string& where)> check) {
    auto& slot = fields_.back().check;
    if (slot)
      slot = [first = std::move(slot), then = std::move(check)](const T& t, const std::string& w) {
        first(t, w);
        then(t, w);
      };
    else
      slot = std::move(check);
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
    for (const auto& f : fields_) {
      if (f.written_if && !f.written_if(t)) continue;
      f.write(t, out, f.key);
      if (f.omitted_when_empty && holds_nothing(out[f.key])) out.erase(f.key);
    }
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
    std::optional<std::string> required{};  // why, when the key must be in a file
    std::function<bool(const T&)> required_when{};
    bool omitted_when_empty = false;
    bool first = false;
    std::function<void(const T&, const std::string&)> check{};
  };

  [[nodiscard]] T read_fields(const Json& j, const std::string& where, T start = T{}) const {
    if (!j.is_object()) refuse(where + ": not a JSON object");
    for (const auto& [key, value] : required_)
      if (!j.contains(key)) refuse(where + ": no " + key + " (not a '" + value + "' file)");
    for (const auto& f : fields_)
      if (f.required && !f.required_when && !j.contains(f.key)) refuse(missing(f, where));
    if (refuse_unknown_)
      for (const auto& item : j.items())
        if (!has_key(item.key())) refuse(where + ": unknown key '" + item.key() + "'");
    for (const bool first : {true, false})
      for (const auto& f : fields_) {
        if (f.first != first) continue;
        const std::string at = where + ": " + f.key;
        if (const auto it = j.find(f.key); it != j.end()) f.read(start, *it, at);
        if (f.check) f.check(start, at);
      }
    for (const auto& f : fields_)
      if (f.required_when && !j.contains(f.key) && f.required_when(start))
        refuse(missing(f, where));
    return start;
  }
  static std::string missing(const Field& f, const std::string& where) {
    return where + ": no " + f.key + (f.required->empty() ? "" : " (" + *f.required + ")");
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
    refuse(where + " is '" + shown(value) + "', not one of " + known);
  }
  template <class E>
  static E name_of(const Json& value, const std::string& where, const EnumNames<E>& names) {
    if (!value.is_string()) refuse(where + " is not a name (" + names.joined() + ")");
    const auto parsed = names.parse(value.get<std::string>());
    if (!parsed)
      refuse(where + " is '" + shown(value.get<std::string>()) + "', not one of " + names.joined());
    return *parsed;
  }
  // A text from a file as a message shows it: a long one is cut (at a UTF-8 character's start),
  // so that a file cannot make a message too long to show.
  static std::string shown(const std::string& text) {
    constexpr std::size_t kShown = 40;
    if (text.size() <= kShown) return text;
    std::size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
    return text.substr(0, cut) + "...";
  }
  static void check_texts(const Json& value, const std::string& where, const TextRule& rule) {
    if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i)
        check_texts(value[i], where + "[" + std::to_string(i) + "]", rule);
    } else if (value.is_object()) {
      for (const auto& [k, v] : value.items()) check_texts(v, where + "." + k, rule);
    } else if (value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      if (text.size() < rule.min)
        refuse(where + (text.empty() ? std::string(" is empty")
                                     : " is " + std::to_string(text.size()) +
                                           " bytes long, at least " + std::to_string(rule.min)));
      if (text.size() > rule.max)
        refuse(where + " is " + std::to_string(text.size()) + " bytes long, at most " +
               std::to_string(rule.max));
      if (text.find('\0') != std::string::npos) refuse(where + " holds a NUL character");
      if (rule.one_line && text.find('\n') != std::string::npos)
        refuse(where + " is more than one line");
    }
  }
  static bool holds_nothing(const OrderedJson& value) {
    return value.is_null() || (value.is_string() && value.get_ref<const std::string&>().empty()) ||
           (value.is_array() && value.empty());
  }
  // The last field's read, with a check of the file's value before it or of the result after it.
  JsonFields& before_read(std::function<void(const Json&, const std::string&)> check) {
    auto& slot = fields_.back().read;
    slot = [check = std::move(check), inner = std::move(slot)](T& t, const Json& value,
                                                               const std::string& where) {
      check(value, where);
      inner(t, value, where);
    };
    return *this;
  }
  JsonFields& after_read(std::function<void(T&, const Json&, const std::string&)> check) {
    auto& slot = fields_.back().read;
    slot = [check = std::move(check), inner = std::move(slot)](T& t, const Json& value,
                                                               const std::string& where) {
      inner(t, value, where);
      check(t, value, where);
    };
    return *this;
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
  // Whole numbers in full ("1000000", not "1e+06"): a range's bounds are mostly counts.
  static std::string number_text(double d) {
    if (std::floor(d) == d && std::fabs(d) <= std::ldexp(1.0, 53))
      return std::to_string(static_cast<std::int64_t>(d));
    return exact_number(d);
  }
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
