// Help ▸ User Guide: the guide shipped with the studio, found as the installed studio finds it,
// with every screenshot it shows.

#include "user_guide.h"

#include <gtest/gtest.h>

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTextBrowser>
#include <QUrl>
#include <cstdlib>

#include "lessons.h"
#include "main_window.h"
#include "test_application.h"

namespace dstudio::studio {
namespace {

TEST(UserGuide, OpensFromTheHelpMenuWithEveryPicture) {
  test::ensure_application();
  ::unsetenv("DSTUDIO_RESOURCES");
  // The build tree has the installed shape: share/decision-studio/guide is docs/.
  const QString path = userGuidePath();
  ASSERT_TRUE(QFileInfo(path).isFile()) << path.toStdString();
  EXPECT_TRUE(QFileInfo(path).canonicalFilePath().endsWith(QStringLiteral("docs/user-guide.md")))
      << path.toStdString();

  MainWindow w;
  QAction* guide = nullptr;
  for (auto* action : w.findChildren<QAction*>())
    if (action->text() == QStringLiteral("&User Guide")) guide = action;
  ASSERT_NE(guide, nullptr);
  EXPECT_EQ(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));
  guide->trigger();
  ASSERT_NE(w.userGuide(), nullptr);
  ASSERT_TRUE(w.userGuide()->loaded());
  EXPECT_TRUE(w.userGuide()->isVisible());
  const QString text = w.userGuide()->browser()->toPlainText();
  for (const char* heading :
       {"Installing", "The first run", "a researcher inspects attention dispersal",
        "an instructor runs a lesson", "an author exports a figure set"})
    EXPECT_TRUE(text.contains(QString::fromUtf8(heading))) << heading;

  // Every picture the Markdown names is there and loads as an image, relative to the guide.
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QString markdown = QString::fromUtf8(file.readAll());
  const QRegularExpression picture(QStringLiteral(R"(!\[[^\]]*\]\(([^)\s]+)\))"));
  int pictures = 0;
  for (auto it = picture.globalMatch(markdown); it.hasNext();) {
    const QString name = it.next().captured(1);
    ++pictures;
    EXPECT_TRUE(QFileInfo(QFileInfo(path).dir().filePath(name)).isFile()) << name.toStdString();
    const QVariant image =
        w.userGuide()->browser()->loadResource(QTextDocument::ImageResource, QUrl(name));
    EXPECT_TRUE(image.isValid() && !image.isNull()) << name.toStdString();
  }
  EXPECT_GE(pictures, 6);
}

// The guide, the README and docs/studio.md name every lesson the studio ships, and the guide
// counts them right.
TEST(UserGuide, NamesEveryShippedLessonAndCountsThem) {
  test::ensure_application();
  const auto lessons = shippedLessons();
  ASSERT_GE(lessons.size(), 6);
  const QDir root(QStringLiteral(DSTUDIO_RESOURCES_DIR "/.."));
  for (const char* doc : {"docs/user-guide.md", "README.md", "docs/studio.md"}) {
    QFile file(root.filePath(QString::fromUtf8(doc)));
    ASSERT_TRUE(file.open(QIODevice::ReadOnly)) << doc;
    // Lines joined: a title may be broken over two lines of the Markdown.
    const QString text = QString::fromUtf8(file.readAll()).simplified();
    for (const auto& lesson : lessons)
      EXPECT_TRUE(text.contains(lesson.title, Qt::CaseInsensitive))
          << doc << " does not name the lesson \"" << lesson.title.toStdString() << "\"";
    if (QString(doc) != QLatin1String("docs/user-guide.md")) continue;
    const auto count =
        QRegularExpression(QStringLiteral(R"(ships (\w+) lessons)")).match(text).captured(1);
    const QStringList words = {"no",    "one",   "two",  "three", "four",   "five",  "six",
                               "seven", "eight", "nine", "ten",   "eleven", "twelve"};
    EXPECT_EQ(words.indexOf(count), lessons.size())
        << "the guide says it ships " << count.toStdString();
  }
}

TEST(UserGuide, AMissingGuideSaysWhereItLooked) {
  test::ensure_application();
  const QString empty = QDir::temp().filePath(
      QStringLiteral("dstudio-no-guide-%1").arg(QCoreApplication::applicationPid()));
  QDir().mkpath(empty);
  ::setenv("DSTUDIO_RESOURCES", empty.toUtf8().constData(), 1);
  UserGuideDialog dialog;
  ::unsetenv("DSTUDIO_RESOURCES");
  EXPECT_FALSE(dialog.loaded());
  EXPECT_TRUE(
      dialog.browser()->toPlainText().contains(empty + QStringLiteral("/guide/user-guide.md")))
      << dialog.browser()->toPlainText().toStdString();
  QDir(empty).removeRecursively();
}

}  // namespace
}  // namespace dstudio::studio
