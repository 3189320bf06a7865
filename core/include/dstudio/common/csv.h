#pragma once
/// \file
/// The studio's one CSV writer. Every table it writes (analysis tables, metrics, sweep results,
/// the numbers behind each exported figure) goes through it, so each is RFC 4180: a field holding
/// a comma, a double quote, a line break or leading/trailing spaces is quoted and its quotes
/// doubled, every row has the header's width, and a missing number is an empty field. Lines end
/// in LF, which RFC 4180 readers (Python's csv, pandas, R, spreadsheets) accept.

#include <concepts>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dstudio {

/// `text` as one CSV field: unchanged when it needs no quotes, else quoted with quotes doubled.
std::string csv_field(std::string_view text);

/// A CSV table built row by row, then taken as text or written atomically.
///
///     CsvWriter csv({"step", "loss"});
///     csv << 10 << 0.25;
///     csv.end_row();
///     csv.write(dir / "loss.csv");
class CsvWriter {
 public:
  /// `precision`: significant digits of each floating-point field (%.*g). Without `header_line`
  /// the header only sets the width: for rows appended to a file that has it already.
  explicit CsvWriter(std::vector<std::string> header, int precision = 9, bool header_line = true);

  CsvWriter& operator<<(std::string_view text);
  CsvWriter& operator<<(const std::string& text) { return *this << std::string_view(text); }
  CsvWriter& operator<<(const char* text) { return *this << std::string_view(text); }
  /// A number; NaN and infinities are written as an empty field (a missing value).
  CsvWriter& operator<<(double value);
  CsvWriter& operator<<(float value) { return *this << static_cast<double>(value); }
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) CsvWriter& operator<<(T value) {
    return raw(std::to_string(value));
  }
  /// A number with its own number of significant digits.
  CsvWriter& number(double value, int precision);
  /// An empty field.
  CsvWriter& empty() { return raw({}); }

  /// Ends the row. Throws Error when it does not have the header's width.
  void end_row();
  /// Rows ended so far (the header not counted).
  [[nodiscard]] std::size_t rows() const { return rows_; }
  /// The table: the header and every ended row. Throws Error when a row is still open.
  [[nodiscard]] const std::string& text() const;
  /// text() as the whole content of `path`, atomically. Throws Error naming `path` on failure.
  void write(const std::filesystem::path& path) const;

 private:
  CsvWriter& raw(std::string_view field);
  std::size_t width_;
  int precision_;
  std::string text_;
  std::size_t fields_ = 0;  // in the open row
  std::size_t rows_ = 0;
};

}  // namespace dstudio
