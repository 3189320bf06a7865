#pragma once
/// \file
/// Publication figures of the analyses, written as PDF, SVG and PNG together: attention maps,
/// line plots with a spread band, bars with error bars and scatter plots. Sizes are in inches
/// (ICML's column of 3.25 in by default, height the width over the golden ratio), fonts in
/// points, colours colour-blind safe (viridis for magnitudes, a diverging map centred at zero for
/// differences, Okabe-Ito for categories). PDFs embed their fonts as TrueType, never Type 3.
/// `FigureStyle` carries what a venue asks for (venue_presets()); every view that draws a figure
/// implements `FigureSource`, so one call (export_all) writes every panel with its numbers as
/// CSV. Works headless through FigureContext.

#include <QColor>
#include <QFont>
#include <QImage>
#include <QRectF>
#include <QString>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/attention_maps.h"
#include "dstudio/common/figure_recipe.h"

class QApplication;
class QCustomPlot;
class QCPAxisRect;

namespace dstudio::viz {

/// How a figure is drawn and which files are written. Fonts and line widths are in points; one
/// point of the figure is one pixel of its canvas, so the PDF and SVG have exactly these sizes and
/// the PNG has width x dpi pixels.
struct FigureStyle {
  double width = 3.25;  ///< inches
  double height = 0.0;  ///< inches; 0: width / golden ratio (maps and embeddings: a little squarer)
  double font = 8.0;    ///< points: title, legend and annotations
  double axis_font = 0.0;   ///< points: axis titles; 0: `font`
  double tick_font = 0.0;   ///< points: tick labels; 0: 0.85 x `font`
  double line_width = 1.2;  ///< points: data lines (axes and grid are drawn thinner, in proportion)
  QString font_family = QStringLiteral("DejaVu Sans");  ///< "DejaVu Serif" for serif venues
  int dpi = 300;                                        ///< of the PNG: 300 or 600
  QString title;  ///< empty: the figure's own title (when `show_title`)
  bool show_title = true;
  QString x_title, y_title;                 ///< axis titles; empty: the figure's own
  bool pdf = true, svg = true, png = true;  ///< which files to write

  [[nodiscard]] double axisFont() const { return axis_font > 0 ? axis_font : font; }
  [[nodiscard]] double tickFont() const { return tick_font > 0 ? tick_font : 0.85 * font; }
};

/// The sans and serif families that ship with Debian (fonts-dejavu-core) and embed as TrueType.
inline constexpr const char* kSansFamily = "DejaVu Sans";
inline constexpr const char* kSerifFamily = "DejaVu Serif";

/// A venue's figure size and fonts.
struct FigurePreset {
  QString name;  ///< e.g. "ICML column (3.25 in)"
  FigureStyle style;
  QString slug;  ///< a short name for the command line, e.g. "icml", "icml-page"
};
/// ICML column 3.25 / page 6.75 in; NeurIPS and ICLR text width 5.5 in; AAAI 3.3 / 6.975 in;
/// CVPR 3.25 / 6.875 in; IEEE column 3.3 x 2.5 in (8 pt serif, 600 dpi); Nature single 89 mm and
/// double 183 mm columns (7 pt sans-serif). Heights are the width over the golden ratio unless
/// the venue fixes them.
std::vector<FigurePreset> venue_presets();
/// The presets' slugs in venue_presets()' order: icml, icml-page, neurips, aaai, aaai-page, cvpr,
/// cvpr-page, ieee, nature, nature-page.
std::vector<std::string> venue_preset_slugs();
/// The index in venue_presets() of the preset called `name` (its slug or its full name, in any
/// case, surrounding spaces ignored); -1 when there is none.
int venue_preset_index(const std::string& name);
/// The style of the preset called `name` (as venue_preset_index); nullopt when there is none.
std::optional<FigureStyle> venue_preset(const std::string& name);

/// The title and axis titles a figure has unless a style overrides them.
struct FigureText {
  QString title, x_title, y_title;
};

/// Something that draws a figure: each analysis view. It writes what is on screen, in a given
/// style, with the numbers behind it as CSV.
class FigureSource {
 public:
  virtual ~FigureSource() = default;
  /// The figure's file name without extension ("attention"), also its name in the dialogs.
  [[nodiscard]] virtual QString figureName() const = 0;
  /// The folder under an export of every view that its files go in ("" for that folder itself):
  /// the Analyses tab's figures go in "analyses", by the names `dstudio analyze` gives them,
  /// where they cannot take another view's name.
  [[nodiscard]] virtual QString exportFolder() const { return {}; }
  /// What the dialogs list it as: the tab it is on and what it shows ("Zeroing and target sweep").
  [[nodiscard]] virtual QString figureTitle() const { return figureName(); }
  /// False while there is nothing to draw (no checkpoint, no rollout yet).
  [[nodiscard]] virtual bool hasFigure() const = 0;
  /// The title and axis titles used when the style leaves them empty.
  [[nodiscard]] virtual FigureText figureText() const { return {}; }
  /// The model the figure shows (its label, as captions name it), or empty when it shows none in
  /// particular (training curves): an export of several views warns when these differ.
  [[nodiscard]] virtual QString figureModel() const { return {}; }
  /// Writes base.{pdf,svg,png} (as the style asks) and base.csv; a view with two panels may
  /// write them as base_<panel>.*. Returns the paths written; nothing without a figure.
  virtual std::vector<std::string> exportFigure(const std::string& base,
                                                const FigureStyle& style) const = 0;

