#include "harness/cohort/format/text_table.h"

#include <algorithm>
#include <utility>

namespace cohort {
namespace {

// Code points in UTF-8 text: every byte that does not continue a sequence.
size_t DisplayWidth(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

void AppendLine(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
                std::string* out) {
  std::string line;
  for (size_t column = 0; column < widths.size(); ++column) {
    if (column > 0) line += "  ";
    line += cells[column];
    line.append(widths[column] - DisplayWidth(cells[column]), ' ');
  }
  line.erase(line.find_last_not_of(' ') + 1);
  *out += line;
  *out += '\n';
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header) : header_(std::move(header)) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  std::vector<size_t> widths(header_.size());
  for (size_t column = 0; column < header_.size(); ++column) {
    widths[column] = DisplayWidth(header_[column]);
    for (const std::vector<std::string>& row : rows_) {
      widths[column] = std::max(widths[column], DisplayWidth(row[column]));
    }
  }
  std::string out;
  AppendLine(header_, widths, &out);
  for (const std::vector<std::string>& row : rows_) AppendLine(row, widths, &out);
  return out;
}

}  // namespace cohort
