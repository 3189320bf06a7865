#pragma once
/// \file
/// D4RL's AntMaze, as `d4rl/locomotion` defines it (ant.py, maze_env.py, goal_reaching_env.py):
/// the maze maps as char grids, where the walls and the cells are, how a goal and a start are
/// drawn, and the breadth-first navigator that gave D4RL's data its waypoints. The six
/// antmaze-*-v2 tasks are registry entries built from these (env/antmaze.cpp); the goal-reaching
/// ant of the open plane, which the studio trains to make AntMaze data, is defined here too.
///
/// Coordinates are D4RL's: a cell (row, col) has its centre at (col * 4 - x0, row * 4 - y0), the
/// origin at the start cell R; rows run along y, columns along x.

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dstudio/common/random.h"
#include "dstudio/env/environment.h"

namespace dstudio::env::antmaze {

inline constexpr double kScaling = 4.0;       ///< maze_size_scaling: the side of a cell
inline constexpr double kHeight = 0.5;        ///< maze_height, in cells: walls are 2 high
inline constexpr double kGoalRadius = 0.5;    ///< the sparse reward's distance to the goal
inline constexpr double kActionScale = 30.0;  ///< NormalizedBoxEnv maps [-1, 1] onto +/-30
/// The goal-reacher's input: the relative goal rescaled to this length (D4RL's script).
inline constexpr double kGoalInputLength = 10.0;

using Cell = std::pair<int, int>;  ///< (row, column)
using Point = std::array<double, 2>;

/// A maze map: '#' a wall, '.' free, 'R' the start (free), 'G' a goal (free).
struct Maze {
  std::string name;               ///< D4RL's: "U_MAZE_TEST", "BIG_MAZE", ...
  std::vector<std::string> grid;  ///< rows of equal length

  [[nodiscard]] int rows() const { return static_cast<int>(grid.size()); }
  [[nodiscard]] int cols() const { return grid.empty() ? 0 : static_cast<int>(grid[0].size()); }
  [[nodiscard]] char at(Cell c) const { return grid[c.first][c.second]; }
  /// Inside the map and not a wall.
  [[nodiscard]] bool free(Cell c) const;
  /// The R cell; throws EnvError when there is none.
  [[nodiscard]] Cell start() const;
  /// The G cells in row-major order.
  [[nodiscard]] std::vector<Cell> goals() const;
  /// The centre of a cell (D4RL's _rowcol_to_xy without noise).
  [[nodiscard]] Point centre(Cell c) const;
  /// The cell D4RL's navigator takes a point to be in (_xy_to_rowcol): (int(1 + y/4),
  /// int(1 + x/4)) with x and y floored at 1e-4. It assumes the start at (1, 1) and sits half a
  /// cell off the walls; kept as it is, since D4RL's data was made with it.
  [[nodiscard]] Cell navigator_cell(Point xy) const;
};

/// D4RL's maps by name: U_MAZE, BIG_MAZE, HARDEST_MAZE and their _TEST maps. Throws EnvError.
const Maze& maze(std::string_view name);

/// A wall of the MJCF model: a box at `pos` with half-sizes `half` (maze_env.py).
struct WallBox {
  std::string name;  ///< "block_<row>_<col>"
  std::array<double, 3> pos, half;
};
/// Every wall cell's box.
std::vector<WallBox> walls(const Maze& maze);
/// D4RL's ant.xml with the maze's walls added to its worldbody.
std::string maze_model_xml(const Maze& maze);

/// D4RL's goal_sampler: a cell drawn uniformly among the map's G cells (every free cell when it
/// has none), its centre plus U(0, 1) on each axis (_rowcol_to_xy's noise) plus U(0, 0.5) on each
/// axis, floored at 0. On a _TEST map, which has one G, this is the v2 evaluation goal.
Point sample_goal(const Maze& maze, Random& random);
/// The nominal goal: the centre of the map's first G cell (umaze (0, 8), medium (20, 20), large
/// (32, 24)): the fixed goal a dataset's rewards are relabelled against.
Point nominal_goal(const Maze& maze);
/// A multistart reset location (_get_reset_location): a cell drawn uniformly among the free cells
/// that are not G cells, its centre plus U(0, 1) on each axis, floored at 0.
Point sample_start(const Maze& maze, Random& random);

/// D4RL's breadth-first search (_get_best_next_rowcol): the next cell on a shortest path from
/// `current` to `target`, searching outward from the target with neighbours in the order left,
/// right, down, up. `target` itself when they are equal. Throws EnvError when no path exists.
Cell next_cell(const Maze& maze, Cell current, Cell target);

/// What the navigator hands the goal-reacher at one step.
struct Waypoint {
  Point xy;   ///< where the ant is sent
  Cell cell;  ///< the cell of that waypoint
};
/// D4RL's navigation policy (create_navigation_policy): the next cell's centre plus U(0, 1) on
/// each axis, or the exact target once the ant is in the target's cell.
Waypoint navigate(const Maze& maze, Point robot, Point target, Random& random);

/// The z component of the torso's up axis, from its quaternion qpos[3:7]: 1 upright, 0 on its
/// side, -1 on its back. An ant below 0 has turned over; it does not get up again.
double torso_up(std::span<const double> qpos);

/// The goal-reacher's input: qpos[2:15], qvel[0:14], then `goal - xy` rescaled to length 10.
void goal_reacher_input(std::span<const double> qpos, std::span<const double> qvel, Point goal,
                        std::span<float> input);

/// The open plane on which the goal-reacher learns ("ant-goal-reaching", not a registered task):
/// D4RL's ant; the observation is qpos[2:15], qvel[0:14] and the goal relative to the torso as it
/// is (GoalReachingEnv appends `goal - xy`; only the collection rescales it to length 10, to keep
/// the waypoints within what the training goals were); a goal from a disk of radius 10 about the
/// origin (disk_goal_sampler), dense reward -distance, 300 steps, no termination.
EnvironmentDefinition goal_reaching_definition();

/// The goal sequence: the open plane of goal_reaching_definition(), its first goal as there, then
/// every 25 to 100 steps a new goal 2 to 10 from the torso in a direction drawn uniformly, for
/// 1000 steps. The goal-reacher is refined on it after D4RL's plane: the navigator's waypoint
/// turns while the ant runs, and always reads 10 away, which the plane's goals, approached from
/// rest, seldom show.
inline constexpr int kGoalSequenceShortest = 25, kGoalSequenceLongest = 100;
inline constexpr double kGoalSequenceNearest = 2.0;
inline constexpr int kGoalSequenceSteps = 1000;
EnvironmentDefinition goal_sequence_definition();

/// What an antmaze task is built from.
struct TaskMaps {
  const Maze* evaluation;  ///< the _TEST map the task draws goals from
  /// The map the data is collected in: D4RL's (its G cells are the collection goals: "play",
  /// and umaze), or for "diverse" the same map without G cells, so goals come from every free
  /// cell (docs/environments.md says why: D4RL's script does not show it).
  const Maze* generation;
  bool multistart;  ///< the data starts anywhere free (diverse and play)
};
/// The maps of an antmaze task ("antmaze-medium-play-v2"). Throws EnvError.
TaskMaps task_maps(std::string_view task);

}  // namespace dstudio::env::antmaze
