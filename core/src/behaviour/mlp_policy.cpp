#include "dstudio/behaviour/mlp_policy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "dstudio/common/base64.h"
#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {
namespace {

constexpr std::string_view kFormat = "dstudio-mlp-policy-1";
// Wider than any policy this reads; a bound on what a damaged file can make us allocate.
constexpr int kMaxWidth = 65536;

// y = W x + b for torch's (out, in) weight. Each output's sum runs over the inputs in order, in
// double, and is rounded to float once: torch rounds each product and partial sum to float in an
// order its BLAS chooses, so neither is bit-identical to the other, but this one is the same on
// every machine and closer to the exact value.
void linear(const MlpLayer& layer, const float* x, float* y) {
  for (int o = 0; o < layer.out; ++o) {
    const float* w = &layer.weight[static_cast<std::size_t>(o) * layer.in];
    double sum = layer.bias[o];
    for (int i = 0; i < layer.in; ++i) sum += static_cast<double>(w[i]) * x[i];
    y[o] = static_cast<float>(sum);
  }
}

std::string index_name(const std::string& what, std::size_t i) {
  return what + "[" + std::to_string(i) + "]";
}

void check_finite(const std::vector<float>& values, const std::string& what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) throw Error(index_name(what, i) + " is not finite");
}

void check_size(const std::vector<float>& values, const std::string& what, int expected,
                const std::string& expected_name) {
  if (values.size() != static_cast<std::size_t>(expected))
    throw Error(what + " has " + std::to_string(values.size()) + " values, expected " +
                expected_name + " = " + std::to_string(expected));
}

const nlohmann::json& field(const nlohmann::json& j, const std::string& key,
                            const std::string& within = "") {
  const auto it = j.find(key);
  if (it == j.end()) throw Error("no \"" + key + "\"" + within);
  return *it;
}

int integer(const nlohmann::json& j, const std::string& key, const std::string& within = "") {
  const auto& v = field(j, key, within);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMaxWidth)
    throw Error("\"" + key + "\"" + within + " is not a whole number from 1 to " +
                std::to_string(kMaxWidth));
  return v.get<int>();
}

std::string text(const nlohmann::json& j, const std::string& key) {
  const auto& v = field(j, key);
  if (!v.is_string()) throw Error("\"" + key + "\" is not a string");
  return v.get<std::string>();
}

// A JSON array of numbers, each narrowed to float: the converter writes each float32 as the double
// equal to it, so the narrowing is exact.
std::vector<float> numbers(const nlohmann::json& j, const std::string& key) {
  const auto& v = field(j, key);
  if (!v.is_array()) throw Error("\"" + key + "\" is not an array of numbers");
  std::vector<float> out;
  out.reserve(v.size());
  for (const auto& x : v) {
    if (!x.is_number()) throw Error(index_name(key, out.size()) + " is not a number");
    out.push_back(static_cast<float>(x.get<double>()));
  }
  return out;
}

// Base64 of little-endian float32: `count` of them, exactly.
std::vector<float> floats(const nlohmann::json& layer, const std::string& key, std::size_t count,
                          const std::string& name) {
  const auto& v = field(layer, key, " in " + name);
  if (!v.is_string()) throw Error(name + " " + key + " is not base64 text");
  std::vector<std::uint8_t> bytes;
  try {
    bytes = base64_decode(v.get<std::string>());
  } catch (const Error& e) {
    throw Error(name + " " + key + ": " + e.what());
  }
  if (bytes.size() != 4 * count)
    throw Error(name + " " + key + " holds " + std::to_string(bytes.size()) + " bytes, expected " +
                std::to_string(count) + " float32 = " + std::to_string(4 * count));
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint8_t* b = &bytes[4 * i];
    out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(b[0]) | std::uint32_t{b[1]} << 8 |
                                  std::uint32_t{b[2]} << 16 | std::uint32_t{b[3]} << 24);
  }
  return out;
}

