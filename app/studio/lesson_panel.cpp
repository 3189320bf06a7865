// The lesson dock. See lesson_panel.h.

#include "lesson_panel.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

#include "dstudio/common/error.h"
#include "dstudio/common/workspace.h"

namespace dstudio::studio {

LessonPanel::LessonPanel(QVector<Lesson> lessons, QWidget* parent)
    : QDockWidget(tr("Lesson"), parent),
      lessons_(std::move(lessons)),
      choice_(new QComboBox),
      text_(new QTextBrowser),
      previous_(new QPushButton(tr("◀ Previous"))),
      next_(new QPushButton(tr("Next ▶"))) {
  setObjectName(QStringLiteral("lessonPanel"));
  setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
              QDockWidget::DockWidgetFloatable);
  for (const auto& l : lessons_) choice_->addItem(l.title);
  choice_->setToolTip(tr("Every lesson opens its checkpoints, views and settings in one click"));
  // Not as wide as the longest title: the panel beside the tabs leaves the views their room, in
  // large type too (the list shows every title whole).
  choice_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  choice_->setMinimumContentsLength(14);
  text_->setOpenExternalLinks(false);
  text_->setOpenLinks(false);
  // The step's bookmarks are links "bookmark:STEP": a click takes the viewer there.
  connect(text_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    if (url.scheme() == QLatin1String("bookmark")) {
      bool ok = false;
      const int step = url.path().toInt(&ok);
      if (ok) emit bookmarkChosen(step);
    }
  });
  text_->setFrameShape(QFrame::NoFrame);
  enlargeText();
  for (auto* b : {previous_, next_}) b->setFocusPolicy(Qt::NoFocus);

  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  layout->addWidget(choice_);
  layout->addWidget(text_, 1);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(previous_);
  buttons->addStretch(1);
  buttons->addWidget(next_);
  layout->addLayout(buttons);
  setWidget(body);

  connect(choice_, &QComboBox::activated, this, [this](int i) { open(i, 0); });
  connect(previous_, &QPushButton::clicked, this, &LessonPanel::previous);
  connect(next_, &QPushButton::clicked, this, &LessonPanel::next);
}

void LessonPanel::open(int lesson, int step) {
  if (lesson < 0 || lesson >= lessons_.size()) return;
  lesson_ = lesson;
  step_ = std::clamp(step, 0, static_cast<int>(lessons_[lesson].steps.size()) - 1);
  show_step();
  show();
  raise();
  emit stepChosen(lessons_[lesson_].steps[step_].workspace);
}

void LessonPanel::next() {
  if (lesson_ >= 0 && step_ + 1 < lessons_[lesson_].steps.size()) open(lesson_, step_ + 1);
}

void LessonPanel::previous() {
  if (lesson_ >= 0 && step_ > 0) open(lesson_, step_ - 1);
}

QString LessonPanel::text() const {
  return text_->toPlainText();
}

void LessonPanel::show_step() {
  const Lesson& l = lessons_[lesson_];
  const LessonStep& s = l.steps[step_];
  choice_->setCurrentIndex(lesson_);
  // The heading scrolls with the text: in large type beside the tabs, a heading of its own would
  // hold the window taller than the screen.
  const QString heading = tr("<h2>%1</h2><p><i>%2</i></p><h3>%3 of %4 · %5</h3>")
                              .arg(l.title.toHtmlEscaped(), l.summary.toHtmlEscaped())
                              .arg(step_ + 1)
                              .arg(l.steps.size())
                              .arg(s.title.toHtmlEscaped());
  // The step's bookmarks under its text, each a link to its step.
  QString bookmarks;
  std::vector<Bookmark> marks;
  try {
    const auto text = QJsonDocument(s.workspace).toJson(QJsonDocument::Compact).toStdString();
    marks = bookmarks_on(parse_workspace(text).bookmarks, BookmarkPlace::Viewer);
  } catch (const Error&) {
    // A step whose workspace does not parse was refused when the lessons were read.
  }
  for (const auto& b : marks)
    bookmarks += tr("<li><a href=\"bookmark:%1\">step %1 · %2</a>%3</li>")
                     .arg(b.step)
                     .arg(QString::fromStdString(b.name).toHtmlEscaped())
                     .arg(b.note.empty() ? QString()
                                         : QStringLiteral(": ") +
                                               QString::fromStdString(b.note).toHtmlEscaped());
  text_->setHtml(heading +
                 (bookmarks.isEmpty()
                      ? s.text
                      : s.text + tr("<p><b>Bookmarks</b></p><ul>%1</ul>").arg(bookmarks)));
  previous_->setEnabled(step_ > 0);
  next_->setEnabled(step_ + 1 < l.steps.size());
}

void LessonPanel::enlargeText() {
  // Read from the back of a lecture hall: a size and a third of the window's type, which grows
  // with it in presentation mode.
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 1.35);
  text_->setFont(f);
}

void LessonPanel::changeEvent(QEvent* event) {
  QDockWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) enlargeText();
}

}  // namespace dstudio::studio
