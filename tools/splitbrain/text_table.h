#pragma once
// Aligned plain-text tables for the command line: left-aligned text columns, right-aligned
// numeric ones, a rule under the header.

#include <ostream>
#include <string>
#include <vector>

namespace splitbrain::tools {

class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string header;
    Align align = Align::right;
  };

  explicit TextTable(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);
  // A rule across the table, e.g. before a totals row.
  void add_rule();
  void print(std::ostream& out) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

}  // namespace splitbrain::tools
