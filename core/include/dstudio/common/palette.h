#pragma once
/// \file
/// The colours both viewers (the studio's Viewer tab and decision-viewer) and the lessons name:
/// the Okabe-Ito colour-blind-safe set, and the episode traces drawn in them, each with the word a
/// text uses for its colour ("the return-to-go (blue)"). Plain RGB, so the Qt views, the ImGui
/// panels and the lesson checks read the same values.

#include <array>
#include <cstdint>
#include <string_view>

namespace dstudio::palette {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  constexpr bool operator==(const Rgb&) const = default;
};

// Okabe & Ito (2008).
inline constexpr Rgb kBlue{0, 114, 178};
inline constexpr Rgb kVermillion{213, 94, 0};
inline constexpr Rgb kSkyBlue{86, 180, 233};
inline constexpr Rgb kBluishGreen{0, 158, 115};
inline constexpr Rgb kOrange{230, 159, 0};
inline constexpr Rgb kReddishPurple{204, 121, 167};
inline constexpr Rgb kYellow{240, 228, 66};
inline constexpr Rgb kGrey{120, 120, 120};
/// Beyond Okabe & Ito: a blue violet, darker than sky blue and bluer than their reddish purple,
/// which walker2d's left leg is close to.
inline constexpr Rgb kViolet{120, 60, 230};

/// A trace of a played episode as both viewers draw it.
struct TraceStyle {
  std::string_view name;  ///< as labelled in the legends
  Rgb colour;
  std::string_view colour_word;  ///< what a text calls its colour
  bool dashed = false;
};

inline constexpr TraceStyle kReturnToGo{"return-to-go", kBlue, "blue", false};
inline constexpr TraceStyle kReturnSoFar{"return so far", kOrange, "orange", true};
inline constexpr TraceStyle kEntropy{"entropy, layer 1", kBluishGreen, "green", false};
inline constexpr std::array<TraceStyle, 3> kEpisodeTraces{kReturnToGo, kReturnSoFar, kEntropy};

/// A counterfactual branch beside the main run: its ghost body, its curves and its legend entry.
/// Apart from everything a ghost is seen with: the bodies (tan; walker2d's left leg purple), the
/// limb colours from grey through orange to dark red (effect_colour), the return-to-go's blue and
/// the return so far's orange on the timeline, and the blue floor and sky (sky blue, the hardest
/// to see against the sky, comes last). The words are what a person calls each colour on screen,
/// as the legends and the lessons name it.
struct BranchStyle {
  Rgb colour;
  std::string_view colour_word;
};
inline constexpr std::array<BranchStyle, 4> kBranches{
    BranchStyle{kBluishGreen, "green"}, BranchStyle{kViolet, "violet"},
    BranchStyle{kYellow, "yellow"}, BranchStyle{kSkyBlue, "sky blue"}};
/// What a ghost is, as the legends over the scene say it.
inline constexpr std::string_view kGhostMeaning =
    "ghost = this episode forked at a step, one change";
/// The main run in the same plots (a grey that reads on light and dark backgrounds).
inline constexpr Rgb kMainRun{150, 150, 150};

/// The colour of a limb whose joint's action changed by `fraction` of the legend's full scale
/// (clamped to [0, 1]): light grey for none, through orange, to a dark red. Both viewers and the
/// legend use it.
constexpr Rgb effect_colour(double fraction) {
  const double f = fraction < 0.0 ? 0.0 : (fraction > 1.0 ? 1.0 : fraction);
  constexpr Rgb stops[3] = {{205, 205, 205}, {230, 159, 0}, {165, 25, 10}};
  const int i = f < 0.5 ? 0 : 1;
  const double u = (f - 0.5 * i) * 2.0;
  const auto mix = [u](std::uint8_t a, std::uint8_t b) {
    return static_cast<std::uint8_t>(a + (b - a) * u + 0.5);
  };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g),
          mix(stops[i].b, stops[i + 1].b)};
}

}  // namespace dstudio::palette
