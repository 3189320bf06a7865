// D4RL's AntMaze: the maps, the walls, goals and starts, the navigator, and the six
// antmaze-*-v2 tasks as registry entries. See antmaze.h and docs/environments.md.

#include "dstudio/env/antmaze.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "builtin_environments.h"
#include "dstudio/common/resources.h"

namespace dstudio::env::antmaze {
namespace {

// maze_env.py's maps, 1 as '#', 0 as '.', r as 'R', g as 'G'.
std::vector<Maze> make_mazes() {
  std::vector<Maze> all;
  all.push_back({"U_MAZE", {"#####", "#R..#", "###.#", "#G..#", "#####"}});
  all.push_back({"BIG_MAZE",
                 {"########", "#R.##..#", "#..#..G#", "##...###", "#..#...#", "#G#..#.#",
                  "#...#G.#", "########"}});
  all.push_back({"HARDEST_MAZE",
                 {"############", "#R...#G....#", "#.##.#.#.#.#", "#....G.#..G#", "#.####.###.#",
                  "#.G#.#.....#", "##.#.#.#.###", "#..#G.G#.G.#", "############"}});
  all.push_back({"U_MAZE_TEST", {"#####", "#R..#", "###.#", "#G..#", "#####"}});
  all.push_back({"BIG_MAZE_TEST",
                 {"########", "#R.##..#", "#..#...#", "##...###", "#..#...#", "#.#..#.#",
                  "#...#.G#", "########"}});
  all.push_back({"HARDEST_MAZE_TEST",
                 {"############", "#R...#.....#", "#.##.#.#.#.#", "#......#...#", "#.####.###.#",
                  "#..#.#.....#", "##.#.#.#.###", "#..#...#.G.#", "############"}});
  // The "diverse" collection maps: D4RL's maps without their goal cells (antmaze.h).
  for (const char* base : {"U_MAZE", "BIG_MAZE", "HARDEST_MAZE"}) {
    Maze m = *std::find_if(all.begin(), all.end(), [&](const Maze& x) { return x.name == base; });
    m.name += "_DIVERSE";
    for (auto& row : m.grid) std::replace(row.begin(), row.end(), 'G', '.');
    all.push_back(std::move(m));
  }
  return all;
}

std::string format_triple(const std::array<double, 3>& v) {
  char text[96];
  std::snprintf(text, sizeof text, "%f %f %f", v[0], v[1], v[2]);  // as maze_env.py's "%f"
  return text;
}

// D4RL's AntEnv observation with expose_all_qpos: qpos[:15] then qvel[:14].
const std::vector<std::string>& ant_observation_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> q = {"x", "y", "z", "qw", "qx", "qy", "qz"};
    std::vector<std::string> joints;
    for (int leg = 1; leg <= 4; ++leg) {
      joints.push_back("hip_" + std::to_string(leg));
      joints.push_back("ankle_" + std::to_string(leg));
    }
    q.insert(q.end(), joints.begin(), joints.end());
    for (const char* v : {"v_x", "v_y", "v_z", "w_x", "w_y", "w_z"}) q.push_back(v);
    for (const auto& j : joints) q.push_back("v_" + j);
    return q;
  }();
  return names;
}

// AntEnv.reset_model: init_qpos + U(-0.1, 0.1), init_qvel + 0.1 N(0, 1). Gym's MujocoEnv takes
// init_qpos from the compiled model's qpos0 (the torso at z 0.75, joints at 0), not from the
// asset's <numeric name="init_qpos">.
void reset_ant(Simulation& sim, Random& random) {
  const mjModel* m = sim.model;
  for (int i = 0; i < m->nq; ++i) sim.data->qpos[i] = m->qpos0[i] + random.uniform(-0.1, 0.1);
  for (int i = 0; i < m->nv; ++i) sim.data->qvel[i] = 0.1 * random.normal();
}

