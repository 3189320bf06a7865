// Interventions on an imported CORL Decision Transformer against a reference forward written here
// with plain loops in double precision from the checkpoint's weights (CORL's architecture: R, s, a
// tokens with timestep embeddings, LayerNorm, pre-LN blocks of causal multi-head attention and a
// GELU MLP, a final LayerNorm and a tanh head on the state tokens), independent of the studio's
// model code. Every spec the issue names must give the same actions within 1e-4.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dstudio/data/arrays_h5.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/import.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/interventions.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

namespace fs = std::filesystem;
using Vec = std::vector<double>;

const fs::path kData = fs::path(DSTUDIO_TEST_DATA) / "corl_dt";

// A parameter as a row-major matrix of doubles.
struct Matrix {
  int64_t rows = 0, cols = 0;
  Vec v;
  [[nodiscard]] double at(int64_t r, int64_t c) const {
    return v[static_cast<std::size_t>(r * cols + c)];
  }
};

Matrix matrix_of(const torch::Tensor& t) {
  const auto d = t.detach().to(torch::kDouble).contiguous();
  Matrix m;
  m.rows = d.dim() == 1 ? 1 : d.size(0);
  m.cols = d.dim() == 1 ? d.size(0) : d.size(1);
  m.v.assign(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
  return m;
}

Vec linear(const Vec& x, const Matrix& w, const Matrix& b) {
  Vec y(static_cast<std::size_t>(w.rows));
  for (int64_t o = 0; o < w.rows; ++o) {
    double s = b.v[static_cast<std::size_t>(o)];
    for (int64_t i = 0; i < w.cols; ++i) s += w.at(o, i) * x[static_cast<std::size_t>(i)];
    y[static_cast<std::size_t>(o)] = s;
  }
  return y;
}

Vec layer_norm(const Vec& x, const Matrix& g, const Matrix& b) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = (x[i] - mean) / std::sqrt(var + 1e-5) * g.v[i] + b.v[i];
  return y;
}

// What the reference is asked to do, in its own terms (0-based layers, heads and tokens).
struct Changes {
  std::set<std::pair<int, int>> zero_heads;  // (layer, head)
  std::set<int> zero_mlps;                   // layer
  int context = 0;                           // steps, 0: all
  // Patches: (layer, token) of the stream, (layer, head) of the heads, from `other`.
  std::set<std::pair<int, int>> patch_stream, patch_heads;
};

// One window's run: the actions at each step, the stream after each block and each head's output.
struct ReferenceRun {
  std::vector<Vec> actions;                          // [k][A]
  std::vector<std::vector<Vec>> stream;              // [layer][token][H]
  std::vector<std::vector<std::vector<Vec>>> heads;  // [layer][head][token][hd]
  std::vector<std::vector<Vec>> lens;                // [layer][k][A]
};

class Reference {
 public:
  Reference(DecisionModelImpl& model, int heads) : heads_(heads) {
    for (const auto& p : model.named_parameters()) w_[p.key()] = matrix_of(p.value());
    layers_ = model.config().layers;
    hidden_ = model.config().hidden;
  }

