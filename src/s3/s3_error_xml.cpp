#include "s3_error_xml.hpp"

#include <charconv>
#include <cstdint>
#include <utility>

// A deliberately tiny XML reader: S3 error documents are one flat element with a few text
// children, so a tokenizer plus a depth counter is enough and keeps Boost/libxml out of the
// client. Anything it does not understand ends the walk; it never reads past the input.
namespace s3lect::inline v1::detail {
namespace {

/// XML whitespace.
bool is_xml_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/// `s` without leading and trailing XML whitespace.
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_xml_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_xml_space(s.back())) s.remove_suffix(1);
  return s;
}

/// The part of a qualified name after its prefix ("s3:Code" -> "Code").
std::string_view local_name(std::string_view name) {
  const auto colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

/// True for code points XML 1.0 allows in a document, so "&#0;" and surrogates stay literal.
bool is_xml_char(std::uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

/// Appends `cp` (already checked by is_xml_char) as UTF-8.
void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Decodes the inside of one entity reference ("amp", "#60", "#x3C") onto `out`; false if it is
/// not one we know, in which case the caller keeps the text as it was.
bool append_entity(std::string& out, std::string_view entity) {
  struct named_entity {
    std::string_view name;
    char value;
  };
  static constexpr named_entity predefined[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  for (const auto& [name, value] : predefined) {
    if (entity == name) {
      out += value;
      return true;
    }
  }
  if (!entity.starts_with('#')) return false;
  entity.remove_prefix(1);
  int base = 10;
  if (entity.starts_with('x') || entity.starts_with('X')) {
    base = 16;
    entity.remove_prefix(1);
  }
  std::uint32_t cp = 0;
  const char* end = entity.data() + entity.size();
  const auto [stop, error] = std::from_chars(entity.data(), end, cp, base);
  if (entity.empty() || error != std::errc{} || stop != end || !is_xml_char(cp)) return false;
  append_utf8(out, cp);
  return true;
}

/// Character data with the five predefined and all numeric entity references resolved.
std::string unescape_xml(std::string_view text) {
  // Longest reference worth decoding is "&#x10FFFF;"; a far ';' belongs to something else.
  constexpr std::size_t max_entity_length = 10;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '&') {
      const auto semicolon = text.find(';', i + 1);
      if (semicolon != std::string_view::npos && semicolon - i <= max_entity_length &&
          append_entity(out, text.substr(i + 1, semicolon - i - 1))) {
        i = semicolon;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

enum class token_kind {
  start_tag,     // <Name ...>
  empty_tag,     // <Name .../>
  end_tag,       // </Name>
  text,          // character data, still escaped
  cdata,         // <![CDATA[...]]> content, literal
  skipped,       // declaration, processing instruction, comment, DOCTYPE
  end_of_input,  // nothing left
  malformed,     // an unterminated or nameless construct: stop reading
};

struct token {
  token_kind kind;
  std::string_view value;  // tag name, text or CDATA content
};

/// Splits a document into tags and text, one token per next() call.
class xml_tokenizer {
 public:
  /// Reads `input`, which must outlive the tokenizer and its tokens.
  explicit xml_tokenizer(std::string_view input) : input_(input) {}

  /// The next token; after end_of_input or malformed, keeps returning the same kind.
  token next() {
    if (failed_) return {token_kind::malformed, {}};
    if (position_ >= input_.size()) return {token_kind::end_of_input, {}};
    const std::string_view rest = input_.substr(position_);
    if (rest.front() != '<') {
      const std::string_view text = rest.substr(0, rest.find('<'));
      position_ += text.size();
      return {token_kind::text, text};
    }
    if (rest.starts_with("<!--")) return skip_past(4, "-->");
    if (rest.starts_with("<![CDATA[")) return read_cdata(rest);
    if (rest.starts_with("<?")) return skip_past(2, "?>");
    if (rest.starts_with("<!")) return skip_past(2, ">");
    if (rest.starts_with("</")) return read_end_tag(rest);
    return read_start_tag(rest);
  }

 private:
  /// Marks the input unusable and reports it.
  token fail() {
    failed_ = true;
    return {token_kind::malformed, {}};
  }

  /// Skips a construct whose content does not matter: its `opening_size` opening characters,
  /// then everything up to and including `terminator`.
  token skip_past(std::size_t opening_size, std::string_view terminator) {
    const auto found = input_.find(terminator, position_ + opening_size);
    if (found == std::string_view::npos) return fail();
    position_ = found + terminator.size();
    return {token_kind::skipped, {}};
  }

  /// `<![CDATA[ ... ]]>`: its content is taken literally.
  token read_cdata(std::string_view rest) {
    constexpr std::string_view opening = "<![CDATA[";
    const auto closing = rest.find("]]>", opening.size());
    if (closing == std::string_view::npos) return fail();
    position_ += closing + 3;
    return {token_kind::cdata, rest.substr(opening.size(), closing - opening.size())};
  }

  /// `</Name>`, with optional whitespace before '>'.
  token read_end_tag(std::string_view rest) {
    std::size_t i = 2;
    while (i < rest.size() && !is_xml_space(rest[i]) && rest[i] != '>' && rest[i] != '<') ++i;
    const std::string_view name = rest.substr(2, i - 2);
    while (i < rest.size() && is_xml_space(rest[i])) ++i;
    if (name.empty() || i >= rest.size() || rest[i] != '>') return fail();
    position_ += i + 1;
    return {token_kind::end_tag, name};
  }

  /// `<Name attr="v">` or `<Name/>`; attribute values may contain '>' and '/' inside quotes.
  token read_start_tag(std::string_view rest) {
    std::size_t i = 1;
    while (i < rest.size() && !is_xml_space(rest[i]) && rest[i] != '/' && rest[i] != '>' &&
           rest[i] != '<') {
      ++i;
    }
    const std::string_view name = rest.substr(1, i - 1);
    if (name.empty()) return fail();
    char open_quote = 0;
    for (; i < rest.size(); ++i) {
      const char c = rest[i];
      if (open_quote != 0) {
        if (c == open_quote) open_quote = 0;
      } else if (c == '"' || c == '\'') {
        open_quote = c;
      } else if (c == '<') {
        return fail();
      } else if (c == '>') {
        position_ += i + 1;
        const bool empty_element = rest[i - 1] == '/';
        return {empty_element ? token_kind::empty_tag : token_kind::start_tag, name};
      }
    }
    return fail();
  }

  std::string_view input_;
  std::size_t position_ = 0;
  bool failed_ = false;
};

/// The children of <Error> we keep; each is set once, from its first complete occurrence.
struct error_fields {
  std::optional<std::string> code, message, request_id;

  /// The slot for child element `name`, or null for children we ignore.
  std::optional<std::string>* slot_for(std::string_view name) {
    if (name == "Code") return &code;
    if (name == "Message") return &message;
    if (name == "RequestId") return &request_id;
    return nullptr;
  }
};

/// Skips the prolog (declaration, comments, DOCTYPE, whitespace) and returns the root's token.
token read_root(xml_tokenizer& tokens) {
  for (;;) {
    const token t = tokens.next();
    const bool prolog =
        t.kind == token_kind::skipped || (t.kind == token_kind::text && trim(t.value).empty());
    if (!prolog) return t;
  }
}

/// Walks the inside of the root element, filling `fields`, until it closes or the input ends.
void read_error_children(xml_tokenizer& tokens, error_fields& fields) {
  int depth = 1;  // inside <Error>
  std::optional<std::string>* open_slot = nullptr;
  std::string open_text;
  while (depth > 0) {
    const token t = tokens.next();
    switch (t.kind) {
      case token_kind::end_of_input:
      case token_kind::malformed:
        return;
      case token_kind::start_tag:
        if (depth == 1) {
          open_slot = fields.slot_for(local_name(t.value));
          open_text.clear();
        }
        ++depth;
        break;
      case token_kind::empty_tag:
        if (depth == 1) {
          if (auto* slot = fields.slot_for(local_name(t.value)); slot && !*slot) slot->emplace();
        }
        break;
      case token_kind::end_tag:
        --depth;
        if (depth == 1 && open_slot != nullptr) {
          if (!*open_slot) open_slot->emplace(trim(open_text));
          open_slot = nullptr;
        }
        break;
      case token_kind::text:
        if (open_slot != nullptr) open_text += unescape_xml(t.value);
        break;
      case token_kind::cdata:
        if (open_slot != nullptr) open_text += t.value;
        break;
      case token_kind::skipped:
        break;
    }
  }
}

}  // namespace

std::optional<s3_error_body> parse_s3_error_xml(std::string_view body) {
  if (body.size() > max_s3_error_body_size) return std::nullopt;
  constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";
  if (body.starts_with(utf8_bom)) body.remove_prefix(utf8_bom.size());

  xml_tokenizer tokens(body);
  const token root = read_root(tokens);
  if (root.kind != token_kind::start_tag || local_name(root.value) != "Error") return std::nullopt;

  error_fields fields;
  read_error_children(tokens, fields);
  if (!fields.code || fields.code->empty()) return std::nullopt;
  return s3_error_body{std::move(*fields.code), fields.message.value_or(std::string()),
                       fields.request_id.value_or(std::string())};
}

}  // namespace s3lect::inline v1::detail
