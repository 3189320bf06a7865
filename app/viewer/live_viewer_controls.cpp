// decision-viewer's side panel: transport, conditioning, view and recording, interventions and
// forks. See live_viewer.h.

// Index of this file:
//   [SECTION] The side panel's controls
//   [SECTION] Interventions and forks

#include <cmath>

#include "dstudio/common/error.h"
#include "dstudio/common/text.h"
#include "dstudio/models/interventions.h"
#include "live_viewer_state.h"

namespace dstudio::viewer {

using detail::im_vec;
using detail::section;
using detail::speed_text;

// ---------------------------------------------------------------------------------------------
// [SECTION] The side panel's controls

void LiveViewer::State::draw_controls() {
  const bool replay = live->replay() || live->behaviour();  // nothing to condition or intervene
  // Transport.
  if (ImGui::Button("|<")) live->seek(0);
  ImGui::SameLine();
  if (ImGui::Button("<")) live->step_back();
  ImGui::SameLine();
  if (ImGui::Button(shown.playing ? "Pause" : "Play "))
    shown.playing ? live->pause() : live->play();
  ImGui::SameLine();
  if (ImGui::Button(">")) live->step_forward();
  ImGui::SameLine();
  if (ImGui::Button(">|")) live->seek(std::max(0, shown.frames - 1));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("0.125x").x + ImGui::GetFrameHeight() * 1.6f);
  if (ImGui::BeginCombo("speed", speed_text(speed).c_str())) {
    for (double s : models::playback_speeds())
      if (ImGui::Selectable(speed_text(s).c_str(), s == speed))
        speed = s, live->set_speed(s), rate->reset();
    ImGui::EndCombo();
  }
  // The machine behind the speed asked for: the rate it really plays at, beside it.
  if (const auto status = speed_status(); status != speed_text(speed)) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.35f, 1.0f), "%s",
                       status.substr(status.rfind(", ") + 2).c_str());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "The episode plays at this rate of real time: the policy, the physics and the drawing "
          "of a step take longer than the step lasts on this machine. A recording still plays "
          "at the speed asked for.");
  }
  // While recording, the policy runs ahead of the frame recorded: the slider shows the frame on
  // screen, and holds still (a seek would cut the clip).
  int cursor = video && displayed ? displayed->step : shown.cursor;
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("step").x -
                          ImGui::GetStyle().ItemInnerSpacing.x * 2);
  ImGui::BeginDisabled(video != nullptr);
  if (ImGui::SliderInt("step", &cursor, 0, std::max(0, shown.frames - 1))) live->seek(cursor);
  ImGui::EndDisabled();

  // Conditioning: acts on the running policy from the step on screen (a replay has none), or in
  // fork mode forks the episode there with the change.
  const auto apply_target = [&](double target) {
    if (!fork_mode) return live->set_target(target);
    models::BranchChange change;
    change.target = target;
    change.label = "target=" + fixed_number(target, 0);
    request_fork(change);
  };
  const auto apply_zeroing = [&](models::ModalityZeroing z) {
    if (!fork_mode) return live->set_zeroing(z);
    models::BranchChange change;
    change.zeroing = z;
    change.label = std::string("zeroing=") + models::to_string(z);
    request_fork(change);
  };
  ImGui::BeginDisabled(replay);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight() * 2);
  ImGui::InputInt("seed", &seed_field);
  ImGui::SameLine();
  if (ImGui::Button("New episode"))
    live->restart(static_cast<std::uint64_t>(std::max(0, seed_field)));
  // What acts on the policy, a tab each, so that the attention map below keeps its room. The
  // command line's interventions or forks open their tab first.
  const auto first_open = [&](bool wanted) {
    return wanted && !tabs_opened ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
  };
  const bool show_forks = !options.forks.empty(),
             show_interventions = !show_forks && (!options.interventions.empty() || effects);
  ImGui::Spacing();
  if (!ImGui::BeginTabBar("##acting")) {
    ImGui::EndDisabled();
    return;
  }
  // A behaviour policy (an MLP on the observation) has no target, no tokens to zero and no
  // forward pass of mixers to intervene in; forks to a checkpoint still apply.
  const bool behaviour = live->behaviour();
  if (ImGui::BeginTabItem("Conditioning", nullptr,
                          first_open(!show_forks && !show_interventions))) {
    if (behaviour)
      ImGui::TextWrapped("A behaviour policy is conditioned on nothing: no target, no tokens.");
    ImGui::BeginDisabled(behaviour);
    draw_conditioning(apply_target, apply_zeroing);
    ImGui::EndDisabled();
    ImGui::EndTabItem();
  }
  if (!replay && !behaviour &&
      ImGui::BeginTabItem("Interventions", nullptr, first_open(show_interventions))) {
    draw_interventions();
    ImGui::EndTabItem();
  }
  if (!replay && ImGui::BeginTabItem("Forks", nullptr, first_open(show_forks))) {
    draw_forks();
    ImGui::EndTabItem();
  }
  tabs_opened = true;
  ImGui::EndTabBar();
  ImGui::EndDisabled();
  draw_view_and_recording();
}

