// Figures for papers. See figures.h.

#include "dstudio/viz/figures.h"

#include <QApplication>
#include <QSvgGenerator>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <qcustomplot.h>
#include <sstream>

#include "colors.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/common/atomic_file.h"
#include "gradients.h"

namespace dstudio::viz {
namespace {

using colors::categorical;

// Sizes in points; the plot's pixels are points, so a font of N pixels prints at N points.
struct Canvas {
  int width, height;
};

double height_inches(const FigureStyle& s) { return s.height > 0 ? s.height : s.width / 1.618; }

Canvas canvas(const FigureStyle& s) {
  return {static_cast<int>(std::lround(s.width * 72.0)), static_cast<int>(std::lround(height_inches(s) * 72.0))};
}

// A font of `points` points in the style's family. Pixel sizes are whole numbers, so sizes
// round to the nearest point.
QFont font_of(const FigureStyle& s, double points) {
  QFont f(s.font_family.isEmpty() ? QString(kSansFamily) : s.font_family);
  f.setPixelSize(std::max(1, static_cast<int>(std::lround(points))));
  return f;
}

// Axes, ticks and grid are drawn thinner than the data, in proportion to the line width.
double frame_width(const FigureStyle& s) { return std::clamp(0.5 * s.line_width, 0.3, 1.5); }

void style_axis(QCPAxis* axis, const FigureStyle& s) {
  axis->setLabelFont(font_of(s, s.axisFont()));
  axis->setTickLabelFont(font_of(s, s.tickFont()));
  axis->setBasePen(QPen(Qt::black, frame_width(s)));
  axis->setTickPen(QPen(Qt::black, frame_width(s)));
  axis->setSubTickPen(QPen(Qt::black, 0.7 * frame_width(s)));
  axis->grid()->setPen(QPen(QColor(225, 225, 225), 0.7 * frame_width(s)));
}

bool has_title(const FigureStyle& s) { return s.show_title && !s.title.isEmpty(); }

// A title line wider than the page is broken at its last space that fits, so that no
// word is cut at the page's edge.
QString fitted_title(const QString& title, const QFont& font, int width) {
  const QFontMetrics metrics(font);
  QStringList lines;
  for (QString line : title.split('\n')) {
    while (metrics.horizontalAdvance(line) > width) {
      int cut = -1;
      for (int i = line.size() - 1; i > 0; --i)
        if (line[i] == ' ' && metrics.horizontalAdvance(line.left(i)) <= width) {
          cut = i;
          break;
        }
      if (cut <= 0) break;  // one word wider than the page: left as it is
      lines << line.left(cut);
      line = line.mid(cut + 1);
    }
    lines << line;
  }
  return lines.join('\n');
}

// With a colour scale on the right the title's cell is the plot's column only: its lines are
// fitted to that column (about three quarters of the page).
void title_beside_scale(QCustomPlot& plot, const FigureStyle& s) {
  if (!has_title(s)) return;
  if (auto* title = qobject_cast<QCPTextElement*>(plot.plotLayout()->element(0, 0)))
    title->setText(fitted_title(s.title, title->font(), canvas(s).width * 3 / 4));
}

void style_plot(QCustomPlot& plot, const FigureStyle& s) {
  for (auto* axis : {plot.xAxis, plot.yAxis, plot.yAxis2}) style_axis(axis, s);
  // QCustomPlot keeps 15 px around the axes whatever they need; on a 3.25 in figure that is
  // space the data need more. The right keeps room for the last tick label's overhang.
  plot.axisRect()->setMinimumMargins(QMargins(3, 3, 8, 3));
  plot.legend->setFont(font_of(s, s.tickFont()));
  plot.legend->setBorderPen(QPen(QColor(180, 180, 180), 0.7 * frame_width(s)));
  plot.legend->setIconSize(14, 6);
  plot.legend->setRowSpacing(-2);
  plot.legend->setMargins(QMargins(3, 2, 3, 2));
  plot.legend->setBrush(QColor(255, 255, 255, 210));
  if (has_title(s)) {
    plot.plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(&plot, fitted_title(s.title, font_of(s, 0.95 * s.font), canvas(s).width - 8), font_of(s, 0.95 * s.font));
    plot.plotLayout()->addElement(0, 0, title);
  }
}

// The figure's own axis titles unless the style overrides them.
void label_axes(QCustomPlot& plot, const FigureStyle& s, const QString& x, const QString& y) {
  plot.xAxis->setLabel(s.x_title.isEmpty() ? x : s.x_title);
  plot.yAxis->setLabel(s.y_title.isEmpty() ? y : s.y_title);
}

// Axes of an embedding: no ticks, no grid, no zero line.
void unitless_axes(QCustomPlot& plot) {
  for (auto* axis : {plot.xAxis, plot.yAxis}) {
    axis->setTicks(false);
    axis->grid()->setVisible(false);
    axis->grid()->setZeroLinePen(Qt::NoPen);
  }
}

// The legend in rows under the plot, where it hides no data: as many entries a row (up to three)
// as fit the page's width with their names whole.
void legend_below(QCustomPlot& plot, const FigureStyle& s) {
  auto* sub = new QCPLayoutGrid;
  plot.plotLayout()->addElement(plot.plotLayout()->rowCount(), 0, sub);
  plot.plotLayout()->setRowStretchFactor(plot.plotLayout()->rowCount() - 1, 0.001);
  sub->addElement(0, 0, plot.legend);
  sub->setMinimumMargins(QMargins(2, 0, 2, 2));  // the legend's frame stays inside the page
  const QFontMetrics metrics(plot.legend->font());
  int widest = 0;
  for (int i = 0; i < plot.legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i)))
      widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()));
  const auto m = plot.legend->margins();
  const int entry = plot.legend->iconSize().width() + plot.legend->iconTextPadding() + widest + plot.legend->columnSpacing() + 6;
  const int room = canvas(s).width - 4 - m.left() - m.right();
  // The items already in the legend are laid out again.
  plot.legend->setWrap(std::clamp(room / std::max(1, entry), 1, 3));
  plot.legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  plot.legend->setVisible(true);
}

