// The Viewer tab's bookmarks: named steps of the episode, listed, jumped to and drawn on the
// timeline. See viewer_panel.h.

#include <qcustomplot.h>

#include <QComboBox>
#include <QPushButton>
#include <algorithm>

#include "bookmark_dialog.h"
#include "dstudio/viz/episode_timeline.h"
#include "dstudio/viz/step_marks.h"
#include "viewer_panel.h"

namespace dstudio::studio {

void ViewerPanel::setBookmarks(std::vector<Bookmark> bookmarks) {
  bookmarks_ = bookmarks_on(std::move(bookmarks), BookmarkPlace::Viewer);
  refreshBookmarks();
}

void ViewerPanel::addBookmark(Bookmark bookmark) {
  auto all = bookmarks_;
  all.push_back(std::move(bookmark));
  setBookmarks(std::move(all));
}

void ViewerPanel::refreshBookmarks() {
  {
    const QSignalBlocker block(bookmark_list_);
    bookmark_list_->clear();
    bookmark_list_->addItem(bookmarks_.empty() ? tr("no bookmark") : tr("go to a bookmark…"), -1);
    for (std::size_t i = 0; i < bookmarks_.size(); ++i) {
      bookmark_list_->addItem(bookmarkLabel(bookmarks_[i]), static_cast<int>(i));
      bookmark_list_->setItemData(bookmark_list_->count() - 1,
                                  QString::fromStdString(bookmarks_[i].note), Qt::ToolTipRole);
    }
  }
  std::vector<viz::StepMark> marks;
  for (const auto& b : bookmarks_)
    marks.push_back({static_cast<double>(b.step), QString::fromStdString(b.name)});
  viz::draw_step_marks(timeline_->plot(), marks);
  timeline_->plot()->replot(QCustomPlot::rpQueuedReplot);
}

void ViewerPanel::goToStep(int step) {
  if (!live_) return;
  const auto state = live_->state();
  if (step < state.frames) return live_->seek(step);
  // Not played that far yet: the episode is played there, as a workspace's step is reached.
  live_->seek(std::max(0, state.frames - 1));
  for (int i = std::max(0, state.frames - 1); i < step; ++i) live_->step_forward();
}

void ViewerPanel::buildBookmarkControls() {
  bookmark_list_ = new QComboBox;
  bookmark_list_->setObjectName(QStringLiteral("bookmarks"));
  bookmark_list_->setToolTip(tr("The episode's bookmarks: choose one to go to its step"));
  bookmark_list_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(bookmark_list_, &QComboBox::activated, this, [this](int index) {
    const int i = bookmark_list_->itemData(index).toInt();
    if (i >= 0 && i < static_cast<int>(bookmarks_.size()))
      goToStep(bookmarks_[static_cast<std::size_t>(i)].step);
    const QSignalBlocker block(bookmark_list_);
    bookmark_list_->setCurrentIndex(0);
    setFocus();
  });
  bookmark_add_ = new QPushButton(tr("Bookmark…"));
  bookmark_add_->setObjectName(QStringLiteral("addBookmark"));
  bookmark_add_->setFocusPolicy(Qt::NoFocus);
  bookmark_add_->setToolTip(
      tr("Name the step on screen, with a note: kept in the workspace, drawn on the timeline; on a "
         "bookmarked step, edit or remove its bookmark"));
  connect(bookmark_add_, &QPushButton::clicked, this, [this] {
    const int step = live_ ? shown_.cursor : 0;
    const int last = std::max(step, std::max(0, shown_.frames - 1));
    // On a bookmarked step the dialog edits that bookmark, or removes it.
    const auto at = std::find_if(bookmarks_.begin(), bookmarks_.end(),
                                 [step](const Bookmark& b) { return b.step == step; });
    const auto answer = askBookmark(this, BookmarkPlace::Viewer, {}, step, last,
                                    at == bookmarks_.end() ? nullptr : &*at);
    if (answer.kind == BookmarkAnswer::Kind::Cancelled) return;
    auto kept = bookmarks_;
    if (at != bookmarks_.end()) kept.erase(kept.begin() + (at - bookmarks_.begin()));
    if (answer.kind == BookmarkAnswer::Kind::Saved) kept.push_back(answer.bookmark);
    setBookmarks(std::move(kept));
  });
  refreshBookmarks();  // "no bookmark" from the start
}

}  // namespace dstudio::studio