// NormalizedBoxEnv: lb + (a + 1) (ub - lb) / 2, clipped to the bounds.
void apply_ant_action(std::span<const float> action, Simulation& sim) {
  for (std::size_t i = 0; i < action.size(); ++i) {
    const double lb = sim.model->actuator_ctrlrange[2 * i];
    const double ub = sim.model->actuator_ctrlrange[2 * i + 1];
    const double scaled = lb + (static_cast<double>(action[i]) + 1.0) * 0.5 * (ub - lb);
    sim.data->ctrl[i] = std::clamp(scaled, lb, ub);
  }
}

double distance_to_goal(const Simulation& sim) {
  const auto& goal = *sim.task_state;
  return std::hypot(sim.data->qpos[0] - goal[0], sim.data->qpos[1] - goal[1]);
}

// Steps until the goal sequence's next goal: 25 to 100, uniformly.
int next_goal_after(Random& random) {
  return kGoalSequenceShortest +
         static_cast<int>(random.below(kGoalSequenceLongest - kGoalSequenceShortest + 1));
}

Marker goal_marker(std::span<const double> task_state) {
  Marker goal;
  goal.label = "goal";
  goal.x = task_state[0], goal.y = task_state[1], goal.z = 0.05;
  goal.radius = kGoalRadius;
  goal.rgba[0] = 0.95f, goal.rgba[1] = 0.3f, goal.rgba[2] = 0.2f, goal.rgba[3] = 0.7f;
  return goal;
}

// The goal, and the centre of the next cell D4RL's navigator would send the ant to (without the
// noise it adds to it; the goal itself in the goal's cell).
std::function<std::vector<Marker>(std::span<const double>, std::span<const double>)> maze_markers(
    const Maze& maze) {
  return [&maze](std::span<const double> qpos, std::span<const double> task_state) {
    std::vector<Marker> out;
    if (task_state.size() < 2) return out;
    out.push_back(goal_marker(task_state));
    if (qpos.size() < 2) return out;
    try {
      const Point target = {task_state[0], task_state[1]};
      const Cell target_cell = maze.navigator_cell(target);
      const Cell next = next_cell(maze, maze.navigator_cell({qpos[0], qpos[1]}), target_cell);
      const Point at = next == target_cell ? target : maze.centre(next);
      Marker waypoint;
      waypoint.label = "waypoint";
      waypoint.x = at[0], waypoint.y = at[1], waypoint.z = 0.05;
      waypoint.radius = 0.3;
      waypoint.rgba[0] = 0.2f, waypoint.rgba[1] = 0.45f, waypoint.rgba[2] = 0.95f;
      waypoint.rgba[3] = 0.7f;
      out.push_back(waypoint);
    } catch (const EnvError&) {
      // No path from where the ant is (outside the maze): no waypoint to show.
    }
    return out;
  };
}

std::string ant_xml() {
  const auto text = embedded_resource("environments/d4rl/ant.xml");
  if (!text) throw EnvError("no embedded model 'environments/d4rl/ant.xml'");
  return std::string(*text);
}

struct TaskRow {
  const char* name;
  const char* evaluation;
  const char* generation;
  bool multistart;
  int horizon;
  const char* description;
};

const std::vector<TaskRow>& task_rows() {
  static const std::vector<TaskRow> rows = {
      {"antmaze-umaze-v2", "U_MAZE_TEST", "U_MAZE", false, 700,
       "D4RL's AntMaze, umaze (5x5): the ant from one start to one goal"},
      {"antmaze-umaze-diverse-v2", "U_MAZE_TEST", "U_MAZE_DIVERSE", true, 700,
       "D4RL's AntMaze, umaze (5x5); data from random starts to random goals"},
      {"antmaze-medium-play-v2", "BIG_MAZE_TEST", "BIG_MAZE", true, 1000,
       "D4RL's AntMaze, medium (8x8); data from random starts to chosen goals"},
      {"antmaze-medium-diverse-v2", "BIG_MAZE_TEST", "BIG_MAZE_DIVERSE", true, 1000,
       "D4RL's AntMaze, medium (8x8); data from random starts to random goals"},
      {"antmaze-large-play-v2", "HARDEST_MAZE_TEST", "HARDEST_MAZE", true, 1000,
       "D4RL's AntMaze, large (9x12); data from random starts to chosen goals"},
      {"antmaze-large-diverse-v2", "HARDEST_MAZE_TEST", "HARDEST_MAZE_DIVERSE", true, 1000,
       "D4RL's AntMaze, large (9x12); data from random starts to random goals"},
  };
  return rows;
}

