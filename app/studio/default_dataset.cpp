#include "default_dataset.h"

#include "dstudio/behaviour/default_datasets.h"

namespace dstudio::studio {

namespace {
// The dataset the shipped checkpoints were trained on (the story: hopper medium-expert made by the
// shipped SAC policies); the checkpoints' file names follow it.
constexpr behaviour::StoryDataset kWindowDefault = behaviour::kStoryDataset;
}  // namespace

QString ensureDefaultDataset(const Progress& progress) {
  const auto path = behaviour::ensure_default_dataset(kWindowDefault.env, kWindowDefault.kind, progress, kWindowDefault.algorithm);
  return QString::fromStdString(path.string());
}

QString defaultCheckpoint(const QString& model) {
  return QStringLiteral(DSTUDIO_RESOURCES_DIR "/checkpoints/%1-%2-%3.pt")
      .arg(QString::fromUtf8(kWindowDefault.env), QString::fromUtf8(behaviour::to_string(kWindowDefault.kind)), model);
}

}  // namespace dstudio::studio