  /// What made the figure on screen, as its recipe (dstudio/common/figure_recipe.h) without the
  /// figure's style, name, outputs and time, or nullopt when what is on screen has none: set by
  /// whoever feeds the view. Without one, an export writes no recipe. It may throw (an input
  /// unreadable now).
  using FigureRecipeMaker = std::function<std::optional<FigureRecipe>()>;
  void setFigureRecipeMaker(FigureRecipeMaker maker) { figure_recipe_maker_ = std::move(maker); }
  /// The recipe of the figure on screen in the default style, its figure named figureName();
  /// nullopt without a figure or a recipe.
  [[nodiscard]] std::optional<FigureRecipe> figureRecipe() const;

 private:
  FigureRecipeMaker figure_recipe_maker_;
};

/// A figure's style as a recipe records it: the values in force (`preset`: the venue they came
/// from, "" for none), the formats written, the titles given.
RecipeFigure recipe_figure(const std::string& preset, const FigureStyle& style);
/// The inverse: the style a recipe records, its values as recorded (not its preset's values
/// today), drawing `format` ("pdf", "svg" or "png") alone.
FigureStyle figure_style(const RecipeFigure& figure, const std::string& format);

/// source.exportFigure(base, style), then, when the source has a recipe, <stem>.recipe.json
/// beside each figure written (<stem>.pdf/.svg/.png; a view of two panels writes two), naming
/// the figure figureName() followed by what the stem adds to `base` ("markov_lab_loss") and the
/// files of that stem as its outputs. Returns every path written, the recipes included.
std::vector<std::string> export_with_recipes(const FigureSource& source, const std::string& base,
                                             const FigureStyle& style,
                                             const std::string& preset = {});

/// `style` with an empty title and axis titles taken from `text`, and no title when the style
/// hides it: what the save_* functions below draw.
FigureStyle with_defaults(FigureStyle style, const FigureText& text);

/// Writes <dir>/<exportFolder>/<figureName>.* for every source that has a figure, with their
/// recipes (export_with_recipes), skipping the others (and null pointers); makes `dir` if needed.
/// Returns every path written. Every view's files are written together or none is, as
/// export_with_recipes writes one view's.
std::vector<std::string> export_all(const std::vector<const FigureSource*>& sources,
                                    const std::string& dir, const FigureStyle& style,
                                    const std::string& preset = {});

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
                                      const std::vector<std::string>& labels, bool diverging,
                                      const QString& colour_label, const FigureStyle& style = {});

/// Two models' maps of the same tokens side by side on one colour scale, each titled with its
/// model above it (a start the two names share, up to a hyphen, left out; at most two lines).
/// Throws std::invalid_argument when the maps have different tokens.
std::vector<std::string> save_heatmap_pair(const std::string& base, const analysis::TokenMatrix& a,
                                           const analysis::TokenMatrix& b,
                                           const std::vector<std::string>& labels,
                                           const QString& title_a, const QString& title_b,
                                           const QString& colour_label,
                                           const FigureStyle& style = {});

struct Series {
  QString name;
  std::vector<double> x, y;
  std::vector<double> low, high;  ///< a band (e.g. mean -/+ std), optional
  bool right_axis = false;        ///< drawn against a second y axis on the right
};
/// Lines with optional bands and horizontal reference lines (name, y).
std::vector<std::string> save_lines(const std::string& base, const std::vector<Series>& series,
                                    const QString& x_label, const QString& y_label,
                                    const FigureStyle& style = {}, const QString& right_label = {},
                                    const std::vector<std::pair<QString, double>>& references = {},
                                    bool log_x = false);

struct Bar {
  QString name;
  double mean = 0.0, spread = 0.0;
  /// An interval around `mean` instead of -/+ spread, when both are finite (a bootstrap interval
  /// is not symmetric).
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
};
/// Bars with error bars (mean -/+ spread).
std::vector<std::string> save_bars(const std::string& base, const std::vector<Bar>& bars,
                                   const QString& y_label, const FigureStyle& style = {});

