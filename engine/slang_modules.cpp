#include "engine/slang_modules.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <set>

#include "engine/content_hash.h"
#include "engine/file_util.h"

namespace sdgen {

namespace fs = std::filesystem;

namespace {

// The word after `keyword` at the start of a line (after spaces), up to `end`; empty where the line is not one.
std::string_view statement(std::string_view line, std::string_view keyword) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line.substr(i, keyword.size()) != keyword) return {};
  i += keyword.size();
  if (i >= line.size() || (line[i] != ' ' && line[i] != '\t')) return {};
  return line.substr(i);
}

std::string trimmed(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r;");
  return a == std::string_view::npos || b < a ? std::string() : std::string(s.substr(a, b - a + 1));
}

template <typename F>
void forEachLine(const std::string& text, F&& f) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    f(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
}

// Whether `text` names the macro (as a whole word): conservative, as a module that only mentions it in a
// comment is keyed by it too.
bool mentions(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    const bool before = at > 0 && word(text[at - 1]), after = at + name.size() < text.size() && word(text[at + name.size()]);
    if (!before && !after) return true;
  }
  return false;
}

constexpr size_t kMaxIncludeDepth = 8;

// A module's path below a search folder without its extension: `conv.gemm_core` -> `conv/gemm_core`.
std::string modulePath(const std::string& name) {
  std::string path = name;
  std::replace(path.begin(), path.end(), '.', '/');
  return path;
}

// A module's text with its `__include "file"` and `#include "file"` parts appended (relative to the including
// file), so that editing a part changes the module's key; nullopt (compile from sources) where one is missing, is
// not a quoted name, or is nested too deep.
std::optional<std::string> moduleText(const fs::path& path, size_t depth) {
  if (depth > kMaxIncludeDepth) return std::nullopt;
  std::optional<std::string> text = readFile(path.string());
  if (!text) return std::nullopt;
  std::string all = *text;
  bool ok = true;
  forEachLine(*text, [&](std::string_view line) {
    std::string_view rest = statement(line, "__include");
    if (rest.empty()) rest = statement(line, "#include");
    if (rest.empty() || !ok) return;
    std::string name = trimmed(rest);
    if (name.size() < 2 || name.front() != '"' || name.back() != '"') {
      ok = false;
      return;
    }
    std::optional<std::string> part = moduleText(path.parent_path() / name.substr(1, name.size() - 2), depth + 1);
    if (!part) ok = false;
    else all += "\n" + *part;
  });
  return ok ? std::optional<std::string>(std::move(all)) : std::nullopt;
}

}  // namespace

SlangModuleCache::SlangModuleCache(std::string shaderDir, std::string cacheDir, std::string compilerVersion,
                                   std::vector<std::string> flags, ModuleCompiler compile)
    : shaderDir_(fs::absolute(shaderDir).string()),
      root_(std::move(cacheDir) + "/slang-modules"),
      version_(std::move(compilerVersion)),
      flags_(std::move(flags)),
      compile_(std::move(compile)) {}

std::vector<std::string> SlangModuleCache::importsOf(const std::string& text) {
  std::vector<std::string> names;
  forEachLine(text, [&](std::string_view line) {
    std::string_view rest = statement(line, "import");
    if (rest.empty()) {
      std::string_view exported = statement(line, "__exported");
      if (!exported.empty()) rest = statement(exported, "import");
    }
    if (!rest.empty()) names.push_back(trimmed(rest));
  });
  return names;
}

