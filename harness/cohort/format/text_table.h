// TextTable: the plain-text tables the client commands print, columns padded to their widest cell
// and two spaces apart, a header row in capitals first:
//
//   TextTable table({"ID", "NAME", "STATE"});
//   table.AddRow({"1", "mnist", "active"});
//   table.Render();   // "ID  NAME   STATE\n1   mnist  active\n"
//
// Widths count UTF-8 code points, so names with accents line up. Lines carry no trailing spaces.
// A row shorter than the header is padded with empty cells; a longer one is cut to the header.
//
// Thread-safety: a plain value.
#ifndef COHORT_HARNESS_COHORT_FORMAT_TEXT_TABLE_H_
#define COHORT_HARNESS_COHORT_FORMAT_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace cohort {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);

  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }

  // The header and every row, each line ending in '\n'.
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_TEXT_TABLE_H_