EnvironmentDefinition maze_task(const TaskRow& row) {
  const Maze& evaluation = maze(row.evaluation);
  EnvironmentDefinition d;
  d.name = row.name;
  d.base = row.name;
  d.family = "antmaze";
  d.description = row.description;
  d.model_xml = maze_model_xml(evaluation);
  d.obs_dim = 29, d.act_dim = 8, d.nq = 15, d.nv = 14;
  d.frame_skip = 5;
  d.max_episode_steps = row.horizon;
  d.observation_names = ant_observation_names();
  d.first_velocity = 15;
  d.ref_min_score = 0.0, d.ref_max_score = 1.0;
  d.rtg_scale = 1.0;
  d.default_targets = {1.0};
  d.goal_reaching = true;
  d.task_state_size = 2;
  // Over the maze, looking down at its middle from far enough that the whole of it, its outer
  // walls' tops included, fits a picture as wide as 4:3 or wider (the rows run up the picture,
  // the columns across it) with a little room to spare.
  const double span = std::max<double>(evaluation.rows(), 0.75 * evaluation.cols()) * kScaling;
  const Point first = evaluation.centre({0, 0});
  const Point last = evaluation.centre({evaluation.rows() - 1, evaluation.cols() - 1});
  d.camera.distance = span * 1.45;
  d.camera.azimuth = 90.0;
  d.camera.elevation = -75.0;
  d.camera.lookat[0] = 0.5 * (first[0] + last[0]);
  d.camera.lookat[1] = 0.5 * (first[1] + last[1]);
  d.camera.lookat[2] = 0.0;
  d.camera.track = false;

  // v2_resets: a new goal on every reset, drawn before the state.
  d.reset = [&evaluation](Simulation& sim, Random& random) {
    const Point goal = sample_goal(evaluation, random);
    (*sim.task_state)[0] = goal[0], (*sim.task_state)[1] = goal[1];
    reset_ant(sim, random);
  };
  d.observe = [](const Simulation& sim, std::span<float> obs) {
    for (int i = 0; i < 15; ++i) obs[i] = static_cast<float>(sim.data->qpos[i]);
    for (int i = 0; i < 14; ++i) obs[15 + i] = static_cast<float>(sim.data->qvel[i]);
  };
  d.apply_action = apply_ant_action;
  // reward_type 'sparse' and eval: 1 within 0.5 of the goal, where the episode ends.
  d.outcome = [](const Simulation& sim, const StepContext&) {
    StepResult r;
    r.success = distance_to_goal(sim) <= kGoalRadius;
    r.reward = r.success ? 1.0 : 0.0;
    r.terminated = r.success;
    return r;
  };
  d.markers = maze_markers(evaluation);
  d.goal_distance = [goal = nominal_goal(evaluation)](std::span<const float> obs) {
    return std::hypot(obs[0] - goal[0], obs[1] - goal[1]);
  };
  return d;
}

}  // namespace

bool Maze::free(Cell c) const {
  if (c.first < 0 || c.first >= rows() || c.second < 0 || c.second >= cols()) return false;
  return at(c) != '#';
}

Cell Maze::start() const {
  for (int i = 0; i < rows(); ++i)
    for (int j = 0; j < cols(); ++j)
      if (grid[i][j] == 'R') return {i, j};
  throw EnvError("the maze " + name + " has no start cell");
}

std::vector<Cell> Maze::goals() const {
  std::vector<Cell> out;
  for (int i = 0; i < rows(); ++i)
    for (int j = 0; j < cols(); ++j)
      if (grid[i][j] == 'G') out.push_back({i, j});
  return out;
}

