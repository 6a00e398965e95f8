#pragma once
// "Did you mean ...?": the known word closest to a mistyped one by edit distance (insertions,
// deletions, substitutions and swaps of neighbours each count one), if it is close enough to be
// a likely typo.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace splitbrain::tools {

// Edit distance with adjacent transpositions (optimal string alignment).
int edit_distance(std::string_view a, std::string_view b);

// The closest of `known` to `word` when at most max(2, word's length / 3) edits away.
std::optional<std::string> closest_word(std::string_view word, std::span<const std::string> known);

}  // namespace splitbrain::tools
