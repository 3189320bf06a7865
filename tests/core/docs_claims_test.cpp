// What docs/findings.md says is exact is held to the numbers it was written from: each row of the
// knockout table (the action errors at one, two and three steps of context, and the context from
// which the actions are exactly the whole window's) against docs/findings/knockout-*/summary.json,
// and the prose's "bit-for-bit from N" against the same data; the door's knockout table against
// docs/findings/adroit/. A word that outruns its number fails here.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
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

}  // namespace
}  // namespace dstudio
