#pragma once
/// \file
/// The lesson on screen: its title, the step's text in large type for a projector, and Previous
/// and Next, each of which opens that step's workspace in the window (stepChosen). A dock beside
/// the tabs, so the views the text speaks of stay in sight.

#include <QDockWidget>

#include "lessons.h"

class QComboBox;
class QLabel;
class QPushButton;
class QTextBrowser;

namespace dstudio::studio {

class LessonPanel : public QDockWidget {
  Q_OBJECT
 public:
  explicit LessonPanel(QVector<Lesson> lessons, QWidget* parent = nullptr);

  [[nodiscard]] const QVector<Lesson>& lessons() const { return lessons_; }
  /// Shows lesson `lesson` at `step` and asks for its workspace (stepChosen).
  void open(int lesson, int step = 0);
  void next();
  void previous();
  [[nodiscard]] int lesson() const { return lesson_; }
  [[nodiscard]] int step() const { return step_; }
  /// The text on screen (the lesson's title and summary, the step's number, title and text, its
  /// bookmarks), as plain text.
  [[nodiscard]] QString text() const;

 signals:
  /// The window should open this workspace (paths already resolved).
  void stepChosen(const QJsonObject& workspace);
  /// A bookmark of the step was clicked: the viewer should go to `step`.
  void bookmarkChosen(int step);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void enlargeText();
  void show_step();

  QVector<Lesson> lessons_;
  int lesson_ = -1, step_ = 0;
  QComboBox* choice_;
  QTextBrowser* text_;
  QPushButton* previous_;
  QPushButton* next_;
};

}  // namespace dstudio::studio