/// One series of clustered bars (a setting of a sweep): its name in the legend, its colour, and a
/// bar in every cluster (NaN mean: no bar there).
struct BarSeries {
  QString name;
  std::vector<Bar> bars;       ///< one per cluster, in the clusters' order
  std::vector<QString> notes;  ///< text above each bar ("n=3"), optional
  std::vector<bool> faint;     ///< bars drawn light with a dashed outline (unfinished), optional
};
/// Bars in clusters, as a paper's results figure: one cluster a category on the x axis (a
/// dataset), in it one bar a series, coloured by series (Okabe-Ito) with a legend under the plot,
/// each with its error bar (mean -/+ spread) and its note above it.
std::vector<std::string> save_clustered_bars(const std::string& base,
                                             const std::vector<QString>& clusters,
                                             const std::vector<BarSeries>& series,
                                             const QString& y_label, const FigureStyle& style = {});
/// Where bar `k` of `count` series stands in cluster `cluster` (clusters at 1, 2, ...; the bars
/// side by side in 0.8 of a unit), and each bar's width: the on-screen view draws as the figure.
double clustered_bar_key(int cluster, int k, int count);
double clustered_bar_width(int count);
/// Draws clustered bars into `plot` as save_clustered_bars does (bars, error bars, notes, the
/// clusters' ticks, the axes' ranges) and leaves style, axis titles and legend to the caller, so
/// the on-screen view and the exported figure are one drawing.
void add_clustered_bars(QCustomPlot& plot, const std::vector<QString>& clusters,
                        const std::vector<BarSeries>& series, double frame_width,
                        double whisker_width, const QFont& note_font);

/// One panel of interval estimates as rliable's plot_interval_estimates draws one: a row a name
/// (the figure's names, top down), the interval a bar from `low` to `high` in the name's colour
/// and the estimate (`mean`) a line across it. Each panel has a value axis of its own.
struct IntervalPanel {
  QString title;          ///< above the panel ("IQM", "Optimality gap")
  std::vector<Bar> rows;  ///< one per name, in the names' order; NaN mean: nothing in that row
  /// A fixed range of the value axis (P(X > Y): 0 and 1); NaN: fitted to the intervals.
  double lowest = std::numeric_limits<double>::quiet_NaN();
  double highest = std::numeric_limits<double>::quiet_NaN();
  /// A dashed line across the panel at this value (P(X > Y): 0.5, neither better); NaN: none.
  double reference = std::numeric_limits<double>::quiet_NaN();
};
/// Panels of interval estimates side by side, as rliable draws its aggregates: four a row from
/// 5 in wide, two a row below, the names on the left of each row's first panel, `x_label` once
/// under the panels and `note` (what a reader must know) under everything. Returns the paths
/// written.
std::vector<std::string> save_interval_panels(const std::string& base,
                                              const std::vector<QString>& names,
                                              const std::vector<IntervalPanel>& panels,
                                              const QString& x_label, const QString& note = {},
                                              const FigureStyle& style = {});

enum class Marker { Automatic, Disc, Triangle, Square, Diamond, Cross };
struct ScatterGroup {
  QString name;
  std::vector<double> x, y;
  QColor colour = {};  ///< invalid: the group's Okabe-Ito colour
  Marker marker = Marker::Automatic;
};
/// Points coloured by group, with a legend. Without axis titles the axes carry no units (an
/// embedding such as t-SNE) and have no ticks.
std::vector<std::string> save_scatter(const std::string& base,
                                      const std::vector<ScatterGroup>& groups,
                                      const FigureStyle& style = {}, const QString& x_label = {},
                                      const QString& y_label = {});
/// Points coloured by a continuous value (viridis, with a colour scale titled `colour_label`).
std::vector<std::string> save_value_scatter(const std::string& base, const std::vector<double>& x,
                                            const std::vector<double>& y,
                                            const std::vector<double>& value,
                                            const QString& colour_label,
                                            const FigureStyle& style = {});

/// Where the text of a drawn plot lies: every piece of text with its ink bounding box, the data
/// rectangle and the legend, in the plot's pixels (points of a figure). What a figure test checks
/// for text that overlaps other text or leaves the page.
struct TextLayout {
  struct Text {
    QString text;
    QRectF box;
  };
  QSizeF page;
  std::vector<Text> texts;
  QRectF plot_area;                    ///< the data rectangle of the main axes
  QRectF legend;                       ///< empty without a visible legend
  std::vector<QRectF> legend_entries;  ///< each entry's box (it draws nothing outside it)
  bool ticks_inside = false;  ///< some tick mark of the main axes reaches into the data rectangle
  /// A data point's marker: its box and the series it belongs to.
  struct Marker {
    QString series;
    QRectF box;
  };
  std::vector<Marker> markers;  ///< the markers of lines and scatters inside the axes' ranges
  std::vector<QLineF> caps;     ///< the caps of error bars
  /// What is wrong, in words, each naming the text concerned: text overlapping other text or an
  /// error bar's cap, text outside the page or closer than `margin` to its edge, text cut short
  /// with an ellipsis, a number alone on a title's line, a marker cut by the data's edge, a legend
  /// over the data or taller than a fifth of the page, a legend's name cut by its entry's box,
  /// tick marks inside the data. Empty when the layout is clean.
  [[nodiscard]] std::vector<std::string> problems(double margin = 1.0) const;
};
/// The text layout of `plot` drawn at its current size (nothing is painted on screen).
TextLayout text_layout(QCustomPlot& plot);

