// The Viewer tab's interventions and forks: the tabs beside the conditioning, what they ask of the
// player, and what is drawn of them (ghosts, limb colours, overlay lines). See viewer_panel.h.
// The edits of a spec list are core's (models/playback.h), shared with decision-viewer.

// Index of this file:
//   [SECTION] The Interventions tab
//   [SECTION] The Forks tab
//   [SECTION] Refreshing the tabs
//   [SECTION] Asking the player
//   [SECTION] Effects in the scene
//   [SECTION] The timeline's forks and recipe
//   [SECTION] Clips

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "dstudio/common/error.h"
#include "dstudio/common/palette.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/interventions.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/scene_view.h"
#include "dstudio/viz/target_chooser.h"
#include "view_recipes.h"
#include "viewer_panel.h"

namespace dstudio::studio {
namespace {

QColor colour_of(palette::Rgb c) {
  return QColor(c.r, c.g, c.b);
}

QString joined(const std::vector<std::string>& specs) {
  QStringList out;
  for (const auto& s : specs) out << QString::fromStdString(s);
  return out.join(QStringLiteral(", "));
}

std::vector<std::string> split_specs(const QString& text) {
  std::vector<std::string> out;
  for (const auto& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (const auto t = part.trimmed(); !t.isEmpty()) out.push_back(t.toStdString());
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The Interventions tab

QWidget* ViewerPanel::buildInterventionsTab() {
  auto* tab = new QWidget;
  auto* grid = new QGridLayout(tab);
  head_grid_ = new QWidget;
  head_grid_->setToolTip(
      tr("Each head (or a mixer without heads) and each MLP of every layer: a click cycles "
         "zeroed, mean-ablated, as trained, from the step on screen"));
  grid->addWidget(head_grid_, 0, 0, 1, 4);
  // What a click on the grid does: ablate, or patch the site from the window at another target.
  click_mode_ = new QComboBox;
  click_mode_->addItem(tr("A click ablates (zero, mean, off)"));
  click_mode_->addItem(tr("A click patches from target"));
  click_mode_->setToolTip(
      tr("Patching takes the site's value, at every step, from the same "
         "window with the returns-to-go of another target"));
  patch_target_ = new QDoubleSpinBox;
  patch_target_->setRange(-1e6, 1e6);
  patch_target_->setDecimals(0);
  patch_target_->setSingleStep(100);
  patch_target_->setValue(1200);
  patch_target_->setObjectName(QStringLiteral("patchTarget"));
  patch_target_->setPrefix(tr("from target "));
  patch_target_->setToolTip(
      tr("The target return whose window a click's patch takes the site's value from (with "
         "\"A click patches from target\")"));
  auto* mode = new QVBoxLayout;
  mode->addWidget(click_mode_);
  mode->addWidget(patch_target_);
  mode->addStretch(1);
  grid->addLayout(mode, 0, 4, 1, 2);

  context_ = new QSpinBox;
  context_->setSuffix(tr(" steps"));
  context_->setToolTip(
      tr("How far back every token mixer may look, the step of the query "
         "included; the whole window is no limit"));
  connect(context_, &QSpinBox::editingFinished, this, [this] {
    if (!live_) return;
    const int K = live_->config().context_length;
    applySpecs(
        models::with_context(interventions(), context_->value() >= K ? 0 : context_->value()));
  });
  grid->addWidget(new QLabel(tr("Context")), 1, 0);
  grid->addWidget(context_, 1, 1);
  effects_ = new QCheckBox(tr("Colour the limbs by the change"));
  effects_->setToolTip(
      tr("Each actuated limb in the colour of how much the interventions in "
         "force change its joint's action (legend over the scene)"));
  connect(effects_, &QCheckBox::toggled, this, &ViewerPanel::setEffects);
  grid->addWidget(effects_, 1, 2, 1, 4);

  steer_file_ = new QLineEdit;
  steer_file_->setPlaceholderText(tr("direction_L2.json (dstudio analyze steering)"));
  auto* browse = new QToolButton;
  browse->setText(QStringLiteral("…"));
  browse->setToolTip(tr("Choose a direction written by the steering analysis"));
  connect(browse, &QToolButton::clicked, this, [this] {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Steering direction"), {}, tr("Directions (*.json)"));
    if (!file.isEmpty()) steer_file_->setText(file);
  });
  steer_layer_ = new QSpinBox;
  steer_layer_->setPrefix(tr("after block "));
  steer_alpha_ = new QDoubleSpinBox;
  steer_alpha_->setRange(-20.0, 20.0);
  steer_alpha_->setSingleStep(0.25);
  steer_alpha_->setValue(1.0);
  steer_alpha_->setPrefix(QStringLiteral("ALPHA "));
  auto* steer = new QPushButton(tr("Steer"));
  connect(steer, &QPushButton::clicked, this, [this] {
    if (steer_file_->text().trimmed().isEmpty()) return;
    applySpecs(models::with_steering(interventions(), steer_layer_->value(), steer_alpha_->value(),
                                     steer_file_->text().trimmed().toStdString()));
  });
  grid->addWidget(new QLabel(tr("Steer")), 2, 0);
  grid->addWidget(steer_file_, 2, 1, 1, 2);
  grid->addWidget(browse, 2, 3);
  grid->addWidget(steer_layer_, 2, 4);
  auto* alpha_row = new QHBoxLayout;
  alpha_row->addWidget(steer_alpha_);
  alpha_row->addWidget(steer);
  grid->addLayout(alpha_row, 2, 5);

  specs_ = new QLineEdit;
  specs_->setPlaceholderText(tr("none: e.g. head:2.1=zero, mlp:3=mean, context:3"));
  specs_->setToolTip(
      tr("The interventions in force, in dstudio predict's grammar; edit and press "
         "Enter to apply them from the step on screen"));
  connect(specs_, &QLineEdit::returnPressed, this,
          [this] { applySpecs(split_specs(specs_->text())); });
  auto* clear = new QPushButton(tr("Clear"));
  connect(clear, &QPushButton::clicked, this, [this] { applySpecs({}); });
  grid->addWidget(new QLabel(tr("In force")), 3, 0);
  grid->addWidget(specs_, 3, 1, 1, 4);
  grid->addWidget(clear, 3, 5);
  grid->setColumnStretch(1, 1);
  return tab;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The Forks tab

QWidget* ViewerPanel::buildForksTab() {
  auto* tab = new QWidget;
  auto* grid = new QGridLayout(tab);
  grid->addLayout(buildForkButtons(), 0, 0, 1, 4);

  addForkList(grid);
  grid->addLayout(buildDivergenceRow(), 3, 0, 1, 4);
  grid->setColumnStretch(3, 1);
  return tab;
}

QGridLayout* ViewerPanel::buildForkButtons() {
  fork_target_ = new QDoubleSpinBox;
  fork_target_->setRange(-1e6, 1e6);
  fork_target_->setDecimals(0);
  fork_target_->setSingleStep(100);
  auto* by_target = new QPushButton(tr("Fork with This Target"));
  by_target->setToolTip(
      tr("A ghost of the episode from the step on screen, aiming at this "
         "target; it plays beside the episode on the same clock"));
  connect(by_target, &QPushButton::clicked, this, [this] {
    models::BranchChange change;
    change.target = fork_target_->value();
    change.label = "target=" + viz::fixed_text(fork_target_->value(), 0).toStdString();
    forkSaying(change);
  });
  auto* by_specs = new QPushButton(tr("Fork with the Interventions Typed"));
  by_specs->setToolTip(
      tr("A ghost of the episode from the step on screen with the "
         "interventions in the Interventions tab's field instead of those in "
         "force"));
  connect(by_specs, &QPushButton::clicked, this, [this] {
    models::BranchChange change;
    change.clear_interventions = true;
    change.interventions = split_specs(specs_->text());
    change.label = change.interventions.empty() ? std::string("interventions=none")
                                                : joined(change.interventions).toStdString();
    forkSaying(change);
  });
  auto* by_checkpoint = new QPushButton(tr("Fork with Another Checkpoint…"));
  by_checkpoint->setToolTip(
      tr("Another policy of the same task takes over from the step on "
         "screen, beside this one (at step 0: the same seed, two models)"));
  connect(by_checkpoint, &QPushButton::clicked, this, [this] {
    const QString file = QFileDialog::getOpenFileName(this, tr("Checkpoint to fork with"), {},
                                                      tr("Checkpoints (*.pt)"));
    if (file.isEmpty()) return;
    models::BranchChange change;
    change.checkpoint = file.toStdString();
    change.label = "checkpoint=" + file.toStdString();
    forkSaying(change);
  });
  // D4RL's Adroit tasks ship the DAPG expert that made their expert data: it takes over from the
  // step on screen, so that the model and the expert are seen from the same state.
  expert_fork_ = new QPushButton(tr("The Expert Takes Over from Here"));
  expert_fork_->setObjectName(QStringLiteral("expertFork"));
  expert_fork_->setToolTip(
      tr("The task's DAPG expert (the behaviour policy of D4RL's expert data, its mean action) "
         "plays on from the step on screen, beside this run"));
  connect(expert_fork_, &QPushButton::clicked, this,
          [this] { forkSaying(models::parse_branch_change("behaviour=dapg")); });
  // Two rows of buttons, so that the tab is no wider than the panel beside a lesson.
  auto* by_change = new QGridLayout;
  by_change->addWidget(fork_target_, 0, 0);
  by_change->addWidget(by_target, 0, 1);
  by_change->addWidget(by_specs, 1, 0, 1, 2);
  by_change->addWidget(by_checkpoint, 1, 2);
  by_change->addWidget(expert_fork_, 2, 0, 1, 2);
  by_change->setColumnStretch(3, 1);
  return by_change;
}

void ViewerPanel::addForkList(QGridLayout* grid) {
  forks_ = new QLabel(tr("No fork: the episode plays alone."));
  forks_->setWordWrap(true);
  fork_choice_ = new QComboBox;
  auto* rewind = new QPushButton(tr("Rewind to Its Fork"));
  connect(rewind, &QPushButton::clicked, this, [this] {
    const int b = fork_choice_->currentIndex();
    if (live_ && b >= 0 && b < static_cast<int>(branches_.size()))
      seek(branches_[static_cast<std::size_t>(b)].fork_step);
  });
  auto* remove = new QPushButton(tr("Remove"));
  connect(remove, &QPushButton::clicked, this, [this] {
    const int b = fork_choice_->currentIndex();
    if (live_ && b >= 0) live_->remove_branch(b);
  });
  auto* remove_all = new QPushButton(tr("Remove All"));
  connect(remove_all, &QPushButton::clicked, this, &ViewerPanel::removeForks);
  grid->addWidget(forks_, 1, 0, 1, 4);
  auto* row = new QHBoxLayout;
  row->addWidget(fork_choice_, 1);
  row->addWidget(rewind);
  row->addWidget(remove);
  row->addWidget(remove_all);
  grid->addLayout(row, 2, 0, 1, 4);
}

QHBoxLayout* ViewerPanel::buildDivergenceRow() {
  // What the timeline's right axis shows for the forks, as decision-viewer offers it.
  divergence_ = new QComboBox;
  divergence_->setObjectName(QStringLiteral("divergence"));
  divergence_->setToolTip(
      tr("What the timeline's right axis shows with forks: each fork's action "
         "difference from the main run, or one joint of every run"));
  connect(divergence_, &QComboBox::currentIndexChanged, this, [this] {
    if (!live_) return;
    timeline_->setForks(forkCurves(live_->state()));
    timeline_->setDivergence(
        divergence_->currentIndex() <= 0 ? tr("action difference") : divergence_->currentText(),
        mainDivergence());
    timeline_->replotIfChanged();
  });
  auto* axis_row = new QHBoxLayout;
  axis_row->addWidget(new QLabel(tr("Timeline's right axis:")));
  axis_row->addWidget(divergence_, 1);
  return axis_row;
}

void ViewerPanel::rebuildDivergenceChoice() {
  const QSignalBlocker block(divergence_);
  divergence_->clear();
  divergence_->addItem(tr(models::kActionDifferenceName), -1);
  if (!live_) return;
  try {
    const auto model = env::load_model(live_->task());
    for (const auto& j : env::joint_coordinates(model.get()))
      divergence_->addItem(QString::fromStdString(j.name) + tr(" (qpos)"), j.qpos_index);
  } catch (const Error&) {
    // A task whose model does not load has no joints to offer; the difference stays.
  }
  timeline_->setDivergence(tr("action difference"));
}

std::vector<double> ViewerPanel::mainDivergence(int frames) const {
  const int at = divergence_ ? divergence_->currentData().toInt() : -1;
  if (!live_ || at < 0) return {};
  auto kept = live_->frames();
  if (frames >= 0 && static_cast<int>(kept.size()) > frames)
    kept.resize(static_cast<std::size_t>(frames));
  return models::joint_trace(kept, at);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Refreshing the tabs

void ViewerPanel::rebuildHeadGrid() {
  delete head_grid_->layout();
  for (auto* child : head_grid_->findChildren<QWidget*>(Qt::FindDirectChildrenOnly)) delete child;
  auto* grid = new QGridLayout(head_grid_);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setHorizontalSpacing(3);
  if (!live_ || live_->replay()) {
    grid->addWidget(new QLabel(tr("A dataset episode replays without a policy: nothing to "
                                  "intervene on.")),
                    0, 0);
    return;
  }
  if (live_->behaviour()) {
    grid->addWidget(new QLabel(tr("A behaviour policy (an MLP) plays: it has no attention heads "
                                  "to intervene on. Fork it in the Forks tab.")),
                    0, 0);
    return;
  }
  const auto& c = live_->config();
  const auto button = [this](const QString& label, const std::string& site) {
    auto* b = new QToolButton;
    b->setText(label);
    b->setObjectName(QString::fromStdString(site));
    b->setAutoRaise(false);
    connect(b, &QToolButton::clicked, this, [this, site] {
      const auto specs = interventions();
      const bool from_other = models::patched(specs, site);
      if (click_mode_->currentIndex() == 1)
        return applySpecs(models::with_patch(
            specs, site,
            from_other ? std::nullopt : std::optional<double>(patch_target_->value())));
      applySpecs(models::with_ablation(models::with_patch(specs, site, std::nullopt), site,
                                       models::next_ablation(models::ablation_of(specs, site))));
    });
    return b;
  };
  int widest = 0;
  for (int l = 1; l <= c.layers; ++l) {
    grid->addWidget(new QLabel(tr("layer %1").arg(l)), l - 1, 0);
    const int heads = models::layer_heads(c, l);
    int col = 1;
    if (heads > 0) {
      for (int h = 1; h <= heads; ++h)
        grid->addWidget(
            button(tr("h%1").arg(h), "head:" + std::to_string(l) + "." + std::to_string(h)), l - 1,
            col++);
    } else if (models::layer_mixer(c, l) != "none") {
      grid->addWidget(
          button(QString::fromStdString(models::layer_mixer(c, l)), "mixer:" + std::to_string(l)),
          l - 1, col++);
    }
    grid->addWidget(button(tr("MLP"), "mlp:" + std::to_string(l)), l - 1, col++);
    widest = std::max(widest, col);
  }
  grid->setColumnStretch(widest, 1);
  context_->setRange(1, c.context_length);
  context_->setValue(c.context_length);
  steer_layer_->setRange(1, std::max(1, c.layers));
  specs_shown_ = {"\x01"};  // the grid's colours are set by the next refresh
  forks_generation_ = ~0ull;
}

void ViewerPanel::refreshSurgery() {
  if (!live_ || !head_grid_) return;
  // The grid's buttons and the field follow the interventions in force.
  const auto specs = interventions();
  if (specs != specs_shown_) {
    specs_shown_ = specs;
    for (auto* b : head_grid_->findChildren<QToolButton*>()) {
      const auto site = b->objectName().toStdString();
      auto now = models::ablation_of(specs, site);
      if (models::patched(specs, site)) now = "patched from the other target";
      const auto c = now == "zero"   ? palette::kVermillion
                     : now == "mean" ? palette::kBlue
                                     : palette::kBluishGreen;
      b->setStyleSheet(now.empty() ? QString()
                                   : QStringLiteral("QToolButton { background: %1; color: white; }")
                                         .arg(colour_of(c).name()));
      b->setToolTip(QStringLiteral("%1: %2").arg(
          b->objectName(), now.empty()
                               ? tr("as trained; a click zeroes it")
                               : QString::fromStdString(now) + tr("; a click for the next")));
    }
    if (!specs_->hasFocus()) specs_->setText(joined(specs));
    const int context = models::context_of(specs);
    const QSignalBlocker block(context_);
    context_->setValue(context > 0 ? context : live_->config().context_length);
  }
  const auto state = shown_;
  if (state.branch_generation != forks_generation_) {
    forks_generation_ = state.branch_generation;
    branches_ = live_->branches();
    const QSignalBlocker block(fork_choice_);
    fork_choice_->clear();
    QStringList lines;
    for (std::size_t b = 0; b < branches_.size(); ++b) {
      const auto& style = palette::kBranches[b % palette::kBranches.size()];
      const QString line = QString::fromStdString(
          models::fork_legend(static_cast<int>(b), branches_[b].fork_step, branches_[b].label));
      fork_choice_->addItem(line);
      fork_choice_->setItemData(static_cast<int>(b), colour_of(style.colour), Qt::DecorationRole);
      lines << QStringLiteral("<span style=\"color:%1\">■</span> %2")
                   .arg(colour_of(style.colour).name(), line.toHtmlEscaped());
    }
    forks_->setText(branches_.empty()
                        ? tr("No fork: the episode plays alone.")
                        : tr("Each ghost is the episode forked at a step with one change, played "
                             "beside it on the same clock.<br>") +
                              lines.join(QStringLiteral("<br>")));
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Asking the player

void ViewerPanel::applySpecs(const std::vector<std::string>& specs) {
  try {
    setInterventions(specs);
  } catch (const Error& e) {
    emit message(QString::fromStdString(e.what()));
    specs_shown_ = {"\x01"};  // the field goes back to what is in force
    refreshSurgery();
  }
}

void ViewerPanel::setInterventions(const std::vector<std::string>& specs) {
  if (!live_) return;
  live_->set_interventions(specs);
  refreshSurgery();
}

std::vector<std::string> ViewerPanel::interventions() const {
  return live_ ? live_->interventions() : std::vector<std::string>{};
}

void ViewerPanel::fork(const models::BranchChange& change) {
  forkAt(shown_.cursor, change);
}

void ViewerPanel::forkAt(int step, const models::BranchChange& change) {
  if (!live_) return;
  live_->fork(step, change);
}

void ViewerPanel::forkSaying(const models::BranchChange& change) {
  try {
    fork(change);
  } catch (const Error& e) {
    emit message(QString::fromStdString(e.what()));
  }
}

void ViewerPanel::removeForks() {
  if (live_) live_->clear_branches();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Effects in the scene

void ViewerPanel::setEffects(bool on) {
  {
    const QSignalBlocker block(effects_);
    effects_->setChecked(on);
  }
  if (live_) live_->set_plain_actions(on);
  shown_.frame.reset();  // drawn again with or without the colours
  if (live_) showFrame(live_->state(), false);
}

bool ViewerPanel::effects() const {
  return effects_->isChecked();
}

render::SceneLayers ViewerPanel::sceneLayers(const models::PlaybackState& state) const {
  render::SceneLayers layers;
  for (std::size_t b = 0; b < state.branch_frames.size(); ++b)
    if (const auto& f = state.branch_frames[b])
      layers.ghosts.push_back(
          {f->physics.qpos, palette::kBranches[b % palette::kBranches.size()].colour});
  if (effects_->isChecked() && state.frame && live_) {
    // The action that brought the body here (a frame that has not acted yet shows its parent's).
    models::FramePtr f = state.frame;
    if (!f->acted && f->step > 0) {
      const auto before = live_->frames(f->step - 1);
      f = before.empty() ? nullptr : before.front();
    }
    layers.limbs.values =
        f ? models::action_change(*f, live_->task().act_dim)
          : std::vector<double>(static_cast<std::size_t>(live_->task().act_dim), 0.0);
    layers.limbs.scale = render::limb_colour_scale(live_->physics_model().get());
  }
  if (state.frame && live_) addTaskLayers(state, layers);
  return layers;
}

void ViewerPanel::addTaskLayers(const models::PlaybackState& state,
                                render::SceneLayers& layers) const {
  const auto& task = live_->task();
  const auto& f = *state.frame;
  // The goal always; the navigator's waypoint only for a dataset's episode, which was collected
  // following it (a policy is sent nowhere but the goal).
  if (task.markers)
    for (auto& m : task.markers(f.physics.qpos, f.physics.task_state))
      if (m.label != "waypoint" || live_->replay()) layers.markers.push_back(std::move(m));
  // The way the body went so far, where reaching a goal is the task; a fork's from its fork step
  // (before it, it is the main run's) in its colour.
  if (!task.goal_reaching) return;
  const auto path_to = [&f](const std::vector<models::FramePtr>& run, int first) {
    render::GroundPath path;
    const int last = std::min(f.step, static_cast<int>(run.size()) - 1);
    for (int i = std::max(0, first); i <= last; ++i) {
      const auto& q = run[static_cast<std::size_t>(i)]->physics.qpos;
      if (q.size() >= 2) path.points.push_back({q[0], q[1]});
    }
    return path;
  };
  layers.paths.push_back(path_to(live_->frames(), 0));
  const auto branches = live_->branches();
  for (std::size_t b = 0; b < branches.size() && b < state.branch_frames.size(); ++b) {
    auto path = path_to(live_->branch_frames(static_cast<int>(b)), branches[b].fork_step);
    path.colour = palette::kBranches[b % palette::kBranches.size()].colour;
    layers.paths.push_back(std::move(path));
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The timeline's forks and recipe

std::vector<viz::EpisodeTimeline::Fork> ViewerPanel::forkCurves(
    const models::PlaybackState& state) const {
  std::vector<viz::EpisodeTimeline::Fork> out;
  if (!live_) return out;
  const auto main = live_->frames();
  for (std::size_t b = 0; b < state.branch_frames.size(); ++b) {
    auto frames = live_->branch_frames(static_cast<int>(b));
    // A recording's timeline grows with the video: each fork to the step recorded.
    if (recording_ && static_cast<int>(frames.size()) > state.frames)
      frames.resize(static_cast<std::size_t>(state.frames));
    const auto& style = palette::kBranches[b % palette::kBranches.size()];
    viz::EpisodeTimeline::Fork f;
    f.name = tr("fork %1").arg(b + 1);
    f.colour = colour_of(style.colour);
    f.return_so_far.resize(frames.size());
    for (std::size_t t = 0; t < frames.size(); ++t) f.return_so_far[t] = frames[t]->return_so_far;
    const int joint = divergence_ ? divergence_->currentData().toInt() : -1;
    f.divergence =
        joint < 0 ? models::action_difference(frames, main) : models::joint_trace(frames, joint);
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<FigureRecipe> ViewerPanel::timelineRecipe() const {
  // A policy's episode: the checkpoint and seed, the conditioning wherever it changed, the forks.
  // A dataset's episode replayed has no policy to play it again.
  // A behaviour policy's episode is not a checkpoint's: the recipe has none to play it again.
  if (!live_ || live_->replay() || live_->behaviour() || !timeline_->hasFigure())
    return std::nullopt;
  recipes::TimelineShown shown;
  shown.checkpoint = live_->info().path;
  if (shown.checkpoint.empty()) return std::nullopt;
  shown.seed = live_->state().seed;
  shown.frames = timeline_->steps();
  auto frames = live_->frames();
  if (static_cast<int>(frames.size()) < shown.frames) return std::nullopt;
  frames.resize(static_cast<std::size_t>(shown.frames));
  shown.changes = models::condition_changes(frames);
  const auto branches = live_->branches();
  const auto& drawn = timeline_->forks();
  for (std::size_t b = 0; b < drawn.size() && b < branches.size(); ++b)
    shown.forks.push_back({branches[b].fork_step, branches[b].label,
                           static_cast<int>(drawn[b].return_so_far.size()),
                           branches[b].checkpoint});
  if (!drawn.empty() && divergence_ && divergence_->currentIndex() > 0) {
    shown.divergence = divergence_->currentData().toInt();
    shown.divergence_label = divergence_->currentText().toStdString();
  }
  for (const auto& b : bookmarks_on(bookmarks_, BookmarkPlace::Viewer))
    shown.bookmarks.push_back({b.step, b.name, b.note});
  return recipes::timeline_recipe(shown);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Clips

recipes::ClipLook ViewerPanel::clipLook() const {
  recipes::ClipLook l;
  l.camera = scene_->cameraView();
  // A camera following the torso looks wherever the body is: only a free one keeps its point.
  if (l.camera.track_body >= 0) l.camera.lookat_x = l.camera.lookat_y = 0.0;
  l.effects = effects_->isChecked();
  l.tab = acting_->currentIndex();
  l.target_field = target_->value();
  l.zeroing = static_cast<models::ModalityZeroing>(zeroing_->currentData().toInt());
  l.seed_field = seed_->value();
  l.attention_mode = static_cast<int>(attention_->mode());
  l.attention_layer = attention_->layer();
  l.attention_head = attention_->head();
  l.fork_target = fork_target_->value();
  l.click_mode = click_mode_->currentIndex();
  l.patch_target = patch_target_->value();
  l.divergence = divergence_->currentIndex() > 0 ? divergence_->currentData().toInt() : -1;
  l.font = font().toString().toStdString();
  return l;
}

void ViewerPanel::setClipLook(const recipes::ClipLook& l) {
  track_->setChecked(l.camera.track_body >= 0);
  scene_->setCameraView(l.camera);
  setEffects(l.effects);
  acting_->setCurrentIndex(l.tab);
  {
    // The fields as they were, without re-conditioning the policy (the run is the recipe's).
    const QSignalBlocker block_target(target_), block_zeroing(zeroing_);
    target_->setValue(l.target_field);
    target_from_->follow(l.target_field);
    zeroing_->setCurrentIndex(std::max(0, zeroing_->findData(static_cast<int>(l.zeroing))));
  }
  seed_->setValue(l.seed_field);
  attention_->setMode(static_cast<viz::AttentionMapView::Mode>(l.attention_mode));
  attention_->setLayer(l.attention_layer);
  attention_->setHead(l.attention_head);
  fork_target_->setValue(l.fork_target);
  click_mode_->setCurrentIndex(l.click_mode);
  patch_target_->setValue(l.patch_target);
  divergence_->setCurrentIndex(l.divergence < 0 ? 0
                                                : std::max(0, divergence_->findData(l.divergence)));
}

std::vector<models::TargetChoice> ViewerPanel::targetChoices() const {
  return target_from_->choices();
}

std::optional<FigureRecipe> ViewerPanel::clipRecipe(QString& why) const {
  if (!live_ || !clip_log_ || clip_log_->frames().empty() || !record_look_) return std::nullopt;
  if (live_->replay() || live_->info().path.empty()) {
    why = tr("a dataset's episode is replayed, not played by a policy");
    return std::nullopt;
  }
  if (live_->behaviour()) {
    why = tr("a behaviour policy plays, not a checkpoint that a recipe could load");
    return std::nullopt;
  }
  if (size() != record_panel_size_ ||
      (record_area_ == RecordArea::Scene ? scene_->size() : size()) != record_frame_size_) {
    why = tr("the panel was resized while it recorded");
    return std::nullopt;
  }
  if (clipLook() != *record_look_) {
    why = tr("the camera or the panel's settings changed while it recorded");
    return std::nullopt;
  }
  if (record_focus_shown_) {
    why =
        tr("a field had the keyboard's focus while it recorded, which a clip drawn again does "
           "not show");
    return std::nullopt;
  }
  const auto& log = clip_log_->frames();
  const auto frames = live_->frames();
  const auto branches = live_->branches();
  const auto in_range = [](const auto& v, int step) {
    return step >= 0 && step < static_cast<int>(v.size());
  };
  // The run kept now must show what every frame showed: the conditioning from each step it
  // changed, and the forks made from this run (not from one dropped since), on screen throughout.
  for (std::size_t b = 0; b < branches.size(); ++b) {
    const int at = branches[b].fork_step;
    const auto copied = live_->branch_frames(static_cast<int>(b), at);
    if (!in_range(frames, at) || copied.empty() ||
        copied.front()->physics.qpos != frames[static_cast<std::size_t>(at)]->physics.qpos ||
        copied.front()->physics.qvel != frames[static_cast<std::size_t>(at)]->physics.qvel) {
      why = tr("fork %1 was made from the episode before it was re-conditioned").arg(b + 1);
      return std::nullopt;
    }
  }
  for (std::size_t i = 0; i < log.size(); ++i) {
    const auto& shown = log[i];
    if (!in_range(frames, shown.step)) {
      why = tr("the episode no longer keeps step %1").arg(shown.step);
      return std::nullopt;
    }
    const auto& f = *frames[static_cast<std::size_t>(shown.step)];
    models::ClipLog::Frame again{
        shown.step, f.return_so_far, f.target, models::to_string(f.zeroing), f.interventions, {}};
    for (std::size_t b = 0; b < branches.size(); ++b) {
      auto at = live_->branch_frames(static_cast<int>(b), shown.step);
      if (at.empty()) at = live_->branch_frames(static_cast<int>(b));
      if (at.empty()) continue;
      const auto& bf = at.front()->step == shown.step ? at.front() : at.back();
      again.branches.push_back(
          {branches[b].label, branches[b].fork_step, bf->step, bf->return_so_far});
    }
    if (!(again == shown)) {
      why = tr("the episode or its forks changed while it was recorded (frame %1)").arg(i + 1);
      return std::nullopt;
    }
  }
  try {
    recipes::ClipShown clip;
    auto& run = clip.run;
    run.checkpoint = live_->info().path;
    run.seed = shown_.seed;
    run.changes = models::condition_changes({frames.begin(), frames.begin() + log.back().step + 1});
    for (const auto& b : branches) run.forks.push_back({b.fork_step, b.label, 0, b.checkpoint});
    run.divergence = record_look_->divergence;
    if (run.divergence >= 0) run.divergence_label = divergence_->currentText().toStdString();
    for (const auto& b : bookmarks_on(bookmarks_, BookmarkPlace::Viewer))
      run.bookmarks.push_back({b.step, b.name, b.note});
    clip.title = title_.toStdString();
    clip.first = record_first_;
    clip.frames = static_cast<int>(log.size());
    clip.fps = record_fps_;
    clip.speed = speed_before_;
    clip.scene_only = record_area_ == RecordArea::Scene;
    clip.width = record_frame_size_.width();
    clip.height = record_frame_size_.height();
    clip.panel_width = record_panel_size_.width();
    clip.panel_height = record_panel_size_.height();
    clip.targets = targetChoices();
    clip.look = *record_look_;
    return recipes::clip_recipe(clip);
  } catch (const Error& e) {
    why = QString::fromStdString(e.what());
    return std::nullopt;
  }
}

}  // namespace dstudio::studio
