#pragma once
/// \file
/// Help ▸ Plugins: the plugin folders, every plugin the studio tried, what each added, and why any
/// was refused (what `dstudio plugins` prints).

#include <QDialog>

namespace dstudio::studio {

class PluginsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit PluginsDialog(QWidget* parent = nullptr);
};

}  // namespace dstudio::studio
