// The bookmark dialog. See bookmark_dialog.h.

#include "bookmark_dialog.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>

namespace dstudio::studio {

BookmarkAnswer askBookmark(QWidget* parent, BookmarkPlace on, const QString& run, int step,
                           int max_step, const Bookmark* existing) {
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
  if (existing) {
    name->setText(QString::fromStdString(existing->name));
    note->setPlainText(QString::fromStdString(existing->note));
  }
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  bool removed = false;
  if (existing) {
    auto* remove = buttons->addButton(QObject::tr("Remove"), QDialogButtonBox::DestructiveRole);
    remove->setObjectName(QStringLiteral("removeBookmark"));
    QObject::connect(remove, &QPushButton::clicked, &dialog, [&] {
      removed = true;
      dialog.accept();
    });
  }
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return {};
  if (removed) return {BookmarkAnswer::Kind::Removed, *existing};
  Bookmark b;
  b.on = on;
  b.run = run.toStdString();
  b.step = at->value();
  const QString given = name->text().simplified();
  b.name = (given.isEmpty() ? QObject::tr("step %1").arg(b.step) : given).toStdString();
  b.note = note->toPlainText().left(4000).toStdString();
  return {BookmarkAnswer::Kind::Saved, b};
}

QString bookmarkLabel(const Bookmark& bookmark) {
  return QObject::tr("step %1 · %2").arg(bookmark.step).arg(QString::fromStdString(bookmark.name));
}

}  // namespace dstudio::studio
