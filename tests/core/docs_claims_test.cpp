// What docs/findings.md says is exact is held to the numbers it was written from: each row of the
// knockout table (the action errors at one, two and three steps of context, and the context from
// which the actions are exactly the whole window's) against docs/findings/knockout-*/summary.json,
// and the prose's "bit-for-bit from N" against the same data; the door's knockout table against
// docs/findings/adroit/; the AntMaze tables against docs/findings/antmaze/. A word that outruns
// its number fails here.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dstudio/common/read_file.h"

namespace dstudio {
namespace {

namespace fs = std::filesystem;

const fs::path kDocs = fs::path(DSTUDIO_TEST_DATA).parent_path().parent_path() / "docs";

std::vector<double> action_errors(const std::string& folder, const std::string& label) {
  const auto j = nlohmann::json::parse(
      read_regular_file(kDocs / "findings" / folder / "summary.json", 1 << 24));
  for (const auto& m : j.at("models"))
    if (m.at("label") == label) return m.at("action_error").get<std::vector<double>>();
  ADD_FAILURE() << folder << " has no model " << label;
  return {};
}

// The smallest context from which every error is exactly 0 (K + 1 when none is).
int exact_from(const std::vector<double>& errors) {
  int from = static_cast<int>(errors.size()) + 1;
  for (int c = static_cast<int>(errors.size());
       c >= 1 && errors[static_cast<std::size_t>(c - 1)] == 0.0; --c)
    from = c;
  return from;
}

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream in(row);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) {
    const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
    out.push_back(a == std::string::npos ? std::string() : cell.substr(a, b - a + 1));
  }
  return out;
}

// The rows of the Markdown table whose header starts with `header`, each as its cells, the header
// and the rule left out; none when no table has that header.
std::vector<std::vector<std::string>> table_rows(const std::string& text,
                                                 const std::string& header) {
  std::vector<std::vector<std::string>> rows;
  const auto table = text.find(header);
  if (table == std::string::npos) return rows;
  std::stringstream lines(text.substr(table));
  std::string line;
  std::getline(lines, line);  // header
  std::getline(lines, line);  // rule
  while (std::getline(lines, line) && line.rfind("| ", 0) == 0) rows.push_back(cells(line));
  return rows;
}

struct Model {
  std::string folder, label;
};

