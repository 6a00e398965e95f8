#include "tools/splitbrain/text_table.h"

#include <algorithm>
#include <stdexcept>

namespace splitbrain::tools {

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) throw std::logic_error("TextTable row has the wrong number of cells");
  rows_.push_back(std::move(cells));
}

void TextTable::add_rule() { rows_.emplace_back(); }

void TextTable::print(std::ostream& out) const {
  std::vector<size_t> widths;
  for (const Column& column : columns_) widths.push_back(column.header.size());
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_cells = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string padding(widths[c] - cells[c].size(), ' ');
      if (c > 0) line += "  ";
      line += columns_[c].align == Align::left ? cells[c] + padding : padding + cells[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  size_t total_width = 0;
  for (size_t w : widths) total_width += w;
  const std::string rule(total_width + 2 * (widths.size() - 1), '-');

  std::vector<std::string> headers;
  for (const Column& column : columns_) headers.push_back(column.header);
  print_cells(headers);
  out << rule << '\n';
  for (const auto& row : rows_) {
    if (row.empty())
      out << rule << '\n';
    else
      print_cells(row);
  }
}

}  // namespace splitbrain::tools