  // Window b of the inputs, with `changes`; `other` is the run patches read from.
  ReferenceRun run(const ModelInputs& in, int64_t b, const Changes& changes,
                   const ReferenceRun* other) const {
    const int64_t K = in.states.size(1), T = 3 * K, H = hidden_, hd = H / heads_;
    const auto real = [&](int64_t k) { return in.mask[b][k].item<double>() > 0.5; };
    // Embeddings: R, s, a of each step plus its timestep's row, then the embedding LayerNorm.
    std::vector<Vec> x(static_cast<std::size_t>(T));
    for (int64_t k = 0; k < K; ++k) {
      const auto time = static_cast<int64_t>(in.timesteps[b][k].item<int64_t>());
      Vec r{in.returns_to_go[b][k][0].item<double>()}, s, a;
      for (int64_t i = 0; i < in.states.size(2); ++i)
        s.push_back(in.states[b][k][i].item<double>());
      for (int64_t i = 0; i < in.actions.size(2); ++i)
        a.push_back(in.actions[b][k][i].item<double>());
      const Vec er = linear(r, w("embed_return.weight"), w("embed_return.bias")),
                es = linear(s, w("embed_state.weight"), w("embed_state.bias")),
                ea = linear(a, w("embed_action.weight"), w("embed_action.bias"));
      const auto& table = w("timestep.weight");
      for (int j = 0; j < 3; ++j) {
        Vec e = j == 0 ? er : j == 1 ? es : ea;
        for (int64_t h = 0; h < H; ++h) e[static_cast<std::size_t>(h)] += table.at(time, h);
        x[static_cast<std::size_t>(3 * k + j)] =
            layer_norm(e, w("embed_ln.weight"), w("embed_ln.bias"));
      }
    }
    ReferenceRun out;
    for (int l = 0; l < layers_; ++l) {
      const std::string p = "blocks." + std::to_string(l) + ".";
      std::vector<Vec> q(static_cast<std::size_t>(T)), kk(q.size()), v(q.size());
      for (int64_t t = 0; t < T; ++t) {
        const Vec n =
            layer_norm(x[static_cast<std::size_t>(t)], w(p + "ln1.weight"), w(p + "ln1.bias"));
        const Vec qkv = linear(n, w(p + "mixer.qkv.weight"), w(p + "mixer.qkv.bias"));
        q[static_cast<std::size_t>(t)].assign(qkv.begin(), qkv.begin() + H);
        kk[static_cast<std::size_t>(t)].assign(qkv.begin() + H, qkv.begin() + 2 * H);
        v[static_cast<std::size_t>(t)].assign(qkv.begin() + 2 * H, qkv.end());
      }
      std::vector<std::vector<Vec>> head_out(
          static_cast<std::size_t>(heads_),
          std::vector<Vec>(static_cast<std::size_t>(T), Vec(static_cast<std::size_t>(hd), 0.0)));
      for (int h = 0; h < heads_; ++h)
        for (int64_t t = 0; t < T; ++t) {
          // Keys: causal, real, and within the context.
          std::vector<int64_t> keys;
          for (int64_t u = 0; u <= t; ++u)
            if (real(u / 3) && (changes.context == 0 || u / 3 > t / 3 - changes.context))
              keys.push_back(u);
          auto& o = head_out[static_cast<std::size_t>(h)][static_cast<std::size_t>(t)];
          if (changes.patch_heads.count({l, h})) {
            o = other->heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]
                            [static_cast<std::size_t>(t)];
            continue;
          }
          if (keys.empty() || changes.zero_heads.count({l, h})) continue;
          std::vector<double> score;
          double top = -1e300;
          for (int64_t u : keys) {
            double s = 0;
            for (int64_t i = 0; i < hd; ++i)
              s += q[static_cast<std::size_t>(t)][static_cast<std::size_t>(h * hd + i)] *
                   kk[static_cast<std::size_t>(u)][static_cast<std::size_t>(h * hd + i)];
            score.push_back(s / std::sqrt(static_cast<double>(hd)));
            top = std::max(top, score.back());
          }
          double sum = 0;
          for (double& s : score) sum += (s = std::exp(s - top));
          for (std::size_t j = 0; j < keys.size(); ++j)
            for (int64_t i = 0; i < hd; ++i)
              o[static_cast<std::size_t>(i)] +=
                  score[j] / sum *
                  v[static_cast<std::size_t>(keys[j])][static_cast<std::size_t>(h * hd + i)];
        }
      out.heads.push_back(head_out);
      for (int64_t t = 0; t < T; ++t) {
        Vec concat;
        for (int h = 0; h < heads_; ++h)
          concat.insert(concat.end(),
                        head_out[static_cast<std::size_t>(h)][static_cast<std::size_t>(t)].begin(),
                        head_out[static_cast<std::size_t>(h)][static_cast<std::size_t>(t)].end());
        const Vec y = linear(concat, w(p + "mixer.proj.weight"), w(p + "mixer.proj.bias"));
        auto& xt = x[static_cast<std::size_t>(t)];
        for (int64_t i = 0; i < H; ++i)
          xt[static_cast<std::size_t>(i)] += y[static_cast<std::size_t>(i)];
        if (!changes.zero_mlps.count(l)) {
          Vec m = linear(layer_norm(xt, w(p + "ln2.weight"), w(p + "ln2.bias")),
                         w(p + "fc1.weight"), w(p + "fc1.bias"));
          for (double& z : m) z = 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));  // exact GELU
          m = linear(m, w(p + "fc2.weight"), w(p + "fc2.bias"));
          for (int64_t i = 0; i < H; ++i)
            xt[static_cast<std::size_t>(i)] += m[static_cast<std::size_t>(i)];
        }
        if (changes.patch_stream.count({l, static_cast<int>(t)}))
          xt = other->stream[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)];
      }
      out.stream.push_back(x);
      out.lens.push_back(read_out(x, K));
    }
    out.actions = out.lens.back();
    return out;
  }

 private:
  const Matrix& w(const std::string& name) const { return w_.at(name); }
  // The final LayerNorm and the tanh head at each state token.
  std::vector<Vec> read_out(const std::vector<Vec>& x, int64_t K) const {
    std::vector<Vec> actions;
    for (int64_t k = 0; k < K; ++k) {
      Vec a = linear(layer_norm(x[static_cast<std::size_t>(3 * k + 1)], w("final_ln.weight"),
                                w("final_ln.bias")),
                     w("head.weight"), w("head.bias"));
      for (double& z : a) z = std::tanh(z);
      actions.push_back(a);
    }
    return actions;
  }

  std::map<std::string, Matrix> w_;
  int heads_, layers_ = 0;
  int64_t hidden_ = 0;
};

