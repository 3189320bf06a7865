#include "user_guide.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QImage>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

#include "dstudio/common/resources.h"

namespace dstudio::studio {

namespace {
// Screenshots are as wide as the window they show; they are drawn at most as wide as the page.
class GuideBrowser : public QTextBrowser {
 public:
  QVariant loadResource(int type, const QUrl& name) override {
    QVariant resource = QTextBrowser::loadResource(type, name);
    if (type != QTextDocument::ImageResource || resource.isNull()) return resource;
    QImage image = resource.canConvert<QImage>() ? resource.value<QImage>()
                                                 : QImage::fromData(resource.toByteArray());
    const int widest = std::max(320, viewport()->width() - 40);
    if (image.isNull() || image.width() <= widest) return resource;
    return image.scaledToWidth(widest, Qt::SmoothTransformation);
  }
};
}  // namespace

QString userGuidePath() {
  const auto dir = resources_dir();
  const auto base = dir.empty() ? std::filesystem::path("share/decision-studio") : dir;
  return QString::fromStdString((base / "guide" / "user-guide.md").string());
}

UserGuideDialog::UserGuideDialog(QWidget* parent) : QDialog(parent), browser_(new GuideBrowser) {
  setWindowTitle(tr("Decision Studio User Guide"));
  resize(900, 760);
  browser_->setOpenExternalLinks(true);
  const QString path = userGuidePath();
  if (QFileInfo(path).isReadable()) {
    // The guide's images are named relative to it; the source URL resolves them.
    browser_->setSource(QUrl::fromLocalFile(path), QTextDocument::MarkdownResource);
    loaded_ = !browser_->document()->isEmpty();
  }
  if (!loaded_)
    browser_->setMarkdown(
        tr("# The user guide is missing\n\nIt should be at `%1`. Reinstall the studio, or set "
           "`DSTUDIO_RESOURCES` to the folder of its resources.")
            .arg(path));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(browser_);
  layout->addWidget(buttons);
}

}  // namespace dstudio::studio
