// The live viewer's pictures with ImGui draw lists. See plots.h.

#include "dstudio/imgui/plots.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

#include "dstudio/common/text.h"

namespace dstudio::imgui {
namespace {

constexpr ImU32 kAxis = IM_COL32(150, 150, 150, 255);
constexpr ImU32 kText = IM_COL32(230, 230, 230, 255);
constexpr ImU32 kGrid = IM_COL32(80, 80, 80, 255);
constexpr ImU32 kMaskedCell = IM_COL32(30, 30, 30, 255);

std::string label_of(char type, int step) {
  if (step < 0) return "pad";
  std::string label = std::to_string(step);
  label.insert(label.begin(), type);
  return label;
}

// Compact numbers for axis ends: 3600, 2.4k, 0.31.
std::string short_number(double v) {
  char text[32];
  if (!std::isfinite(v)) return std::string(kMissingNumber);
  if (std::abs(v) >= 10000)
    std::snprintf(text, sizeof text, "%.0fk", v / 1000);
  else if (std::abs(v) >= 100)
    std::snprintf(text, sizeof text, "%.0f", v);
  else
    std::snprintf(text, sizeof text, "%.2g", v);
  return text;
}

}  // namespace

ImU32 viridis(double t, float alpha) {
  static constexpr std::array<std::array<int, 3>, 10> stops = {{{68, 1, 84},
                                                                {72, 40, 120},
                                                                {62, 74, 137},
                                                                {49, 104, 142},
                                                                {38, 130, 142},
                                                                {31, 158, 137},
                                                                {53, 183, 121},
                                                                {110, 206, 88},
                                                                {181, 222, 43},
                                                                {253, 231, 37}}};
  if (!std::isfinite(t)) t = 0.0;
  const double x = std::clamp(t, 0.0, 1.0) * (stops.size() - 1);
  const auto i = std::min<std::size_t>(static_cast<std::size_t>(x), stops.size() - 2);
  const double f = x - static_cast<double>(i);
  const auto mix = [&](int c) {
    return static_cast<int>(std::lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c])));
  };
  return IM_COL32(mix(0), mix(1), mix(2), static_cast<int>(alpha * 255));
}

ImU32 token_colour(char type) {
  switch (type) {
    case 'R':
      return IM_COL32(230, 159, 0, 255);  // orange
    case 's':
      return IM_COL32(86, 180, 233, 255);  // sky blue
    case 'a':
      return IM_COL32(0, 158, 115, 255);  // bluish green
    case 't':
      return IM_COL32(204, 121, 167, 255);  // reddish purple
    default:
      return IM_COL32(140, 140, 140, 255);
  }
}

std::vector<ImU32> map_pixels(const analysis::TokenMatrix& map, const std::vector<char>& valid) {
  const int T = map.tokens;
  std::vector<ImU32> pixels(static_cast<std::size_t>(T) * static_cast<std::size_t>(T), kMaskedCell);
  const auto real = [&](int i) {
    return i < static_cast<int>(valid.size()) ? valid[static_cast<std::size_t>(i)] != 0 : true;
  };
  double top = 0.0;
  for (int q = 0; q < T; ++q)
    for (int k = 0; k <= q; ++k)
      if (real(q) && real(k) && std::isfinite(map.at(q, k)))
        top = std::max(top, std::abs(map.at(q, k)));
  if (top <= 0.0) top = 1.0;
  for (int q = 0; q < T; ++q)
    for (int k = 0; k <= q; ++k)
      if (real(q) && real(k))
        pixels[static_cast<std::size_t>(q) * static_cast<std::size_t>(T) +
               static_cast<std::size_t>(k)] = viridis(std::abs(map.at(q, k)) / top);
  return pixels;
}

