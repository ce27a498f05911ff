#include "common/markdown.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace kaleido::markdown {

namespace {

void append_row(std::string& out, const std::vector<std::string>& cells) {
  out += '|';
  for (const std::string& c : cells) {
    std::string text = c;
    std::replace(text.begin(), text.end(), '\n', ' ');
    out += text.empty() ? " |" : " " + text + " |";
  }
  out += '\n';
}

const char* separator(Align a) {
  switch (a) {
    case Align::Left: return ":---|";
    case Align::Right: return "---:|";
    case Align::Center: return ":---:|";
    case Align::Default: break;
  }
  return "---|";
}

}  // namespace

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {
  if (columns_.empty()) throw InternalError("markdown::Table: no columns");
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size())
    throw InternalError("markdown::Table: a row of " + std::to_string(cells.size()) + " cells in a table of " +
                        std::to_string(columns_.size()) + " columns");
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::string out;
  std::vector<std::string> titles;
  for (const Column& c : columns_) titles.push_back(c.title);
  append_row(out, titles);
  out += '|';
  for (const Column& c : columns_) out += separator(c.align);
  out += '\n';
  for (const auto& r : rows_) append_row(out, r);
  return out;
}

}  // namespace kaleido::markdown
