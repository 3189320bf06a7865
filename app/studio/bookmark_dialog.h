#pragma once
/// \file
/// Asking for a bookmark: the step (within a range), a name and a note, as the Viewer tab and the
/// Training tab's run curves both ask for one.

#include <QString>
#include <optional>

#include "dstudio/common/workspace.h"

class QWidget;

namespace dstudio::studio {

/// What the bookmark dialog ended with.
struct BookmarkAnswer {
  enum class Kind { Cancelled, Saved, Removed } kind = Kind::Cancelled;
  Bookmark bookmark;  ///< Saved: the bookmark as written
};

/// A modal dialog for a bookmark at `step` (editable within [0, max_step]) on `on` (and `run` for
/// a run's curves). The name defaults to "step N". With `existing` (a bookmark at that step) its
/// name and note are filled in to be edited, and a Remove button takes it away.
BookmarkAnswer askBookmark(QWidget* parent, BookmarkPlace on, const QString& run, int step,
                           int max_step, const Bookmark* existing = nullptr);

/// "step 283 · the ghost falls": how lists show a bookmark.
QString bookmarkLabel(const Bookmark& bookmark);

}  // namespace dstudio::studio