MlpPolicy from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("not a JSON object");
  const auto format = j.find("format");
  if (format == j.end() || !format->is_string() || format->get<std::string>() != kFormat)
    throw Error("not an MLP policy: \"format\" is " +
                (format == j.end() ? std::string("missing") : format->dump()) + ", expected \"" +
                std::string(kFormat) + "\"");
  MlpPolicy p;
  p.task = text(j, "task");
  p.source = text(j, "source");
  p.obs_dim = integer(j, "obs_dim");
  p.act_dim = integer(j, "act_dim");
  p.nonlinearity = text(j, "nonlinearity");
  p.in_shift = numbers(j, "in_shift");
  p.in_scale = numbers(j, "in_scale");
  p.out_shift = numbers(j, "out_shift");
  p.out_scale = numbers(j, "out_scale");
  p.log_std = numbers(j, "log_std");
  const auto& layers = field(j, "layers");
  if (!layers.is_array()) throw Error("\"layers\" is not an array");
  for (const auto& l : layers) {
    const std::string name = "layer " + std::to_string(p.layers.size());
    if (!l.is_object()) throw Error(name + " is not an object");
    MlpLayer layer;
    layer.in = integer(l, "in", " in " + name);
    layer.out = integer(l, "out", " in " + name);
    layer.weight = floats(l, "weight", static_cast<std::size_t>(layer.in) * layer.out, name);
    layer.bias = floats(l, "bias", static_cast<std::size_t>(layer.out), name);
    p.layers.push_back(std::move(layer));
  }
  p.validate();
  return p;
}

}  // namespace

void MlpPolicy::distribution(std::span<const float> obs, std::span<float> mean,
                             std::span<float> log_std_out) const {
  if (obs.size() != static_cast<std::size_t>(obs_dim) ||
      mean.size() != static_cast<std::size_t>(act_dim) ||
      log_std_out.size() != static_cast<std::size_t>(act_dim))
    throw Error("the " + task + " policy takes " + std::to_string(obs_dim) +
                " observations and gives " + std::to_string(act_dim) + " actions, not " +
                std::to_string(obs.size()) + " and " + std::to_string(mean.size()));
  // Reused per thread: an expert rollout calls this a million times.
  thread_local std::vector<float> a, b;
  std::size_t widest = static_cast<std::size_t>(obs_dim);
  for (const auto& l : layers) widest = std::max(widest, static_cast<std::size_t>(l.out));
  a.resize(widest);
  b.resize(widest);
  // Two float32 operations, as torch does them: the epsilon is added to the scale first.
  for (int i = 0; i < obs_dim; ++i)
    a[i] = (obs[i] - in_shift[i]) / (in_scale[i] + kMlpInScaleEpsilon);
  const bool relu = nonlinearity == "relu";
  for (std::size_t k = 0; k < layers.size(); ++k) {
    linear(layers[k], a.data(), b.data());
    if (k + 1 < layers.size())
      for (int o = 0; o < layers[k].out; ++o) b[o] = relu ? std::max(b[o], 0.0f) : std::tanh(b[o]);
    std::swap(a, b);
  }
  for (int j = 0; j < act_dim; ++j) {
    const float scaled = a[j] * out_scale[j];  // rounded to float before the shift, as in torch
    mean[j] = scaled + out_shift[j];
    log_std_out[j] = log_std[j];
  }
}

void MlpPolicy::act(std::span<const float> obs, std::span<float> action) const {
  thread_local std::vector<float> unused;
  unused.resize(static_cast<std::size_t>(act_dim));
  distribution(obs, action, unused);
}

void MlpPolicy::sample(std::span<const float> obs, std::span<float> action, Random& random) const {
  act(obs, action);
  // mjrl adds float64 noise, np.exp(log_std_val) * np.random.randn(m), to the float32 mean.
  for (int j = 0; j < act_dim; ++j)
    action[j] = static_cast<float>(static_cast<double>(action[j]) +
                                   std::exp(static_cast<double>(log_std[j])) * random.normal());
}