/// Keeps the text of an on-screen plot fitted as it is resized or its type grows: after each
/// layout, an axis whose tick labels crowd gets fewer ticks and one with room to spare more (up
/// to five; axes with text tickers are left as their view set them), and an axis title longer
/// than its axis is broken into lines (whole again when there is room). Once per plot; calling
/// again does nothing.
void keep_text_fitted(QCustomPlot* plot);
/// Puts the tick counts keep_text_fitted changed back to five and fits them again, as when the
/// plot was first shown: from here on its ticks follow what it shows, not what it showed before
/// (a recording's frames are the same however long the plot was on screen).
void refit_text(QCustomPlot* plot);

/// Draws every text of an on-screen plot (axis titles, tick labels, colour scales, legend,
/// titles, notes) at `scale` times the size it was made with: presentation mode's large type for
/// the plots. Scaling again replaces the previous scale; 1 restores the sizes.
void set_plot_text_scale(QCustomPlot* plot, double scale);

/// Two models' names without the start they share up to a hyphen ("hopper-medium-expert-dt" and
/// "hopper-medium-expert-gdt" are "dt" and "gdt"): what tells them apart where room is short.
std::pair<QString, QString> distinguishing_names(const QString& a, const QString& b);

/// Labels a token map's axes (`labels` a token, as window_labels gives them) with what fits at
/// the rect's size: every token, else every k-th step's number at its state token with a minor
/// tick a token. Returns whether the x and the y axis are labelled by step.
std::pair<bool, bool> set_token_ticks(QCPAxisRect* rect, const std::vector<std::string>& labels);

/// Moves an on-screen plot's legend out of the data into a row of its own above the plot,
/// entries side by side, so that it never hides a curve.
void legend_above(QCustomPlot* plot);
/// Shows the legend in its row above the plot (legend_above), or hides it and gives its row back:
/// an empty legend left in the layout is only its margins wide and would narrow the plot to that.
void show_legend_above(QCustomPlot* plot, bool shown);

/// `text` broken into lines at spaces so that none is wider than `width` pixels in `font`
/// (where the words allow; line breaks already in it are kept). A word wider than a line is
/// broken after one of its hyphens, the hyphen kept at the end of the line.
QString wrapped_text(const QString& text, const QFont& font, double width);

/// Shows `text` in the middle of an on-screen plot's data (an empty state's explanation), broken
/// into lines to fit the data's width whenever the plot is laid out; an empty text removes it.
void set_centred_note(QCustomPlot* plot, const QString& text);
/// The whole text of the note set_centred_note shows on `plot`; empty when there is none.
QString centred_note(const QCustomPlot* plot);

/// While one exists (on the creating thread), every figure the save_* functions write records
/// the layout it was drawn with, by base path: figure tests look at every figure a view exports.
class TextLayoutLog {
 public:
  TextLayoutLog();
  ~TextLayoutLog();
  TextLayoutLog(const TextLayoutLog&) = delete;
  TextLayoutLog& operator=(const TextLayoutLog&) = delete;
  std::vector<std::pair<std::string, TextLayout>> figures;

 private:
  TextLayoutLog* previous_;
};

/// An analysis's figure (analysis_registry.h) drawn as the save_* functions above draw its kind:
/// lines with their bands, reference lines and a right axis; the first series as bars; a
/// token-by-token heatmap; scatter groups. With `with_csv`, its numbers as base.csv (a heatmap as
/// write_map_csv writes it, otherwise series, x, y, spread). The figure's own title and axis
/// titles unless `style` sets them.
std::vector<std::string> save_analysis_figure(const std::string& base,
                                              const analysis::AnalysisFigure& figure,
                                              const FigureStyle& style = {}, bool with_csv = true);

/// The numbers of an analysis's figure as save_analysis_figure writes them beside it (CSV text).
std::string analysis_figure_csv(const analysis::AnalysisFigure& figure);

/// The same figure as an image at the style's size and dpi (on screen: dpi 96 and the widget's
/// width in inches).
QImage render_analysis_figure(const analysis::AnalysisFigure& figure,
                              const FigureStyle& style = {});

}  // namespace dstudio::viz