ModelInputs read_windows(const fs::path& file) {
  auto arrays =
      data::read_nd_arrays(file, {"states", "actions", "returns_to_go", "timesteps", "mask"});
  const auto tensor = [&](const std::string& key, torch::ScalarType type) {
    const auto& a = arrays.at(key);
    return torch::tensor(a.values, torch::kDouble).reshape(a.shape).to(type);
  };
  ModelInputs in;
  in.states = tensor("states", torch::kFloat);
  in.actions = tensor("actions", torch::kFloat);
  in.returns_to_go =
      tensor("returns_to_go", torch::kFloat).reshape({in.states.size(0), in.states.size(1), 1});
  in.timesteps = tensor("timesteps", torch::kLong);
  in.mask = tensor("mask", torch::kFloat);
  return in;
}

class ReferenceForward : public testing::Test {
 protected:
  void SetUp() override {
    CorlImportOptions options;
    options.heads = 2;
    import_corl_dt(kData / "a_state_dict.pt", dir / "a.pt", options);
    model = load_checkpoint_model(dir / "a.pt", &info);
    clean = read_windows(kData / "a_inputs.h5");
    // The same windows at another target: what patching between two conditioning returns uses.
    other = clean;
    other.returns_to_go = clean.returns_to_go * 3.0 + 0.5;
  }