// The plot at the style's dpi. The canvas is whole points; the image has exactly inches x dpi
// pixels (3.3 in at 600 dpi: 1980 px, not 238 pt x 600 / 72), scaled by less than a percent per
// axis to get there.
QImage raster(QCustomPlot& plot, const FigureStyle& s) {
  const auto c = canvas(s);
  plot.resize(c.width, c.height);
  plot.replot();
  QImage image(static_cast<int>(std::lround(s.width * s.dpi)), static_cast<int>(std::lround(height_inches(s) * s.dpi)),
               QImage::Format_ARGB32);
  image.fill(Qt::white);
  image.setDotsPerMeterX(static_cast<int>(std::lround(s.dpi / 0.0254)));
  image.setDotsPerMeterY(static_cast<int>(std::lround(s.dpi / 0.0254)));
  QCPPainter painter;
  if (!painter.begin(&image)) return {};
  painter.setMode(QCPPainter::pmNonCosmetic);  // line widths scale with the resolution
  painter.scale(static_cast<double>(image.width()) / c.width, static_cast<double>(image.height()) / c.height);
  plot.toPainter(&painter, c.width, c.height);
  painter.end();
  return image;
}

std::vector<std::string> save_all(QCustomPlot& plot, const std::string& base, const FigureStyle& s) {
  const auto c = canvas(s);
  plot.resize(c.width, c.height);
  plot.replot();
  const QString b = QString::fromStdString(base);
  const QString title = has_title(s) ? s.title : QString();
  std::vector<std::string> written;
  // Qt's PDF engine embeds the TrueType fonts (as CID fonts); text is never drawn as Type 3.
  if (s.pdf && plot.savePdf(b + ".pdf", c.width, c.height, QCP::epNoCosmetic, "Decision Studio", title))
    written.push_back(base + ".pdf");
  if (s.svg) {
    QSvgGenerator svg;
    svg.setFileName(b + ".svg");
    svg.setSize(QSize(c.width, c.height));
    svg.setViewBox(QRect(0, 0, c.width, c.height));
    svg.setTitle(title);
    QCPPainter painter;
    if (painter.begin(&svg)) {
      plot.toPainter(&painter, c.width, c.height);
      painter.end();
      written.push_back(base + ".svg");
    }
  }
  if (s.png) {
    const QImage image = raster(plot, s);
    if (!image.isNull() && image.save(b + ".png", "PNG")) written.push_back(base + ".png");
  }
  return written;
}

}  // namespace

