#pragma once
/// \file
/// Locality of a mixer, measured: how a query's mixing weight falls with the lag, in timesteps,
/// between its step and its key's. Markov dynamics make the current and previous step enough, so a
/// mixer that has learned them puts its weight at lags 0 and 1; a dispersed one spreads it (the
/// DC, GDT and HiFormer papers' argument). Works on any mixer's matrix: attention weights, and
/// the equivalent matrices of convolution and pooling. No LibTorch.

#include <span>
#include <vector>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/models/window.h"

namespace dstudio::analysis {

/// Mixing weight by lag in timesteps.
struct LagProfile {
  /// weight[L]: the share of a query's weight on keys L steps before its own, averaged over real
  /// queries (and heads and windows); sums to 1.
  std::vector<double> weight;

  /// sum over L of L weight[L].
  [[nodiscard]] double mean_lag() const;
  /// weight[0] + ... + weight[lags].
  [[nodiscard]] double mass_within(int lags) const;
};

/// One layer of one window: each real query's row over the real keys, as a distribution (the
/// magnitudes renormalised, as the entropy does for signed equivalent matrices), split by the lag
/// between the query's step and the key's; the mean over real queries and over heads.
/// `token_steps` gives every token's step (-1 for padding).
LagProfile lag_profile(const LayerMixing& layer, std::span<const int> token_steps,
                       std::span<const char> valid);

/// Per layer (from the first), the mean over windows of lag_profile.
std::vector<LagProfile> layer_lag_profiles(const std::vector<models::WindowInspection>& windows);

/// The lag profile of the map a view selects in one window (a live viewer's current step); empty
/// when the window has no real query.
LagProfile window_lag_profile(const models::WindowInspection& window,
                              const MapSelection& selection);
/// The lag profile of the map a view selects (a layer or one of its heads, the mean over layers,
/// attention rollout), taken in each window and averaged over windows.
LagProfile selected_lag_profile(const std::vector<models::WindowInspection>& windows,
                                const MapSelection& selection);

}  // namespace dstudio::analysis
