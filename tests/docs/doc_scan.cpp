// The documentation rules of doc_scan.h.
#include "doc_scan.h"

#include <algorithm>
#include <regex>

namespace scalelab::docs {
namespace fs = std::filesystem;

namespace {

const std::set<std::string> kRoots{"apps", "lib", "labs", "tests", "docs", "data", "tools", "cmake", "include"};
const std::set<std::string> kSourceExtensions{".h", ".cpp", ".cu", ".cuh"};
const std::set<std::string> kStatuses{"ran", "ran on one GPU only", "not run"};

bool is_path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '/' || c == '-' ||
         c == '+' || c == '*' || c == '<' || c == '>';
}

std::string regex_escape(char c) {
  static const std::string special = R"(\^$.|?*+()[]{})";
  return special.find(c) != std::string::npos ? std::string("\\") + c : std::string(1, c);
}

// A placeholder pattern (doc_scan.h) as a regular expression over whole relative paths.
std::regex pattern_regex(const std::string& pattern) {
  std::string re;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '*') {
      re += "[^/]*";
    } else if (c == '<') {
      const auto close = pattern.find('>', i);
      if (close == std::string::npos) {
        re += "<";
        continue;
      }
      re += "[^/]+";
      i = close;
    } else {
      re += regex_escape(c);
    }
  }
  return std::regex(re);
}

bool has_placeholder(const std::string& p) { return p.find_first_of("*<") != std::string::npos; }

bool exists_in(const Tree& tree, std::string p) {
  bool any_below = false;  // "data/machines/...": anything under the folder
  if (p.size() >= 3 && p.compare(p.size() - 3, 3, "...") == 0) {
    p.resize(p.size() - 3);
    any_below = true;
  }
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (p.empty()) return false;
  if (any_below && p.back() != '/' && tree.dirs.count(p) == 0) {
    // "lib/train/engine_cuda..." reads as a prefix
    return std::any_of(tree.files.begin(), tree.files.end(), [&](const std::string& f) { return f.rfind(p, 0) == 0; });
  }
  if (!has_placeholder(p)) {
    if (tree.files.count(p) != 0 || tree.dirs.count(p) != 0) return true;
    // a program named after its source: tests/collectives/ring_vs_mpi -> ring_vs_mpi.cpp
    const fs::path want(p);
    return std::any_of(tree.files.begin(), tree.files.end(), [&](const std::string& f) {
      const fs::path have(f);
      return have.parent_path() == want.parent_path() && have.stem() == want.filename();
    });
  }
  const std::regex re = pattern_regex(p);
  const auto matches = [&](const std::string& s) { return std::regex_match(s, re); };
  return std::any_of(tree.files.begin(), tree.files.end(), matches) ||
         std::any_of(tree.dirs.begin(), tree.dirs.end(), matches);
}

}  // namespace

Tree read_tree(const fs::path& root) {
  Tree t;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path rel = fs::relative(it->path(), root);
    const std::string name = it->path().filename().string();
    const bool top = rel.parent_path().empty();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (top && it->is_directory() && name.rfind("build", 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) {
      t.dirs.insert(rel.generic_string());
      if (rel.parent_path() == "lib") t.lib_modules.insert(name);
    } else {
      t.files.insert(rel.generic_string());
    }
  }
  return t;
}

std::vector<Token> path_tokens(std::string_view text) {
  std::vector<Token> out;
  int line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_path_char(text[i])) {
      if (text[i] == '\n') ++line;
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && is_path_char(text[j])) ++j;
    std::string word(text.substr(i, j - i));
    // sentence punctuation after a path ("see docs/x.md."), but not a trailing "..."
    while (!word.empty() && (word.back() == ',' || (word.back() == '.' && word.size() >= 3 &&
                                                    word.compare(word.size() - 3, 3, "...") != 0))) {
      word.pop_back();
    }
    const bool named =
        std::any_of(word.begin(), word.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
    if (named && word.find('/') != std::string::npos) out.push_back({word, line});
    i = j;
  }
  return out;
}