  // Largest difference over the real steps of every window between the studio's actions with
  // `specs` and the reference's with `changes`.
  double difference(const std::vector<std::string>& specs, const std::vector<std::string>& patches,
                    const Changes& changes) {
    torch::NoGradGuard no_grad;
    std::vector<Intervention> items;
    for (const auto& s : specs) items.push_back(parse_intervention(s));
    for (const auto& s : patches) items.push_back(parse_patch(s));
    InterventionSources sources;
    if (!patches.empty()) record_activations(*model, other, sources.patch);
    const InterventionPlan plan(items, info.variant, sources);
    const auto ours = plan.forward(*model, clean);
    const Reference reference(*model, 2);
    double worst = 0;
    for (int64_t b = 0; b < clean.states.size(0); ++b) {
      const ReferenceRun theirs_other = reference.run(other, b, {}, nullptr);
      const ReferenceRun theirs = reference.run(clean, b, changes, &theirs_other);
      for (int64_t k = 0; k < clean.states.size(1); ++k) {
        if (clean.mask[b][k].item<double>() < 0.5) continue;
        for (int64_t a = 0; a < ours.size(2); ++a)
          worst = std::max(
              worst,
              std::abs(ours[b][k][a].item<double>() -
                       theirs.actions[static_cast<std::size_t>(k)][static_cast<std::size_t>(a)]));
      }
    }
    return worst;
  }

  test::TempDir dir;
  CheckpointInfo info;
  DecisionModel model{nullptr};
  ModelInputs clean, other;
};

TEST_F(ReferenceForward, EverySpecGivesTheReferenceActions) {
  ASSERT_EQ(info.variant.layers, 2);
  ASSERT_EQ(info.variant.heads, 2);
  ASSERT_EQ(info.variant.context_length, 5);
  EXPECT_LT(difference({}, {}, {}), 1e-4) << "no intervention";
  Changes one_head;
  one_head.zero_heads = {{1, 0}};
  EXPECT_LT(difference({"head:2.1=zero"}, {}, one_head), 1e-4);
  Changes heads;
  heads.zero_heads = {{0, 1}, {1, 0}, {1, 1}};
  EXPECT_LT(difference({"head:1.2=zero", "head:2.1=zero", "head:2.2=zero"}, {}, heads), 1e-4);
  Changes mlp;
  mlp.zero_mlps = {0};
  EXPECT_LT(difference({"mlp:1=zero"}, {}, mlp), 1e-4);
  for (int c : {1, 3, 5}) {
    Changes context;
    context.context = c;
    EXPECT_LT(difference({"context:" + std::to_string(c)}, {}, context), 1e-4) << "context " << c;
  }
  Changes stream;
  stream.patch_stream = {{0, 13}};  // resid:1.14: token 14 is s5, the last step's state
  EXPECT_LT(difference({}, {"resid:1.14"}, stream), 1e-4);
  Changes head;
  head.patch_heads = {{1, 1}};
  EXPECT_LT(difference({}, {"head:2.2"}, head), 1e-4);
  // The interventions change the actions: the comparisons above are not of equal numbers.
  EXPECT_GT(difference({"head:2.1=zero"}, {}, {}), 1e-3);
  EXPECT_GT(difference({"context:1"}, {}, {}), 1e-3);
  EXPECT_GT(difference({}, {"resid:1.14"}, {}), 1e-4);
}

TEST_F(ReferenceForward, TheActionLensIsTheReferencesReadOutOfEachBlock) {
  torch::NoGradGuard no_grad;
  const auto lens = action_lens(*model, clean);
  const Reference reference(*model, 2);
  double worst = 0;
  for (int64_t b = 0; b < clean.states.size(0); ++b) {
    const ReferenceRun theirs = reference.run(clean, b, {}, nullptr);
    for (int l = 0; l < 2; ++l)
      for (int64_t k = 0; k < clean.states.size(1); ++k) {
        if (clean.mask[b][k].item<double>() < 0.5) continue;
        for (int64_t a = 0; a < lens.size(3); ++a)
          worst = std::max(
              worst, std::abs(lens[b][k][l][a].item<double>() -
                              theirs.lens[static_cast<std::size_t>(l)][static_cast<std::size_t>(k)]
                                         [static_cast<std::size_t>(a)]));
      }
  }
  EXPECT_LT(worst, 1e-4);
}

}  // namespace
}  // namespace dstudio::models
