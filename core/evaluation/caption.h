#pragma once
// One source for every title and caption: the window's and the views' titles, the GUI's
// "(modified: ...)" note, the CLI's text and JSON reports and every exported figure say what
// an evaluation is from these functions, so none of them can go stale on its own.
//
// The policy:
//   - A scenario's own title (a lesson's, a scenario file's) is used only while its
//     settings are the ones it was written for (Scenario::titled). Once a setting differs
//     the title is its name with what changed, now: "padding-duplicates (modified: World
//     size 64)", never the old "510 samples on 4 ranks".
//   - The epoch is no setting here: stepping it is what several lessons ask for. It is named
//     apart ("epoch 0") whenever the order depends on it (a shuffled sampler, epoch 0
//     included), whenever it is not the first or the evaluation is one of several of its
//     run; a text report names it always.
#include <string>
#include <vector>

#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"

namespace shardlens {

// One setting that is no longer what the scenario's title was written for, in the GUI's
// words: label "World size", was "4", now "64" (a switch "on" / "off", an empty value
// "(none)").
struct SettingChange {
  std::string label;
  std::string was;
  std::string now;
};

// The settings of `s` that differ from those of `s.titled`, in the setting table's order,
// the epoch and the naming fields aside; empty when `s` has no titled settings or they are
// the same.
std::vector<SettingChange> changed_settings(const Scenario& s);
// Whether `s`'s title no longer describes it: !changed_settings(s).empty().
bool title_is_stale(const Scenario& s);

// "World size 4 → 64, Shuffle off → on": the changes as the GUI's note lists them.
std::string changes_text(const std::vector<SettingChange>& changes);

// What the scenario is called: its title while its settings are those it was written for
// (else its name, else "ShardLens evaluation"), or "NAME (modified: World size 64, ...)"
// naming each changed setting's value now (the first three, then how many more).
std::string scenario_title(const Scenario& s);

// The scenario as a file or a saved session keeps it: a title that no longer describes its
// settings is replaced by scenario_title (what it is now) and the description of the old
// settings is dropped, so the file reopened says what it holds.
Scenario retitled(const Scenario& s);

// Whether the sampler draws another order each epoch (set_epoch reshuffles it): what the
// evaluation shows then depends on its epoch, the first one too.
bool order_depends_on_epoch(const SamplerConfig& sampler);

// Which evaluation of its run this is ("epoch 0", "epoch 1, validation 2", "test, epoch
// 3") when that matters to what is shown (see the policy above); empty otherwise.
std::string evaluation_which(const Evaluation& e);

// The evaluation's title: scenario_title of the scenario it actually ran, with
// " — <evaluation_which>" when there is one.
std::string evaluation_title(const Evaluation& e);
// The same, naming the epoch always (a text report, the JSON report's "title").
std::string report_caption(const Evaluation& e);
// An exported figure of one view: "<scenario title> — <view> — <which>", each part left
// out when empty.
std::string figure_caption(const Evaluation& e, const std::string& view);

}  // namespace shardlens