std::string comments_of(std::string_view text, std::string_view extension) {
  std::string out(text.size(), ' ');
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '\n') out[k] = '\n';
  }
  const auto keep = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < text.size(); ++k) out[k] = text[k];
  };
  const bool cpp = extension == ".cpp" || extension == ".h" || extension == ".cu" || extension == ".cuh";
  std::size_t i = 0;
  if (extension == ".py") {  // the module docstring
    const auto open = text.find("\"\"\"");
    if (open != std::string_view::npos) {
      const auto close = text.find("\"\"\"", open + 3);
      if (close != std::string_view::npos) keep(open, close);
    }
  }
  while (i < text.size()) {
    const char c = text[i];
    if (cpp && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      const auto end = std::min(text.find('\n', i), text.size());
      keep(i, end);
      i = end;
    } else if (cpp && c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto end = std::min(text.find("*/", i + 2), text.size());
      keep(i, end);
      i = end;
    } else if (cpp && (c == '"' || c == '\'')) {  // a literal: skip it, escapes included
      std::size_t k = i + 1;
      while (k < text.size() && text[k] != c && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      i = k + 1;
    } else if (!cpp && c == '#') {
      const auto end = std::min(text.find('\n', i), text.size());
      keep(i, end);
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

PathCheck check_path(const Tree& tree, const std::string& token) {
  const auto slash = token.find('/');
  if (slash == std::string::npos || slash == 0) return PathCheck::not_a_path;
  const std::string first = token.substr(0, slash);
  std::vector<std::string> candidates;
  if (kRoots.count(first) != 0) candidates.push_back(token);
  if (tree.lib_modules.count(first) != 0) {
    const std::string ext = fs::path(token).extension().string();
    if (kRoots.count(first) != 0 || kSourceExtensions.count(ext) != 0) candidates.push_back("lib/" + token);
  }
  if (candidates.empty()) return PathCheck::not_a_path;
  for (const auto& c : candidates) {
    if (exists_in(tree, c)) return PathCheck::exists;
  }
  return PathCheck::missing;
}

std::map<std::string, std::string> gpu_status_table(std::string_view md, std::vector<std::string>& problems) {
  std::map<std::string, std::string> table;
  const auto heading = md.find("## What has and has not been checked on a GPU");
  if (heading == std::string_view::npos) {
    problems.push_back("no section \"## What has and has not been checked on a GPU\"");
    return table;
  }
  std::size_t pos = md.find('\n', heading);
  bool in_table = false;
  while (pos != std::string_view::npos && pos + 1 < md.size()) {
    const std::size_t start = pos + 1;
    const std::size_t end = std::min(md.find('\n', start), md.size());
    const std::string_view row = md.substr(start, end - start);
    pos = end < md.size() ? end : std::string_view::npos;
    if (row.rfind("## ", 0) == 0) break;
    if (row.empty() || row[0] != '|') {
      if (in_table) break;
      continue;
    }
    // cells between the bars
    std::vector<std::string> cells;
    std::size_t b = 1;
    while (b < row.size()) {
      const auto e = row.find('|', b);
      if (e == std::string_view::npos) break;
      std::string cell(row.substr(b, e - b));
      const auto first = cell.find_first_not_of(' ');
      cell = first == std::string::npos ? "" : cell.substr(first, cell.find_last_not_of(' ') - first + 1);
      cells.push_back(cell);
      b = e + 1;
    }
    if (!in_table) {  // the header, then the separator
      in_table = true;
      if (cells.size() < 2 || cells[1] != "status") problems.push_back("the table's second column must be \"status\"");
      continue;
    }
    if (!cells.empty() && cells[0].rfind("---", 0) == 0) continue;
    const auto open = cells.empty() ? std::string::npos : cells[0].find('`');
    const auto close = open == std::string::npos ? std::string::npos : cells[0].find('`', open + 1);
    if (close == std::string::npos || cells.size() < 2) {
      problems.push_back("row without a `name` in its first cell: " + std::string(row.substr(0, 60)));
      continue;
    }
    const std::string name = cells[0].substr(open + 1, close - open - 1);
    if (kStatuses.count(cells[1]) == 0) {
      problems.push_back(name + ": status \"" + cells[1] + "\" is not one of: ran, ran on one GPU only, not run");
    }
    table[name] = cells[1];
  }
  if (table.empty()) problems.push_back("the GPU status table has no rows");
  return table;
}

std::vector<std::string> gpu_status_problems(std::string_view text, const std::map<std::string, std::string>& table) {
  static const std::regex tag(R"(GPU status \(`?([^()`]+)`?\): (ran on one GPU only|not run|ran)\b)");
  static const std::regex free_form(
      R"(\b(not|never)( yet)?( been)? (run|tested|verified) on (a |an |any |the |real )?(GPU|H100|device|one)\b)"
      R"(|\bnone of (this|it|these) ha(s|ve)( yet)? (been )?run\b)"
      R"(|\b(unverified|untested) on (a |an |any |the )?(GPU|device)\b)"
      R"(|\bnot run on a GPU yet\b)",
      std::regex::icase);
  std::vector<std::string> problems;
  int number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line(text.substr(start, end - start));
    ++number;
    const std::string where = "line " + std::to_string(number) + ": ";
    std::size_t tags = 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), tag); it != std::sregex_iterator(); ++it) {
      ++tags;
      const std::string name = (*it)[1];
      const std::string status = (*it)[2];
      const auto row = table.find(name);
      if (row == table.end()) {
        problems.push_back(where + "GPU status of \"" + name + "\", a feature docs/gpu-status.md does not list");
      } else if (row->second != status) {
        problems.push_back(where + "\"" + name + "\" is \"" + status + "\" here but \"" + row->second +
                           "\" in docs/gpu-status.md");
      }
    }
    std::size_t mentions = 0;
    for (auto p = line.find("GPU status ("); p != std::string::npos; p = line.find("GPU status (", p + 1)) ++mentions;
    if (mentions > tags) {
      problems.push_back(where + "a \"GPU status (\" not in the form \"GPU status (<name>): <status>\": " + line);
    }
    if (std::regex_search(line, free_form)) {
      problems.push_back(where + "a free-form GPU claim; write \"GPU status (<name>): <status>\" as docs/gpu-status.md "
                                 "has it: " + line);
    }
    if (end == text.size()) break;
    start = end + 1;
  }
  return problems;
}

}  // namespace scalelab::docs