bool SlangModuleCache::load(const std::string& name, const std::string& fromDir, std::map<std::string, Module>& graph,
                            std::vector<std::string>& visiting, std::vector<std::string>& order) const {
  if (graph.count(name)) return true;
  if (std::find(visiting.begin(), visiting.end(), name) != visiting.end()) return false;  // a cycle
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") !=
                          std::string::npos)
    return false;  // `import "file.slang"` and anything else the scan does not follow
  const std::string relative = modulePath(name);
  // Slang searches the importing file's folder first: a module there is not the shader folder's.
  std::error_code ec;
  if (fs::path(fromDir) != fs::path(shaderDir_) && fs::exists(fs::path(fromDir) / (relative + ".slang"), ec))
    return false;
  Module m;
  m.name = name;
  m.path = shaderDir_ + "/" + relative + ".slang";
  std::optional<std::string> text = moduleText(m.path, 0);
  if (!text) return false;
  m.text = std::move(*text);
  m.imports = importsOf(m.text);
  visiting.push_back(name);
  const std::string dir = fs::path(m.path).parent_path().string();
  for (const std::string& i : m.imports)
    if (!load(i, dir, graph, visiting, order)) return false;
  visiting.pop_back();
  graph.emplace(name, std::move(m));
  order.push_back(name);
  return true;
}

std::vector<std::string> SlangModuleCache::closureOf(const std::string& name,
                                                     const std::map<std::string, Module>& graph) {
  std::set<std::string> seen;
  std::vector<std::string> stack = graph.at(name).imports;
  while (!stack.empty()) {
    std::string n = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    for (const std::string& i : graph.at(n).imports) stack.push_back(i);
  }
  return {seen.begin(), seen.end()};
}

std::string SlangModuleCache::fileOf(const std::string& key) const { return root_ + "/" + key + ".slang-module"; }

std::optional<std::string> SlangModuleCache::linkFolder(const std::vector<std::string>& names,
                                                        const std::map<std::string, Module>& graph) {
  ContentHash h;
  for (const std::string& n : names) h.field(n).field(graph.at(n).key);  // names are sorted (a std::set's)
  const std::string folder = root_ + "/links/" + h.hex();
  std::error_code ec;
  if (fs::is_directory(folder, ec)) {
    if (linksIntact(folder, names, graph)) return folder;
    fs::remove_all(folder, ec);  // tampered with or half-removed: made again below
  }
  // Made aside and renamed into place: a compile never sees a folder missing some of its links.
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = folder + ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(serial++);
  for (const std::string& n : names) {
    const fs::path link = fs::path(tmp) / (modulePath(n) + ".slang-module");
    fs::create_directories(link.parent_path(), ec);
    fs::create_symlink(fileOf(graph.at(n).key), link, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      return std::nullopt;
    }
  }
  fs::rename(tmp, folder, ec);
  if (ec) {  // another compile made it first (or the file system refuses): use theirs if it is there
    fs::remove_all(tmp, ec);
    if (!fs::is_directory(folder, ec)) return std::nullopt;
  }
  return folder;
}

bool SlangModuleCache::ensureCompiled(const Module& m, const std::map<std::string, Module>& graph,
                                      const Defines& defines, const std::vector<std::string>& capabilities) {
  std::promise<bool> promise;
  std::shared_future<bool> other;  // another thread's compile of the same key, waited for outside the lock
  {
    std::lock_guard lock(mutex_);
    if (auto it = inFlight_.find(m.key); it != inFlight_.end()) other = it->second;
    else inFlight_.emplace(m.key, promise.get_future().share());
  }
  if (other.valid()) return other.get();
  // Waiters get an answer whatever happens here: an exception (a compiler's, a full disk's) reads as a failed
  // module, so the kernel compiles from sources instead of a waiter seeing a broken promise.
  bool ok = true;
  try {
    ok = compileModule(m, graph, defines, capabilities);
  } catch (const std::exception&) {
    ok = false;
  }
  promise.set_value(ok);
  return ok;
}