FigureContext::FigureContext() {
  if (QApplication::instance()) return;
  if (!std::getenv("XDG_RUNTIME_DIR")) {
    // Qt wants a private runtime folder and complains on stderr without one.
    const auto dir = std::filesystem::temp_directory_path() / ("dstudio-runtime-" + std::to_string(getuid()));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    if (!ec) setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  static int argc = 1;
  static char name[] = "dstudio";
  static char* argv[] = {name, nullptr};
  app_ = std::make_unique<QApplication>(argc, argv);
}

FigureContext::~FigureContext() = default;

namespace {

// Each plot_* draws a figure on `plot` and returns the style it was drawn in (a map or an
// embedding is squarer than a line plot when the height is left to it).
FigureStyle plot_heatmap(QCustomPlot& plot, const analysis::TokenMatrix& m, const std::vector<std::string>& labels, bool diverging_map,
                         const QString& colour_label, const FigureStyle& style) {
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width * 0.85;  // maps are nearly square
  style_plot(plot, s);
  const int T = m.tokens;
  auto* map = new QCPColorMap(plot.xAxis, plot.yAxis);
  map->data()->setSize(T, T);
  map->data()->setRange(QCPRange(0, T - 1), QCPRange(0, T - 1));
  double lo = 0.0, hi = 0.0;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      const bool blank = j > i || (i < static_cast<int>(labels.size()) && (labels[static_cast<std::size_t>(i)] == "pad" || labels[static_cast<std::size_t>(j)] == "pad"));
      const double v = blank ? std::nan("") : m.at(i, j);
      map->data()->setCell(j, i, v);
      if (!blank) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  map->setInterpolate(false);
  // A few large weights (a first query has one key) would flatten everything else: the colour
  // range ends at the 99th percentile, and the scale says so.
  std::vector<double> seen;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j)
      if (!std::isnan(map->data()->cell(j, i))) seen.push_back(std::abs(map->data()->cell(j, i)));
  QString label = colour_label;
  if (seen.size() > 20) {
    std::sort(seen.begin(), seen.end());
    const double p99 = seen[seen.size() * 99 / 100];
    if (p99 < std::max(std::abs(lo), std::abs(hi)) && p99 > 0) {
      hi = std::min(hi, p99);
      lo = std::max(lo, -p99);
      label += " (clipped at p99)";
    }
  }
  const double extent = std::max(std::abs(lo), std::abs(hi));
  auto* scale = new QCPColorScale(&plot);
  plot.plotLayout()->addElement(has_title(s) ? 1 : 0, 1, scale);
  title_beside_scale(plot, s);
  scale->setType(QCPAxis::atRight);
  scale->setBarWidth(6);
  scale->axis()->setLabel(label);
  style_axis(scale->axis(), s);
  // The map takes its gradient and range from the scale it is attached to.
  map->setColorScale(scale);
  scale->setGradient(diverging_map ? diverging() : viridis());
  scale->setDataRange(diverging_map ? QCPRange(-std::max(extent, 1e-12), std::max(extent, 1e-12)) : QCPRange(lo, std::max(hi, lo + 1e-12)));
  auto* group = new QCPMarginGroup(&plot);
  plot.axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  // Token labels; with many tokens, every step's state token only.
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const int every = T > 20 ? 3 : 1;  // rotated labels overlap beyond about 20 on a column-wide figure
  for (int k = 0; k < T && k < static_cast<int>(labels.size()); ++k) {
    const auto& l = labels[static_cast<std::size_t>(k)];
    if (every == 1 || (!l.empty() && (l[0] == 's' || l[0] == 't'))) ticker->addTick(k, QString::fromStdString(l));
  }
  plot.xAxis->setTicker(ticker);
  plot.yAxis->setTicker(ticker);
  plot.xAxis->setTickLabelRotation(90);
  plot.xAxis->setRange(-0.5, T - 0.5);
  plot.yAxis->setRange(-0.5, T - 0.5);
  plot.yAxis->setRangeReversed(true);
  label_axes(plot, s, "key", "query");
  plot.xAxis->grid()->setVisible(false);
  plot.yAxis->grid()->setVisible(false);
  plot.axisRect()->setBackground(QBrush(QColor(238, 238, 238)));
  return s;
}

void plot_lines(QCustomPlot& plot, const std::vector<Series>& series, const QString& x_label, const QString& y_label,
                const FigureStyle& style, const QString& right_label, const std::vector<std::pair<QString, double>>& references,
                bool log_x) {
  style_plot(plot, style);
  double xmin = 1e300, xmax = -1e300;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& sr = series[k];
    const QColor colour = categorical()[k % categorical().size()];
    QVector<double> x(sr.x.begin(), sr.x.end()), y(sr.y.begin(), sr.y.end());
    for (double v : sr.x) xmin = std::min(xmin, v), xmax = std::max(xmax, v);
    if (!sr.low.empty() && sr.low.size() == sr.x.size()) {
      auto* low = plot.addGraph(plot.xAxis, sr.right_axis ? plot.yAxis2 : plot.yAxis);
      low->setData(x, QVector<double>(sr.low.begin(), sr.low.end()));
      low->setPen(Qt::NoPen);
      low->removeFromLegend();
      auto* high = plot.addGraph(plot.xAxis, sr.right_axis ? plot.yAxis2 : plot.yAxis);
      high->setData(x, QVector<double>(sr.high.begin(), sr.high.end()));
      high->setPen(Qt::NoPen);
      QColor fill = colour;
      fill.setAlpha(50);
      high->setBrush(fill);
      high->setChannelFillGraph(low);
      high->removeFromLegend();
    }
    auto* g = plot.addGraph(plot.xAxis, sr.right_axis ? plot.yAxis2 : plot.yAxis);
    g->setData(x, y);
    QPen pen(colour, style.line_width);
    if (k % 2 == 1) pen.setStyle(Qt::DashLine);  // readable in black and white
    g->setPen(pen);
    if (sr.x.size() <= 30)
      g->setScatterStyle(QCPScatterStyle(k % 2 ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssCircle, colour, 2.5 * style.line_width));
    g->setName(sr.name);
  }
  for (const auto& [name, value] : references) {
    auto* line = new QCPItemStraightLine(&plot);
    line->point1->setCoords(0, value);
    line->point2->setCoords(1, value);
    line->setPen(QPen(colors::kGrey, 0.67 * style.line_width, Qt::DotLine));
    auto* text = new QCPItemText(&plot);
    text->position->setType(QCPItemPosition::ptPlotCoords);
    text->position->setCoords(xmin, value);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);  // above the line, where curves rarely go; room is made below
    text->setText(name);
    text->setFont(font_of(style, style.tickFont()));
    text->setColor(colors::kGrey);
  }
  if (log_x) {
    plot.xAxis->setScaleType(QCPAxis::stLogarithmic);
    // Ticks where the data are, written compactly (1.8k, 36k).
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    if (!series.empty())
      for (double v : series.front().x) {
        const QString t = std::abs(v) >= 1000 ? QString::number(v / 1000.0, 'g', 3) + "k" : QString::number(v, 'g', 3);
        ticker->addTick(v, t);
      }
    plot.xAxis->setTicker(ticker);
  }
  label_axes(plot, style, x_label, y_label);
  if (!right_label.isEmpty()) {
    plot.yAxis2->setVisible(true);
    plot.yAxis2->setLabel(right_label);
  }
  plot.rescaleAxes();
  if (!right_label.isEmpty()) plot.yAxis2->scaleRange(1.08, plot.yAxis2->range().center());
  for (const auto& [name, value] : references) {
    const auto r = plot.yAxis->range();
    plot.yAxis->setRange(std::min(r.lower, value), std::max(r.upper, value));
  }
  plot.yAxis->scaleRange(1.08, plot.yAxis->range().center());
  for (const auto& [name, value] : references) {  // headroom for the label above each line
    const auto r = plot.yAxis->range();
    plot.yAxis->setRange(r.lower, std::max(r.upper, value + 0.12 * r.size()));
  }
  if (!log_x) plot.xAxis->scaleRange(1.04, plot.xAxis->range().center());
  if (series.size() > 1) legend_below(plot, style);
}

