// Modality zeroing and target-return sweeps. See return_analysis_view.h.

#include "dstudio/viz/return_analysis_view.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>
#include <cmath>
#include <fstream>
#include <limits>

#include "colors.h"
#include "dstudio/common/csv.h"
#include "dstudio/models/variant_config.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/target_chooser.h"

namespace dstudio::viz {

namespace {
// The bars' names, in the order of the ablation's results (models::kModalityZeroings).
QStringList zeroing_names() {
  QStringList names;
  for (const auto z : models::kModalityZeroings)
    names << QString::fromUtf8(models::zeroing_label(z));
  return names;
}
}  // namespace

ReturnAnalysisView::ReturnAnalysisView(QWidget* parent)
    : QWidget(parent),
      base_(new QDoubleSpinBox),
      base_from_(new TargetChooser(base_)),
      episodes_(new QSpinBox),
      multiples_(new QLineEdit("0.5, 1, 2, 5, 10, 20")),
      ablation_button_(new QPushButton(tr("Run ablation"))),
      sweep_button_(new QPushButton(tr("Run sweep"))),
      export_(new QPushButton(tr("Export figure…"))),
      caption_(new QLabel),
      ablation_(new QCustomPlot),
      sweep_(new QCustomPlot) {
  episodes_->setRange(1, 1000);
  episodes_->setValue(10);
  multiples_->setToolTip(tr("Targets of the sweep, as multiples of the base target"));
  base_->setRange(-1e6, 1e6);  // a model trained with a reward shift has negative targets
  base_->setDecimals(0);
  base_->setSingleStep(100.0);
  base_->setToolTip(tr("The target the ablation runs at and the sweep multiplies"));
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Target")));
  controls->addWidget(base_);
  controls->addWidget(base_from_);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Episodes")));
  controls->addWidget(episodes_);
  controls->addWidget(ablation_button_);
  controls->addStretch(1);
  // The sweep on a row of its own: each row fits the window in large type.
  auto* sweep = new QHBoxLayout;
  sweep->addWidget(new QLabel(tr("Target multiples")));
  sweep->addWidget(multiples_);
  sweep->addWidget(sweep_button_);
  sweep->addStretch(1);
  sweep->addWidget(export_);
  ExportDialog::attach(export_, this, *this, caption_);
  caption_->setWordWrap(true);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(ablation_);
  split->addWidget(sweep_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addLayout(sweep);
  layout->addWidget(caption_);
  layout->addWidget(split, 1);
  ablation_->yAxis->setLabel(tr("normalised score"));
  keep_text_fitted(ablation_);
  keep_text_fitted(sweep_);
  sweep_->xAxis->setLabel(tr("target return"));
  sweep_->yAxis->setLabel(tr("normalised score"));
  sweep_->xAxis->setScaleType(QCPAxis::stLogarithmic);
  connect(ablation_button_, &QPushButton::clicked, this,
          [this] { running_ ? emit cancelRequested() : emit ablationRequested(); });
  connect(sweep_button_, &QPushButton::clicked, this,
          [this] { running_ ? emit cancelRequested() : emit sweepRequested(); });
  setReady({});
}

void ReturnAnalysisView::setReady(const std::vector<models::TargetChoice>& targets,
                                  const QString& checkpoint) {
  base_from_->setChoices(targets);
  // A model trained with a reward shift has targets of 0 and below: any target is one.
  const bool ready = !targets.empty();
  // Another model: nothing of the previous one stays on screen or in an export.
  ablation_title_.clear();
  sweep_title_.clear();
  ablation_data_.clear();
  sweep_data_.clear();
  sweeps_.clear();
  ablation_->clearPlottables();
  ablation_->replot();
  sweep_->clearGraphs();
  sweep_->clearItems();
  sweep_->replot();
  export_->setEnabled(false);
  for (QWidget* w : std::initializer_list<QWidget*>{base_, base_from_, episodes_, multiples_,
                                                    ablation_button_, sweep_button_})
    w->setEnabled(ready);
  const QString who = checkpoint.isEmpty() ? QString() : checkpoint + ": ";
  caption_->setText(
      ready ? who + tr("zero a modality at inference, or raise the target return beyond the "
                       "data (target: %1).")
                        .arg(base_from_->inUse())
            : tr("Open a checkpoint to measure how its return depends on what it is given."));
  noteWhatIsEmpty();
}

// Bare axes are not taken for a result: an empty plot says which button fills it.
void ReturnAnalysisView::noteWhatIsEmpty() {
  if (running_) return;
  const bool ready = base_from_->count() > 1;
  set_centred_note(ablation_, ready && ablation_data_.empty()
                                  ? tr("Run ablation plays the policy with each modality zeroed in "
                                       "turn: return-to-go, past states, actions.")
                                  : QString());
  set_centred_note(sweep_, ready && sweeps_.empty()
                               ? tr("Run sweep plays the policy at each multiple of the target.")
                               : QString());
  ablation_->replot(QCustomPlot::rpQueuedReplot);
  sweep_->replot(QCustomPlot::rpQueuedReplot);
}

void ReturnAnalysisView::setRunning(bool running, bool sweep) {
  running_ = running;
  running_sweep_ = sweep;
  for (QCustomPlot* plot : {ablation_, sweep_}) {
    set_centred_note(plot, {});
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
  if (running) setProgress(0.0, {});
  ablation_button_->setText(running && !sweep ? tr("Cancel") : tr("Run ablation"));
  sweep_button_->setText(running && sweep ? tr("Cancel") : tr("Run sweep"));
  const bool ready =
      base_from_->count() > 1;  // targets on offer besides "own value": a model is open
  ablation_button_->setEnabled(ready && (!running || !sweep));
  sweep_button_->setEnabled(ready && (!running || sweep));
  for (QWidget* w : std::initializer_list<QWidget*>{base_, base_from_, episodes_, multiples_})
    w->setEnabled(ready && !running);
  noteWhatIsEmpty();
}

void ReturnAnalysisView::setProgress(double fraction, const QString& stage) {
  if (!running_) return;
  QCustomPlot* plot = running_sweep_ ? sweep_ : ablation_;
  const QString what =
      running_sweep_ ? tr("Playing the target sweep") : tr("Playing the zeroed policies");
  set_centred_note(plot,
                   tr("%1: %2%%3\nEvery target's episodes are played before the plot is drawn.")
                       .arg(what)
                       .arg(static_cast<int>(100.0 * std::clamp(fraction, 0.0, 1.0)))
                       .arg(stage.isEmpty() ? QString() : QStringLiteral(" · ") + stage));
  plot->replot(QCustomPlot::rpQueuedReplot);
}

QString ReturnAnalysisView::progressText() const {
  return centred_note(running_sweep_ ? sweep_ : ablation_);
}

int ReturnAnalysisView::episodes() const {
  return episodes_->value();
}

double ReturnAnalysisView::baseTarget() const {
  return base_->value();
}
void ReturnAnalysisView::setEpisodes(int episodes) {
  episodes_->setValue(episodes);
}

std::vector<double> ReturnAnalysisView::sweepTargets() const {
  std::vector<double> out;
  for (const auto& part : multiples_->text().split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    const double m = part.trimmed().toDouble(&ok);
    if (ok && m > 0) out.push_back(m * base_->value());
  }
  return out;
}

void ReturnAnalysisView::setAblation(const QString& title,
                                     const std::vector<models::TargetSummary>& s) {
  ablation_title_ = title;
  ablation_data_ = s;
  export_->setEnabled(true);
  ablation_->clearPlottables();
  auto* bars = new QCPBars(ablation_->xAxis, ablation_->yAxis);
  bars->setBrush(colors::kBlue);
  bars->setPen(QPen(colors::kBlue.darker(130)));
  bars->setWidth(0.6);
  auto* errors = new QCPErrorBars(ablation_->xAxis, ablation_->yAxis);
  errors->setDataPlottable(bars);
  errors->setSymbolGap(0);  // a whisker through the bar's top, not broken around it
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const auto names = zeroing_names();
  QVector<double> keys, values, spread;
  double top = 1.0;
  for (std::size_t k = 0; k < s.size() && k < 4; ++k) {
    keys << static_cast<double>(k + 1);
    values << s[k].mean_score;
    spread << s[k].std_score;
    ticker->addTick(static_cast<double>(k + 1), names[static_cast<int>(k)]);
    top = std::max(top, s[k].mean_score + s[k].std_score);
  }
  bars->setData(keys, values);
  errors->setData(spread);
  ablation_->xAxis->setTicker(ticker);
  ablation_->xAxis->setRange(0.3, 4.7);
  ablation_->yAxis->setRange(0, top * 1.15);
  noteWhatIsEmpty();
  ablation_->replot();
  caption_->setText(tr("%1: normalised score with each modality zeroed at inference, mean ± std "
                       "over %2 episodes.")
                        .arg(title)
                        .arg(s.empty() ? 0 : s.front().episodes));
}

void ReturnAnalysisView::setSweep(const QString& title, const std::vector<models::TargetSummary>& s,
                                  double best_score) {
  sweep_title_ = title;
  sweep_data_ = s;
  best_score_ = best_score;
  sweeps_ = {{title, s}};
  drawSweeps();
}

void ReturnAnalysisView::addSweep(const QString& title,
                                  const std::vector<models::TargetSummary>& s) {
  sweeps_.emplace_back(title, s);
  drawSweeps();
}

void ReturnAnalysisView::drawSweeps() {
  export_->setEnabled(true);
  noteWhatIsEmpty();
  sweep_->clearGraphs();
  sweep_->clearItems();
  QVector<double> targets;
  for (std::size_t m = 0; m < sweeps_.size(); ++m) {
    const auto& [name, s] = sweeps_[m];
    const QColor colour = colors::categorical()[m % colors::categorical().size()];
    QVector<double> x, y, lo, hi;
    for (const auto& p : s) {
      x << p.target;
      y << p.mean_score;
      lo << p.mean_score - p.std_score;
      hi << p.mean_score + p.std_score;
    }
    if (targets.isEmpty()) targets = x;
    auto* low = sweep_->addGraph();
    low->setData(x, lo);
    low->setPen(Qt::NoPen);
    low->removeFromLegend();
    auto* high = sweep_->addGraph();
    high->setData(x, hi);
    high->setPen(Qt::NoPen);
    QColor band = colour;
    band.setAlpha(50);
    high->setBrush(band);
    high->setChannelFillGraph(low);
    high->removeFromLegend();
    auto* mean = sweep_->addGraph();
    mean->setData(x, y);
    mean->setName(name);
    // Markers differ by model too, so the curves read in black and white.
    mean->setPen(QPen(colour, 1.5, m == 0 ? Qt::SolidLine : Qt::DashLine));
    mean->setScatterStyle(QCPScatterStyle(
        m == 0 ? QCPScatterStyle::ssCircle : QCPScatterStyle::ssTriangle, colour, 5));
  }
  sweep_->legend->setVisible(sweeps_.size() > 1);
  // Scores sit well below the dataset's best: the bottom right is where the legend hides least.
  sweep_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
  // Ticks where the targets are, written compactly (1.8k, 36k).
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (double v : targets)
    ticker->addTick(v, std::abs(v) >= 1000 ? QString::number(v / 1000.0, 'g', 3) + "k"
                                           : QString::number(v, 'g', 3));
  sweep_->xAxis->setTicker(ticker);
  sweep_->rescaleAxes();
  double top = sweep_->yAxis->range().upper, bottom = std::min(0.0, sweep_->yAxis->range().lower);
  if (std::isfinite(best_score_)) {
    auto* line = new QCPItemStraightLine(sweep_);
    line->point1->setCoords(targets.isEmpty() ? 1 : targets.front(), best_score_);
    line->point2->setCoords(targets.isEmpty() ? 2 : targets.back(), best_score_);
    line->setPen(QPen(colors::kGrey, 1, Qt::DotLine));
    top = std::max(top, best_score_);
  }
  sweep_->yAxis->setRange(bottom, top * 1.1 + 1.0);
  sweep_->xAxis->scaleRange(1.15,
                            std::sqrt(sweep_->xAxis->range().lower * sweep_->xAxis->range().upper));
  sweep_->replot();
  QStringList names;
  for (const auto& [name, s] : sweeps_) names << name;
  caption_->setText(
      tr("%1: normalised score against the target return, mean ± std over %2 episodes each%3.")
          .arg(names.join(tr(" and ")))
          .arg(sweep_data_.empty() ? 0 : sweep_data_.front().episodes)
          .arg(std::isfinite(best_score_)
                   ? tr("; dotted: the dataset's best episode (%1)").arg(best_score_, 0, 'f', 1)
                   : QString()));
}

}  // namespace dstudio::viz

namespace dstudio::viz {

FigureText ReturnAnalysisView::figureText() const {
  return {ablation_title_.isEmpty() ? sweep_title_ : ablation_title_, {}, tr("normalised score")};
}

std::vector<std::string> ReturnAnalysisView::exportFigure(const std::string& base,
                                                          const FigureStyle& style) const {
  std::vector<std::string> written;
  const auto names = zeroing_names();
  if (!ablation_data_.empty()) {
    const FigureStyle s = with_defaults(
        style, {tr("%1: modality zeroed").arg(ablation_title_), {}, tr("normalised score")});
    std::vector<Bar> bars;
    for (std::size_t k = 0; k < ablation_data_.size() && k < 4; ++k)
      bars.push_back(
          {names[static_cast<int>(k)], ablation_data_[k].mean_score, ablation_data_[k].std_score});
    const std::string at = base + "_zeroing";
    for (auto& f : save_bars(at, bars, s.y_title, s)) written.push_back(std::move(f));
    CsvWriter csv({"zeroed", "mean_score", "std_score", "mean_return", "std_return", "episodes"},
                  6);
    for (std::size_t k = 0; k < ablation_data_.size() && k < 4; ++k) {
      const auto& a = ablation_data_[k];
      csv << names[static_cast<int>(k)].toStdString() << a.mean_score << a.std_score
          << a.mean_return << a.std_return << a.episodes;
      csv.end_row();
    }
    csv.write(at + ".csv");
    written.push_back(at + ".csv");
  }
  if (!sweep_data_.empty()) {
    // Every model swept is named in the title, not only the first.
    QStringList models;
    for (const auto& [name, summaries] : sweeps_) models << name;
    const QString swept = models.size() > 1 ? models.join(tr(" and ")) : sweep_title_;
    const FigureStyle s = with_defaults(style, {tr("%1: target-return sweep").arg(swept),
                                                tr("target return"), tr("normalised score")});
    std::vector<Series> curves;
    for (const auto& [name, summaries] : sweeps_) {
      Series mean{sweeps_.size() > 1 ? name : tr("mean ± std"), {}, {}, {}, {}, false};
      for (const auto& p : summaries) {
        mean.x.push_back(p.target);
        mean.y.push_back(p.mean_score);
        mean.low.push_back(p.mean_score - p.std_score);
        mean.high.push_back(p.mean_score + p.std_score);
      }
      curves.push_back(std::move(mean));
    }
    std::vector<std::pair<QString, double>> references;
    if (std::isfinite(best_score_))
      references.emplace_back(tr("dataset's best episode"), best_score_);
    const std::string at = base + "_sweep";
    for (auto& f : save_lines(at, curves, s.x_title, s.y_title, s, {}, references, true))
      written.push_back(std::move(f));
    CsvWriter csv({"model", "target", "mean_score", "std_score", "mean_return", "std_return",
                   "episodes", "dataset_best_score"},
                  6);
    for (const auto& [name, summaries] : sweeps_)
      for (const auto& p : summaries) {
        csv << name.toStdString() << p.target << p.mean_score << p.std_score << p.mean_return
            << p.std_return << p.episodes << best_score_;
        csv.end_row();
      }
    csv.write(at + ".csv");
    written.push_back(at + ".csv");
  }
  return written;
}

}  // namespace dstudio::viz
