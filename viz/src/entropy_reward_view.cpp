// Attention entropy against reward. See entropy_reward_view.h.

#include "dstudio/viz/entropy_reward_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>
#include <cmath>
#include <fstream>

#include "colors.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/common/csv.h"
#include "dstudio/models/variant_config.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/target_chooser.h"

namespace dstudio::viz {

EntropyRewardView::EntropyRewardView(QWidget* parent)
    : QWidget(parent),
      target_(new QDoubleSpinBox),
      target_from_(new TargetChooser(target_)),
      episodes_(new QSpinBox),
      zeroing_(new QComboBox),
      run_(new QPushButton(tr("Run rollout"))),
      export_(new QPushButton(tr("Export figure…"))),
      episode_(new QComboBox),
      caption_(new QLabel),
      series_(new QCustomPlot),
      scatter_(new QCustomPlot) {
  target_->setRange(-1e6, 1e6);  // a model trained with a reward shift has negative targets
  target_->setDecimals(0);
  target_->setSingleStep(100.0);
  target_->setToolTip(tr("The return the policy is asked for (its first return-to-go)"));
  episodes_->setRange(1, 100);
  episodes_->setValue(5);
  for (const auto z : models::kModalityZeroings)
    zeroing_->addItem(QString::fromUtf8(models::zeroing_label(z)), static_cast<int>(z));
  zeroing_->setToolTip(tr("Remove a modality at inference (the papers' ablation)"));
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Target return")));
  controls->addWidget(target_);
  controls->addWidget(target_from_);
  controls->addWidget(new QLabel(tr("Episodes")));
  controls->addWidget(episodes_);
  controls->addWidget(new QLabel(tr("Zero")));
  controls->addWidget(zeroing_);
  controls->addWidget(run_);
  controls->addStretch(1);
  // What is shown and its export beside the caption: each row fits the window in large type.
  auto* below = new QHBoxLayout;
  below->addWidget(caption_, 1);
  below->addWidget(new QLabel(tr("Show episode")), 0, Qt::AlignTop);
  below->addWidget(episode_, 0, Qt::AlignTop);
  below->addWidget(export_, 0, Qt::AlignTop);
  ExportDialog::attach(export_, this, *this, caption_);
  caption_->setWordWrap(true);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(series_);
  split->addWidget(scatter_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addLayout(below);
  layout->addWidget(split, 1);

  series_->xAxis->setLabel(tr("step"));
  series_->yAxis->setLabel(tr("attention entropy, layer 1"));
  series_->yAxis2->setVisible(true);
  series_->yAxis2->setLabel(tr("reward"));
  series_->addGraph(series_->xAxis, series_->yAxis)->setPen(QPen(colors::kBlue, 1.5));
  series_->addGraph(series_->xAxis, series_->yAxis2)
      ->setPen(QPen(colors::kVermillion, 1.5, Qt::DashLine));
  series_->graph(0)->setName(tr("entropy"));
  series_->graph(1)->setName(tr("reward"));
  series_->legend->setVisible(true);
  legend_above(series_);
  keep_text_fitted(series_);
  keep_text_fitted(scatter_);
  scatter_->xAxis->setLabel(tr("attention entropy, layer 1"));
  scatter_->yAxis->setLabel(tr("reward"));
  auto* points = scatter_->addGraph();
  points->setLineStyle(QCPGraph::lsNone);
  QColor c = colors::kBlue;
  c.setAlpha(90);
  points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 3));
  points->setAdaptiveSampling(false);

  connect(run_, &QPushButton::clicked, this, [this] {
    if (running_)
      emit cancelRequested();
    else
      emit runRequested(request());
  });
  connect(episode_, &QComboBox::currentIndexChanged, this, [this] { drawEpisode(); });
  setReady({});
}

models::RolloutConfig EntropyRewardView::request() const {
  models::RolloutConfig c;
  c.targets = {target_->value()};
  c.episodes = episodes_->value();
  c.zeroing = static_cast<models::ModalityZeroing>(zeroing_->currentData().toInt());
  c.entropy = true;
  c.threads = 1;
  return c;
}