template <typename Target, typename Zeroing>
void LiveViewer::State::draw_conditioning(const Target& apply_target,
                                          const Zeroing& apply_zeroing) {
  section("Target return");
  double top = 0.0;
  for (const auto& t : targets) top = std::max(top, t.value);
  const float hi = static_cast<float>(std::max(1000.0, 1.5 * top));
  ImGui::SetNextItemWidth(-1);
  ImGui::SliderFloat("##target", &target_field, 0.0f, hi, "target %.0f");
  if (ImGui::IsItemDeactivatedAfterEdit()) apply_target(target_field);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight() * 2);
  if (ImGui::InputFloat("##target-field", &target_field, 100.0f, 1000.0f, "%.0f",
                        ImGuiInputTextFlags_EnterReturnsTrue))
    apply_target(target_field);
  if (ImGui::IsItemDeactivatedAfterEdit()) apply_target(target_field);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##targets", "targets on offer")) {
    for (const auto& t : targets)
      if (ImGui::Selectable(t.label.c_str(), std::abs(t.value - live->target()) < 1e-9)) {
        target_field = static_cast<float>(t.value);
        apply_target(t.value);
      }
    ImGui::EndCombo();
  }
  section("Modality zeroing");
  const auto zeroing = live->zeroing();
  for (std::size_t i = 0; i < models::kModalityZeroings.size(); ++i) {
    const auto z = models::kModalityZeroings[i];
    if (i > 0) ImGui::SameLine();
    if (ImGui::RadioButton(models::zeroing_label(z), zeroing == z)) apply_zeroing(z);
  }
}

