// The GML fast path (cpp/include/tpcstudy/gml.hpp): one pass over the text, no backtracking;
// anything the grammar's regular expressions would treat differently is left to the Python
// parser (std::nullopt).
#include "tpcstudy/gml.hpp"

#include <charconv>
#include <cmath>

namespace tpc::gml {
namespace {

inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha_(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

enum class Tok : uint8_t { Open, Close, Str, Num, Key };

// Lists nested deeper than this are left to the Python parser (which keeps no recursion):
// the conversion to Python objects recurses once per level.
constexpr size_t kMaxDepth = 200;

// The number at text[pos..], greedy as the regular expression's first try; its end, or 0 when
// none (or when the regular expression would backtrack: a letter or '_' right after it).
size_t number_end(std::string_view t, size_t pos) {
    const size_t n = t.size();
    size_t p = pos;
    if (p < n && (t[p] == '+' || t[p] == '-')) ++p;
    if (p < n && is_digit(t[p])) {
        while (p < n && is_digit(t[p])) ++p;
        if (p < n && t[p] == '.') {
            ++p;
            while (p < n && is_digit(t[p])) ++p;
        }
    } else if (p + 1 < n && t[p] == '.' && is_digit(t[p + 1])) {
        p += 1;
        while (p < n && is_digit(t[p])) ++p;
    } else {
        return 0;
    }
    if (p < n && (t[p] == 'e' || t[p] == 'E')) {
        size_t q = p + 1;
        if (q < n && (t[q] == '+' || t[q] == '-')) ++q;
        if (q < n && is_digit(t[q])) {
            while (q < n && is_digit(t[q])) ++q;
            p = q;
        }
    }
    if (p < n && is_alpha_(static_cast<unsigned char>(t[p]))) return 0;  // backtracking: Python's
    return p;
}

// Python's `float(tok) if any(c in tok for c in ".eE") else int(tok)`, where it fits exactly.
bool number_value(std::string_view tok, Entry& e) {
    bool neg = false;
    std::string_view body = tok;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
        neg = body[0] == '-';
        body.remove_prefix(1);
    }
    if (body.find_first_of(".eE") == std::string_view::npos) {
        if (body.size() > 18) return false;  // Python's int: arbitrary size
        int64_t v = 0;
        for (char c : body) v = v * 10 + (c - '0');
        e.kind = Kind::Int;
        e.i = neg ? -v : v;
        return true;
    }
    double v = 0.0;
    auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v,
                                     std::chars_format::general);
    if (ec != std::errc() || end != body.data() + body.size() || !std::isfinite(v)) return false;
    e.kind = Kind::Float;
    e.f = neg ? -v : v;
    return true;
}

}  // namespace

std::optional<Tree> parse(std::string_view t) {
    Tree tree;
    tree.lists.emplace_back();
    std::vector<int32_t> stack{0};
    int32_t line = 1;
    bool pending = false;
    std::string_view pkey;
    int32_t pline = 0;
    const size_t n = t.size();
    size_t pos = 0;
    while (pos < n) {
        const unsigned char c = static_cast<unsigned char>(t[pos]);
        Tok kind;
        size_t end;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++pos;
            continue;
        } else if (c == '\n') {
            ++line;
            ++pos;
            continue;
        } else if (c == '#') {
            while (pos < n && t[pos] != '\n') ++pos;
            continue;
        } else if (c == '[') {
            kind = Tok::Open;
            end = pos + 1;
        } else if (c == ']') {
            kind = Tok::Close;
            end = pos + 1;
        } else if (c == '"') {
            const size_t q = t.find('"', pos + 1);
            if (q == std::string_view::npos) return std::nullopt;
            kind = Tok::Str;
            end = q + 1;
        } else if (is_alpha_(c)) {
            end = pos + 1;
            while (end < n && (is_alpha_(static_cast<unsigned char>(t[end])) ||
                               is_digit(static_cast<unsigned char>(t[end]))))
                ++end;
            kind = Tok::Key;
        } else if (is_digit(c) || c == '+' || c == '-' || c == '.') {
            end = number_end(t, pos);
            if (end == 0) return std::nullopt;
            kind = Tok::Num;
        } else {
            return std::nullopt;  // a stray character or a byte outside ASCII
        }
        const std::string_view tok = t.substr(pos, end - pos);
        const int32_t tok_line = line;
        pos = end;
        if (kind == Tok::Str)
            for (char ch : tok) line += ch == '\n';
        if (!pending) {
            if (kind == Tok::Close) {
                if (stack.size() < 2) return std::nullopt;  // ']' without '['
                stack.pop_back();
            } else if (kind == Tok::Key) {
                pending = true;
                pkey = tok;
                pline = tok_line;
            } else {
                return std::nullopt;  // a value where a key belongs
            }
            continue;
        }
        pending = false;
        Entry e;
        e.key = pkey;
        e.line = pline;
        if (kind == Tok::Open) {
            e.kind = Kind::List;
            e.list = static_cast<int32_t>(tree.lists.size());
            tree.lists.emplace_back();
        } else if (kind == Tok::Str) {
            e.kind = Kind::Str;
            e.str = tok.substr(1, tok.size() - 2);
        } else if (kind == Tok::Num) {
            if (!number_value(tok, e)) return std::nullopt;
        } else {
            return std::nullopt;  // a key without a value
        }
        tree.lists[static_cast<size_t>(stack.back())].push_back(
            static_cast<int32_t>(tree.entries.size()));
        tree.entries.push_back(e);
        if (e.kind == Kind::List) {
            if (stack.size() > kMaxDepth) return std::nullopt;
            stack.push_back(e.list);
        }
    }
    if (pending || stack.size() != 1) return std::nullopt;  // truncated
    return tree;
}

}  // namespace tpc::gml