void plot_bars(QCustomPlot& plot, const std::vector<Bar>& bars, const QString& y_label, const FigureStyle& style) {
  style_plot(plot, style);
  auto* b = new QCPBars(plot.xAxis, plot.yAxis);
  b->setWidth(0.6);
  b->setPen(QPen(colors::kBlue.darker(130), frame_width(style)));
  b->setBrush(colors::kBlue);
  auto* err = new QCPErrorBars(plot.xAxis, plot.yAxis);
  err->setDataPlottable(b);
  err->setPen(QPen(Qt::black, 0.67 * style.line_width));
  err->setSymbolGap(0);  // a whisker through the bar's top, not broken around it
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QVector<double> keys, values, errors;
  double top = 0.0, bottom = 0.0;
  for (std::size_t k = 0; k < bars.size(); ++k) {
    keys << static_cast<double>(k + 1);
    values << bars[k].mean;
    errors << bars[k].spread;
    ticker->addTick(static_cast<double>(k + 1), bars[k].name);
    top = std::max(top, bars[k].mean + bars[k].spread);
    bottom = std::min(bottom, bars[k].mean - bars[k].spread);
  }
  b->setData(keys, values);
  err->setData(errors);
  plot.xAxis->setTicker(ticker);
  plot.xAxis->grid()->setVisible(false);
  plot.xAxis->setTickLength(0, 4);  // outside: a tick inside would stand in the bar
  plot.xAxis->setRange(0.3, static_cast<double>(bars.size()) + 0.7);
  plot.yAxis->setRange(bottom * 1.1, top * 1.12 + 1e-9);
  label_axes(plot, style, {}, y_label);
}

}  // namespace