void LiveViewer::State::draw_view_and_recording() {
  section("View");
  // A fixed workspace (the hand, the kitchen) has nothing to follow: the box is greyed out.
  const bool followable = live->task().camera.track || live->task().camera.followable;
  ImGui::BeginDisabled(!followable);
  if (bool on = tracking; ImGui::Checkbox("track", &on)) apply_tracking(on);
  ImGui::EndDisabled();
  if (!followable && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("this task's camera stays on its workspace; drag to orbit, scroll to zoom");
  ImGui::SameLine();
  // The task's own camera: following the torso, or over the whole maze.
  if (ImGui::Button("reset camera")) set_camera_view(render::task_camera(live->task().camera));
  // The way the body went, where that is what a task is about (reaching a goal).
  if (live->task().goal_reaching) {
    ImGui::SameLine();
    ImGui::Checkbox("path", &show_path);
  }
  ImGui::SameLine();
  if (ImGui::Checkbox("presentation (F11)", &presentation)) apply_style();
  // One toggle: red while recording, with the seconds recorded.
  if (video) {
    ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.15f, 0.12f, 1.0f));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(0.85f, 0.22f, 0.18f, 1.0f));
  }
  const std::string record_label =
      video ? "Stop recording (" + fixed_number(static_cast<double>(recorded) / record_fps, 1) +
                  " s)###record"
            : std::string("Record###record");
  const bool record_clicked = ImGui::Button(record_label.c_str());
  if (video) ImGui::PopStyleColor(2);
  if (record_clicked) {
    if (video)
      finish_recording();
    else
      start_recording(output_folder() / (title + "-step" + std::to_string(shown.cursor)),
                      record_fps);
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("60 fps").x + ImGui::GetFrameHeight() * 1.6f);
  if (ImGui::BeginCombo("##fps", (std::to_string(record_fps) + " fps").c_str())) {
    for (int f : {24, 30, 60})
      if (ImGui::Selectable((std::to_string(f) + " fps").c_str(), f == record_fps)) record_fps = f;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  if (ImGui::Button("Screenshot"))
    screenshot_to = output_folder() / (title + "-step" + std::to_string(shown.cursor) + ".png");
  if (!message.empty()) ImGui::TextWrapped("%s", message.c_str());
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Interventions and forks

void LiveViewer::State::change_interventions(const std::vector<std::string>& specs) {
  try {
    if (!fork_mode) return live->set_interventions(specs);
    models::BranchChange change;
    change.clear_interventions = true;
    change.interventions = specs;
    for (const auto& i : specs) change.label += (change.label.empty() ? "" : ", ") + i;
    if (specs.empty()) change.label = "no interventions";
    request_fork(change);
  } catch (const Error& e) {
    notice(e.what());
  }
}

void LiveViewer::State::request_fork(const models::BranchChange& change) {
  try {
    live->fork(display_step, change);
  } catch (const Error& e) {
    notice(e.what());
  }
}

void LiveViewer::State::draw_interventions() {
  const auto& c = live->config();
  const auto specs = live->interventions();
  ImGui::TextDisabled("from the step on screen; a click cycles zero, mean, off");
  // Or a click patches the site from the window at another target.
  ImGui::RadioButton("ablate", &click_patches, 0);
  ImGui::SameLine();
  ImGui::RadioButton("patch from target", &click_patches, 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight());
  ImGui::InputFloat("##patch-target", &patch_target, 0.0f, 0.0f, "%.0f");
  const auto site_button = [&](const std::string& label, const std::string& site) {
    const auto now = models::ablation_of(specs, site);
    const bool from_other = models::patched(specs, site);
    const bool on = !now.empty() || from_other;
    if (on)
      ImGui::PushStyleColor(ImGuiCol_Button, from_other      ? im_vec(palette::kBluishGreen)
                                             : now == "zero" ? im_vec(palette::kVermillion)
                                                             : im_vec(palette::kBlue));
    const bool clicked = ImGui::SmallButton((label + "##" + site).c_str());
    if (on) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s: %s", site.c_str(),
                        from_other ? "patched from the other target; click to restore it"
                        : on       ? (now + "; click for the next").c_str()
                                   : "as trained; click to change it");
    if (!clicked) return;
    if (click_patches)
      change_interventions(models::with_patch(
          specs, site, from_other ? std::nullopt : std::optional<double>(patch_target)));
    else
      change_interventions(models::with_ablation(models::with_patch(specs, site, std::nullopt),
                                                 site, models::next_ablation(now)));
  };
  for (int l = 1; l <= c.layers; ++l) {
    ImGui::Text("layer %d", l);
    const int heads = models::layer_heads(c, l);
    if (heads > 0) {
      for (int h = 1; h <= heads; ++h) {
        ImGui::SameLine();
        // Built piece by piece: GCC 12 warns falsely (-Wrestrict) on "h" + std::to_string(h).
        std::string label = std::to_string(h), site = "head:" + std::to_string(l) + ".";
        site += label;
        label.insert(0, 1, 'h');
        site_button(label, site);
      }
    } else if (models::layer_mixer(c, l) != "none") {
      ImGui::SameLine();
      site_button(models::layer_mixer(c, l), "mixer:" + std::to_string(l));
    }
    ImGui::SameLine();
    site_button("MLP", "mlp:" + std::to_string(l));
  }
  // The context: how far back every mixer may look.
  const int K = c.context_length;
  int steps_back = models::context_of(specs);
  if (steps_back <= 0) steps_back = K;
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("context").x -
                          ImGui::GetStyle().ItemInnerSpacing.x * 2);
  ImGui::SliderInt("context", &steps_back, 1, K, steps_back == K ? "all %d steps" : "%d steps");
  if (ImGui::IsItemDeactivatedAfterEdit())
    change_interventions(models::with_context(specs, steps_back >= K ? 0 : steps_back));
  // Steering: ALPHA times a saved direction after a block.
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("direction").x -
                          ImGui::GetStyle().ItemInnerSpacing.x * 2);
  ImGui::InputTextWithHint("direction", "direction_L2.json (dstudio analyze steering)", steer_file,
                           sizeof steer_file);
  ImGui::SetNextItemWidth(ImGui::GetFrameHeight() * 4);
  ImGui::SliderInt("after block", &steer_layer, 1, std::max(1, c.layers));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFrameHeight() * 5);
  ImGui::SliderFloat("ALPHA", &steer_alpha, -4.0f, 4.0f, "%.2f");
  ImGui::BeginDisabled(steer_file[0] == '\0');
  if (ImGui::SmallButton("steer"))
    change_interventions(models::with_steering(specs, steer_layer, steer_alpha, steer_file));
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::SmallButton("off##steer"))
    change_interventions(models::with_steering(specs, steer_layer, 0.0, {}));
  if (ImGui::SmallButton("clear all")) change_interventions({});
  ImGui::SameLine();
  if (ImGui::Checkbox("colour the limbs by the change", &effects)) live->set_plain_actions(effects);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Each actuated limb in the colour of how much the interventions in force "
        "change its joint's action (legend over the scene)");
}

