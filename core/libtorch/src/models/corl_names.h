#pragma once
// The names CORL's Decision Transformer (algorithms/offline/dt.py) gives the studio dt's
// parameters; shared by its import and its export.

#include <string>
#include <utility>
#include <vector>

namespace dstudio::models {

// The CORL name of one of our parameters.
inline std::string corl_name(const std::string& ours) {
  static const std::vector<std::pair<std::string, std::string>> prefixes = {
      {"timestep.", "timestep_emb."}, {"embed_return.", "return_emb."},
      {"embed_state.", "state_emb."}, {"embed_action.", "action_emb."},
      {"embed_ln.", "emb_norm."},     {"final_ln.", "out_norm."},
      {"head.", "action_head.0."}};
  for (const auto& [a, b] : prefixes)
    if (ours.rfind(a, 0) == 0) return b + ours.substr(a.size());
  // blocks.N.<part>.<weight|bias>
  static const std::vector<std::pair<std::string, std::string>> parts = {
      {".ln1.", ".norm1."},
      {".ln2.", ".norm2."},
      {".fc1.", ".mlp.0."},
      {".fc2.", ".mlp.2."},
      {".mixer.proj.", ".attention.out_proj."}};
  for (const auto& [a, b] : parts) {
    const auto at = ours.find(a);
    if (at != std::string::npos) return ours.substr(0, at) + b + ours.substr(at + a.size());
  }
  const auto at = ours.find(".mixer.qkv.");
  if (at != std::string::npos)
    return ours.substr(0, at) + ".attention.in_proj_" + ours.substr(at + 11);
  return ours;
}

}  // namespace dstudio::models
