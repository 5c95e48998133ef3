#pragma once
// The GUI's memory budget for loads (Settings > Memory budget): kept in Settings as the
// text the user gave ("2G"; empty for the default) and applied to the one load budget of
// core/vocabulary/memory_budget.h, so a run, a dump or a dataset that needs more is refused
// with a dialog before anything is allocated and the work on screen stays.
#include <QString>

namespace shardlens::ui {

// The saved setting; empty: the default (half of physical memory).
QString memoryBudgetSetting();
// Applies the saved setting (at startup). A saved value that no longer parses is ignored.
void applyMemoryBudgetSetting();
// Validates, saves and applies `text` ("512M", "2G", bytes; empty for the default).
// Returns an error message naming the problem, or an empty string.
QString setMemoryBudgetSetting(const QString& text);
// "8.0 GiB (default: half of physical memory)": what the dialog shows.
QString memoryBudgetDescription();

}  // namespace shardlens::ui