// A polyline drawn as dashes of `dash` pixels with gaps as long, measured along the line.
static void dashed_polyline(ImDrawList* draw, const std::vector<ImVec2>& points, ImU32 colour,
                            float thickness, float dash) {
  float along = 0.0f;  // within the current dash-and-gap period
  for (std::size_t i = 1; i < points.size(); ++i) {
    ImVec2 p = points[i - 1];
    const ImVec2 q = points[i];
    float left = std::hypot(q.x - p.x, q.y - p.y);
    if (left <= 0.0f) continue;
    const ImVec2 unit((q.x - p.x) / left, (q.y - p.y) / left);
    while (left > 0.0f) {
      const bool on = along < dash;
      const float step = std::min(left, on ? dash - along : 2.0f * dash - along);
      const ImVec2 next(p.x + unit.x * step, p.y + unit.y * step);
      if (on) draw->AddLine(p, next, colour, thickness);
      p = next;
      left -= step;
      along = std::fmod(along + step, 2.0f * dash);
    }
  }
}

MapHover token_map(const char* id, const analysis::TokenMatrix& map, const std::vector<char>& types,
                   const std::vector<int>& steps, const std::vector<char>& valid, ImVec2 size,
                   ImTextureID cells) {
  MapHover hover;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  const int T = map.tokens;
  if (T == 0) {
    draw->AddText(ImVec2(origin.x + 8, origin.y + 8), kAxis, "no map for this step");
    return hover;
  }
  const float line = ImGui::GetTextLineHeight();
  const float label_w = ImGui::CalcTextSize("R000").x + 6.0f;
  const float side = std::max(8.0f, std::min(size.x - label_w, size.y - line - 4.0f));
  const float cell = side / static_cast<float>(T);
  const ImVec2 grid(origin.x + label_w, origin.y);
  const auto real = [&](int i) {
    return i < static_cast<int>(valid.size()) ? valid[static_cast<std::size_t>(i)] != 0 : true;
  };

  if (cells) {
    draw->AddImage(cells, grid, ImVec2(grid.x + side, grid.y + side));
  } else {
    const auto pixels = map_pixels(map, valid);
    for (int q = 0; q < T; ++q)
      for (int k = 0; k <= q; ++k) {
        const ImU32 c = pixels[static_cast<std::size_t>(q) * static_cast<std::size_t>(T) +
                               static_cast<std::size_t>(k)];
        if (c == kMaskedCell) continue;
        const ImVec2 a(grid.x + k * cell, grid.y + q * cell);
        draw->AddRectFilled(a, ImVec2(a.x + cell, a.y + cell), c);
      }
  }
  draw->AddRect(grid, ImVec2(grid.x + side, grid.y + side), kAxis);

  // Labels: every token when a line fits a cell, else the state (or merged) token of every k-th
  // step, with k the smallest of 1, 2, 5, 10, ... that keeps labels a line apart.
  const auto type_of = [&](int i) {
    return i < static_cast<int>(types.size()) ? types[static_cast<std::size_t>(i)] : '?';
  };
  const auto step_of = [&](int i) {
    return i < static_cast<int>(steps.size()) ? steps[static_cast<std::size_t>(i)] : -1;
  };
  const bool every_token = cell >= line;
  // Tokens a step: 3 for R, s, a triplets, 1 for merged or unified ones.
  const int tokens_per_step =
      steps.empty()
          ? 1
          : std::max<int>(1,
                          static_cast<int>(std::count(steps.begin(), steps.end(), steps.back())));
  int every = 1;
  for (const int k : {1, 2, 5, 10, 20, 50, 100}) {
    every = k;
    if (cell * tokens_per_step * k >= line * 1.1f) break;
  }
  for (int i = 0; i < T; ++i) {
    const char type = type_of(i);
    const int step = step_of(i);
    if (step < 0) continue;
    if (!every_token && ((type != 's' && type != 't') || step % every != 0)) continue;
    const std::string text = label_of(type, step);
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    // Query labels at the left, key labels below, each at its token's centre.
    draw->AddText(ImVec2(grid.x - ts.x - 4.0f, grid.y + (i + 0.5f) * cell - ts.y * 0.5f),
                  token_colour(type), text.c_str());
    if (every_token || cell * tokens_per_step * every >= ts.x + 4.0f) {
      draw->AddText(ImVec2(grid.x + (i + 0.5f) * cell - ts.x * 0.5f, grid.y + side + 2.0f),
                    token_colour(type), text.c_str());
    } else {
      draw->AddLine(ImVec2(grid.x + (i + 0.5f) * cell, grid.y + side),
                    ImVec2(grid.x + (i + 0.5f) * cell, grid.y + side + 4.0f), token_colour(type));
    }
  }

  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int k = static_cast<int>(std::floor((m.x - grid.x) / cell)),
              q = static_cast<int>(std::floor((m.y - grid.y) / cell));
    if (q >= 0 && k >= 0 && q < T && k < T) {
      hover.query = q;
      hover.key = k;
      hover.masked = k > q || !real(q) || !real(k);
      hover.value = map.at(q, k);
      const ImVec2 a(grid.x + k * cell, grid.y + q * cell);
      draw->AddRect(a, ImVec2(a.x + cell, a.y + cell), IM_COL32(255, 255, 255, 255));
      const std::string query = label_of(type_of(q), step_of(q)),
                        key = label_of(type_of(k), step_of(k));
      if (hover.masked)
        ImGui::SetTooltip("query %s, key %s: masked (a query sees only earlier real tokens)",
                          query.c_str(), key.c_str());
      else
        ImGui::SetTooltip("query %s, key %s: weight %.4f", query.c_str(), key.c_str(), hover.value);
    }
  }
  return hover;
}