Point Maze::centre(Cell c) const {
  const Cell r = start();
  return {c.second * kScaling - r.second * kScaling, c.first * kScaling - r.first * kScaling};
}

Cell Maze::navigator_cell(Point xy) const {
  const double x = std::max(xy[0], 1e-4), y = std::max(xy[1], 1e-4);
  return {static_cast<int>(1 + y / kScaling), static_cast<int>(1 + x / kScaling)};
}

const Maze& maze(std::string_view name) {
  static const std::vector<Maze> all = make_mazes();
  for (const auto& m : all)
    if (m.name == name) return m;
  std::string known;
  for (const auto& m : all) known += (known.empty() ? "" : ", ") + m.name;
  throw EnvError("unknown maze '" + std::string(name) + "'; known mazes: " + known);
}

std::vector<WallBox> walls(const Maze& m) {
  const Cell r = m.start();
  const double torso_x = r.second * kScaling, torso_y = r.first * kScaling;
  std::vector<WallBox> out;
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j)
      if (m.grid[i][j] == '#')
        out.push_back({"block_" + std::to_string(i) + "_" + std::to_string(j),
                       {j * kScaling - torso_x, i * kScaling - torso_y, kHeight / 2 * kScaling},
                       {0.5 * kScaling, 0.5 * kScaling, kHeight / 2 * kScaling}});
  return out;
}

std::string maze_model_xml(const Maze& m) {
  std::string xml = ant_xml();
  std::string boxes;
  for (const auto& w : walls(m))
    boxes += "    <geom name=\"" + w.name + "\" pos=\"" + format_triple(w.pos) + "\" size=\"" +
             format_triple(w.half) +
             "\" type=\"box\" contype=\"1\" conaffinity=\"1\" rgba=\"0.7 0.5 0.3 1.0\" />\n";
  const auto at = xml.rfind("</worldbody>");
  if (at == std::string::npos) throw EnvError("D4RL's ant.xml has no worldbody");
  xml.insert(at, boxes);
  return xml;
}

Point sample_goal(const Maze& m, Random& random) {
  std::vector<Cell> choices = m.goals();
  if (choices.empty())
    for (int i = 0; i < m.rows(); ++i)
      for (int j = 0; j < m.cols(); ++j)
        if (m.free({i, j})) choices.push_back({i, j});
  const Cell cell = choices[random.below(choices.size())];
  Point xy = m.centre(cell);
  xy[0] += random.uniform(0.0, kScaling * 0.25);
  xy[1] += random.uniform(0.0, kScaling * 0.25);
  const double dx = random.uniform(0.0, 0.5) * 0.25 * kScaling;
  const double dy = random.uniform(0.0, 0.5) * 0.25 * kScaling;
  return {std::max(xy[0] + dx, 0.0), std::max(xy[1] + dy, 0.0)};
}

Point nominal_goal(const Maze& m) {
  const auto goals = m.goals();
  if (goals.empty()) throw EnvError("the maze " + m.name + " has no goal cell");
  return m.centre(goals.front());
}

Point sample_start(const Maze& m, Random& random) {
  std::vector<Cell> cells;
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j)
      if (m.grid[i][j] == '.' || m.grid[i][j] == 'R') cells.push_back({i, j});
  const Cell cell = cells[random.below(cells.size())];
  const Point xy = m.centre(cell);
  const double dx = random.uniform(0.0, 0.5) * 0.5 * kScaling;
  const double dy = random.uniform(0.0, 0.5) * 0.5 * kScaling;
  return {std::max(xy[0] + dx, 0.0), std::max(xy[1] + dy, 0.0)};
}

