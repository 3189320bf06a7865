// One training run of the Training tab. See training_run.h.

#include "training_run.h"

#include <QDir>
#include <QObject>

#include "dstudio/analysis/metrics_row.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/evaluation.h"

namespace dstudio::studio {
namespace {

TrainingRun::State from(models::TrainingState state) {
  switch (state) {
    case models::TrainingState::Idle:
      return TrainingRun::State::Starting;
    case models::TrainingState::Running:
      return TrainingRun::State::Running;
    case models::TrainingState::Paused:
      return TrainingRun::State::Paused;
    case models::TrainingState::Finished:
      return TrainingRun::State::Finished;
    case models::TrainingState::Cancelled:
      return TrainingRun::State::Cancelled;
    case models::TrainingState::Failed:
      return TrainingRun::State::Failed;
  }
  return TrainingRun::State::Failed;
}

void append(analysis::Curve& curve, double x, double y) {
  curve.x.push_back(x);
  curve.y.push_back(y);
}

}  // namespace

TrainingRun::TrainingRun(QString dir, QString label, std::shared_ptr<const data::Dataset> dataset,
                         std::unique_ptr<models::Trainer> trainer)
    : dir_(QDir(dir).absolutePath()),
      name_(QDir(dir).dirName()),
      label_(std::move(label)),
      seed_(QString::number(trainer->training().seed)),
      total_(trainer->training().steps),
      config_(models::run_config_values(trainer->variant(), trainer->training())),
      dataset_(std::move(dataset)),
      trainer_(std::move(trainer)) {}

TrainingRun::TrainingRun(models::RunFolder folder)
    : dir_(QString::fromStdString(folder.dir.string())),
      name_(QString::fromStdString(folder.name)),
      label_(QString::fromStdString(folder.label)),
      seed_(QString::fromStdString(folder.seed)),
      total_(folder.total_steps),
      config_(std::move(folder.config)),
      metrics_(std::move(folder.metrics)),
      state_(folder.complete ? State::Finished : State::Incomplete),
      note_(QObject::tr("added from disk (%1)").arg(QString::fromStdString(metrics_.source))) {}

QString TrainingRun::configValue(const QString& key) const {
  const std::string k = key.toStdString();
  for (const auto& [name, value] : config_)
    if (name == k) return QString::fromStdString(value);
  return {};
}

TrainingRun::~TrainingRun() {
  if (trainer_) trainer_->cancel();  // the trainer's destructor joins its thread
}

void TrainingRun::start(std::int64_t eval_every, int eval_episodes) {
  trainer_->on_progress([this](const models::TrainingProgress& p) {
    std::lock_guard lock(inbox_mutex_);
    inbox_.push_back(p);
  });
  if (eval_every > 0) {
    auto evaluate = models::evaluation_hook(*dataset_, trainer_->training(), eval_episodes);
    trainer_->on_evaluation([this, evaluate](models::DecisionModelImpl& model, std::int64_t step) {
      auto result = evaluate(model, step);
      std::lock_guard lock(inbox_mutex_);
      inbox_evaluations_.emplace_back(step, result);
      return result;
    });
  }
  state_ = State::Running;
  active_ = true;
  trainer_->start();
}

bool TrainingRun::drain() {
  if (!active_) return false;
  // The state first: whatever was pushed before a final state is then in the inbox.
  const State state = from(trainer_->state());
  std::vector<models::TrainingProgress> progress;
  std::vector<std::pair<std::int64_t, models::EvaluationResult>> evaluations;
  {
    std::lock_guard lock(inbox_mutex_);
    progress.swap(inbox_);
    evaluations.swap(inbox_evaluations_);
  }
  auto& columns = metrics_.columns;
  for (const auto& p : progress) {
    const auto step = static_cast<double>(p.step);
    append(columns[analysis::metrics::kLoss], step, p.loss);
    append(columns[analysis::metrics::kLearningRate], step, p.learning_rate);
    append(columns[analysis::metrics::kStepsPerSecond], step, p.steps_per_second);
    last_ = p;
  }
  for (const auto& [step, result] : evaluations)
    for (const auto& [key, value] : result) append(columns[key], static_cast<double>(step), value);
  const bool changed = !progress.empty() || !evaluations.empty() || state != state_;
  state_ = state;
  if (!isFinal(state)) return changed;
  trainer_->wait();
  active_ = false;
  pause_requested_ = false;
  if (state == State::Failed) {
    note_ = QString::fromStdString(trainer_->error());
  } else if (state == State::Cancelled) {
    // As the command line does on Ctrl-C: keep what was learnt, resumable.
    try {
      const auto saved = trainer_->save_checkpoint();
      note_ = QObject::tr("stopped at step %1; %2 keeps it (dstudio train --resume)")
                  .arg(trainer_->step())
                  .arg(QString::fromStdString(saved.filename().string()));
    } catch (const std::exception& e) {
      note_ = QObject::tr("stopped at step %1; no checkpoint: %2")
                  .arg(trainer_->step())
                  .arg(QString::fromStdString(e.what()));
    }
  }
  trainer_->release_folder();  // written for good: `dstudio train --resume` may take it on
  return true;
}

void TrainingRun::pause() {
  if (!active_) return;
  trainer_->pause();
  pause_requested_ = true;
}

void TrainingRun::resume() {
  if (!active_) return;
  trainer_->resume();
  pause_requested_ = false;
}

void TrainingRun::cancel() {
  if (!active_) return;
  trainer_->cancel();
  cancel_requested_ = true;
}

void TrainingRun::wait() {
  if (active_) trainer_->wait();
}

std::int64_t TrainingRun::step() const {
  const auto loss = metrics_.columns.find(analysis::metrics::kLoss);
  const bool has_loss = loss != metrics_.columns.end() && !loss->second.y.empty();
  return active_ || !has_loss ? last_.step : static_cast<std::int64_t>(loss->second.x.back());
}

QString TrainingRun::stateName(State state) {
  switch (state) {
    case State::Starting:
      return QObject::tr("Starting");
    case State::Running:
      return QObject::tr("Running");
    case State::Paused:
      return QObject::tr("Paused");
    case State::Finished:
      return QObject::tr("Finished");
    case State::Cancelled:
      return QObject::tr("Cancelled");
    case State::Failed:
      return QObject::tr("Failed");
    case State::Incomplete:
      return QObject::tr("Incomplete");
  }
  return QStringLiteral("?");
}

bool TrainingRun::isFinal(State state) {
  return state == State::Finished || state == State::Cancelled || state == State::Failed;
}

std::optional<double> TrainingRun::last(const char* key) const {
  const auto it = metrics_.columns.find(key);
  if (it == metrics_.columns.end() || it->second.y.empty()) return std::nullopt;
  return it->second.y.back();
}

}  // namespace dstudio::studio
