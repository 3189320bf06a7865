// decision-viewer's readouts, the overlay over the scene, the attention map and the traces. See
// live_viewer.h.

// Index of this file:
//   [SECTION] Readouts and the overlay
//   [SECTION] Attention, traces and the panels

#include <cmath>
#include <functional>

#include "dstudio/common/error.h"
#include "dstudio/common/text.h"
#include "dstudio/env/episode_end.h"
#include "live_viewer_state.h"

namespace dstudio::viewer {

using detail::at_step;
using detail::im_colour;
using detail::im_vec;
using detail::section;

// ---------------------------------------------------------------------------------------------
// [SECTION] Readouts and the overlay

std::vector<double> LiveViewer::State::effect_values() const {
  // The action that brought the body here (a frame that has not acted yet shows its parent's).
  models::FramePtr f = displayed;
  if (f && !f->acted && f->step > 0) f = at_step(frames, f->step - 1);
  return f ? models::action_change(*f, model->nu)
           : std::vector<double>(static_cast<std::size_t>(std::max(0, model->nu)), 0.0);
}

std::string LiveViewer::State::readout() const {
  if (!displayed) return shown.error.empty() ? "starting" : shown.error;
  const auto& f = *displayed;
  std::string text = "step " + std::to_string(f.step);
  // A behaviour policy is conditioned on nothing; a replay's return-to-go is the recorded
  // episode's rest, and it had no target.
  if (!live->replay() && !live->behaviour()) text += "  ·  target " + fixed_number(f.target, 0);
  if (!live->behaviour()) text += "  ·  return-to-go " + fixed_number(f.return_to_go, 0);
  text += "  ·  return " + fixed_number(f.return_so_far, 1);
  if (f.acted) text += "  ·  reward " + fixed_number(f.reward, 2);
  if (f.acted && std::isfinite(f.entropy))
    text += "  ·  entropy " + fixed_number(f.entropy, 2) + " nats";
  if (f.zeroing != models::ModalityZeroing::None)
    text += std::string("  ·  zeroing ") + models::zeroing_label(f.zeroing);
  if (f.terminal) text += "  ·  " + env::episode_end_reason(live->task(), f.terminated);
  return text;
}

void LiveViewer::State::measure_rate() {
  // While playing at the speed asked for: a recording and a seek play at full speed on purpose.
  if (!shown.playing || video || pending_seek >= 0) return rate->reset();
  rate->add(std::chrono::duration<double>(Clock::now() - rate_epoch).count(), shown.cursor);
}

std::string LiveViewer::State::speed_status() const {
  return models::speed_status(speed, shown.playing && !video ? rate->rate() : std::nullopt);
}

std::vector<std::string> LiveViewer::State::fork_legend() const {
  std::vector<std::string> lines;
  if (branches.empty()) return lines;
  lines.emplace_back(palette::kGhostMeaning);
  for (std::size_t b = 0; b < branches.size(); ++b) {
    std::string line =
        models::fork_legend(static_cast<int>(b), branches[b].fork_step, branches[b].label);
    if (const auto f = b < branch_frames.size() ? at_step(branch_frames[b], display_step) : nullptr)
      line += "  ·  return " + fixed_number(f->return_so_far, 1) +
              (f->terminal && f->step < display_step ? " (ended)" : "");
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<env::SubTask> LiveViewer::State::task_elements() const {
  std::vector<env::SubTask> so_far;
  const auto& task = live->task();
  if (!task.subtasks || frames.empty()) return so_far;
  const int last = std::min(display_step, static_cast<int>(frames.size()) - 1);
  for (int i = 0; i <= last; ++i) {
    const auto& f = *frames[static_cast<std::size_t>(i)];
    env::accumulate_subtasks(so_far, task.subtasks(f.observation, f.physics.task_state));
  }
  return so_far;
}

void LiveViewer::State::draw_overlay() {
  ImGui::SetNextWindowPos(ImVec2(8, 8));
  // Over the sky: the bodies stand in the lower part of the scene (render::viewer_camera).
  ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(static_cast<float>(scene_w) - 16.0f,
                                                           static_cast<float>(scene_h) * 0.42f));
  ImGui::SetNextWindowBgAlpha(0.7f);
  ImGui::Begin("##overlay", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                   ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoInputs);
  // The readout wraps inside the scene rather than running under the panels.
  ImGui::PushTextWrapPos(static_cast<float>(scene_w) - 32.0f);
  ImGui::TextUnformatted(title.c_str());
  ImGui::TextUnformatted(readout().c_str());
  std::string status = video
                           ? "REC " + fixed_number(static_cast<double>(recorded) / record_fps, 1) +
                                 " s (" + std::to_string(recorded) + " frames)"
                       : shown.playing ? "playing"
                                       : "paused";
  status += "  ·  " + speed_status();
  if (pending_seek >= 0) status += "  ·  going to step " + std::to_string(pending_seek);
  if (!shown.error.empty()) status += "  ·  " + shown.error;
  // Light grey, not ImGui's disabled grey, which vanished over the kitchen's bright cabinets.
  if (video)
    ImGui::TextColored(ImVec4(1.0f, 0.35f, 0.3f, 1.0f), "%s", status.c_str());
  else
    ImGui::TextColored(ImVec4(0.72f, 0.72f, 0.72f, 1.0f), "%s", status.c_str());
  if (!message.empty() && Clock::now() < notice_until)
    ImGui::TextColored(ImVec4(1.0f, 0.85f, 0.4f, 1.0f), "%s", message.c_str());
  // What was done, so that a screenshot or a clip says it.
  if (displayed && !displayed->interventions.empty()) {
    std::string list;
    for (const auto& i : displayed->interventions) list += (list.empty() ? "" : ", ") + i;
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.45f, 1.0f), "interventions: %s", list.c_str());
  }
  // A task done in stages lists its elements, ticked off from the step each was first done.
  for (const auto& e : task_elements()) {
    if (e.done)
      ImGui::TextColored(ImVec4(0.45f, 0.85f, 0.45f, 1.0f), "[x] %s  done", e.name.c_str());
    else
      ImGui::TextColored(ImVec4(0.85f, 0.85f, 0.85f, 1.0f), "[ ] %s  %s from its goal",
                         e.name.c_str(), fixed_number(e.distance, 2).c_str());
  }
  // A success counted over the episode (Adroit's goal-achieved steps); a replay's task state
  // holds the episode's values, not the count.
  if (displayed && !live->replay() && live->task().progress) {
    const auto progress = live->task().progress(displayed->physics.task_state);
    if (!progress.text.empty())
      ImGui::TextColored(
          progress.success ? ImVec4(0.45f, 0.85f, 0.45f, 1.0f) : ImVec4(0.85f, 0.85f, 0.85f, 1.0f),
          "%s", progress.text.c_str());
  }
  // The forks' legend: what a ghost is, then each ghost by its colour's name and its change.
  const auto legend = fork_legend();
  for (std::size_t i = 0; i < legend.size(); ++i) {
    if (i == 0) {
      ImGui::TextUnformatted(legend[0].c_str());
      continue;
    }
    const auto& style = palette::kBranches[(i - 1) % palette::kBranches.size()];
    const float side = ImGui::GetTextLineHeight();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(at.x, at.y + 0.15f * side),
                                              ImVec2(at.x + 0.7f * side, at.y + 0.85f * side),
                                              im_colour(style.colour));
    ImGui::Dummy(ImVec2(0.7f * side, side));
    ImGui::SameLine();
    ImGui::TextColored(im_vec(style.colour), "%s", legend[i].c_str());
  }
  if (effects) {
    // The legend of the limb colours: the colour scale from no change to the full scale.
    ImGui::TextUnformatted("limb colour: action change on its joint");
    const float w = std::min(220.0f, static_cast<float>(scene_w) * 0.3f),
                h = ImGui::GetTextLineHeight() * 0.8f;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    auto* draw = ImGui::GetWindowDrawList();
    constexpr int kSteps = 24;
    for (int i = 0; i < kSteps; ++i) {
      const auto c = palette::effect_colour((i + 0.5) / kSteps);
      draw->AddRectFilled(ImVec2(at.x + w * i / kSteps, at.y),
                          ImVec2(at.x + w * (i + 1) / kSteps + 0.5f, at.y + h), im_colour(c));
    }
    ImGui::Dummy(ImVec2(w, h));
    ImGui::Text("0");
    ImGui::SameLine(
        std::max(0.0f, w - ImGui::CalcTextSize("0.000").x + ImGui::GetStyle().WindowPadding.x));
    ImGui::Text("%s", general_number(effect_scale()).c_str());
    if (effect_largest == 0.0)
      ImGui::TextDisabled("(no intervention has changed an action since the colours came on)");
  }
  ImGui::PopTextWrapPos();
  ImGui::End();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Attention, traces and the panels