Cell next_cell(const Maze& m, Cell current, Cell target) {
  if (current == target) return target;
  std::vector<char> visited(static_cast<std::size_t>(m.rows() * m.cols()), 0);
  auto seen = [&](Cell c) -> char& {
    return visited[static_cast<std::size_t>(c.first * m.cols() + c.second)];
  };
  // maze_env.py marks a cell visited when it is expanded; the duplicates it queues come after
  // their first copy, so dropping them does not change which cell is found first.
  std::vector<Cell> to_visit = {target};
  while (!to_visit.empty()) {
    std::vector<Cell> next_visit;
    for (const Cell& c : to_visit) {
      if (c.first >= 0 && c.first < m.rows() && c.second >= 0 && c.second < m.cols()) seen(c) = 1;
      const Cell around[] = {{c.first, c.second - 1},
                             {c.first, c.second + 1},
                             {c.first + 1, c.second},
                             {c.first - 1, c.second}};
      for (const Cell& n : around) {
        if (n == current) return c;
        if (!m.free(n) || seen(n)) continue;
        if (std::find(next_visit.begin(), next_visit.end(), n) == next_visit.end())
          next_visit.push_back(n);
      }
    }
    to_visit = std::move(next_visit);
  }
  throw EnvError("no path in the maze " + m.name + " from cell (" + std::to_string(current.first) +
                 ", " + std::to_string(current.second) + ") to cell (" +
                 std::to_string(target.first) + ", " + std::to_string(target.second) + ")");
}

Waypoint navigate(const Maze& m, Point robot, Point target, Random& random) {
  const Cell robot_cell = m.navigator_cell(robot), target_cell = m.navigator_cell(target);
  const Cell next = next_cell(m, robot_cell, target_cell);
  if (next == target_cell) return {target, next};
  Point xy = m.centre(next);
  xy[0] += random.uniform(0.0, kScaling * 0.25);
  xy[1] += random.uniform(0.0, kScaling * 0.25);
  return {xy, next};
}

double torso_up(std::span<const double> qpos) {
  if (qpos.size() < 7) throw EnvError("the torso's orientation needs qpos[3:7]");
  // The third row, third column of the rotation of the unit quaternion (w, x, y, z); the
  // quaternion of a simulation is normalised only up to rounding, hence the division.
  const double w = qpos[3], x = qpos[4], y = qpos[5], z = qpos[6];
  const double norm = w * w + x * x + y * y + z * z;
  return norm > 0.0 ? (w * w - x * x - y * y + z * z) / norm : 1.0;
}

void goal_reacher_input(std::span<const double> qpos, std::span<const double> qvel, Point goal,
                        std::span<float> input) {
  if (qpos.size() < 15 || qvel.size() < 14 || input.size() != 29)
    throw EnvError("the goal-reacher's input needs qpos[0:15], qvel[0:14] and 29 values");
  int k = 0;
  for (int i = 2; i < 15; ++i) input[k++] = static_cast<float>(qpos[i]);
  for (int i = 0; i < 14; ++i) input[k++] = static_cast<float>(qvel[i]);
  const double dx = goal[0] - qpos[0], dy = goal[1] - qpos[1];
  const double length = std::hypot(dx, dy);
  // At the goal itself the direction is undefined (D4RL divides by zero): no direction then.
  const double scale = length > 1e-9 ? kGoalInputLength / length : 0.0;
  input[k++] = static_cast<float>(dx * scale);
  input[k++] = static_cast<float>(dy * scale);
}

