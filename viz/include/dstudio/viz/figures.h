#pragma once
/// \file
/// Publication figures of the analyses, written as PDF, SVG and PNG together: attention maps,
/// line plots with a spread band, bars with error bars and scatter plots. Sizes are in inches
/// (ICML's column of 3.25 in by default, height the width over the golden ratio), fonts in
/// points, colours colour-blind safe (viridis for magnitudes, a diverging map centred at zero for
/// differences, Okabe-Ito for categories). Works headless through FigureContext.

#include <QString>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/analysis/attention_maps.h"

class QApplication;

namespace dstudio::viz {

struct FigureStyle {
  double width = 3.25;   ///< inches
  double height = 0.0;   ///< inches; 0: width / golden ratio
  double font = 8.0;     ///< points
  int dpi = 300;         ///< of the PNG
  QString title;
};

/// Qt for figure export: makes a QApplication when none exists, on the offscreen platform when
/// there is no display. Keep it alive while saving figures.
class FigureContext {
 public:
  FigureContext();
  ~FigureContext();
  FigureContext(const FigureContext&) = delete;
  FigureContext& operator=(const FigureContext&) = delete;

 private:
  std::unique_ptr<QApplication> app_;
};

/// A token-by-token map: rows are queries, labelled with `labels`; entries above the diagonal
/// (causal mask) and NaNs are left blank. `diverging` centres the colour map at zero.
/// Returns the paths written (base + .pdf, .svg, .png).
std::vector<std::string> save_heatmap(const std::string& base, const analysis::TokenMatrix& matrix,
                                      const std::vector<std::string>& labels, bool diverging, const QString& colour_label,
                                      const FigureStyle& style = {});

struct Series {
  QString name;
  std::vector<double> x, y;
  std::vector<double> low, high;  ///< a band (e.g. mean -/+ std), optional
  bool right_axis = false;        ///< drawn against a second y axis on the right
};
/// Lines with optional bands and horizontal reference lines (name, y).
std::vector<std::string> save_lines(const std::string& base, const std::vector<Series>& series, const QString& x_label,
                                    const QString& y_label, const FigureStyle& style = {},
                                    const QString& right_label = {},
                                    const std::vector<std::pair<QString, double>>& references = {}, bool log_x = false);

struct Bar {
  QString name;
  double mean = 0.0, spread = 0.0;
};
/// Bars with error bars (mean -/+ spread).
std::vector<std::string> save_bars(const std::string& base, const std::vector<Bar>& bars, const QString& y_label,
                                   const FigureStyle& style = {});

struct ScatterGroup {
  QString name;
  std::vector<double> x, y;
};
/// Points coloured by group, with a legend.
std::vector<std::string> save_scatter(const std::string& base, const std::vector<ScatterGroup>& groups, const FigureStyle& style = {});

}  // namespace dstudio::viz
