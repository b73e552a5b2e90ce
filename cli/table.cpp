#include "cli/table.hpp"

#include <stdexcept>

namespace bisectd::cli {

Table::Table(std::vector<std::string> headers, std::vector<Align> align)
    : m_headers(std::move(headers)), m_align(std::move(align)) {
  m_align.resize(m_headers.size(), Align::left);
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() > m_headers.size()) {
    throw std::invalid_argument("Table::add_row: more cells than columns");
  }
  cells.resize(m_headers.size());
  m_rows.push_back(std::move(cells));
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (char c : text) {
    // UTF-8 continuation bytes (10xxxxxx) do not start a new code point.
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++width;
    }
  }
  return width;
}

std::vector<std::size_t> Table::widths() const {
  std::vector<std::size_t> widths;
  for (const auto& header : m_headers) {
    widths.push_back(display_width(header));
  }
  for (const auto& row : m_rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  }
  return widths;
}

std::string Table::render_row(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths) const {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::string pad(widths[i] - display_width(cells[i]), ' ');
    if (i > 0) {
      line += "  ";
    }
    line += m_align[i] == Align::right ? pad + cells[i] : cells[i] + pad;
  }
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  return line + '\n';
}

std::string Table::render() const {
  auto column_widths = widths();
  std::string out = render_row(m_headers, column_widths);
  for (const auto& row : m_rows) {
    out += render_row(row, column_widths);
  }
  return out;
}

} // namespace bisectd::cli