namespace {

// Where each trace's name goes in the legend along the top of a plot at `origin` of `size`, in as
// many rows as it needs.
std::vector<ImVec2> legend_places(const std::vector<Trace>& series, ImVec2 origin, ImVec2 size,
                                  float axis_w, float line) {
  std::vector<ImVec2> legend;
  float lx = origin.x + axis_w, ly = origin.y;
  for (const auto& t : series) {
    const float w = ImGui::CalcTextSize(t.name.c_str()).x;
    if (lx > origin.x + axis_w && lx + w > origin.x + size.x) lx = origin.x + axis_w, ly += line;
    legend.emplace_back(lx, ly);
    lx += w + 14.0f;
  }
  return legend;
}

// The range of the left (0) and the right (1) axis over their traces: 0..1 without a number, at
// least 1 wide.
struct AxisRanges {
  double lo[2];
  double hi[2];
};

AxisRanges axis_ranges(const std::vector<Trace>& series) {
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-lo[0], -lo[1]};
  for (const auto& t : series) {
    if (!t.values) continue;
    const int side = t.right_axis ? 1 : 0;
    for (double v : *t.values)
      if (std::isfinite(v)) lo[side] = std::min(lo[side], v), hi[side] = std::max(hi[side], v);
  }
  for (int side = 0; side < 2; ++side) {
    if (!std::isfinite(lo[side])) lo[side] = 0.0, hi[side] = 1.0;
    if (hi[side] - lo[side] < 1e-9) hi[side] = lo[side] + 1.0;
  }
  return {{lo[0], lo[1]}, {hi[0], hi[1]}};
}

// The numbers at the ends of each axis in use, and the first and last step under the plot a..b.
void draw_axis_ends(ImDrawList* draw, const std::vector<Trace>& series, const AxisRanges& ranges,
                    ImVec2 a, ImVec2 b, int n, float line) {
  const auto& [lo, hi] = ranges;
  for (int side = 0; side < 2; ++side) {
    // An axis shows only with a number on it (a replay has no entropy).
    const bool used = std::any_of(series.begin(), series.end(), [&](const Trace& t) {
      return t.values && t.right_axis == (side == 1) &&
             std::any_of(t.values->begin(), t.values->end(),
                         [](double v) { return std::isfinite(v); });
    });
    if (!used) continue;
    const std::string top = short_number(hi[side]), bottom = short_number(lo[side]);
    const float x_top = side == 0 ? a.x - ImGui::CalcTextSize(top.c_str()).x - 3.0f : b.x + 3.0f;
    const float x_bottom =
        side == 0 ? a.x - ImGui::CalcTextSize(bottom.c_str()).x - 3.0f : b.x + 3.0f;
    draw->AddText(ImVec2(x_top, a.y), kAxis, top.c_str());
    draw->AddText(ImVec2(x_bottom, b.y - line), kAxis, bottom.c_str());
  }
  const std::string last = std::to_string(n - 1);
  draw->AddText(ImVec2(a.x, b.y + 1.0f), kAxis, "0");
  draw->AddText(ImVec2(b.x - ImGui::CalcTextSize(last.c_str()).x, b.y + 1.0f), kAxis, last.c_str());
}

