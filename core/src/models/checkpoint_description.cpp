// The description a checkpoint holds, written and read by one table. See checkpoint_description.h.

#include "dstudio/models/checkpoint_description.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "dstudio/common/json_fields.h"
#include "dstudio/common/random_fields.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {

using nlohmann::ordered_json;

constexpr const char* kCheckpointFormat = "dstudio-checkpoint-1";

// Everything a description says: the facts of CheckpointInfo (its members, flattened at the top
// level as before), the trainer's streams or the weights' origin.
struct Description : CheckpointInfo {
  std::optional<Random::State> sampler_random;
  std::optional<std::vector<RandomStreamState>> dropout_streams;
  std::string origin;
};
using D = Description;

// A member of CheckpointInfo as one of Description, for the table.
template <class M>
M D::*in_info(M CheckpointInfo::*member) {
  return static_cast<M D::*>(member);
}

// The dataset's part, an object of its own in the description.
struct DescribedDataset {
  std::string path, fingerprint, env_id;
  std::vector<float> state_mean, state_std;
};

// A float's range, checked before the conversion (a double outside it is undefined behaviour in
// the conversion, not merely a wrong value).
constexpr NumberRange kFloats{-std::numeric_limits<float>::max(),
                              std::numeric_limits<float>::max()};

const JsonFields<DescribedDataset>& dataset_fields() {
  static const auto fields = [] {
    using S = DescribedDataset;
    JsonFields<S> t;
    t.field("path", &S::path)
        .required()
        .field("fingerprint", &S::fingerprint)
        .required()
        .field("env_id", &S::env_id)
        .required()
        .field("state_mean", &S::state_mean, kFloats)
        .required()
        .field("state_std", &S::state_std, kFloats)
        .required();
    return t;
  }();
  return fields;
}

const JsonFields<RandomStreamState>& stream_fields() {
  static const auto fields = [] {
    using S = RandomStreamState;
    JsonFields<S> t;
    t.field("key", &S::key).required().field("counter", &S::counter).required();
    return t;
  }();
  return fields;
}

// A configuration is written by its own table (to_json) and read by it (from_json): here only as a
// nested object.
template <class C>
void add_configuration(JsonFields<D>& t, const char* key, C CheckpointInfo::*member,
                       std::string (*write)(const C&), C (*read)(const std::string&)) {
  t.computed(
       key, [member, write](const D& d) { return ordered_json::parse(write(d.*member)); },
       [member, read](D& d, const ordered_json& v, const std::string& where) {
         if (!v.is_object()) JsonFields<D>::refuse(where + " is not a JSON object");
         try {
           d.*member = read(v.dump());
         } catch (const MissingPluginError&) {
           throw;
         } catch (const Error& e) {
           JsonFields<D>::refuse(where + ": " + e.what());
         }
       })
      .required();
}

const JsonFields<D>& description_fields() {
  static const auto fields = [] {
    JsonFields<D> t;
    t.constant("format", kCheckpointFormat);
    add_configuration<VariantConfig>(t, "variant", &CheckpointInfo::variant, &to_json,
                                     &variant_from_json);
    add_configuration<TrainingConfig>(t, "training", &CheckpointInfo::training, &to_json,
                                      &training_from_json);
    t.computed(
         "dataset",
         [](const D& d) {
           return dataset_fields().write(
               {d.dataset_path, d.dataset_fingerprint, d.env_id, d.state_mean, d.state_std});
         },
         [](D& d, const ordered_json& v, const std::string& where) {
           auto s = dataset_fields().read(v, where);
           d.dataset_path = std::move(s.path);
           d.dataset_fingerprint = std::move(s.fingerprint);
           d.env_id = std::move(s.env_id);
           d.state_mean = std::move(s.state_mean);
           d.state_std = std::move(s.state_std);
         })
        .required()
        .field("rtg_scale", in_info(&CheckpointInfo::rtg_scale), {0.0, 1e300, /*above=*/true})
        .required()
        .field("step", in_info(&CheckpointInfo::step), {0})
        .required()
        .object("sampler_random", &D::sampler_random, random_state_fields())
        .omitted_when_empty()
        .computed(
            "dropout_streams",
            [](const D& d) {
              auto list = ordered_json::array();
              for (const auto& s : d.dropout_streams.value_or(std::vector<RandomStreamState>{}))
                list.push_back(stream_fields().write(s));
              return list;
            },
            [](D& d, const ordered_json& v, const std::string& where) {
              if (!v.is_array()) JsonFields<D>::refuse(where + " is not a list");
              d.dropout_streams.emplace();
              for (std::size_t i = 0; i < v.size(); ++i)
                d.dropout_streams->push_back(
                    stream_fields().read(v[i], where + "[" + std::to_string(i) + "]"));
            })
        .written_if([](const D& d) { return d.dropout_streams.has_value(); })
        .computed(
            "metrics",
            [](const D& d) {
              return d.metrics.empty() ? ordered_json::object() : ordered_json::parse(d.metrics);
            },
            [](D& d, const ordered_json& v, const std::string& where) {
              if (!v.is_object()) JsonFields<D>::refuse(where + " is not a JSON object");
              d.metrics = v.dump();
            })
        .required()
        .field("software", in_info(&CheckpointInfo::software))
        .required()
        // Weights from elsewhere say where they came from; a trainer's checkpoint is its run's.
        .field("origin", &D::origin)
        .written_if([](const D& d) { return !d.sampler_random; });
    return t;
  }();
  return fields;
}

Description read_description(const std::string& where, const std::string& json_text) {
  const auto j = ordered_json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("format") || !j["format"].is_string() ||
      j["format"] != kCheckpointFormat)
    throw CheckpointError(where + ": not a Decision Studio checkpoint (no description inside)");
  try {
    return description_fields().read(j, where + ": its description");
  } catch (const MissingPluginError& e) {
    throw CheckpointError(where + ": " + e.what());
  } catch (const Error& e) {
    throw CheckpointError(e.what());
  }
}

}  // namespace

CheckpointInfo checkpoint_info_from_description(const std::string& where,
                                                const std::string& json_text) {
  CheckpointInfo info = read_description(where, json_text);
  info.path = where;
  std::string problem;
  const auto dims = static_cast<std::size_t>(std::max(info.variant.state_dim, 0));
  if (info.state_mean.size() != dims || info.state_std.size() != dims)
    problem = "it holds " + std::to_string(info.state_mean.size()) + " state means and " +
              std::to_string(info.state_std.size()) + " standard deviations for " +
              std::to_string(dims) + " state dimensions";
  for (std::size_t i = 0; problem.empty() && i < info.state_std.size(); ++i)
    if (!(info.state_std[i] > 0.0F))
      problem = "state standard deviation " + std::to_string(i) + " is not positive";
  if (!problem.empty())
    throw CheckpointError(where + ": its description is inconsistent: " + problem);
  return info;
}

std::string checkpoint_description_text(const CheckpointInfo& info,
                                        const std::optional<TrainerState>& trainer,
                                        const std::string& origin) {
  Description d;
  static_cast<CheckpointInfo&>(d) = info;
  if (trainer) {
    d.sampler_random = trainer->sampler;
    d.dropout_streams = trainer->dropout_streams;
  }
  d.origin = origin;
  return description_fields().write(d).dump();
}

DescriptionExtras description_extras(const std::string& where, const std::string& json_text) {
  const Description d = read_description(where, json_text);
  DescriptionExtras extras;
  if (d.sampler_random) extras.trainer = TrainerState{*d.sampler_random, d.dropout_streams};
  extras.origin = d.origin;
  return extras;
}

}  // namespace dstudio::models
