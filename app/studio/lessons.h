#pragma once
/// \file
/// Lessons for a class: each a few steps, and each step a workspace (what to open, which tab,
/// which settings; MainWindow::applyWorkspace) with a short text to read out. They are shipped in
/// resources/lessons/ (index.json gives their order) and compiled into the studio. In a lesson's
/// workspace "@resources/" names the shipped resources folder and "dataset": "default" the
/// default dataset, made on first use.

#include <QJsonObject>
#include <QString>
#include <QVector>

namespace dstudio::studio {

struct LessonStep {
  QString title;
  QString text;  ///< rich text (a few paragraphs)
  QJsonObject workspace;
};

struct Lesson {
  QString file;  ///< e.g. "attention-disperses.json"
  QString title;
  QString summary;
  QVector<LessonStep> steps;
};

/// The shipped lessons in their order. A lesson that cannot be read is left out and named in
/// `problems` (if given).
QVector<Lesson> shippedLessons(QStringList* problems = nullptr);
/// Reads one lesson from JSON text; throws std::runtime_error naming what is wrong.
Lesson parseLesson(const QByteArray& json, const QString& file);

}  // namespace dstudio::studio
