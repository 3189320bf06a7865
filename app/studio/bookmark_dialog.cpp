// The bookmark dialog. See bookmark_dialog.h.

#include "bookmark_dialog.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSpinBox>

namespace dstudio::studio {

std::optional<Bookmark> askBookmark(QWidget* parent, BookmarkPlace on, const QString& run, int step,
                                    int max_step) {
  QDialog dialog(parent);
  dialog.setObjectName(QStringLiteral("bookmarkDialog"));
  dialog.setWindowTitle(on == BookmarkPlace::Viewer ? QObject::tr("Bookmark a Step of the Episode")
                                                    : QObject::tr("Bookmark a Step of the Run"));
  auto* form = new QFormLayout(&dialog);
  auto* at = new QSpinBox;
  at->setRange(0, std::max(0, max_step));
  at->setValue(std::clamp(step, 0, std::max(0, max_step)));
  auto* name = new QLineEdit;
  name->setMaxLength(200);
  name->setPlaceholderText(QObject::tr("step %1").arg(step));
  auto* note = new QPlainTextEdit;
  note->setPlaceholderText(QObject::tr("What happens here (optional)"));
  note->setFixedHeight(90);
  form->addRow(QObject::tr("Step"), at);
  form->addRow(QObject::tr("Name"), name);
  form->addRow(QObject::tr("Note"), note);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return std::nullopt;
  Bookmark b;
  b.on = on;
  b.run = run.toStdString();
  b.step = at->value();
  const QString given = name->text().simplified();
  b.name = (given.isEmpty() ? QObject::tr("step %1").arg(b.step) : given).toStdString();
  b.note = note->toPlainText().left(4000).toStdString();
  return b;
}

QString bookmarkLabel(const Bookmark& bookmark) {
  return QObject::tr("step %1 · %2").arg(bookmark.step).arg(QString::fromStdString(bookmark.name));
}

}  // namespace dstudio::studio
