// The attention map's cells as the pixels of one texture (plots.h map_pixels): the colours the
// cell-by-cell drawing used, the causal mask and padding left dark, bytes in GL_RGBA order.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "dstudio/imgui/plots.h"

namespace dstudio::imgui {
namespace {

std::array<std::uint8_t, 4> bytes(ImU32 pixel) {
  std::array<std::uint8_t, 4> out{};
  std::memcpy(out.data(), &pixel, 4);
  return out;
}

TEST(MapPixels, CellsRunFromZeroToTheLargestVisibleWeightAndTheMaskStaysDark) {
  // Three tokens, the last one padding: its row and column are not drawn, nor is k > q; the
  // padding's large weight does not set the scale.
  analysis::TokenMatrix map;
  map.tokens = 3;
  map.values = {0.5,  9.0, 9.0,  //
                0.25, 1.0, 9.0,  //
                9.0,  9.0, 9.0};
  const std::vector<char> valid = {1, 1, 0};
  const auto pixels = map_pixels(map, valid);
  ASSERT_EQ(pixels.size(), 9u);
  EXPECT_EQ(pixels[0], viridis(0.5));
  EXPECT_EQ(pixels[3], viridis(0.25));
  EXPECT_EQ(pixels[4], viridis(1.0));
  // Viridis's top colour, (253, 231, 37), in memory as R, G, B, A: what glTexImage2D reads.
  EXPECT_EQ(bytes(pixels[4]), (std::array<std::uint8_t, 4>{253, 231, 37, 255}));
  const ImU32 dark = pixels[1];
  EXPECT_EQ(bytes(dark), (std::array<std::uint8_t, 4>{30, 30, 30, 255}));
  for (const std::size_t masked : {1u, 2u, 5u, 6u, 7u, 8u}) EXPECT_EQ(pixels[masked], dark);
}

TEST(MapPixels, NegativeWeightsAreDrawnByTheirSizeAndAnEmptyMapHasNoPixels) {
  analysis::TokenMatrix map;
  map.tokens = 2;
  map.values = {-2.0, 0.0, 1.0, -0.5};
  const auto pixels = map_pixels(map, {});
  EXPECT_EQ(pixels[0], viridis(1.0));
  EXPECT_EQ(pixels[2], viridis(0.5));
  EXPECT_EQ(pixels[3], viridis(0.25));
  EXPECT_TRUE(map_pixels(analysis::TokenMatrix{}, {}).empty());
}

}  // namespace
}  // namespace dstudio::imgui