TEST(DocsClaims, TheKnockoutTableAndItsProseSayWhatTheirDataSay) {
  const std::map<std::string, Model> models = {
      {"DT", {"knockout-dt", "hopper-medium-expert-dt"}},
      {"GDT", {"knockout-dt", "hopper-medium-expert-gdt"}},
      {"DC", {"knockout-dc", "hopper-medium-expert-dc"}},
      {"DHi", {"knockout-dc", "hopper-medium-expert-dhi"}}};
  const std::string text = read_regular_file(kDocs / "findings.md", 1 << 24);
  const auto table = table_rows(text, "| model | K | score, whole window | score, context 1");
  ASSERT_FALSE(table.empty()) << "the knockout table moved";
  int rows = 0;
  for (const auto& c : table) {
    ASSERT_GE(c.size(), 6u) << c[0];
    const auto it = models.find(c[0]);
    ASSERT_NE(it, models.end()) << "a row of an unknown model: " << c[0];
    SCOPED_TRACE(c[0]);
    const auto errors = action_errors(it->second.folder, it->second.label);
    ASSERT_GE(errors.size(), 3u);
    // "0" only where the data are exactly 0; any other number within its rounding.
    std::stringstream said(c[4]);
    std::string number;
    for (std::size_t k = 0; k < 3; ++k) {
      ASSERT_TRUE(std::getline(said, number, ',')) << c[4];
      number = number.substr(number.find_first_not_of(' '));
      const double value = std::stod(number), data = errors[k];
      if (value == 0.0) {
        EXPECT_EQ(data, 0.0) << "context " << k + 1 << " is said to be exact";
      } else {
        EXPECT_NE(data, 0.0) << "context " << k + 1;
        EXPECT_LT(std::abs(value - data), 0.06 * std::abs(data) + 5e-4 * (value >= 1e-3))
            << "context " << k + 1 << ": said " << number << ", the data " << data;
      }
    }
    EXPECT_EQ(std::stoi(c[5]), exact_from(errors)) << "the context from which actions are exact";
    ++rows;
  }
  EXPECT_EQ(rows, 4);

  // The prose: "bit-for-bit the whole window's from 3 (DC) or 2 (DHi)".
  const std::regex claim(R"(bit-for-bit the whole\s+window's from (\d+) \(DC\) or (\d+) \(DHi\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, claim)) << "the exactness sentence moved";
  EXPECT_EQ(std::stoi(m[1]), exact_from(action_errors("knockout-dc", "hopper-medium-expert-dc")));
  EXPECT_EQ(std::stoi(m[2]), exact_from(action_errors("knockout-dc", "hopper-medium-expert-dhi")));
  const std::regex gdt(R"(exactly 0 only from (\d+))");
  ASSERT_TRUE(std::regex_search(text, m, gdt));
  EXPECT_EQ(std::stoi(m[1]), exact_from(action_errors("knockout-dt", "hopper-medium-expert-gdt")));
}

// The door's knockout table: each model's scores at the whole window and at contexts 1, 2, 5 and
// 10, its action errors at 1, 2 and 3 steps, and the smallest context keeping 95% of the return,
// against docs/findings/adroit/knockout-door-*/summary.json; a blank cell is a context the model
// does not have.
TEST(DocsClaims, TheDoorsKnockoutTableSaysWhatItsDataSay) {
  const std::map<std::string, std::string> folders = {{"DT, door expert", "knockout-door-dt"},
                                                      {"DC, door expert (K 8)", "knockout-door-dc"},
                                                      {"DHi, door expert", "knockout-door-dhi"}};
  const std::string text = read_regular_file(kDocs / "findings.md", 1 << 24);
  const auto table = table_rows(
      text, "| model | score, whole window (95% interval) | context 1 | 2 | 5 | 10 | action error");
  ASSERT_FALSE(table.empty()) << "the door's knockout table moved";
  int rows = 0;
  for (const auto& c : table) {
    ASSERT_GE(c.size(), 8u) << c[0];
    const auto folder = folders.find(c[0]);
    if (folder == folders.end()) continue;  // the hopper's row, held by the table above
    SCOPED_TRACE(c[0]);
    const auto j = nlohmann::json::parse(read_regular_file(
        kDocs / "findings" / "adroit" / folder->second / "summary.json", 1 << 24));
    const auto& m = j.at("models").at(0);
    const auto score = m.at("score").get<std::vector<double>>();
    const auto low = m.at("score_low").get<std::vector<double>>();
    const auto high = m.at("score_high").get<std::vector<double>>();
    ASSERT_FALSE(score.empty());
    // "105.5 (105.4-105.7)": the whole window's score and interval, to a tenth.
    const std::regex whole(R"(([\d.]+) \(([\d.]+)-([\d.]+)\))");
    std::smatch w;
    ASSERT_TRUE(std::regex_match(c[1], w, whole)) << c[1];
    EXPECT_NEAR(std::stod(w[1]), score.back(), 0.05 + 1e-9);
    EXPECT_NEAR(std::stod(w[2]), low.back(), 0.05 + 1e-9);
    EXPECT_NEAR(std::stod(w[3]), high.back(), 0.05 + 1e-9);
    const std::vector<std::size_t> contexts = {1, 2, 5, 10};
    for (std::size_t k = 0; k < contexts.size(); ++k) {
      if (contexts[k] > score.size()) {
        EXPECT_TRUE(c[2 + k].empty()) << "context " << contexts[k] << " is beyond K";
        continue;
      }
      if (contexts[k] == score.size()) continue;  // the whole window, said above (or blank)
      ASSERT_FALSE(c[2 + k].empty()) << "context " << contexts[k];
      EXPECT_NEAR(std::stod(c[2 + k]), score[contexts[k] - 1], 0.05 + 1e-9)
          << "context " << contexts[k];
    }
    const auto errors = m.at("action_error").get<std::vector<double>>();
    std::stringstream said(c[6]);
    std::string number;
    for (std::size_t k = 0; k < 3; ++k) {
      ASSERT_TRUE(std::getline(said, number, ',')) << c[6];
      const double value = std::stod(number.substr(number.find_first_not_of(' ')));
      if (value == 0.0)
        EXPECT_EQ(errors[k], 0.0) << "context " << k + 1 << " is said to be exact";
      else
        EXPECT_NEAR(value, errors[k], 5e-4 + 1e-9) << "context " << k + 1;
    }
    EXPECT_EQ(std::stoi(c[7]), m.at("smallest_context_keeping_95_percent").get<int>());
    ++rows;
  }
  EXPECT_EQ(rows, static_cast<int>(folders.size()));
}

// A number as the page writes it: its value and half a unit of its last digit ("91" 0.5, "0.426"
// 0.0005), so that a claim is held to the rounding it was written with.
struct Written {
  double value, rounding;
};

Written written(const std::string& text) {
  const auto dot = text.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
  return {std::stod(text), 0.5 * std::pow(10.0, -decimals)};
}

void expect_written(const std::string& text, double data, const std::string& what) {
  const Written w = written(text);
  if (w.value == 0.0 && w.rounding == 0.5) {
    EXPECT_EQ(data, 0.0) << what << ": said 0";
    return;
  }
  EXPECT_LE(std::abs(w.value - data), w.rounding + 1e-9)
      << what << ": said " << text << ", the data " << data;
}

// One knockout of docs/findings/antmaze/: a model's scores, intervals and action errors.
struct Knockout {
  std::vector<double> score, low, high, errors;
  int episodes = 0;
  nlohmann::json model;
};

Knockout antmaze_knockout(const std::string& folder, const std::string& label) {
  const auto j = nlohmann::json::parse(
      read_regular_file(kDocs / "findings" / "antmaze" / folder / "summary.json", 1 << 24));
  Knockout k;
  k.episodes = j.at("episodes").get<int>();
  for (const auto& m : j.at("models")) {
    if (m.at("label") != label) continue;
    k.model = m;
    k.errors = m.at("action_error").get<std::vector<double>>();
    if (k.episodes > 0) {
      k.score = m.at("score").get<std::vector<double>>();
      k.low = m.at("score_low").get<std::vector<double>>();
      k.high = m.at("score_high").get<std::vector<double>>();
    }
    return k;
  }
  ADD_FAILURE() << folder << " has no model " << label;
  return k;
}

// A score cell at context index i: "91", "91 (85-96)", "**9 (4-15)**", "0 of 100"; with `on`,
// the cell speaks of every context from i to the whole window: "91 to 98" their lowest and
// highest, a single number each of them.
void expect_score_cell(std::string cell, const Knockout& k, std::size_t i, const std::string& what,
                       bool on = false) {
  cell.erase(std::remove(cell.begin(), cell.end(), '*'), cell.end());
  ASSERT_LT(i, k.score.size()) << what;
  std::smatch m;
  if (std::regex_match(cell, m, std::regex(R"((\d+) of (\d+))"))) {
    EXPECT_EQ(std::stoi(m[2]), k.episodes) << what;
    EXPECT_EQ(std::stod(m[1]) * 100.0 / k.episodes, k.score[i]) << what;
  } else if (std::regex_match(cell, m, std::regex(R"(([\d.]+) to ([\d.]+))"))) {
    const auto from = k.score.begin() + static_cast<std::ptrdiff_t>(i);
    expect_written(m[1], *std::min_element(from, k.score.end()), what + ", lowest");
    expect_written(m[2], *std::max_element(from, k.score.end()), what + ", highest");
  } else if (std::regex_match(cell, m, std::regex(R"(([\d.]+) \(([\d.]+)-([\d.]+)\))"))) {
    expect_written(m[1], k.score[i], what);
    expect_written(m[2], k.low[i], what + ", low");
    expect_written(m[3], k.high[i], what + ", high");
  } else {
    ASSERT_TRUE(std::regex_match(cell, std::regex(R"([\d.]+)"))) << what << ": " << cell;
    for (std::size_t j = i; j < (on ? k.score.size() : i + 1); ++j)
      expect_written(cell, k.score[j], what + " (context " + std::to_string(j + 1) + ")");
  }
}

void expect_errors_cell(const std::string& cell, const Knockout& k, const std::string& what) {
  std::stringstream said(cell);
  std::string number;
  for (std::size_t c = 0; c < 3; ++c) {
    ASSERT_TRUE(std::getline(said, number, ',')) << what << ": " << cell;
    expect_written(number.substr(number.find_first_not_of(' ')), k.errors.at(c),
                   what + ", action error at context " + std::to_string(c + 1));
  }
}

// A row of an AntMaze knockout table: its knockout's folder and model label, and the action's size.
struct KnockoutRow {
  std::string folder, label;
  int act_dim;
};

// Calls `check` on each row of the table under `header`, with that row's knockout; the table must
// have as many rows as `rows` names, each one of them (by its first cell) with at least `columns`
// cells.
void check_knockout_rows(const std::string& text, const std::string& header,
                         const std::map<std::string, KnockoutRow>& rows, std::size_t columns,
                         const std::function<void(const std::vector<std::string>&, const Knockout&,
                                                  const KnockoutRow&)>& check) {
  const auto table = table_rows(text, header);
  ASSERT_EQ(table.size(), rows.size()) << "the table moved: " << header;
  for (const auto& c : table) {
    const auto row = rows.find(c[0]);
    ASSERT_NE(row, rows.end()) << "a row of an unknown model: " << c[0];
    SCOPED_TRACE(c[0]);
    ASSERT_GE(c.size(), columns);
    check(c, antmaze_knockout(row->second.folder, row->second.label), row->second);
  }
}

// The AntMaze knockout tables: each row's scores at the contexts its columns name, its action
// errors at 1, 2 and 3 steps and per action dimension at one (over sqrt of the action's size),
// against docs/findings/antmaze/*/summary.json.
TEST(DocsClaims, TheAntMazeKnockoutTablesSayWhatTheirDataSay) {
  const std::string text = read_regular_file(kDocs / "findings.md", 1 << 24);
  const std::string umaze_dt = "antmaze-umaze-v2-dt", umaze_dc = "antmaze-umaze-v2-dc",
                    medium_dt = "antmaze-medium-play-v2-dt",
                    medium_dc = "antmaze-medium-play-v2-dc";
  const std::map<std::string, KnockoutRow> umaze_rows = {
      {"DT, antmaze-umaze-v2 (100 episodes)", {"knockout-" + umaze_dt, umaze_dt, 8}},
      {"DC (K 8), antmaze-umaze-v2 (100 episodes)", {"knockout-" + umaze_dc, umaze_dc, 8}},
      {"DT, hopper medium-expert (20 episodes)",
       {"knockout-umaze-dt-and-hopper-dt", "hopper-medium-expert-dt", 3}}};
  check_knockout_rows(
      text, "| model, trained on | score, whole window (95% interval) | context 1 | 2 | 5 | 10 |",
      umaze_rows, 9, [](const auto& c, const Knockout& k, const KnockoutRow& row) {
        expect_score_cell(c[1], k, k.score.size() - 1, "the whole window");
        const std::vector<std::size_t> contexts = {1, 2, 5, 10};
        for (std::size_t i = 0; i < contexts.size(); ++i) {
          if (contexts[i] > k.score.size())
            EXPECT_TRUE(c[2 + i].empty()) << "context " << contexts[i] << " is beyond K";
          else
            expect_score_cell(c[2 + i], k, contexts[i] - 1,
                              "context " + std::to_string(contexts[i]));
        }
        expect_errors_cell(c[6], k, c[0]);
        expect_written(c[7], k.errors.at(0) / std::sqrt(row.act_dim), "per action dimension");
        EXPECT_EQ(std::stoi(c[8]), k.model.at("smallest_context_keeping_95_percent").get<int>());
      });

  const std::map<std::string, KnockoutRow> medium_rows = {
      {"DT, antmaze-medium-play-v2 (episodes 0-99)", {"knockout-" + medium_dt, medium_dt, 8}},
      {"DC (K 8), antmaze-medium-play-v2 (episodes 0-99)", {"knockout-" + medium_dc, medium_dc, 8}},
      {"DC (K 8), the same model (episodes 100-199)",
       {"knockout-" + medium_dc + "-episodes-100-199", medium_dc, 8}},
      {"DT, antmaze-umaze-v2, for comparison", {"knockout-" + umaze_dt, umaze_dt, 8}}};
  check_knockout_rows(
      text, "| model, trained on | success, whole window | context 1 | 2 | 3 to the whole window |",
      medium_rows, 7, [](const auto& c, const Knockout& k, const KnockoutRow& row) {
        expect_score_cell(c[1], k, k.score.size() - 1, "the whole window");
        expect_score_cell(c[2], k, 0, "context 1");
        expect_score_cell(c[3], k, 1, "context 2");
        expect_score_cell(c[4], k, 2, "context 3 on", true);
        expect_errors_cell(c[5], k, c[0]);
        expect_written(c[6], k.errors.at(0) / std::sqrt(row.act_dim), "per action dimension");
      });

  // The open loop: "within 0.071 at every context" of the two maze DTs, side by side.
  const auto a = antmaze_knockout("knockout-umaze-dt-and-medium-dt", umaze_dt);
  const auto b = antmaze_knockout("knockout-umaze-dt-and-medium-dt", medium_dt);
  ASSERT_EQ(a.errors.size(), b.errors.size());
  double widest = 0.0;
  for (std::size_t c = 0; c < a.errors.size(); ++c)
    widest = std::max(widest, std::abs(a.errors[c] - b.errors[c]));
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(text, m, std::regex(R"(umaze DT's within ([\d.]+) at every context)")))
      << "the open-loop sentence moved";
  expect_written(m[1], widest, "the widest gap between the maze DTs' open-loop curves");
}