void MlpPolicy::validate() const {
  if (obs_dim < 1 || act_dim < 1 || obs_dim > kMaxWidth || act_dim > kMaxWidth)
    throw Error("obs_dim and act_dim must be from 1 to " + std::to_string(kMaxWidth) + ", not " +
                std::to_string(obs_dim) + " and " + std::to_string(act_dim));
  if (nonlinearity != "tanh" && nonlinearity != "relu")
    throw Error("the nonlinearity \"" + nonlinearity + "\" is neither tanh nor relu");
  check_size(in_shift, "in_shift", obs_dim, "obs_dim");
  check_size(in_scale, "in_scale", obs_dim, "obs_dim");
  check_size(out_shift, "out_shift", act_dim, "act_dim");
  check_size(out_scale, "out_scale", act_dim, "act_dim");
  check_size(log_std, "log_std", act_dim, "act_dim");
  check_finite(in_shift, "in_shift");
  check_finite(in_scale, "in_scale");
  check_finite(out_shift, "out_shift");
  check_finite(out_scale, "out_scale");
  check_finite(log_std, "log_std");
  for (std::size_t i = 0; i < in_scale.size(); ++i)
    // mjrl's epsilon keeps a 0 from dividing by zero, but it multiplies that input by 1e8: no
    // trained policy has it, a damaged file may.
    if (in_scale[i] == 0.0f || in_scale[i] + kMlpInScaleEpsilon == 0.0f)
      throw Error(index_name("in_scale", i) + " is 0, and the observation is divided by it");
  if (layers.empty()) throw Error("no layers");
  int width = obs_dim;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const auto& l = layers[k];
    const std::string name = "layer " + std::to_string(k);
    if (l.in != width)
      throw Error(name + " takes " + std::to_string(l.in) + " inputs, but " +
                  (k == 0 ? "obs_dim is " : "layer " + std::to_string(k - 1) + " gives ") +
                  std::to_string(width));
    if (l.out < 1 || l.out > kMaxWidth)
      throw Error(name + " has " + std::to_string(l.out) + " outputs");
    if (l.weight.size() != static_cast<std::size_t>(l.in) * static_cast<std::size_t>(l.out))
      throw Error(name + " has " + std::to_string(l.weight.size()) + " weights, expected " +
                  std::to_string(l.out) + " x " + std::to_string(l.in));
    if (l.bias.size() != static_cast<std::size_t>(l.out))
      throw Error(name + " has " + std::to_string(l.bias.size()) + " biases, expected " +
                  std::to_string(l.out));
    check_finite(l.weight, name + " weight");
    check_finite(l.bias, name + " bias");
    width = l.out;
  }
  if (width != act_dim)
    throw Error("the last layer gives " + std::to_string(width) + " outputs, but act_dim is " +
                std::to_string(act_dim));
}

MlpPolicy mlp_policy_from_json_text(std::string_view text, const std::string& where) {
  try {
    return from_json(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not JSON: " + e.what());
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

MlpPolicy shipped_dapg_policy(std::string_view task) {
  const auto& spec = env::task(task);
  const std::string path = "policies/" + spec.name + "-dapg.json";
  const auto text = embedded_resource(path);
  if (!text)
    throw Error("no DAPG expert policy ships for " + spec.name +
                " (they ship for D4RL's Adroit tasks: pen, door, hammer and relocate)");
  auto policy = mlp_policy_from_json_text(*text, "resources/" + path);
  if (policy.task != spec.name || policy.obs_dim != spec.obs_dim || policy.act_dim != spec.act_dim)
    throw Error("resources/" + path + " is a policy for " + policy.task + " with " +
                std::to_string(policy.obs_dim) + " observations and " +
                std::to_string(policy.act_dim) + " actions; " + spec.name + " has " +
                std::to_string(spec.obs_dim) + " and " + std::to_string(spec.act_dim));
  return policy;
}

}  // namespace dstudio::behaviour
