#include "core/io/output_text.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

namespace shardlens {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length (1-4) of the well-formed UTF-8 sequence at text[i] and its code point in `c`, or
// 0 when the bytes there are not one (RFC 3629: no overlong forms, no surrogates, nothing past
// U+10FFFF; a sequence cut short by the end of the text is not one either).
size_t utf8_sequence(std::string_view text, size_t i, char32_t& c) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    c = b0;
    return 1;
  }
  size_t length = 0;
  char32_t lowest = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2, c = b0 & 0x1F, lowest = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3, c = b0 & 0x0F, lowest = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4, c = b0 & 0x07, lowest = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - i < length) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(k) & 0x3F);
  }
  if (c < lowest || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  return length;
}

// How many bytes at the end of `text` could begin a well-formed character that the next write
// completes (0 to 3).
size_t incomplete_tail(std::string_view text) {
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const auto b = static_cast<unsigned char>(text[text.size() - back]);
    if ((b & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

// Calls keep(bytes) for each well-formed character that is not deceptive, deceptive(c, bytes)
// for each that is, invalid(byte) for each byte that begins no well-formed character.
template <typename Keep, typename Deceptive, typename Invalid>
void for_each_character(std::string_view text, Keep keep, Deceptive deceptive, Invalid invalid) {
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const size_t length = utf8_sequence(text, i, c);
    if (length == 0) {
      invalid(static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    const std::string_view bytes = text.substr(i, length);
    if (is_deceptive_character(c))
      deceptive(c, bytes);
    else
      keep(c, bytes);
    i += length;
  }
}

}  // namespace

bool is_deceptive_character(char32_t c) {
  if (c < 0x20) return c != '\t' && c != '\n';
  if (c >= 0x7F && c <= 0x9F) return true;
  if (c >= 0x202A && c <= 0x202E) return true;
  if (c >= 0x2066 && c <= 0x2069) return true;
  return c == 0xFFFE || c == 0xFFFF;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto append = [&](char32_t, std::string_view bytes) { out += bytes; };
  for_each_character(text, append, append, [&](unsigned char) { out += kReplacement; });
  return out;
}

std::string display_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_character(
      text, [&](char32_t, std::string_view bytes) { out += bytes; },
      [&](char32_t, std::string_view) { out += kReplacement; },
      [&](unsigned char) { out += kReplacement; });
  return out;
}

std::string xml_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : display_text(text)) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string html_text(std::string_view text) {
  std::string out;
  for (char ch : xml_text(text)) {
    if (ch == '\n')
      out += "<br>";
    else
      out += ch;
  }
  return out;
}

std::string latex_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto keep = [&](char32_t c, std::string_view bytes) {
    switch (c) {
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '<':
        out += "\\textless{}";
        break;
      case '>':
        out += "\\textgreater{}";
        break;
      case '|':
        out += "\\textbar{}";
        break;
      case '&':
      case '%':
      case '$':
      case '#':
      case '_':
      case '{':
      case '}':
        out += '\\';
        out += static_cast<char>(c);
        break;
      case '\n':
      case '\t':
        out += ' ';
        break;
      default:
        out += bytes;
    }
  };
  const auto deceptive = [&](char32_t c, std::string_view) {
    if (c == '\r') out += ' ';  // a line break, as \n
  };
  for_each_character(text, keep, deceptive, [&](unsigned char) { out += kReplacement; });
  return out;
}

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char escape[16];
  for_each_character(
      text, [&](char32_t, std::string_view bytes) { out += bytes; },
      [&](char32_t c, std::string_view) {
        std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
        out += escape;
      },
      [&](unsigned char b) {
        std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned>(b));
        out += escape;
      });
  return out;
}

std::string json_text(const nlohmann::json& j, int indent) {
  // The dump escapes C0 and replaces invalid UTF-8; DEL, C1 and the bidi controls it keeps raw
  // can only sit inside strings, where terminal_text's \uXXXX is the same JSON.
  return terminal_text(j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace));
}

// --- The terminal's stream buffer ------------------------------------------------------------

TerminalTextBuffer::~TerminalTextBuffer() {
  drain(true);
}

bool TerminalTextBuffer::drain(bool all) {
  const size_t keep = all ? 0 : incomplete_tail(m_pending);
  const std::string_view complete(m_pending.data(), m_pending.size() - keep);
  if (!complete.empty()) {
    const std::string text = terminal_text(complete);
    if (m_target->sputn(text.data(), std::streamsize(text.size())) !=
        std::streamsize(text.size())) {
      m_pending.clear();
      return false;
    }
  }
  m_pending.erase(0, m_pending.size() - keep);
  return true;
}

TerminalTextBuffer::int_type TerminalTextBuffer::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  const char c = traits_type::to_char_type(ch);
  m_pending += c;
  if ((c == '\n' || m_pending.size() >= 4096) && !drain(false)) return traits_type::eof();
  return ch;
}

std::streamsize TerminalTextBuffer::xsputn(const char* s, std::streamsize n) {
  m_pending.append(s, size_t(n));
  if (m_pending.size() >= 4096 || m_pending.find('\n') != std::string::npos) {
    if (!drain(false)) return 0;
  }
  return n;
}

int TerminalTextBuffer::sync() {
  if (!drain(false)) return -1;
  return m_target->pubsync();
}

TerminalTextGuard::TerminalTextGuard(std::ostream& stream)
    : m_stream(stream), m_original(stream.rdbuf()), m_buffer(m_original) {
  m_stream.rdbuf(&m_buffer);
}

TerminalTextGuard::~TerminalTextGuard() {
  m_stream.flush();
  m_stream.rdbuf(m_original);
}

}  // namespace shardlens