// The maze seeds' table: each model's success at the task's target for training seeds 0, 1 and 2
// against docs/findings/antmaze/seeds/<task>-<model>-seed-<s>/summary.json (each a count of
// goals reached over 100 episodes), the mean and sample standard deviation over the seeds, and
// the prose's goal counts over each model's 300 episodes.
TEST(DocsClaims, TheAntMazeSeedsTableSaysWhatItsEvaluationsSay) {
  const std::string text = read_regular_file(kDocs / "findings.md", 1 << 24);
  const auto rows =
      table_rows(text, "| model | trained on | seed 0 | seed 1 | seed 2 | mean | std |");
  ASSERT_EQ(rows.size(), 4u) << "the maze seeds' table moved";
  std::set<std::string> seen;
  std::map<std::string, int> goals;  // over the three seeds, by model and task
  for (const auto& c : rows) {
    SCOPED_TRACE(c[0] + " on " + c[1]);
    ASSERT_EQ(c.size(), 7u);
    ASSERT_TRUE(c[0] == "DT" || c[0] == "DC") << c[0];
    ASSERT_TRUE(c[1] == "antmaze-umaze-v2" || c[1] == "antmaze-medium-play-v2") << c[1];
    seen.insert(c[0] + c[1]);
    const std::string model = c[0] == "DT" ? "dt" : "dc";
    std::vector<double> scores;
    for (int s = 0; s < 3; ++s) {
      const auto j = nlohmann::json::parse(read_regular_file(
          kDocs / "findings" / "antmaze" / "seeds" /
              (c[1] + "-" + model + "-seed-" + std::to_string(s)) / "summary.json",
          1 << 24));
      EXPECT_EQ(j.at("env"), c[1]);
      const auto& t = j.at("targets").at(0);
      const int episodes = t.at("episodes").get<int>();
      EXPECT_EQ(episodes, 100);
      // An episode scores 100 when the ant reaches the goal and 0 when it does not.
      const double mean = t.at("mean").get<double>();
      EXPECT_DOUBLE_EQ(mean, 100.0 * t.at("successes").get<int>() / episodes);
      expect_written(c[2 + static_cast<std::size_t>(s)], mean, "seed " + std::to_string(s));
      scores.push_back(mean);
      goals[c[0] + " " + c[1]] += t.at("successes").get<int>();
    }
    const double mean = (scores[0] + scores[1] + scores[2]) / 3.0;
    double squares = 0.0;
    for (const double v : scores) squares += (v - mean) * (v - mean);
    expect_written(c[5], mean, "the mean over seeds");
    expect_written(c[6], std::sqrt(squares / 2.0), "the standard deviation over seeds");
  }
  EXPECT_EQ(seen.size(), 4u) << "a model and task appear twice";

  // The prose's counts over the 300 episodes of each model's three seeds.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(text, m, std::regex(R"(\((\d+) against (\d+) goals in 300 episodes\))")))
      << "the umaze seeds' sentence moved";
  EXPECT_EQ(std::stoi(m[1]), goals["DC antmaze-umaze-v2"]);
  EXPECT_EQ(std::stoi(m[2]), goals["DT antmaze-umaze-v2"]);
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"((\d+) of 300\s+against (\d+) of 300)")))
      << "the medium-play seeds' sentence moved";
  EXPECT_EQ(std::stoi(m[1]), goals["DC antmaze-medium-play-v2"]);
  EXPECT_EQ(std::stoi(m[2]), goals["DT antmaze-medium-play-v2"]);
}

}  // namespace
}  // namespace dstudio
