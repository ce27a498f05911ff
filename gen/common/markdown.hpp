// The one Markdown table writer of the reports: named columns with an
// alignment, rows of already formatted cells, one render().
#pragma once

#include <string>
#include <vector>

namespace kaleido::markdown {

// How a column's separator is written: "---", ":---", "---:", ":---:".
enum class Align { Default, Left, Right, Center };

struct Column {
  Column(const char* t, Align a = Align::Default) : title(t), align(a) {}
  Column(std::string t, Align a = Align::Default) : title(std::move(t)), align(a) {}
  std::string title;
  Align align;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns);

  // One cell per column (otherwise InternalError: a bug in the report code).
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }

  // "| a | b |\n|---|---:|\n| x | y |\n": cells as given (an empty cell is
  // "| |"), newlines inside a cell become spaces so a row stays one line.
  std::string render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace kaleido::markdown
