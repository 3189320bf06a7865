#pragma once
/// \file
/// Asking for a bookmark: the step (within a range), a name and a note, as the Viewer tab and the
/// Training tab's run curves both ask for one.

#include <QString>
#include <optional>

#include "dstudio/common/workspace.h"

class QWidget;

namespace dstudio::studio {

/// A modal dialog for a bookmark at `step` (editable within [0, max_step]) on `on` (and `run` for
/// a run's curves). Empty when cancelled. The name defaults to "step N".
std::optional<Bookmark> askBookmark(QWidget* parent, BookmarkPlace on, const QString& run, int step,
                                    int max_step);

/// "step 283 · the ghost falls": how lists show a bookmark.
QString bookmarkLabel(const Bookmark& bookmark);

}  // namespace dstudio::studio