std::vector<std::string> save_lines(const std::string& base, const std::vector<Series>& series, const QString& x_label,
                                    const QString& y_label, const FigureStyle& style, const QString& right_label,
                                    const std::vector<std::pair<QString, double>>& references, bool log_x) {
  QCustomPlot plot;
  plot_lines(plot, series, x_label, y_label, style, right_label, references, log_x);
  return save_all(plot, base, style);
}

std::vector<std::string> save_bars(const std::string& base, const std::vector<Bar>& bars, const QString& y_label, const FigureStyle& style) {
  QCustomPlot plot;
  plot_bars(plot, bars, y_label, style);
  return save_all(plot, base, style);
}

namespace {

FigureStyle plot_scatter(QCustomPlot& plot, const std::vector<ScatterGroup>& groups, const FigureStyle& style, const QString& x_label,
                         const QString& y_label) {
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width;
  style_plot(plot, s);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    auto* g = plot.addGraph();
    // Unsorted keys (the graph sorts them) and no adaptive sampling: every point is drawn.
    g->setData(QVector<double>(groups[k].x.begin(), groups[k].x.end()), QVector<double>(groups[k].y.begin(), groups[k].y.end()));
    g->setAdaptiveSampling(false);
    g->setLineStyle(QCPGraph::lsNone);
    QColor colour = groups[k].colour.isValid() ? groups[k].colour : categorical()[k % categorical().size()];
    colour.setAlpha(170);
    const QCPScatterStyle::ScatterShape shapes[] = {QCPScatterStyle::ssDisc, QCPScatterStyle::ssTriangle, QCPScatterStyle::ssSquare,
                                                     QCPScatterStyle::ssDiamond, QCPScatterStyle::ssCross};
    const auto marker = groups[k].marker;
    auto shape = marker == Marker::Automatic ? shapes[k % 5] : shapes[static_cast<int>(marker) - 1];
    if (shape == QCPScatterStyle::ssDisc) shape = QCPScatterStyle::ssCircle;  // a disc takes the pen's colour, a circle the brush's
    // Filled markers without an outline: a translucent outline would draw a ring at 600 dpi. (A
    // Qt::NoPen pen would mean "the graph's pen" to QCustomPlot, hence a transparent one.)
    g->setScatterStyle(QCPScatterStyle(shape, shape == QCPScatterStyle::ssCross ? QPen(colour, s.line_width) : QPen(Qt::transparent),
                                       QBrush(colour), 1.7 * s.line_width + 0.5));
    g->setName(groups[k].name);
  }
  plot.rescaleAxes();
  plot.xAxis->scaleRange(1.05, plot.xAxis->range().center());
  plot.yAxis->scaleRange(1.05, plot.yAxis->range().center());
  label_axes(plot, s, x_label, y_label);
  // Embedding axes (t-SNE) carry no units: no tick labels, no grid.
  if (plot.xAxis->label().isEmpty() && plot.yAxis->label().isEmpty()) unitless_axes(plot);
  if (groups.size() > 1) legend_below(plot, style);
  return s;
}

}  // namespace

