#include "dstudio/common/csv.h"

#include <cmath>
#include <cstdio>

#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"

namespace dstudio {

std::string csv_field(std::string_view text) {
  const bool padded = !text.empty() && (text.front() == ' ' || text.back() == ' ');
  if (!padded && text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

CsvWriter::CsvWriter(std::vector<std::string> header, int precision, bool header_line)
    : width_(header.size()), precision_(precision) {
  if (header.empty()) throw Error("a CSV table needs at least one column");
  if (!header_line) return;
  for (const auto& name : header) raw(csv_field(name));
  end_row();
  rows_ = 0;
}

CsvWriter& CsvWriter::raw(std::string_view field) {
  if (fields_ > 0) text_ += ',';
  text_ += field;
  ++fields_;
  return *this;
}

CsvWriter& CsvWriter::operator<<(std::string_view text) {
  return raw(csv_field(text));
}

CsvWriter& CsvWriter::operator<<(double value) {
  return number(value, precision_);
}

CsvWriter& CsvWriter::number(double value, int precision) {
  if (!std::isfinite(value)) return empty();
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", precision, value);
  return raw(text);
}

void CsvWriter::end_row() {
  if (fields_ != width_)
    throw Error("a CSV row of " + std::to_string(fields_) + " fields under a header of " +
                std::to_string(width_) + " columns");
  text_ += '\n';
  fields_ = 0;
  ++rows_;
}

const std::string& CsvWriter::text() const {
  if (fields_ != 0)
    throw Error("a CSV table taken with a row of " + std::to_string(fields_) +
                " fields still open");
  return text_;
}

void CsvWriter::write(const std::filesystem::path& path) const {
  write_text_atomically(path, text());
}

}  // namespace dstudio
