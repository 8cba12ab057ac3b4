// s3lect_docs_extract: turns the ```cpp blocks of one Markdown file into one C++ translation
// unit that the build compiles (tests/docs/CMakeLists.txt), so that a code block in the docs
// that no longer compiles fails the build and `ctest -L docs`.
//
//   s3lect_docs_extract SOURCE_DIR MARKDOWN OUTPUT
//
// Every ```cpp block must follow a marker line (blank lines between are allowed) that says how
// it compiles (docs/README.md#code-in-the-docs):
//   <!-- compile: coroutine -->       the body of a coroutine returning asio::awaitable<void>
//   <!-- compile: function -->        the body of a function returning void
//   <!-- compile: namespace -->       declarations at namespace scope
//   <!-- compile: excerpt PATH -->    lines that appear, in this order and contiguously, in PATH
//                                     (relative to SOURCE_DIR), a file the build compiles
// Fragments see the names of tests/docs/snippet_harness.hpp (its types and functions, and the
// variables of S3LECT_DOCS_NAMES). #line directives point the
// compiler's messages at the Markdown file's own lines. Exit 1, naming file and line, for a block
// without a marker, an unknown marker, or an excerpt not found; nothing is written then.
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct block {
  std::string kind;    // coroutine, function, namespace, excerpt
  std::string path;    // excerpt only
  std::size_t line{};  // the first line of code (1-based)
  std::vector<std::string> code;
};

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::optional<std::vector<std::string>> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The marker's kind and path from `<!-- compile: KIND [PATH] -->`, or nullopt if `line` is none.
std::optional<block> marker(const std::string& line) {
  const std::string text = trimmed(line);
  const std::string open = "<!-- compile:";
  if (!starts_with(text, open) || text.size() < open.size() + 4 ||
      text.compare(text.size() - 3, 3, "-->") != 0) {
    return std::nullopt;
  }
  std::istringstream words(text.substr(open.size(), text.size() - open.size() - 3));
  block b;
  words >> b.kind >> b.path;
  return b;
}

bool known(const block& b) {
  if (b.kind == "excerpt") return !b.path.empty();
  return b.path.empty() && (b.kind == "coroutine" || b.kind == "function" || b.kind == "namespace");
}

/// True when `code` appears in `file` as consecutive lines.
bool is_excerpt(const std::vector<std::string>& code, const std::vector<std::string>& file) {
  if (code.empty() || code.size() > file.size()) return false;
  for (std::size_t start = 0; start + code.size() <= file.size(); ++start) {
    std::size_t i = 0;
    while (i < code.size() && file[start + i] == code[i]) ++i;
    if (i == code.size()) return true;
  }
  return false;
}

/// The blocks of `lines`, or the first error as "FILE:LINE: message".
std::optional<std::vector<block>> blocks_of(const std::vector<std::string>& lines,
                                            const std::string& name, std::string& error) {
  std::vector<block> found;
  std::optional<block> pending;  // the last marker, until a block or other text
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string text = trimmed(lines[i]);
    if (auto m = marker(lines[i])) {
      if (!known(*m)) {
        error = name + ":" + std::to_string(i + 1) + ": unknown marker '" + text + "'";
        return std::nullopt;
      }
      pending = m;
      continue;
    }
    if (text == "```cpp" || text == "```c++") {
      if (!pending) {
        error = name + ":" + std::to_string(i + 1) +
                ": a ```cpp block without a <!-- compile: ... --> marker above it "
                "(docs/README.md#code-in-the-docs)";
        return std::nullopt;
      }
      block b = *pending;
      pending.reset();
      b.line = i + 2;
      for (++i; i < lines.size() && trimmed(lines[i]) != "```"; ++i) b.code.push_back(lines[i]);
      if (i == lines.size()) {
        error = name + ":" + std::to_string(b.line - 1) + ": a ```cpp block that never ends";
        return std::nullopt;
      }
      found.push_back(std::move(b));
      continue;
    }
    if (!text.empty()) pending.reset();  // a marker belongs to the block right below it
  }
  return found;
}

/// A fragment in a function of its own: the harness's names are its parameters, and the code is
/// a block inside, so that the fragment may declare a name the harness has too (a shadowing
/// local, as an application's own variable would be).
void write_block(std::ostream& out, const block& b, std::size_t index, const std::string& md) {
  const std::string name = "snippet_" + std::to_string(index);
  out << "\n// " << md << ":" << b.line << " (" << b.kind << ")\n";
  if (b.kind == "namespace") {
    out << "namespace " << name << " {\n";
  } else {
    const char* result = b.kind == "coroutine" ? "asio::awaitable<void>" : "void";
    out << result << " " << name << "(S3LECT_DOCS_NAMES) {\n  {\n";
  }
  out << "#line " << b.line << " \"" << md << "\"\n";
  for (const auto& line : b.code) out << line << "\n";
  if (b.kind == "namespace") {
    out << "}  // namespace " << name << "\n";
  } else {
    out << "  }\n" << (b.kind == "coroutine" ? "  co_return;\n" : "") << "}\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: s3lect_docs_extract SOURCE_DIR MARKDOWN OUTPUT\n";
    return 2;
  }
  const std::string source_dir = argv[1];
  const std::string md = argv[2];
  const auto lines = read_lines(md);
  if (!lines) {
    std::cerr << md << ": cannot read\n";
    return 1;
  }
  std::string error;
  const auto blocks = blocks_of(*lines, md, error);
  if (!blocks) {
    std::cerr << error << "\n";
    return 1;
  }
  std::ostringstream out;
  out << "// Generated by s3lect_docs_extract from " << md << ": do not edit.\n"
      << "#include \"snippet_harness.hpp\"\n";
  std::size_t compiled = 0;
  for (std::size_t i = 0; i < blocks->size(); ++i) {
    const block& b = (*blocks)[i];
    if (b.kind != "excerpt") {
      write_block(out, b, i, md);
      ++compiled;
      continue;
    }
    const auto file = read_lines(source_dir + "/" + b.path);
    if (!file || !is_excerpt(b.code, *file)) {
      std::cerr << md << ":" << b.line << ": this block is not " << (file ? "an excerpt of " : "")
                << b.path
                << (file ? " (its lines, in order, with nothing between)" : ": no such file")
                << "\n";
      return 1;
    }
    out << "\n// " << md << ":" << b.line << ": an excerpt of " << b.path << ", compiled there\n";
  }
  std::ofstream output(argv[3]);
  output << out.str();
  if (!output.flush()) {
    std::cerr << argv[3] << ": cannot write\n";
    return 1;
  }
  std::cout << md << ": " << blocks->size() << " blocks, " << compiled << " compiled here\n";
  return 0;
}
