// run.json. See run_description.h.

#include "dstudio/models/run_description.h"

#include <nlohmann/json.hpp>

#include "dstudio/common/json_fields.h"

namespace dstudio::models {
namespace {

using nlohmann::ordered_json;
using R = RunDescription;

// A configuration, written by its own table and read by it; one that does not read is left out.
template <class C>
void add_configuration(JsonFields<R>& t, const char* key, std::optional<C> R::*member,
                       std::string (*write)(const C&), C (*read)(const std::string&)) {
  t.computed(
       key,
       [member, write](const R& r) {
         return (r.*member) ? ordered_json::parse(write(*(r.*member))) : ordered_json(nullptr);
       },
       [member, read](R& r, const ordered_json& v, const std::string&) {
         try {
           r.*member = read(v.dump());
         } catch (const std::exception&) {
           (r.*member).reset();  // named and labelled all the same; the runs table leaves it blank
         }
       })
      .written_if([member](const R& r) { return (r.*member).has_value(); });
}

struct DatasetPart {
  std::string path, fingerprint;
};

const JsonFields<DatasetPart>& dataset_fields() {
  static const auto fields = [] {
    JsonFields<DatasetPart> t;
    t.field("path", &DatasetPart::path).field("fingerprint", &DatasetPart::fingerprint);
    return t;
  }();
  return fields;
}

const JsonFields<R>& run_fields() {
  static const auto fields = [] {
    JsonFields<R> t;
    t.field("label", &R::label).required("not a run's description");
    add_configuration<VariantConfig>(t, "variant", &R::variant, &to_json, &variant_from_json);
    add_configuration<TrainingConfig>(t, "training", &R::training, &to_json, &training_from_json);
    t.computed(
         "dataset",
         [](const R& r) {
           return dataset_fields().write({r.dataset_path, r.dataset_fingerprint});
         },
         [](R& r, const ordered_json& v, const std::string& where) {
           auto d = dataset_fields().read(v, where);
           r.dataset_path = std::move(d.path);
           r.dataset_fingerprint = std::move(d.fingerprint);
         })
        .field("evaluation_episodes", &R::evaluation_episodes, {0});
    return t;
  }();
  return fields;
}

}  // namespace

std::string run_description_text(const RunDescription& run) {
  return run_fields().write(run).dump(2) + "\n";
}

RunDescription read_run_description(const std::string& text, const std::string& where) {
  const auto j = ordered_json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(where + ": not JSON");
  RunDescription run = run_fields().read(j, where);
  run.training_given = j.contains("training") && j["training"].is_object();
  return run;
}

}  // namespace dstudio::models
