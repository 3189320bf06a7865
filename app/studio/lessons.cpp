// The shipped lessons. See lessons.h.

#include "lessons.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <stdexcept>

#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"

namespace dstudio::studio {
namespace {

QByteArray resource(const QString& path) {
  const auto bytes = embedded_resource(path.toStdString());
  if (!bytes) throw dstudio::Error(path.toStdString() + " is not among the studio's resources");
  return {bytes->data(), static_cast<qsizetype>(bytes->size())};
}

QJsonObject object_of(const QByteArray& json, const QString& file) {
  QJsonParseError error;
  const auto doc = QJsonDocument::fromJson(json, &error);
  if (error.error != QJsonParseError::NoError)
    throw dstudio::Error(file.toStdString() + ": not JSON (" + error.errorString().toStdString() +
                         " at byte " + std::to_string(error.offset) + ")");
  if (!doc.isObject()) throw dstudio::Error(file.toStdString() + ": not a JSON object");
  return doc.object();
}

}  // namespace

Lesson parseLesson(const QByteArray& json, const QString& file) {
  const QJsonObject o = object_of(json, file);
  if (!o.contains("decision_studio_lesson"))
    throw dstudio::Error(file.toStdString() + ": not a lesson (no \"decision_studio_lesson\")");
  Lesson lesson;
  lesson.file = file;
  lesson.title = o["title"].toString();
  lesson.summary = o["summary"].toString();
  if (lesson.title.isEmpty())
    throw dstudio::Error(file.toStdString() + ": the lesson has no title");
  const QJsonArray steps = o["steps"].toArray();
  for (int i = 0; i < steps.size(); ++i) {
    const QJsonObject s = steps[i].toObject();
    LessonStep step{s["title"].toString(), s["text"].toString(), s["workspace"].toObject()};
    if (step.title.isEmpty() || step.text.isEmpty() ||
        !step.workspace.contains("decision_studio_workspace"))
      throw dstudio::Error(
          file.toStdString() + ": step " + std::to_string(i + 1) +
          " needs a title, a text and a workspace (with \"decision_studio_workspace\")");
    lesson.steps.push_back(step);
  }
  if (lesson.steps.isEmpty())
    throw dstudio::Error(file.toStdString() + ": the lesson has no steps");
  return lesson;
}

QVector<Lesson> shippedLessons(QStringList* problems) {
  QVector<Lesson> lessons;
  try {
    const QJsonObject index = object_of(resource(QStringLiteral("lessons/index.json")),
                                        QStringLiteral("lessons/index.json"));
    for (const auto& name : index["lessons"].toArray()) {
      const QString file = name.toString();
      try {
        lessons.push_back(parseLesson(resource(QStringLiteral("lessons/") + file), file));
      } catch (const std::exception& e) {
        if (problems) *problems << QString::fromStdString(e.what());
      }
    }
  } catch (const std::exception& e) {
    if (problems) *problems << QString::fromStdString(e.what());
  }
  return lessons;
}

}  // namespace dstudio::studio