EnvironmentDefinition goal_reaching_definition() {
  EnvironmentDefinition d;
  d.name = "ant-goal-reaching";
  d.base = d.name;
  d.family = "antmaze";
  d.description = "D4RL's ant in the open plane, sent to a goal within 10 of the origin";
  d.model_xml = ant_xml();
  d.obs_dim = 29, d.act_dim = 8, d.nq = 15, d.nv = 14;
  d.frame_skip = 5;
  d.max_episode_steps = 300;
  const auto& names = ant_observation_names();
  d.observation_names.assign(names.begin() + 2, names.end());
  d.observation_names.push_back("goal_dx");
  d.observation_names.push_back("goal_dy");
  d.first_velocity = 13;
  d.ref_min_score = -3000.0, d.ref_max_score = 0.0;
  d.rtg_scale = 100.0;
  d.goal_reaching = true;
  d.task_state_size = 2;
  // disk_goal_sampler: an angle, then a radius uniform in [0, 10].
  d.reset = [](Simulation& sim, Random& random) {
    const double angle = 2.0 * std::numbers::pi * random.uniform();
    const double radius = kGoalInputLength * random.uniform();
    (*sim.task_state)[0] = radius * std::cos(angle);
    (*sim.task_state)[1] = radius * std::sin(angle);
    reset_ant(sim, random);
  };
  d.observe = [](const Simulation& sim, std::span<float> obs) {
    const auto& goal = *sim.task_state;
    int k = 0;
    for (int i = 2; i < 15; ++i) obs[k++] = static_cast<float>(sim.data->qpos[i]);
    for (int i = 0; i < 14; ++i) obs[k++] = static_cast<float>(sim.data->qvel[i]);
    obs[k++] = static_cast<float>(goal[0] - sim.data->qpos[0]);
    obs[k++] = static_cast<float>(goal[1] - sim.data->qpos[1]);
  };
  d.apply_action = apply_ant_action;
  d.outcome = [](const Simulation& sim, const StepContext&) {
    StepResult r;
    const double distance = distance_to_goal(sim);
    r.reward = -distance;
    r.success = distance <= kGoalRadius;
    return r;
  };
  d.markers = [](std::span<const double>, std::span<const double> task_state) {
    return task_state.size() < 2 ? std::vector<Marker>{}
                                 : std::vector<Marker>{goal_marker(task_state)};
  };
  return d;
}

EnvironmentDefinition goal_sequence_definition() {
  EnvironmentDefinition d = goal_reaching_definition();
  d.name = "ant-goal-sequence";
  d.base = d.name;
  d.description = "D4RL's ant in the open plane, sent to a new goal every 25 to 100 steps";
  d.max_episode_steps = kGoalSequenceSteps;
  // The goal's x, y, the step of the next goal, and the seed the goals after the first come from
  // (an outcome draws no noise of its own: the episode's goals follow from its reset).
  d.task_state_size = 4;
  d.reset = [](Simulation& sim, Random& random) {
    auto& state = *sim.task_state;
    const double angle = 2.0 * std::numbers::pi * random.uniform();
    const double radius = kGoalInputLength * random.uniform();
    state[0] = radius * std::cos(angle);
    state[1] = radius * std::sin(angle);
    state[2] = static_cast<double>(next_goal_after(random));
    // 2^53 keeps the seed exact as a double.
    state[3] = static_cast<double>(random.below(std::uint64_t{1} << 53));
    reset_ant(sim, random);
  };
  d.outcome = [](const Simulation& sim, const StepContext& step) {
    StepResult r;
    const double distance = distance_to_goal(sim);
    r.reward = -distance;
    r.success = distance <= kGoalRadius;
    auto& state = *sim.task_state;
    if (step.elapsed_steps >= static_cast<int>(state[2])) {
      // The step is paid against the goal it was taken for; the next observation shows the new.
      Random random(Random::derive(static_cast<std::uint64_t>(state[3]),
                                   static_cast<std::uint64_t>(step.elapsed_steps)));
      const double angle = 2.0 * std::numbers::pi * random.uniform();
      const double radius = random.uniform(kGoalSequenceNearest, kGoalInputLength);
      state[0] = sim.data->qpos[0] + radius * std::cos(angle);
      state[1] = sim.data->qpos[1] + radius * std::sin(angle);
      state[2] += static_cast<double>(next_goal_after(random));
    }
    return r;
  };
  return d;
}

TaskMaps task_maps(std::string_view task) {
  const auto found = find_task(task);
  for (const auto& row : task_rows())
    if (found && found->name == row.name)
      return {&maze(row.evaluation), &maze(row.generation), row.multistart};
  throw EnvError("'" + std::string(task) + "' is not an antmaze task");
}

}  // namespace dstudio::env::antmaze

namespace dstudio::env {

std::vector<EnvironmentDefinition> antmaze_environments() {
  std::vector<EnvironmentDefinition> out;
  for (const auto& row : antmaze::task_rows()) out.push_back(antmaze::maze_task(row));
  return out;
}

}  // namespace dstudio::env
