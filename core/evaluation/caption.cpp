#include "core/evaluation/caption.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/evaluation/scenario_settings.h"

namespace shardlens {

namespace {

// Fields that name a scenario rather than set it, and the epoch, which the captions name
// apart: none of them makes a scenario "modified".
bool names_or_epoch(const ScenarioSetting& row) {
  return row.key == "name" || row.key == "title" || row.key == "description" || row.key == "epoch";
}

std::string value_text(const ScenarioSetting& row, const Scenario& s) {
  if (row.kind == SettingKind::Bool) return row.get_bool(s) ? "on" : "off";
  const std::string text = setting_text(row, s);
  return text.empty() ? "(none)" : text;
}

// A value short enough for a title line: a list of 64 rank seeds is cut, not wrapped over
// the figure; a dataset spec ("synthetic:classes=1000,per-class=50,layout=blocks", 49
// characters) is whole, the change a figure at another class count must name.
std::string short_value(const std::string& text) {
  constexpr size_t kMax = 60;
  if (text.size() <= kMax) return text;
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return text.substr(0, cut) + "…";
}

}  // namespace

std::vector<SettingChange> changed_settings(const Scenario& s) {
  std::vector<SettingChange> out;
  if (!s.titled) return out;
  const Scenario& was = *s.titled;
  for (const ScenarioSetting& row : scenario_settings()) {
    if (names_or_epoch(row)) continue;
    // A key neither scenario writes (an unused inner sampler's) is no setting of either.
    if (row.written && !row.written(s) && !row.written(was)) continue;
    const std::string before = value_text(row, was), now = value_text(row, s);
    if (before == now) continue;
    std::string label = row.gui_label.empty() ? row.json_name : row.gui_label;
    // A check box's label is lower case ("shuffle"); in a list it starts a phrase.
    label[0] = char(std::toupper(static_cast<unsigned char>(label[0])));
    out.push_back({std::move(label), before, now});
  }
  return out;
}

bool title_is_stale(const Scenario& s) {
  return !changed_settings(s).empty();
}

std::string changes_text(const std::vector<SettingChange>& changes) {
  std::string out;
  for (const SettingChange& c : changes)
    out += (out.empty() ? "" : ", ") + c.label + " " + c.was + " → " + c.now;
  return out;
}

std::string scenario_title(const Scenario& s) {
  const std::vector<SettingChange> changes = changed_settings(s);
  if (changes.empty())
    return !s.title.empty() ? s.title : !s.name.empty() ? s.name : "ShardLens evaluation";
  // The title described other settings: the name stays, with what the settings are now.
  constexpr size_t kNamed = 3;
  std::string list;
  for (size_t i = 0; i < std::min(kNamed, changes.size()); ++i)
    list += (i ? ", " : "") + changes[i].label + " " + short_value(changes[i].now);
  if (changes.size() > kNamed) list += " and " + std::to_string(changes.size() - kNamed) + " more";
  return (s.name.empty() ? std::string("Scenario") : s.name) + " (modified: " + list + ")";
}

Scenario retitled(const Scenario& s) {
  Scenario out = s;
  if (title_is_stale(s)) {
    out.title = scenario_title(s);
    out.description.clear();
    out.titled.reset();
  }
  return out;
}

bool order_depends_on_epoch(const SamplerConfig& sampler) {
  // detectron2's inference sampler never shuffles; a wrapped WeightedRandomSampler draws its
  // list again each pass (the epoch counts its passes unless one is given).
  if (sampler.kind == SamplerKind::Detectron2Inference) return false;
  if (sampler.kind == SamplerKind::LightningWrapper &&
      sampler.inner.kind == InnerSampler::Kind::WeightedRandom && sampler.inner_iteration < 0)
    return true;
  return sampler.shuffle;
}

std::string evaluation_which(const Evaluation& e) {
  const bool one_of_several = e.provenance.epochs > 1 || e.validation() >= 0 ||
                              e.dataloader() >= 0 ||
                              (!e.meta.stage.empty() && e.meta.stage != "validate");
  const bool by_epoch = order_depends_on_epoch(e.scenario().sampler);
  if (!one_of_several && !by_epoch && e.epoch() == 0) return {};
  return evaluation_label(e);
}

std::string evaluation_title(const Evaluation& e) {
  const std::string which = evaluation_which(e);
  return scenario_title(e.scenario()) + (which.empty() ? "" : " — " + which);
}

std::string report_caption(const Evaluation& e) {
  return scenario_title(e.scenario()) + " — " + evaluation_label(e);
}

std::string figure_caption(const Evaluation& e, const std::string& view) {
  // A scenario with no name of its own leaves the view to say what the figure is.
  const Scenario& s = e.scenario();
  std::string out =
      s.title.empty() && s.name.empty() && !title_is_stale(s) ? "" : scenario_title(s);
  if (!view.empty()) out += (out.empty() ? "" : " — ") + view;
  if (const std::string which = evaluation_which(e); !which.empty()) out += " — " + which;
  return out;
}

}  // namespace shardlens