void LiveViewer::State::draw_attention() {
  if (live->replay()) {
    ImGui::TextWrapped("A dataset episode replays without a policy: no mixing to show.");
    return;
  }
  if (live->behaviour()) {
    ImGui::TextWrapped(
        "A behaviour policy acts on the current observation alone (an MLP): no mixing to show.");
    return;
  }
  // Which map: a layer (a head or the mean over heads), the mean over layers, or rollout.
  const int layers = live->config().layers, heads = live->config().heads;
  std::vector<std::string> maps;
  for (int l = 1; l <= layers; ++l) maps.push_back("layer " + std::to_string(l));
  maps.emplace_back("mean over layers");
  maps.emplace_back("rollout");
  int current = selection.kind == analysis::MapKind::Layer            ? selection.layer - 1
                : selection.kind == analysis::MapKind::MeanOverLayers ? layers
                                                                      : layers + 1;
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  ImGui::SetNextItemWidth(half);
  if (ImGui::BeginCombo("##map", maps[static_cast<std::size_t>(current)].c_str())) {
    for (int i = 0; i < static_cast<int>(maps.size()); ++i)
      if (ImGui::Selectable(maps[static_cast<std::size_t>(i)].c_str(), i == current)) {
        analysis::MapSelection next = selection;
        next.kind = i < layers    ? analysis::MapKind::Layer
                    : i == layers ? analysis::MapKind::MeanOverLayers
                                  : analysis::MapKind::Rollout;
        if (i < layers) next.layer = i + 1;
        selection = next, map_of = nullptr, lags_dirty = true;
      }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(selection.kind != analysis::MapKind::Layer || heads <= 1);
  ImGui::SetNextItemWidth(-1);
  const std::string head =
      selection.head == 0 ? "mean over heads" : "head " + std::to_string(selection.head);
  if (ImGui::BeginCombo("##head", head.c_str())) {
    for (int h = 0; h <= heads; ++h)
      if (ImGui::Selectable(h == 0 ? "mean over heads" : ("head " + std::to_string(h)).c_str(),
                            h == selection.head))
        selection.head = h, map_of = nullptr, lags_dirty = true;
    ImGui::EndCombo();
  }
  ImGui::EndDisabled();
  const float w = ImGui::GetContentRegionAvail().x;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const models::PlayerFrame* source = map_source.get();
  // A fork another checkpoint plays: its map beside this one's, for the same step and selection.
  models::FramePtr other;
  std::string other_name;
  analysis::TokenMatrix other_map;
  for (std::size_t b = 0; b < branches.size() && b < branch_frames.size(); ++b) {
    if (branches[b].checkpoint.empty()) continue;
    const auto& f = branch_frames[b];
    const auto shown_there = at_step(f, display_step);
    other = shown_there && shown_there->step == display_step ? models::acted_window(f, shown_there)
                                                             : nullptr;
    other_name =
        "fork " + std::to_string(b + 1) + ": " + fs::path(branches[b].checkpoint).stem().string();
    if (other) {
      try {
        other_map = analysis::select_window_map(*other->inspection, selection);
      } catch (const Error& e) {
        other_name += " (" + std::string(e.what()) + ")";
      }
    }
    break;
  }
  const bool pair = !other_name.empty();
  const float map_w = pair ? (w - ImGui::GetStyle().ItemSpacing.x) * 0.5f : w;
  const float map_side =
      std::max(60.0f, std::min(map_w, ImGui::GetContentRegionAvail().y - 5.5f * line));
  if (pair) {
    ImGui::TextUnformatted(title.c_str());
    ImGui::SameLine(map_w + ImGui::GetStyle().ItemSpacing.x);
    ImGui::TextUnformatted(other_name.c_str());
  }
  imgui::token_map(
      "##attention", map, source ? source->inspection->token_types : std::vector<char>{},
      source ? source->inspection->token_steps : std::vector<int>{},
      source ? source->inspection->valid : std::vector<char>{}, ImVec2(map_w, map_side),
      map_cells.upload(map, source ? source->inspection->valid : std::vector<char>{}));
  if (pair) {
    ImGui::SameLine();
    imgui::token_map(
        "##attention-fork", other_map, other ? other->inspection->token_types : std::vector<char>{},
        other ? other->inspection->token_steps : std::vector<int>{},
        other ? other->inspection->valid : std::vector<char>{}, ImVec2(map_w, map_side),
        fork_map_cells.upload(other_map, other ? other->inspection->valid : std::vector<char>{}));
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  // The newest step has not acted yet: its map is the window acted on one step before.
  if (source && displayed && source->step != displayed->step)
    ImGui::TextWrapped("the window acted on at step %d (step %d has not acted yet)", source->step,
                       displayed->step);
  else if (source)
    ImGui::TextWrapped("the window acted on at step %d", source->step);
  ImGui::TextWrapped("weight by lag (steps): this window, and the episode so far");
  ImGui::PopStyleColor();
  imgui::lag_bars("##lag", lag, ImVec2(w, std::max(3.5f * line, ImGui::GetContentRegionAvail().y)),
                  &lag_episode, "episode");
}

void LiveViewer::State::draw_traces() {
  const int steps = std::max(static_cast<int>(frames.size()), shown.frames);
  const int cursor = displayed ? display_step : -1;
  const int span = std::max(steps, static_cast<int>(live->task().max_episode_steps));
  if (!branches.empty()) {
    // The forks against the main run on one timeline: their returns, and the action difference
    // (or a joint) beside it, each with the cursor on the step on screen.
    const auto by_step = [&](const std::vector<models::FramePtr>& f, auto value) {
      std::vector<double> out(f.size(), std::nan(""));
      for (std::size_t t = 0; t < f.size(); ++t) out[t] = value(t);
      return out;
    };
    const int joint = plot_joint;
    // Recomputed only when a run has new frames or the plot changed, not at every frame drawn.
    std::size_t key = std::hash<const void*>{}(frames.empty() ? nullptr : frames.back().get()) ^
                      (frames.size() * 1315423911u) ^ static_cast<std::size_t>(joint + 7) * 31u;
    for (const auto& f : branch_frames)
      key = key * 1099511628211u ^ std::hash<const void*>{}(f.empty() ? nullptr : f.back().get()) ^
            f.size();
    auto& returns = divergence_returns;
    auto& other = divergence_other;
    const bool fresh = key != divergence_key || returns.size() != branch_frames.size() + 1;
    divergence_key = key;
    if (fresh) returns.clear(), other.clear();
    if (fresh)
      returns.push_back(by_step(frames, [&](std::size_t t) { return frames[t]->return_so_far; }));
    const auto joint_of = [&](const std::vector<models::FramePtr>& f) {
      return models::joint_trace(f, joints[static_cast<std::size_t>(joint)].qpos_index);
    };
    if (fresh && joint >= 0) other.push_back(joint_of(frames));
    for (const auto& f : branch_frames) {
      if (!fresh) break;
      returns.push_back(by_step(f, [&](std::size_t t) { return f[t]->return_so_far; }));
      if (joint >= 0) {
        other.push_back(joint_of(f));
        continue;
      }
      other.push_back(models::action_difference(f, frames));
    }
    std::vector<imgui::Trace> left, right;
    left.push_back({"main run", im_colour(palette::kMainRun), &returns[0], false, false});
    std::size_t o = 0;
    if (joint >= 0)
      right.push_back({"main run", im_colour(palette::kMainRun), &other[o++], false, false});
    for (std::size_t b = 0; b < branch_frames.size(); ++b) {
      const auto c = im_colour(palette::kBranches[b % palette::kBranches.size()].colour);
      const auto name = "fork " + std::to_string(b + 1);
      left.push_back({name, c, &returns[b + 1], false, false});
      right.push_back({name, c, &other[o++], false, false});
    }
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float half = (avail.x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
    ImGui::BeginGroup();
    ImGui::TextUnformatted("return so far");
    int seek_to = imgui::traces("##returns", left, span, cursor,
                                ImVec2(half, ImGui::GetContentRegionAvail().y));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::SetNextItemWidth(half);
    const std::string what = joint < 0 ? std::string(models::kActionDifferenceName)
                                       : joints[static_cast<std::size_t>(joint)].name + " (qpos)";
    if (ImGui::BeginCombo("##divergence", what.c_str())) {
      if (ImGui::Selectable(models::kActionDifferenceName, joint < 0)) plot_joint = -1;
      for (std::size_t j = 0; j < joints.size(); ++j)
        if (ImGui::Selectable((joints[j].name + " (qpos)").c_str(), joint == static_cast<int>(j)))
          plot_joint = static_cast<int>(j);
      ImGui::EndCombo();
    }
    const int seek_right = imgui::traces("##divergence-plot", right, span, cursor,
                                         ImVec2(half, ImGui::GetContentRegionAvail().y));
    ImGui::EndGroup();
    if (seek_right >= 0) seek_to = seek_right;
    if (seek_to >= 0 && seek_to < steps && seek_to != shown.cursor) live->seek(seek_to);
    return;
  }
  // The studio's Viewer tab draws the same traces in the same colours (dstudio/common/palette.h).
  const auto colour = [](palette::Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); };
  std::vector<imgui::Trace> series = {
      {std::string(palette::kReturnToGo.name), colour(palette::kReturnToGo.colour), &rtg, false,
       palette::kReturnToGo.dashed},
      {std::string(palette::kReturnSoFar.name), colour(palette::kReturnSoFar.colour), &ret, false,
       palette::kReturnSoFar.dashed},
      {std::string(palette::kEntropy.name) + " (right, nats)", colour(palette::kEntropy.colour),
       &entropy, true, palette::kEntropy.dashed},
  };
  // A behaviour policy asks for no return and attends to nothing: its return alone. A replay
  // has its recorded return-to-go but no policy's attention.
  if (live->behaviour()) series = {series[1]};
  if (live->replay()) series.pop_back();
  const int seek_to =
      imgui::traces("##traces", series, span, cursor, ImGui::GetContentRegionAvail());
  if (seek_to >= 0 && seek_to < steps && seek_to != shown.cursor) live->seek(seek_to);
}

void LiveViewer::State::draw_panels() {
  ImGuiIO& io = ImGui::GetIO();
  if (presentation) ImGui::PushFont(large_font);
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  draw_overlay();

  ImGui::SetNextWindowPos(ImVec2(static_cast<float>(scene_w), 0));
  ImGui::SetNextWindowSize(ImVec2(static_cast<float>(side_w), io.DisplaySize.y));
  ImGui::Begin(live->replay() ? "Episode" : "Policy", nullptr, fixed);
  if (!presentation) {
    draw_controls();
    section("Attention of the window acted on");
  }
  draw_attention();
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, static_cast<float>(scene_h)));
  ImGui::SetNextWindowSize(ImVec2(static_cast<float>(scene_w), static_cast<float>(bottom_h)));
  ImGui::Begin("##traces", nullptr, fixed | ImGuiWindowFlags_NoTitleBar);
  draw_traces();
  ImGui::End();
  if (presentation) ImGui::PopFont();

  // Keys, as in simulate: space plays, arrows step, Home/End, [ ] speed, F11 presentation.
  if (!io.WantTextInput) {
    if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) shown.playing ? live->pause() : live->play();
    if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT)) live->step_forward();
    if (ImGui::IsKeyPressed(GLFW_KEY_LEFT)) live->step_back();
    if (ImGui::IsKeyPressed(GLFW_KEY_HOME, false)) live->seek(0);
    if (ImGui::IsKeyPressed(GLFW_KEY_END, false)) live->seek(std::max(0, shown.frames - 1));
    if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) presentation = !presentation, apply_style();
    if (ImGui::IsKeyPressed(GLFW_KEY_T, false)) apply_tracking(!tracking);
    if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT_BRACKET, false))
      speed = models::next_speed(speed, true), live->set_speed(speed), rate->reset();
    if (ImGui::IsKeyPressed(GLFW_KEY_LEFT_BRACKET, false))
      speed = models::next_speed(speed, false), live->set_speed(speed), rate->reset();
  }
}

}  // namespace dstudio::viewer
