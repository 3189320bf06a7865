#pragma once
/// \file
/// CSV files read back by a standard reader, not by the project's own code: Python's csv module
/// (strict mode) parses each file, and every row must have its header's width.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace dstudio::test {

/// What Python's csv module made of the CSV files at `path` (a file, or every *.csv below a
/// folder): one line "ok <file> <rows> <columns>" a file that parses with each row as wide as its
/// header, one line "bad <file>: <why>" a file that does not.
inline std::vector<std::string> check_csv_files(const std::filesystem::path& path) {
  static const char* script = R"PY(
import csv, pathlib, sys
root = pathlib.Path(sys.argv[1])
files = sorted(root.rglob('*.csv')) if root.is_dir() else [root]
for f in files:
    try:
        with open(f, newline='', encoding='utf-8') as h:
            rows = list(csv.reader(h, strict=True))
        if not rows or not rows[0]:
            print('bad %s: no header' % f); continue
        width = len(rows[0])
        wrong = [i for i, r in enumerate(rows) if len(r) != width]
        if wrong:
            print('bad %s: line %d has %d fields under a header of %d' % (f, wrong[0] + 1, len(rows[wrong[0]]), width)); continue
        print('ok %s %d %d' % (f, len(rows) - 1, width))
    except Exception as e:
        print('bad %s: %s' % (f, e))
)PY";
  const std::string command = "python3 -c \"$DSTUDIO_CSV_CHECK\" '" + path.string() + "' 2>&1";
  setenv("DSTUDIO_CSV_CHECK", script, 1);
  std::vector<std::string> lines;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::string out;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    pclose(pipe);
    for (std::size_t at = 0; at < out.size();) {
      const auto end = out.find('\n', at);
      lines.push_back(out.substr(at, end == std::string::npos ? std::string::npos : end - at));
      at = end == std::string::npos ? out.size() : end + 1;
    }
  }
  return lines;
}

/// The rows of one CSV file as Python's csv module reads them, header first.
inline std::vector<std::vector<std::string>> read_csv_with_python(const std::filesystem::path& file) {
  // One field a line, each written as its UTF-8 bytes in hex so that any content comes back
  // exactly; an empty line ends a row.
  static const char* script = R"PY(
import csv, sys
with open(sys.argv[1], newline='', encoding='utf-8') as h:
    for row in csv.reader(h, strict=True):
        for field in row:
            print('f' + field.encode('utf-8').hex())
        print('')
)PY";
  setenv("DSTUDIO_CSV_READ", script, 1);
  const std::string command = "python3 -c \"$DSTUDIO_CSV_READ\" '" + file.string() + "'";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::string out;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    pclose(pipe);
    std::size_t at = 0;
    while (at < out.size()) {
      const auto end = out.find('\n', at);
      const std::string line = out.substr(at, end - at);
      at = end == std::string::npos ? out.size() : end + 1;
      if (line.empty()) {
        rows.push_back(std::move(row));
        row.clear();
        continue;
      }
      std::string field;
      for (std::size_t i = 1; i + 1 < line.size(); i += 2) field += static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16));
      row.push_back(std::move(field));
    }
  }
  return rows;
}

/// True when every line of check_csv_files() says ok and there is at least one.
inline bool all_ok(const std::vector<std::string>& report) {
  if (report.empty()) return false;
  for (const auto& line : report)
    if (line.rfind("ok ", 0) != 0) return false;
  return true;
}

/// The report as one text, for a failure message.
inline std::string joined(const std::vector<std::string>& report) {
  std::string text;
  for (const auto& line : report) text += line + "\n";
  return text;
}

}  // namespace dstudio::test