// A trace within the plot a..b on its axis's range lo..hi, at step x_of(i).
template <typename XOf>
void draw_trace(ImDrawList* draw, const Trace& t, ImVec2 a, ImVec2 b, double lo, double hi,
                const XOf& x_of) {
  const auto y_of = [&](double v) {
    return b.y - static_cast<float>((v - lo) / (hi - lo)) * (b.y - a.y);
  };
  // At most one point a pixel column: long episodes stay cheap to draw.
  const std::size_t count = t.values->size();
  const std::size_t stride =
      std::max<std::size_t>(1, count / static_cast<std::size_t>(std::max(1.0f, b.x - a.x)));
  std::vector<ImVec2> run;
  run.reserve(count / stride + 1);
  const auto flush = [&] {
    if (run.size() >= 2 && !t.dashed)
      draw->AddPolyline(run.data(), static_cast<int>(run.size()), t.colour, 0, 2.0f);
    if (run.size() >= 2 && t.dashed) dashed_polyline(draw, run, t.colour, 1.5f, 6.0f);
    run.clear();
  };
  for (std::size_t i = 0; i < count; i += stride) {
    const double v = (*t.values)[i];
    if (!std::isfinite(v)) {
      flush();
      continue;
    }
    run.emplace_back(x_of(static_cast<double>(i)), y_of(v));
  }
  flush();
}

// The step under the mouse while the plot a..b is clicked or dragged (-1 otherwise); hovered, the
// traces' values at the step under it as a tooltip.
int step_under_mouse(const std::vector<Trace>& series, int steps, int n, ImVec2 a, ImVec2 b) {
  if (ImGui::IsItemActive() && ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    const float mx = ImGui::GetIO().MousePos.x;
    const int step = static_cast<int>(std::lround((mx - a.x) / (b.x - a.x) * (n - 1)));
    return std::clamp(step, 0, std::max(0, steps - 1));
  }
  if (ImGui::IsItemHovered()) {
    const float mx = ImGui::GetIO().MousePos.x;
    const int step = static_cast<int>(std::lround((mx - a.x) / (b.x - a.x) * (n - 1)));
    if (step >= 0 && step < steps) {
      std::string tip = "step " + std::to_string(step);
      for (const auto& t : series)
        if (t.values && step < static_cast<int>(t.values->size())) {
          char value[48];
          std::snprintf(value, sizeof value, "%.4g", (*t.values)[static_cast<std::size_t>(step)]);
          tip += "\n" + t.name + ": " + value;
        }
      ImGui::SetTooltip("%s", tip.c_str());
    }
  }
  return -1;
}

}  // namespace

int traces(const char* id, const std::vector<Trace>& series, int steps, int cursor, ImVec2 size) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  const float line = ImGui::GetTextLineHeight();
  const float axis_w = ImGui::CalcTextSize("-0000").x + 6.0f;
  // The legend along the top, each name in its trace's colour, in as many rows as it needs.
  const std::vector<ImVec2> legend = legend_places(series, origin, size, axis_w, line);
  const float legend_h = legend.empty() ? 0.0f : legend.back().y - origin.y + line;
  const ImVec2 a(origin.x + axis_w, origin.y + legend_h + 2.0f),
      b(origin.x + size.x - axis_w, origin.y + size.y - line - 2.0f);
  if (b.x <= a.x + 10 || b.y <= a.y + 10) return -1;
  draw->AddRect(a, b, kGrid);
  const int n = std::max(steps, 2);
  const auto x_of = [&](double step) {
    return a.x + static_cast<float>(step / (n - 1)) * (b.x - a.x);
  };

  // Each axis's range over its traces.
  const AxisRanges ranges = axis_ranges(series);
  for (std::size_t i = 0; i < series.size(); ++i)
    draw->AddText(legend[i], series[i].colour, series[i].name.c_str());
  draw_axis_ends(draw, series, ranges, a, b, n, line);

  draw->PushClipRect(a, b, true);
  for (const auto& t : series) {
    if (!t.values || t.values->empty()) continue;
    const int side = t.right_axis ? 1 : 0;
    draw_trace(draw, t, a, b, ranges.lo[side], ranges.hi[side], x_of);
  }
  if (cursor >= 0) {
    const float x = x_of(cursor);
    draw->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), IM_COL32(255, 255, 255, 200), 1.5f);
  }
  draw->PopClipRect();

  return step_under_mouse(series, steps, n, a, b);
}