std::vector<std::string> save_heatmap(const std::string& base, const analysis::TokenMatrix& m, const std::vector<std::string>& labels,
                                      bool diverging_map, const QString& colour_label, const FigureStyle& style) {
  QCustomPlot plot;
  const FigureStyle s = plot_heatmap(plot, m, labels, diverging_map, colour_label, style);
  return save_all(plot, base, s);
}

std::vector<std::string> save_scatter(const std::string& base, const std::vector<ScatterGroup>& groups, const FigureStyle& style,
                                      const QString& x_label, const QString& y_label) {
  QCustomPlot plot;
  const FigureStyle s = plot_scatter(plot, groups, style, x_label, y_label);
  return save_all(plot, base, s);
}

std::vector<std::string> save_value_scatter(const std::string& base, const std::vector<double>& x, const std::vector<double>& y,
                                            const std::vector<double>& value, const QString& colour_label, const FigureStyle& style) {
  QCustomPlot plot;
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width * 0.85;
  style_plot(plot, s);
  const auto n = std::min({x.size(), y.size(), value.size()});
  double lo = 1e300, hi = -1e300;
  for (std::size_t i = 0; i < n; ++i) lo = std::min(lo, value[i]), hi = std::max(hi, value[i]);
  if (n == 0) lo = 0.0, hi = 1.0;
  if (hi <= lo) hi = lo + 1.0;
  // One graph per colour band of the map: a few dozen graphs instead of one per point.
  QCPColorGradient gradient = viridis();  // color() is not const
  const QCPRange range(lo, hi);
  constexpr int kBands = 32;
  std::vector<QVector<double>> bx(kBands), by(kBands);
  for (std::size_t i = 0; i < n; ++i) {
    const int band = std::clamp(static_cast<int>((value[i] - lo) / (hi - lo) * kBands), 0, kBands - 1);
    bx[static_cast<std::size_t>(band)] << x[i];
    by[static_cast<std::size_t>(band)] << y[i];
  }
  for (int b = 0; b < kBands; ++b) {
    if (bx[static_cast<std::size_t>(b)].isEmpty()) continue;
    auto* g = plot.addGraph();
    g->setData(bx[static_cast<std::size_t>(b)], by[static_cast<std::size_t>(b)]);
    g->setAdaptiveSampling(false);
    g->setLineStyle(QCPGraph::lsNone);
    QColor colour = QColor::fromRgb(gradient.color(lo + (b + 0.5) * (hi - lo) / kBands, range));
    colour.setAlpha(190);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::transparent), QBrush(colour), 1.7 * s.line_width + 0.5));
  }
  auto* scale = new QCPColorScale(&plot);
  plot.plotLayout()->addElement(has_title(s) ? 1 : 0, 1, scale);
  title_beside_scale(plot, s);
  scale->setType(QCPAxis::atRight);
  scale->setBarWidth(6);
  scale->setGradient(gradient);
  scale->setDataRange(range);
  scale->axis()->setLabel(colour_label);
  style_axis(scale->axis(), s);
  auto* group = new QCPMarginGroup(&plot);
  plot.axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  plot.rescaleAxes();
  plot.xAxis->scaleRange(1.05, plot.xAxis->range().center());
  plot.yAxis->scaleRange(1.05, plot.yAxis->range().center());
  label_axes(plot, s, {}, {});
  if (plot.xAxis->label().isEmpty() && plot.yAxis->label().isEmpty()) unitless_axes(plot);
  return save_all(plot, base, s);
}

