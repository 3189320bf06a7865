#include "default_dataset.h"

#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/common/resources.h"

namespace dstudio::studio {

namespace {
// The dataset the shipped checkpoints were trained on (the story: hopper medium-expert made by the
// shipped SAC policies); the checkpoints' file names follow it.
constexpr behaviour::StoryDataset kWindowDefault = behaviour::kStoryDataset;
}  // namespace

QString ensureDefaultDataset(const Progress& progress) {
  const auto path = behaviour::ensure_default_dataset(kWindowDefault.env, kWindowDefault.kind,
                                                      progress, kWindowDefault.algorithm);
  return QString::fromStdString(path.string());
}

QString defaultCheckpoint(const QString& model) {
  const QString name =
      QStringLiteral("%1-%2-%3.pt")
          .arg(QString::fromUtf8(kWindowDefault.env),
               QString::fromUtf8(behaviour::to_string(kWindowDefault.kind)), model);
  // A missing resources folder still gives a path, so opening it says which file is missing.
  const auto dir = resources_dir();
  return QString::fromStdString(
             (dir.empty() ? std::filesystem::path("share/decision-studio") : dir).string()) +
         QStringLiteral("/checkpoints/") + name;
}

}  // namespace dstudio::studio