void lag_bars(const char* id, const analysis::LagProfile& profile, ImVec2 size,
              const analysis::LagProfile* compare, const char* compare_name) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 a(origin.x + 4.0f, origin.y + line + 4.0f),
      b(origin.x + size.x - 4.0f, origin.y + size.y - line - 2.0f);
  if (profile.weight.empty() || b.y <= a.y + 4) {
    draw->AddText(origin, kAxis, "no mixing weights at this step");
    return;
  }
  char head[160];
  std::snprintf(head, sizeof head, "mean lag %.2f steps, within 1 step %.0f%%", profile.mean_lag(),
                100.0 * profile.mass_within(1));
  draw->AddText(origin, kText, head);
  std::size_t lags = profile.weight.size();
  if (compare) lags = std::max(lags, compare->weight.size());
  double top = 0.0;
  for (double w : profile.weight) top = std::max(top, w);
  if (compare)
    for (double w : compare->weight) top = std::max(top, w);
  if (top <= 0.0) top = 1.0;
  const float slot = (b.x - a.x) / static_cast<float>(lags);
  const auto y_of = [&](double w) { return b.y - static_cast<float>(w / top) * (b.y - a.y); };
  const ImU32 bar = IM_COL32(86, 180, 233, 255);
  for (std::size_t L = 0; L < lags; ++L) {
    const float x0 = a.x + slot * static_cast<float>(L);
    if (L < profile.weight.size())
      draw->AddRectFilled(ImVec2(x0 + slot * 0.12f, y_of(profile.weight[L])),
                          ImVec2(x0 + slot * 0.88f, b.y), bar);
    if (compare && L < compare->weight.size())
      draw->AddRect(ImVec2(x0 + slot * 0.05f, y_of(compare->weight[L])),
                    ImVec2(x0 + slot * 0.95f, b.y), IM_COL32(230, 159, 0, 255), 0.0f, 0, 1.5f);
  }
  draw->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, b.y), kAxis);
  // Lag numbers, thinned to what fits.
  const float digit = ImGui::CalcTextSize("00").x + 4.0f;
  int every = 1;
  while (slot * every < digit) every = every == 1 ? 2 : every == 2 ? 5 : every * 2;
  for (std::size_t L = 0; L < lags; L += static_cast<std::size_t>(every)) {
    const std::string text = std::to_string(L);
    const float cx = a.x + slot * (static_cast<float>(L) + 0.5f);
    draw->AddText(ImVec2(cx - ImGui::CalcTextSize(text.c_str()).x * 0.5f, b.y + 1.0f), kAxis,
                  text.c_str());
  }
  if (compare && compare_name) {
    const ImVec2 ts = ImGui::CalcTextSize(compare_name);
    draw->AddRect(ImVec2(b.x - ts.x - 18.0f, a.y + 3.0f),
                  ImVec2(b.x - ts.x - 8.0f, a.y + 3.0f + line * 0.7f), IM_COL32(230, 159, 0, 255));
    draw->AddText(ImVec2(b.x - ts.x - 4.0f, a.y), kText, compare_name);
  }
  if (ImGui::IsItemHovered()) {
    const int L = static_cast<int>((ImGui::GetIO().MousePos.x - a.x) / slot);
    if (L >= 0 && L < static_cast<int>(profile.weight.size())) {
      if (compare && L < static_cast<int>(compare->weight.size()))
        ImGui::SetTooltip(
            "lag %d steps: weight %.3f (%s %.3f)", L, profile.weight[static_cast<std::size_t>(L)],
            compare_name ? compare_name : "compared", compare->weight[static_cast<std::size_t>(L)]);
      else
        ImGui::SetTooltip("lag %d steps: weight %.3f", L,
                          profile.weight[static_cast<std::size_t>(L)]);
    }
  }
}

}  // namespace dstudio::imgui