FigureStyle with_defaults(FigureStyle style, const FigureText& text) {
  if (!style.show_title) style.title.clear();
  else if (style.title.isEmpty()) style.title = text.title;
  if (style.x_title.isEmpty()) style.x_title = text.x_title;
  if (style.y_title.isEmpty()) style.y_title = text.y_title;
  return style;
}

std::vector<std::string> export_all(const std::vector<const FigureSource*>& sources, const std::string& dir, const FigureStyle& style) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::vector<std::string> written;
  for (const auto* source : sources) {
    if (!source || !source->hasFigure()) continue;
    const auto base = (std::filesystem::path(dir) / source->figureName().toStdString()).string();
    for (auto& f : source->exportFigure(base, style)) written.push_back(std::move(f));
  }
  return written;
}

std::vector<FigurePreset> venue_presets() {
  constexpr double golden = 1.618034;
  const auto preset = [](const char* slug, const char* name, double width, double height, double font, double tick,
                         const char* family, int dpi) {
    FigureStyle s;
    s.width = width;
    s.height = height;
    s.font = font;
    s.axis_font = font;
    s.tick_font = tick;
    s.font_family = QString::fromLatin1(family);
    s.dpi = dpi;
    s.line_width = font < 8 ? 1.0 : 1.2;  // thinner lines with Nature's smaller text
    return FigurePreset{QString::fromUtf8(name), s, QString::fromLatin1(slug)};
  };
  // Heights: width over the golden ratio unless the venue fixes them (IEEE's 2.5 in).
  return {
      preset("icml", "ICML column (3.25 in)", 3.25, 3.25 / golden, 8, 7, kSansFamily, 300),
      preset("icml-page", "ICML page (6.75 in)", 6.75, 6.75 / golden, 9, 8, kSansFamily, 300),
      preset("neurips", "NeurIPS / ICLR (5.5 in)", 5.5, 5.5 / golden, 9, 8, kSansFamily, 300),
      preset("aaai", "AAAI column (3.3 in)", 3.3, 3.3 / golden, 8, 7, kSansFamily, 300),
      preset("aaai-page", "AAAI page (6.975 in)", 6.975, 6.975 / golden, 9, 8, kSansFamily, 300),
      preset("cvpr", "CVPR column (3.25 in)", 3.25, 3.25 / golden, 8, 7, kSansFamily, 300),
      preset("cvpr-page", "CVPR page (6.875 in)", 6.875, 6.875 / golden, 9, 8, kSansFamily, 300),
      preset("ieee", "IEEE column (3.3 × 2.5 in, serif)", 3.3, 2.5, 8, 8, kSerifFamily, 600),
      preset("nature", "Nature single column (89 mm)", 89.0 / 25.4, 89.0 / 25.4 / golden, 7, 6, kSansFamily, 600),
      preset("nature-page", "Nature double column (183 mm)", 183.0 / 25.4, 183.0 / 25.4 / golden, 7, 6, kSansFamily, 600),
  };
}

std::vector<std::string> venue_preset_slugs() {
  std::vector<std::string> slugs;
  for (const auto& p : venue_presets()) slugs.push_back(p.slug.toStdString());
  return slugs;
}

int venue_preset_index(const std::string& name) {
  const QString wanted = QString::fromStdString(name).trimmed();
  const auto presets = venue_presets();
  for (std::size_t k = 0; k < presets.size(); ++k)
    if (wanted.compare(presets[k].slug, Qt::CaseInsensitive) == 0 || wanted.compare(presets[k].name, Qt::CaseInsensitive) == 0)
      return static_cast<int>(k);
  return -1;
}

std::optional<FigureStyle> venue_preset(const std::string& name) {
  const int index = venue_preset_index(name);
  if (index < 0) return std::nullopt;
  return venue_presets()[static_cast<std::size_t>(index)].style;
}

