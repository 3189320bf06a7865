// The fields of the variant and training configurations. See config_fields.h.

#include "dstudio/models/config_fields.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>

#include "config_tables.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {
// A JSON value as a table shows it: numbers in their shortest text that reads back the same.
std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  if (v.is_number_float()) {
    const double x = v.get<double>();
    char text[40];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(text, sizeof text, "%.*g", digits, x);
      if (std::strtod(text, nullptr) == x) break;
    }
    return text;
  }
  return v.dump();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> run_config_values(const VariantConfig& variant,
                                                                   const TrainingConfig& training) {
  const auto v = nlohmann::json::parse(to_json(variant));
  const auto t = nlohmann::json::parse(to_json(training));
  std::vector<std::pair<std::string, std::string>> out;
  if (v.contains("variant")) out.emplace_back("variant", value_text(v["variant"]));
  for (const auto& f : variant_fields())
    if (v.contains(f.key) && uses_field(variant, f.key))
      out.emplace_back(f.key, value_text(v[f.key]));
  for (const auto& f : training_fields())
    if (t.contains(f.key)) out.emplace_back(f.key, value_text(t[f.key]));
  return out;
}

namespace {
std::vector<ConfigField> config_fields(const std::vector<FieldDescription>& described) {
  std::vector<ConfigField> out;
  for (const auto& d : described)
    out.push_back(
        {d.key, d.description, d.choices, d.range.min, d.range.above, d.range.max, d.range.below});
  return out;
}
}  // namespace

const std::vector<ConfigField>& variant_fields() {
  // Rebuilt when plugins add mixers (they load at start-up, before anything shows a form).
  static std::mutex mutex;
  static std::vector<ConfigField> fields;
  static std::vector<std::string> mixers;
  std::lock_guard lock(mutex);
  if (!fields.empty() && mixers == mixer_names()) return fields;
  mixers = mixer_names();
  fields = config_fields(variant_table().described());
  return fields;
}

const std::vector<ConfigField>& training_fields() {
  static const auto fields = config_fields(training_table().described());
  return fields;
}

std::string range_text(const ConfigField& f) {
  const auto text = [](double v) {
    if (v >= 9.2e18) return std::string("2^63 - 1");
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    return value_text(nlohmann::json(v));
  };
  // Appended piece by piece: GCC 12's -Wrestrict misreads `"(" + std::string` at -O3.
  std::string out;
  if (std::isfinite(f.minimum)) {
    out += f.above ? '(' : '[';
    out += text(f.minimum);
  } else {
    out += "(-inf";
  }
  out += ", ";
  out += std::isfinite(f.maximum) ? text(f.maximum) + (f.below ? ")" : "]") : "inf)";
  return out;
}

bool in_range(const ConfigField& f, double v) {
  if (std::isnan(v)) return false;
  if (f.above ? !(v > f.minimum) : v < f.minimum) return false;
  if (f.below ? !(v < f.maximum) : v > f.maximum) return false;
  return true;
}

const ConfigField* config_field(const std::string& key) {
  for (const auto* list : {&variant_fields(), &training_fields()})
    for (const auto& f : *list)
      if (f.key == key) return &f;
  return nullptr;
}

std::vector<std::string> hier_mergers() {
  std::vector<std::string> out{"none"};
  for (auto& m : merger_names()) out.push_back(std::move(m));
  return out;
}

std::vector<std::string> hier_mixers() {
  std::vector<std::string> out;
  for (const auto& m : mixer_registry().all())
    if (m->in_hier_grid) out.push_back(m->name);
  return out;
}

}  // namespace dstudio::models