bool SlangModuleCache::compileModule(const Module& m, const std::map<std::string, Module>& graph,
                                     const Defines& defines, const std::vector<std::string>& capabilities) {
  std::error_code ec;
  if (intact(m.key)) return true;
  std::vector<std::string> args = {m.path};
  const std::vector<std::string> below = closureOf(m.name, graph);
  std::optional<std::string> folder = below.empty() ? std::nullopt : linkFolder(below, graph);
  if (folder) args.insert(args.end(), {"-I", *folder});
  args.insert(args.end(), {"-I", shaderDir_});
  args.insert(args.end(), flags_.begin(), flags_.end());
  for (const auto& define : defines) {
    const std::string& k = define.first;  // a named copy: lambdas may not capture structured bindings (clang 14)
    if (mentions(m.text, k) || std::any_of(below.begin(), below.end(), [&](const std::string& n) {
          return mentions(graph.at(n).text, k);
        }))
      args.push_back("-D" + k + (define.second.empty() ? "" : "=" + define.second));
  }
  for (const std::string& c : capabilities) args.insert(args.end(), {"-capability", c});
  std::optional<std::string> code = compile_(args);
  if (!code || code->empty()) return false;
  fs::create_directories(root_, ec);
  writeFileChecked(fileOf(m.key), *code);  // its checksum last: a file without one is compiled again
  std::lock_guard lock(mutex_);
  ++compiled_;
  return true;
}

bool SlangModuleCache::intact(const std::string& key) const {
  const std::optional<std::string> code = readFileChecked(fileOf(key));
  return code && !code->empty();
}

bool SlangModuleCache::linksIntact(const std::string& folder, const std::vector<std::string>& names,
                                   const std::map<std::string, Module>& graph) const {
  size_t links = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (!it->is_directory(ec)) ++links;
  if (ec || links != names.size()) return false;
  for (const std::string& n : names) {
    const fs::path link = fs::path(folder) / (modulePath(n) + ".slang-module");
    if (!fs::is_symlink(fs::symlink_status(link, ec)) || fs::read_symlink(link, ec) != fileOf(graph.at(n).key))
      return false;
  }
  return true;
}

void SlangModuleCache::discard(const std::string& folder) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!fs::is_symlink(it->symlink_status(ec))) continue;
    const fs::path target = fs::read_symlink(it->path(), ec);
    // Only files of this cache's own folder (a link elsewhere is removed with the folder, its target kept).
    if (!ec && target.parent_path() == fs::path(root_) && target.extension() == ".slang-module") {
      fs::remove(target, ec);
      fs::remove(target.string() + ".sum", ec);
    }
  }
  fs::remove_all(folder, ec);
  std::lock_guard lock(mutex_);
  inFlight_.clear();  // every module is checked (and compiled where it is gone) again by the next prepare
}

std::optional<std::string> SlangModuleCache::prepare(const std::string& kernelText, const std::string& kernelDir,
                                                     const Defines& defines,
                                                     const std::vector<std::string>& capabilities) {
  std::map<std::string, Module> graph;
  std::vector<std::string> order, visiting;  // order: every module after the ones it imports
  const std::vector<std::string> direct = importsOf(kernelText);
  if (direct.empty()) return std::nullopt;
  for (const std::string& n : direct)
    if (!load(n, kernelDir, graph, visiting, order)) return std::nullopt;
  for (const std::string& n : order) {
    Module& m = graph.at(n);
    const std::vector<std::string> below = closureOf(n, graph);
    ContentHash h;
    h.field(version_).field(m.path).field(m.text);
    for (const std::string& f : flags_) h.field(f);
    for (const std::string& c : capabilities) h.field("capability").field(c);
    for (const std::string& i : below) h.field(i).field(graph.at(i).key);
    for (const auto& define : defines) {
      const std::string& k = define.first;
      if (mentions(m.text, k) ||
          std::any_of(below.begin(), below.end(), [&](const std::string& i) { return mentions(graph.at(i).text, k); }))
        h.field("define").field(k).field(define.second);
    }
    m.key = h.hex();
  }
  for (const std::string& n : order)
    if (!ensureCompiled(graph.at(n), graph, defines, capabilities)) return std::nullopt;
  std::vector<std::string> all;
  for (const auto& [n, m] : graph) all.push_back(n);  // sorted
  return linkFolder(all, graph);
}

size_t SlangModuleCache::compiled() const {
  std::lock_guard lock(mutex_);
  return compiled_;
}

}  // namespace sdgen