namespace {

// A registered analysis's figure on `plot`, in the style it returns.
FigureStyle plot_analysis_figure(QCustomPlot& plot, const analysis::AnalysisFigure& figure, const FigureStyle& s) {
  using Kind = analysis::AnalysisFigure::Kind;
  switch (figure.kind) {
    case Kind::Bars: {
      std::vector<Bar> bars;
      if (!figure.series.empty()) {
        const auto& series = figure.series.front();
        for (std::size_t k = 0; k < series.y.size(); ++k) {
          const auto index = k < series.x.size() ? static_cast<std::size_t>(series.x[k]) : k;
          const QString name = index < figure.categories.size() ? QString::fromStdString(figure.categories[index]) : QString::number(k + 1);
          bars.push_back({name, series.y[k], k < series.spread.size() ? series.spread[k] : 0.0});
        }
      }
      plot_bars(plot, bars, s.y_title, s);
      return s;
    }
    case Kind::Heatmap:
      return plot_heatmap(plot, figure.matrix, figure.labels, figure.diverging, QString::fromStdString(figure.colour_label), s);
    case Kind::Scatter: {
      std::vector<ScatterGroup> groups;
      for (const auto& a : figure.series) groups.push_back({QString::fromStdString(a.name), a.x, a.y});
      // Axis titles only where the figure has them: an embedding's axes carry no units.
      return plot_scatter(plot, groups, s, QString::fromStdString(figure.x_label).isEmpty() ? QString() : s.x_title,
                          QString::fromStdString(figure.y_label).isEmpty() ? QString() : s.y_title);
    }
    case Kind::Lines: break;
  }
  std::vector<Series> lines;
  for (const auto& a : figure.series) {
    Series line{QString::fromStdString(a.name), a.x, a.y, {}, {}, a.right_axis};
    if (a.spread.size() == a.y.size())
      for (std::size_t k = 0; k < a.y.size(); ++k) {
        line.low.push_back(a.y[k] - a.spread[k]);
        line.high.push_back(a.y[k] + a.spread[k]);
      }
    lines.push_back(std::move(line));
  }
  std::vector<std::pair<QString, double>> references;
  for (const auto& [name, y] : figure.references) references.push_back({QString::fromStdString(name), y});
  plot_lines(plot, lines, s.x_title, s.y_title, s, QString::fromStdString(figure.right_label), references, figure.log_x);
  return s;
}

FigureStyle analysis_style(const analysis::AnalysisFigure& figure, const FigureStyle& style) {
  return with_defaults(style, {QString::fromStdString(figure.title), QString::fromStdString(figure.x_label),
                               QString::fromStdString(figure.y_label)});
}

}  // namespace

QImage render_analysis_figure(const analysis::AnalysisFigure& figure, const FigureStyle& style) {
  QCustomPlot plot;
  const FigureStyle s = plot_analysis_figure(plot, figure, analysis_style(figure, style));
  return raster(plot, s);
}

std::vector<std::string> save_analysis_figure(const std::string& base, const analysis::AnalysisFigure& figure,
                                              const FigureStyle& style, bool with_csv) {
  QCustomPlot plot;
  const FigureStyle s = plot_analysis_figure(plot, figure, analysis_style(figure, style));
  std::vector<std::string> written = save_all(plot, base, s);
  if (!with_csv) return written;
  const std::string csv = base + ".csv";
  if (figure.kind == analysis::AnalysisFigure::Kind::Heatmap) {
    if (analysis::write_map_csv(csv, figure.matrix, figure.labels)) written.push_back(csv);
    return written;
  }
  std::ostringstream out;
  out.precision(9);
  out << "series,x,y,spread\n";
  for (const auto& a : figure.series)
    for (std::size_t k = 0; k < a.y.size(); ++k)
      out << analysis::csv_field(a.name) << ',' << (k < a.x.size() ? a.x[k] : static_cast<double>(k)) << ',' << a.y[k] << ','
          << (k < a.spread.size() ? a.spread[k] : 0.0) << '\n';
  write_text_atomically(csv, out.str());
  written.push_back(csv);
  return written;
}

}  // namespace dstudio::viz