void LiveViewer::State::draw_forks() {
  ImGui::Checkbox("changes above fork the episode", &fork_mode);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "On: a new target, zeroing or intervention set plays as a ghost beside the "
        "episode from the step on screen, instead of changing it");
  const bool full = static_cast<int>(branches.size()) >= models::kMaxBranches;
  ImGui::BeginDisabled(full);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight());
  ImGui::InputFloat("##fork-target", &fork_target, 0.0f, 0.0f, "%.0f");
  ImGui::SameLine();
  if (ImGui::Button("fork with this target")) {
    models::BranchChange change;
    change.target = fork_target;
    change.label = "target=" + fixed_number(fork_target, 0);
    request_fork(change);
  }
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("fork with checkpoint").x -
                          ImGui::GetStyle().ItemSpacing.x * 3);
  ImGui::InputTextWithHint("##fork-checkpoint", "another checkpoint (.pt)", fork_checkpoint,
                           sizeof fork_checkpoint);
  ImGui::SameLine();
  if (ImGui::Button("fork with checkpoint") && fork_checkpoint[0] != '\0') {
    models::BranchChange change;
    change.checkpoint = fork_checkpoint;
    change.label = std::string("checkpoint=") + fork_checkpoint;
    request_fork(change);
  }
  ImGui::EndDisabled();
  // Each fork: its buttons first, so that a long change cut at the panel's edge leaves them in
  // reach; its line in the words of the legend over the scene.
  for (std::size_t b = 0; b < branches.size(); ++b) {
    const auto& style = palette::kBranches[b % palette::kBranches.size()];
    const float line = ImGui::GetTextLineHeight();
    ImGui::ColorButton(("##swatch" + std::to_string(b)).c_str(), im_vec(style.colour),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(line, line));
    ImGui::SameLine();
    if (ImGui::SmallButton(("rewind##" + std::to_string(b)).c_str()))
      live->seek(branches[b].fork_step);
    ImGui::SameLine();
    if (ImGui::SmallButton(("remove##" + std::to_string(b)).c_str()))
      live->remove_branch(static_cast<int>(b));
    ImGui::SameLine();
    ImGui::TextUnformatted(
        models::fork_legend(static_cast<int>(b), branches[b].fork_step, branches[b].label).c_str());
  }
  if (!branches.empty() && ImGui::SmallButton("remove every fork")) live->clear_branches();
}

}  // namespace dstudio::viewer
