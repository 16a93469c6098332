#include "app/serve/infotext.h"

#include <cctype>
#include <string>
#include <vector>

namespace sdgen::serve {

namespace {

std::string trim(std::string_view s) {
  const char* kSpace = " \t\r\n";
  const size_t a = s.find_first_not_of(kSpace);
  if (a == std::string_view::npos) return {};
  return std::string(s.substr(a, s.find_last_not_of(kSpace) - a + 1));
}

bool isKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' ' || c == '-' || c == '/';
}

// "Key: value, Key: "quoted, value", ..." -> pairs; the grammar of webui's re_param. Empty when the line is
// not such a list (then it belongs to the prompt).
std::vector<std::pair<std::string, std::string>> parseParamLine(std::string_view line) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == ',')) ++i;
    if (i >= line.size()) break;
    size_t k = i;
    while (k < line.size() && isKeyChar(line[k])) ++k;
    if (k == i || k >= line.size() || line[k] != ':') return {};
    std::string key = trim(line.substr(i, k - i));
    size_t v = k + 1;
    while (v < line.size() && line[v] == ' ') ++v;
    std::string value;
    if (v < line.size() && line[v] == '"') {
      // A JSON string (quoteParamValue): decode it; an unterminated one ends the list.
      size_t e = v + 1;
      while (e < line.size() && line[e] != '"') e += line[e] == '\\' ? 2 : 1;
      if (e >= line.size()) return {};
      auto decoded = nlohmann::json::parse(line.substr(v, e - v + 1), nullptr, false);
      value = decoded.is_string() ? decoded.get<std::string>() : std::string(line.substr(v, e - v + 1));
      i = e + 1;
    } else {
      size_t e = line.find(',', v);
      if (e == std::string_view::npos) e = line.size();
      value = trim(line.substr(v, e - v));
      i = e;
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

}  // namespace

nlohmann::json parseInfotext(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  nlohmann::json result = nlohmann::json::object();
  // The last line holds the parameters when it has at least three "Key: value" pairs (webui's rule).
  std::vector<std::pair<std::string, std::string>> params;
  if (!lines.empty()) {
    params = parseParamLine(lines.back());
    if (params.size() >= 3) lines.pop_back();
    else params.clear();
  }
  std::string prompt, negative;
  bool inNegative = false;
  for (auto line : lines) {
    std::string l = trim(line);
    if (l.rfind("Negative prompt:", 0) == 0) {
      inNegative = true;
      l = trim(std::string_view(l).substr(16));
    }
    std::string& target = inNegative ? negative : prompt;
    target += (target.empty() ? "" : "\n") + l;
  }
  result["Prompt"] = prompt;
  result["Negative prompt"] = negative;
  for (auto& [key, value] : params) {
    const size_t x = value.find('x');
    if (key == "Size" && x != std::string::npos) {
      result["Size-1"] = value.substr(0, x);
      result["Size-2"] = value.substr(x + 1);
    } else {
      result[key] = value;
    }
  }
  // webui fills the clip skip it assumes when the text has none.
  if (!result.contains("Clip skip")) result["Clip skip"] = "1";
  return result;
}

}  // namespace sdgen::serve
