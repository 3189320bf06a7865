#pragma once
/// \file
/// The live viewer's pictures drawn with Dear ImGui's draw lists, in the studio's colours: a
/// window's mixing map (typed R/s/a labels thinned to what fits, the causal mask and padding left
/// blank, the value under the mouse), traces over an episode with a cursor on the step on screen,
/// and the mixing weight by lag. Each draws into the current ImGui window at the cursor and takes
/// `size` of it; none keeps state between frames. Plain data in, nothing computed here but layout.

#include <imgui.h>

#include <string>
#include <vector>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/analysis/locality.h"

namespace dstudio::imgui {

/// Viridis at t in [0, 1] (colour-blind safe, readable in grey), as the studio's maps use.
ImU32 viridis(double t, float alpha = 1.0f);
/// The colour of a token type: R orange, s blue, a green, t (merged step) purple, padding grey.
ImU32 token_colour(char type);

/// What the mouse is over in a map.
struct MapHover {
  int query = -1, key = -1;  ///< -1 when the mouse is outside the cells
  double value = 0.0;
  bool masked = false;  ///< above the diagonal or padding: nothing mixes there
};

/// A T x T map of one window: rows are queries, columns keys. `types` ('R', 's', 'a', 't') and
/// `steps` (-1 for padding) label the tokens; `valid` marks real tokens. Colours run from 0 to
/// the largest visible value. Labels are typed and coloured; when cells are smaller than a line
/// only the state (or merged) token of every k-th step is labelled. A tooltip names the hovered
/// cell's query, key and weight. Returns what the mouse is over. `cells`, if given, is a texture
/// holding `map_pixels(map, valid)` (T x T, nearest filtering): the cells are then drawn as one
/// image rather than a rectangle each, which software OpenGL rasterises far faster.
MapHover token_map(const char* id, const analysis::TokenMatrix& map, const std::vector<char>& types,
                   const std::vector<int>& steps, const std::vector<char>& valid, ImVec2 size,
                   ImTextureID cells = nullptr);

/// The cells of a map as T x T pixels (row = query, column = key; RGBA bytes in memory), in the
/// colours `token_map` draws: viridis from 0 to the largest visible value, the causal mask and
/// padding dark grey.
std::vector<ImU32> map_pixels(const analysis::TokenMatrix& map, const std::vector<char>& valid);

/// One trace over the steps of an episode.
struct Trace {
  std::string name;
  ImU32 colour = 0;
  const std::vector<double>* values = nullptr;  ///< by step; NaN leaves a gap
  bool right_axis = false;                      ///< on its own scale at the right edge
  bool dashed = false;                          ///< drawn in dashes of 6 px
};

/// Traces by step (x from 0 to `steps` - 1) with a vertical cursor at `cursor`; the left axis
/// takes the left traces' range, the right axis the right ones'. A click or drag in the plot
/// returns the step under the mouse (-1 otherwise): the caller seeks there.
int traces(const char* id, const std::vector<Trace>& traces, int steps, int cursor, ImVec2 size);

/// Bars of a lag profile: the share of a query's weight on keys 0, 1, 2, ... steps back, with
/// the mean lag and the mass within one step written above. `compare` (if not null) is drawn as
/// outlined bars beside it, named `compare_name`.
void lag_bars(const char* id, const analysis::LagProfile& profile, ImVec2 size,
              const analysis::LagProfile* compare = nullptr, const char* compare_name = nullptr);

}  // namespace dstudio::imgui