void EntropyRewardView::setReady(const QString& env,
                                 const std::vector<models::TargetChoice>& targets,
                                 const QString& checkpoint) {
  // Another model: nothing of the previous one stays on screen or in an export.
  result_ = {};
  title_.clear();
  pairs_ = 0;
  pearson_ = spearman_ = std::nan("");
  for (QCustomPlot* plot : {series_, scatter_}) {
    for (int g = 0; g < plot->graphCount(); ++g) plot->graph(g)->data()->clear();
    plot->replot();
  }
  {
    const QSignalBlocker block(episode_);
    episode_->clear();
  }
  export_->setEnabled(false);
  const bool ready = !env.isEmpty();
  for (QWidget* w :
       std::initializer_list<QWidget*>{target_, target_from_, episodes_, zeroing_, run_})
    w->setEnabled(ready);
  target_from_->setChoices(ready ? targets : std::vector<models::TargetChoice>{});
  const QString who = checkpoint.isEmpty() ? tr("the policy") : tr("%1's policy").arg(checkpoint);
  caption_->setText(
      ready ? tr("Roll %1 out in %2 to see its attention entropy next to the reward (target: %3).")
                  .arg(who, env, target_from_->inUse())
            : tr("Open a checkpoint to roll its policy out: File ▸ Open Checkpoint."));
}

void EntropyRewardView::setRunning(bool running) {
  running_ = running;
  run_->setText(running ? tr("Cancel") : tr("Run rollout"));
  for (QWidget* w : std::initializer_list<QWidget*>{target_, target_from_, episodes_, zeroing_})
    w->setEnabled(!running);
}

void EntropyRewardView::setRollout(const QString& title, models::RolloutResult result, int skip) {
  result_ = std::move(result);
  title_ = title;
  skip_ = skip;
  std::vector<double> entropy, reward;
  QVector<double> ex, ry;
  for (const auto& e : result_.episodes)
    for (int t = skip_; t < e.length && t < static_cast<int>(e.entropy.size()); ++t) {
      entropy.push_back(e.entropy[static_cast<std::size_t>(t)]);
      reward.push_back(e.rewards[static_cast<std::size_t>(t)]);
      ex << entropy.back();
      ry << reward.back();
    }
  pearson_ = analysis::pearson(entropy, reward);
  spearman_ = analysis::spearman(entropy, reward);
  pairs_ = static_cast<int>(entropy.size());
  export_->setEnabled(!result_.episodes.empty());
  scatter_->graph(0)->setData(ex, ry);
  scatter_->rescaleAxes();
  scatter_->xAxis->scaleRange(1.08, scatter_->xAxis->range().center());  // no point on the frame
  scatter_->yAxis->scaleRange(1.08, scatter_->yAxis->range().center());
  scatter_->replot();
  {
    const QSignalBlocker block(episode_);
    episode_->clear();
    for (std::size_t e = 0; e < result_.episodes.size(); ++e)
      episode_->addItem(
          tr("%1 (return %2)").arg(e + 1).arg(result_.episodes[e].episode_return, 0, 'f', 0));
    episode_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  }
  const auto fmt = [](double v) { return fixed_text(v, 2); };
  double mean = 0.0;
  for (const auto& s : result_.summary) mean = s.mean_score;
  QString text = tr("%1: %2 episodes, normalised score %3. Over %4 steps with full windows, "
                    "entropy and reward "
                    "correlate with Pearson %5 and Spearman %6.")
                     .arg(title_)
                     .arg(result_.episodes.size())
                     .arg(mean, 0, 'f', 1)
                     .arg(pairs_)
                     .arg(fmt(pearson_), fmt(spearman_));
  if (!std::isfinite(pearson_) || !std::isfinite(spearman_))
    text += tr(" (No correlation where the entropy does not vary.)");
  caption_->setText(text);
  showEpisode(0);
}

void EntropyRewardView::showEpisode(int episode) {
  if (episode_->currentIndex() != episode)
    episode_->setCurrentIndex(episode);
  else
    drawEpisode();
}

