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

}  // namespace dstudio::palette
