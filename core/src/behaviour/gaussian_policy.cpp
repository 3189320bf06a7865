#include "dstudio/behaviour/gaussian_policy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "dstudio/common/base64.h"
#include "dstudio/common/error.h"
#include "dstudio/common/json_fields.h"
#include "policy_json.h"

namespace dstudio::behaviour {
namespace {

// y = W x + b, accumulated input by input so the order of additions never depends on how the
// compiler vectorises the loop over outputs.
void dense(const DenseLayer& layer, const float* x, float* y) {
  std::copy(layer.bias.begin(), layer.bias.end(), y);
  for (int i = 0; i < layer.in; ++i) {
    const float xi = x[i];
    const float* w = &layer.weight[static_cast<std::size_t>(i) * layer.out];
    for (int o = 0; o < layer.out; ++o) y[o] += w[o] * xi;
  }
}

std::string halves(const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes(values.size() * 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t h = float_to_half(values[i]);
    bytes[2 * i] = static_cast<std::uint8_t>(h & 0xFF);
    bytes[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
  }
  return base64_encode(bytes);
}

std::vector<float> from_halves(const std::string& text, std::size_t count,
                               const std::string& what) {
  const auto bytes = base64_decode(text);
  if (bytes.size() != 2 * count)
    JsonFields<DenseLayer>::refuse(what + " holds " + std::to_string(bytes.size() / 2) +
                                   " values, expected " + std::to_string(count));
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = half_to_float(static_cast<std::uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8)));
  return out;
}

}  // namespace

std::int64_t GaussianPolicy::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& l : layers) n += static_cast<std::int64_t>(l.weight.size() + l.bias.size());
  return n;
}

void GaussianPolicy::distribution(std::span<const float> obs, std::span<float> mean,
                                  std::span<float> log_std) const {
  // Two buffers on the stack side of the heap: hidden layers are a few hundred units.
  thread_local std::vector<float> a, b;
  std::size_t widest = static_cast<std::size_t>(obs_dim);
  for (const auto& l : layers) widest = std::max(widest, static_cast<std::size_t>(l.out));
  a.resize(widest);
  b.resize(widest);
  std::copy(obs.begin(), obs.begin() + obs_dim, a.begin());
  for (std::size_t k = 0; k < layers.size(); ++k) {
    dense(layers[k], a.data(), b.data());
    if (k + 1 < layers.size())
      for (int o = 0; o < layers[k].out; ++o) b[o] = std::max(b[o], 0.0f);
    std::swap(a, b);
  }
  for (int j = 0; j < act_dim; ++j) {
    mean[j] = a[j];
    log_std[j] = std::clamp(a[act_dim + j], kLogStdMin, kLogStdMax);
  }
}

void GaussianPolicy::act(std::span<const float> obs, std::span<float> action) const {
  float mean[64], log_std[64];
  distribution(obs, {mean, static_cast<std::size_t>(act_dim)},
               {log_std, static_cast<std::size_t>(act_dim)});
  for (int j = 0; j < act_dim; ++j) action[j] = std::tanh(mean[j]);
}

void GaussianPolicy::sample(std::span<const float> obs, std::span<float> action,
                            Random& random) const {
  float mean[64], log_std[64];
  distribution(obs, {mean, static_cast<std::size_t>(act_dim)},
               {log_std, static_cast<std::size_t>(act_dim)});
  for (int j = 0; j < act_dim; ++j)
    action[j] = std::tanh(mean[j] + std::exp(log_std[j]) * static_cast<float>(random.normal()));
}

void GaussianPolicy::validate() const {
  if (obs_dim < 1 || act_dim < 1 || act_dim > 64)
    throw Error("a Gaussian policy needs 1 to 64 action dimensions and observations");
  if (layers.empty()) throw Error("a Gaussian policy needs at least one layer");
  int width = obs_dim;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const auto& l = layers[k];
    const std::string name = "layer " + std::to_string(k);
    if (l.in != width)
      throw Error(name + " takes " + std::to_string(l.in) + " inputs, expected " +
                  std::to_string(width));
    if (l.out < 1) throw Error(name + " has no outputs");
    if (l.weight.size() != static_cast<std::size_t>(l.in) * l.out ||
        l.bias.size() != static_cast<std::size_t>(l.out))
      throw Error(name + " has weights of the wrong size");
    width = l.out;
  }
  if (width != 2 * act_dim)
    throw Error("the last layer has " + std::to_string(width) + " outputs, expected 2 x " +
                std::to_string(act_dim));
}