void EntropyRewardView::drawEpisode() {
  const int e = episode_->currentIndex();
  if (e < 0 || e >= static_cast<int>(result_.episodes.size())) return;
  const auto& ep = result_.episodes[static_cast<std::size_t>(e)];
  QVector<double> x, ent, rew;
  for (int t = 0; t < ep.length && t < static_cast<int>(ep.entropy.size()); ++t) {
    x << t;
    ent << ep.entropy[static_cast<std::size_t>(t)];
    rew << ep.rewards[static_cast<std::size_t>(t)];
  }
  series_->graph(0)->setData(x, ent);
  series_->graph(1)->setData(x, rew);
  series_->rescaleAxes();
  series_->replot();
}

}  // namespace dstudio::viz

namespace dstudio::viz {

int EntropyRewardView::shownEpisode() const {
  return episode_->currentIndex();
}

FigureText EntropyRewardView::figureText() const {
  QString title = title_;
  if (episode_->currentIndex() >= 0) title += tr(", episode %1").arg(episode_->currentIndex() + 1);
  return {title, tr("step"), tr("attention entropy, layer 1")};
}

std::vector<std::string> EntropyRewardView::exportFigure(const std::string& base,
                                                         const FigureStyle& style) const {
  const int e = episode_->currentIndex();
  if (result_.episodes.empty() || e < 0 || e >= static_cast<int>(result_.episodes.size()))
    return {};
  const FigureStyle s = with_defaults(style, figureText());
  // The episode on screen: entropy on the left axis, reward on the right.
  const auto& ep = result_.episodes[static_cast<std::size_t>(e)];
  Series entropy{tr("entropy"), {}, {}, {}, {}, false}, reward{tr("reward"), {}, {}, {}, {}, true};
  for (int t = 0; t < ep.length && t < static_cast<int>(ep.entropy.size()); ++t) {
    entropy.x.push_back(t);
    entropy.y.push_back(ep.entropy[static_cast<std::size_t>(t)]);
    reward.x.push_back(t);
    reward.y.push_back(ep.rewards[static_cast<std::size_t>(t)]);
  }
  auto written = save_lines(base, {entropy, reward}, s.x_title, s.y_title, s, tr("reward"));
  // Every step with a full window, as in the correlation.
  ScatterGroup steps{tr("steps"), {}, {}};
  for (const auto& episode : result_.episodes)
    for (int t = skip_; t < episode.length && t < static_cast<int>(episode.entropy.size()); ++t) {
      steps.x.push_back(episode.entropy[static_cast<std::size_t>(t)]);
      steps.y.push_back(episode.rewards[static_cast<std::size_t>(t)]);
    }
  FigureStyle scatter = style;
  scatter.x_title.clear();
  scatter.y_title.clear();
  if (scatter.show_title && scatter.title.isEmpty()) {
    const auto fmt = [](double v) { return fixed_text(v, 2); };
    scatter.title = tr("%1: Pearson %2, Spearman %3").arg(title_, fmt(pearson_), fmt(spearman_));
  }
  if (scatter.height <= 0) scatter.height = scatter.width * 0.85;
  for (auto& f : save_scatter(base + "_correlation", {steps}, scatter,
                              tr("attention entropy, layer 1"), tr("reward")))
    written.push_back(std::move(f));
  CsvWriter csv({"episode", "step", "entropy", "reward", "in_correlation"}, 6);
  for (std::size_t k = 0; k < result_.episodes.size(); ++k) {
    const auto& episode = result_.episodes[k];
    for (int t = 0; t < episode.length && t < static_cast<int>(episode.entropy.size()); ++t) {
      csv << k << t << episode.entropy[static_cast<std::size_t>(t)]
          << episode.rewards[static_cast<std::size_t>(t)] << (t >= skip_ ? 1 : 0);
      csv.end_row();
    }
  }
  csv.write(base + ".csv");
  written.push_back(base + ".csv");
  return written;
}

}  // namespace dstudio::viz
