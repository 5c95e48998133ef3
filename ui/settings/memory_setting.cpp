#include "ui/settings/memory_setting.h"

#include <QObject>

#include "core/vocabulary/memory_budget.h"
#include "ui/settings/settings.h"

namespace shardlens::ui {
namespace {

QString sizeText(uint64_t bytes) {
  return QString::fromStdString(memory_size_text(bytes));
}

}  // namespace

QString memoryBudgetSetting() {
  return Settings::memoryBudget();
}

void applyMemoryBudgetSetting() {
  const QString text = memoryBudgetSetting();
  const auto bytes =
      text.isEmpty() ? std::optional<uint64_t>(0) : parse_memory_size(text.toStdString());
  set_load_budget(bytes.value_or(0));
}

QString setMemoryBudgetSetting(const QString& text) {
  const QString t = text.trimmed();
  if (!t.isEmpty() && !parse_memory_size(t.toStdString()))
    return QObject::tr("'%1' is not a memory size (e.g. 512M, 2G, or bytes)").arg(t);
  Settings::setMemoryBudget(t);
  applyMemoryBudgetSetting();
  return {};
}

QString memoryBudgetDescription() {
  const QString now = sizeText(load_budget());
  if (memoryBudgetSetting().isEmpty())
    return QObject::tr("%1 (the default: half of this machine's memory)").arg(now);
  return QObject::tr("%1 (the default is %2, half of this machine's memory)")
      .arg(now, sizeText(default_load_budget()));
}

}  // namespace shardlens::ui