GaussianPolicy zero_gaussian_policy(int obs_dim, int act_dim, const std::vector<int>& hidden) {
  GaussianPolicy p;
  p.obs_dim = obs_dim;
  p.act_dim = act_dim;
  int in = obs_dim;
  auto add = [&](int out) {
    p.layers.push_back({in, out, std::vector<float>(static_cast<std::size_t>(in) * out, 0.0f),
                        std::vector<float>(static_cast<std::size_t>(out), 0.0f)});
    in = out;
  };
  for (int h : hidden) add(h);
  add(2 * act_dim);
  return p;
}

std::uint16_t float_to_half(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u)
    return static_cast<std::uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): value = m * 2^-24, rounded to nearest even.
    if (abs < 0x33000000u)
      return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    const int exponent = static_cast<int>(abs >> 23);
    const std::uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const int shift = 126 - exponent;  // 2^(e-127) * 1.m = m24 * 2^(e-150); half unit is 2^-24
    std::uint32_t h = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  // Normal: rebias the exponent and round the mantissa from 23 to 10 bits.
  std::uint32_t h = ((abs >> 13) - (112u << 10));
  const std::uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1Fu, mantissa = half & 0x3FFu;
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

void round_to_half(GaussianPolicy& policy) {
  for (auto& l : policy.layers) {
    for (auto& w : l.weight) w = half_to_float(float_to_half(w));
    for (auto& b : l.bias) b = half_to_float(float_to_half(b));
  }
}

namespace {

// A layer's weights and biases as half floats in base64, read once its shape is.
const JsonFields<DenseLayer>& layer_fields() {
  static const auto fields = [] {
    using L = DenseLayer;
    JsonFields<L> t;
    t.field("in", &L::in, {1, 65536})
        .required()
        .field("out", &L::out, {1, 65536})
        .required()
        .computed(
            "weight_f16", [](const L& l) { return nlohmann::ordered_json(halves(l.weight)); },
            [](L& l, const nlohmann::ordered_json& v, const std::string& where) {
              if (!v.is_string()) JsonFields<L>::refuse(where + " is not a text");
              l.weight =
                  from_halves(v.get<std::string>(), static_cast<std::size_t>(l.in) * l.out, where);
            })
        .required()
        .computed(
            "bias_f16", [](const L& l) { return nlohmann::ordered_json(halves(l.bias)); },
            [](L& l, const nlohmann::ordered_json& v, const std::string& where) {
              if (!v.is_string()) JsonFields<L>::refuse(where + " is not a text");
              l.bias = from_halves(v.get<std::string>(), static_cast<std::size_t>(l.out), where);
            })
        .required();
    return t;
  }();
  return fields;
}

const JsonFields<GaussianPolicy>& policy_fields() {
  static const auto fields = [] {
    using P = GaussianPolicy;
    JsonFields<P> t;
    t.constant("kind", "tanh-gaussian-mlp")
        .field("obs_dim", &P::obs_dim, {1, 65536})
        .required()
        .field("act_dim", &P::act_dim, {1, 65536})
        .required()
        .objects("layers", &P::layers, layer_fields())
        .required();
    return t;
  }();
  return fields;
}

}  // namespace

nlohmann::ordered_json policy_to_json(const GaussianPolicy& policy) {
  return policy_fields().write(policy);
}

GaussianPolicy policy_from_json(const nlohmann::ordered_json& j, const std::string& where) {
  auto p = policy_fields().read(j, where);
  p.validate();
  return p;
}

std::string to_json_text(const GaussianPolicy& policy) {
  return policy_to_json(policy).dump();
}

GaussianPolicy gaussian_policy_from_json_text(const std::string& text) {
  try {
    return policy_from_json(nlohmann::ordered_json::parse(text), "policy");
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("not a policy: ") + e.what());
  }
}

}  // namespace dstudio::behaviour
