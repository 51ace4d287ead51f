// The Topology Zoo's GML dialect, parsed into a tree (the fast path of tpcstudy.io.gml).
//
// The grammar is tpcstudy.io.gml's: tokens are whitespace, newlines, '[', ']', "strings" (which
// may span lines), numbers ([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?, not followed by a letter or
// '_'), keys ([A-Za-z_][A-Za-z0-9_]*) and '#' comments; a file is a list of `key value` entries,
// a value being a string, a number or a bracketed list of entries. The Python parser stays the
// reference: this one returns nothing (std::nullopt) for any file it does not read exactly as
// that parser would, which is every malformed file (the Python parser then reads it and says
// where the error is) and a few well-formed but unusual ones: a byte outside ASCII other than in
// a string or a comment (Python's \d also matches other scripts' digits), a number the Python
// regular expression would cut short by backtracking (one followed by a letter), an integer of
// more than 18 digits, a float outside the double range, lists nested more than 200 deep.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tpc::gml {

enum class Kind : uint8_t { Str, Int, Float, List };

struct Entry {
    std::string_view key;   // into the parsed text
    Kind kind = Kind::Str;
    std::string_view str;   // Str: the string between its quotes, as written (HTML entities kept)
    int64_t i = 0;          // Int
    double f = 0.0;         // Float
    int32_t list = -1;      // List: index into Tree::lists
    int32_t line = 0;       // line of the key (1-based)
};

struct Tree {
    std::vector<Entry> entries;
    std::vector<std::vector<int32_t>> lists;  // lists[0]: the file's top level; entry indices
};

std::optional<Tree> parse(std::string_view text);

}  // namespace tpc::gml
