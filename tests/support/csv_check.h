#pragma once
/// \file
/// CSV files read back by a standard reader, not by the project's own code: Python's csv module
/// (strict mode) parses each file, and every row must have its header's width.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace dstudio::test {

/// What `python3 -c SCRIPT FILE` prints (the script passed through the environment, so that no
/// shell quoting touches it).
inline std::string python_output(const char* script, const std::filesystem::path& file) {
  setenv("DSTUDIO_PYTHON_SCRIPT", script, 1);
  const std::string command = "python3 -c \"$DSTUDIO_PYTHON_SCRIPT\" '" + file.string() + "' 2>&1";
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      out.append(buffer, n);
    pclose(pipe);
  }
  return out;
}

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
  const std::string out = python_output(script, path);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < out.size();) {
    const auto end = out.find('\n', at);
    lines.push_back(out.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? out.size() : end + 1;
  }
  return lines;
}

/// The rows of one CSV file as Python's csv module reads them, header first.
inline std::vector<std::vector<std::string>> read_csv_with_python(
    const std::filesystem::path& file) {
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
  const std::string out = python_output(script, file);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  for (std::size_t at = 0; at < out.size();) {
    const auto end = out.find('\n', at);
    const std::string line = out.substr(at, end - at);
    at = end == std::string::npos ? out.size() : end + 1;
    if (line.empty()) {
      rows.push_back(std::move(row));
      row.clear();
      continue;
    }
    if (line[0] != 'f') continue;  // not a field: a traceback's line, which leaves the rows short
    std::string field;
    for (std::size_t i = 1; i + 1 < line.size(); i += 2)
      field += static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16));
    row.push_back(std::move(field));
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
