// A workspace's figure recipes drawn again by the command line. See figure_render_job.h.

#include "figure_render_job.h"

#include <signal.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <QStandardPaths>

#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"

namespace dstudio::studio {

FigureRenderJob::FigureRenderJob(QObject* parent) : QObject(parent), process_(new QProcess(this)) {
  process_->setProcessChannelMode(QProcess::MergedChannels);
  // A group of its own: a clip is drawn by a studio (and an encoder) the command line starts,
  // which a cancel ends with it.
  process_->setChildProcessModifier([] { ::setpgid(0, 0); });
  connect(process_, &QProcess::finished, this, &FigureRenderJob::done);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) done(-1, QProcess::CrashExit);
  });
}

FigureRenderJob::~FigureRenderJob() {
  cancelled_ = true;
  if (process_->state() != QProcess::NotRunning) {
    killGroup();
    process_->waitForFinished(5000);
  }
}

void FigureRenderJob::killGroup() {
  if (const qint64 pid = process_->processId(); pid > 0) ::kill(-static_cast<pid_t>(pid), SIGKILL);
  process_->kill();
}

QString FigureRenderJob::program() {
  const QString beside = QDir(QCoreApplication::applicationDirPath()).filePath("dstudio");
  if (QFileInfo(beside).isExecutable()) return beside;
  return QStandardPaths::findExecutable(QStringLiteral("dstudio"));
}

bool FigureRenderJob::start(const QStringList& recipes, const QString& folder) {
  error_.clear();
  if (running_) {
    error_ = tr("Figures are being drawn already.");
    return false;
  }
  if (recipes.isEmpty()) {
    error_ = tr("The workspace keeps no figure recipes: add one first.");
    return false;
  }
  if (program().isEmpty()) {
    error_ = tr("dstudio, which draws recipes, is neither beside the studio nor on PATH.");
    return false;
  }
  recipes_ = recipes;
  outs_.clear();
  results_.clear();
  QSet<QString> taken;
  for (const auto& path : recipes) {
    // The figure's own name in its recipe's first format; an unreadable recipe by its file name
    // (the command line then says why it cannot be drawn).
    QString name = QFileInfo(path).fileName().section('.', 0, 0);
    QString format = QStringLiteral("pdf");
    try {
      const auto recipe = read_figure_recipe(path.toStdString());
      name = QString::fromStdString(recipe.figure.name);
      if (!recipe.figure.formats.empty())
        format = QString::fromStdString(recipe.figure.formats.front());
    } catch (const Error&) {
    }
    QString unique = name;
    for (int k = 2; taken.contains(unique); ++k) unique = QStringLiteral("%1-%2").arg(name).arg(k);
    taken.insert(unique);
    outs_ << QDir(folder).filePath(unique + "." + format);
  }
  running_ = true;
  cancelled_ = false;
  next();
  return true;
}

void FigureRenderJob::cancel() {
  if (!running_) return;
  cancelled_ = true;
  // The command line writes its figure under a temporary name and renames it whole: killed, it
  // leaves nothing behind (a clip's unfinished video is removed once it has ended).
  killGroup();
}

void FigureRenderJob::next() {
  const int index = static_cast<int>(results_.size());
  if (cancelled_ || index >= recipes_.size()) {
    running_ = false;
    emit finished(cancelled_);
    return;
  }
  emit progressed(index, static_cast<int>(recipes_.size()), recipes_[index]);
  process_->start(program(), {QStringLiteral("figure"), QStringLiteral("render"), recipes_[index],
                              QStringLiteral("--out"), outs_[index]});
}

void FigureRenderJob::done(int exit_code, QProcess::ExitStatus status) {
  if (!running_) return;
  const int index = static_cast<int>(results_.size());
  Result r;
  r.recipe = recipes_[index];
  r.out = outs_[index];
  r.ok = !cancelled_ && status == QProcess::NormalExit && exit_code == 0;
  if (cancelled_) QFile::remove(r.out + QStringLiteral(".part"));
  const QString said = QString::fromUtf8(process_->readAll()).trimmed();
  r.message = cancelled_                                         ? tr("cancelled")
              : status == QProcess::CrashExit && exit_code == -1 ? process_->errorString()
              : said.isEmpty()                                   ? tr("exit code %1").arg(exit_code)
                                                                 : said.section('\n', -1);
  results_.push_back(r);
  emit rendered(index);
  next();
}

}  // namespace dstudio::studio
