#pragma once
// Help ▸ User Guide: the Markdown guide shipped with the studio (docs/user-guide.md, installed in
// share/decision-studio/guide), rendered with its screenshots in a browser of its own.

#include <QDialog>
#include <QString>

class QTextBrowser;

namespace dstudio::studio {

/// The user guide's file: guide/user-guide.md in the resources folder (dstudio/common/resources.h).
QString userGuidePath();

/// A non-modal window showing the user guide. When the file is missing it says where it looked.
class UserGuideDialog : public QDialog {
  Q_OBJECT
 public:
  explicit UserGuideDialog(QWidget* parent = nullptr);
  /// True when the guide was read (false: the browser shows why not).
  bool loaded() const { return loaded_; }
  QTextBrowser* browser() const { return browser_; }

 private:
  QTextBrowser* browser_;
  bool loaded_ = false;
};

}  // namespace dstudio::studio
