#include "plugins_dialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "dstudio/plugins/loader.h"
#include "dstudio/plugins/plugin.h"

namespace dstudio::studio {

PluginsDialog::PluginsDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Plugins"));
  resize(820, 420);
  auto* layout = new QVBoxLayout(this);
  QStringList folders;
  for (const auto& f : plugins::plugin_folders())
    folders << QString::fromStdString(f.string()).toHtmlEscaped();
  auto* intro = new QLabel(
      tr("Plugin interface %1, LibTorch %2. Plugins are loaded at start-up from "
         "DSTUDIO_PLUGIN_PATH, %3 and the studio's "
         "resources.<br>Folders found: %4")
          .arg(DSTUDIO_PLUGIN_ABI_VERSION)
          .arg(QStringLiteral(DSTUDIO_SDK_TORCH_VERSION),
               QString::fromStdString(plugins::user_plugin_folder().string()).toHtmlEscaped(),
               folders.isEmpty() ? tr("none") : folders.join(QStringLiteral(", "))),
      this);
  intro->setWordWrap(true);
  intro->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(intro);

  auto* tree = new QTreeWidget(this);
  tree->setColumnCount(3);
  tree->setHeaderLabels({tr("Plugin"), tr("Status"), tr("Adds / why refused")});
  tree->setRootIsDecorated(true);
  tree->setWordWrap(true);
  const auto records = plugins::plugin_records();
  for (const auto& r : records) {
    auto* item = new QTreeWidgetItem(tree);
    const QString name =
        r.name.empty() ? QString::fromStdString(std::filesystem::path(r.file).filename().string())
                       : QString::fromStdString(r.name + " " + r.version);
    item->setText(0, name);
    item->setToolTip(0, QString::fromStdString(r.file));
    item->setText(1, r.loaded ? tr("loaded") : tr("refused"));
    item->setForeground(1, r.loaded ? palette().color(QPalette::Text) : QColor(0xD5, 0x5E, 0x00));
    if (!r.loaded) {
      item->setText(2, QString::fromStdString(r.error));
      item->setToolTip(2, QString::fromStdString(r.file + ": " + r.error));
      continue;
    }
    item->setText(2, QString::fromStdString(r.description));
    auto add = [&](const QString& what, const std::vector<std::string>& names) {
      if (names.empty()) return;
      QStringList list;
      for (const auto& n : names) list << QString::fromStdString(n);
      auto* child = new QTreeWidgetItem(item);
      child->setText(0, what);
      child->setText(2, list.join(QStringLiteral(", ")));
    };
    add(tr("variants"), r.variants);
    add(tr("token mixers"), r.mixers);
    add(tr("analyses"), r.analyses);
    add(tr("dataset formats"), r.dataset_formats);
    item->setExpanded(true);
  }
  if (records.empty()) {
    auto* item = new QTreeWidgetItem(tree);
    item->setText(0, tr("No plugins found"));
  }
  tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  tree->header()->setStretchLastSection(true);
  layout->addWidget(tree, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

}  // namespace dstudio::studio
