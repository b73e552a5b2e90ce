#pragma once
// Plain-text tables for human output: a header row, columns padded to their widest cell,
// numeric columns right-aligned. No colours, no box drawing: output stays greppable.

#include <ostream>
#include <string>
#include <vector>

namespace bisectd::cli {

enum class Align { left, right };

class Table {
public:
  // One column per header; `align` defaults to left for each column.
  explicit Table(std::vector<std::string> headers, std::vector<Align> align = {});

  // Adds a row; missing cells are empty, extra cells are an error (std::invalid_argument: a bug).
  void add_row(std::vector<std::string> cells);

  [[nodiscard]] std::size_t rows() const { return m_rows.size(); }

  // The rendered table, two spaces between columns, no trailing spaces, a newline per row.
  [[nodiscard]] std::string render() const;

private:
  [[nodiscard]] std::vector<std::size_t> widths() const;
  [[nodiscard]] std::string render_row(const std::vector<std::string>& cells,
                                       const std::vector<std::size_t>& widths) const;

  std::vector<std::string> m_headers;
  std::vector<Align> m_align;
  std::vector<std::vector<std::string>> m_rows;
};

// Display width of `text`: counts UTF-8 code points, not bytes (commit subjects are often UTF-8).
std::size_t display_width(const std::string& text);

} // namespace bisectd::cli
