// Text for people at a terminal: widths, wrapping, "did you mean", the
// unschedulable summary. CLI only (host/cli); the library never prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulkscore::cli {

// ---- terminal ----------------------------------------------------------------

// Whether the file descriptor is a terminal.
bool is_terminal(int fd);
// The width of the terminal on `fd` in columns; 0 when it is not a terminal
// or does not say (then $COLUMNS, when a positive number, is taken).
size_t terminal_width(int fd);

// ---- text --------------------------------------------------------------------

// Display width: one column per character (UTF-8 code point). Names and
// the scheduler's reasons are ASCII; what echoes input was escaped already.
size_t text_width(std::string_view s);
// `s` made safe for one table cell or line: escaped for the terminal
// (host/input/quote.hpp), line feeds and tabs as spaces.
std::string clean_text(std::string_view s);
// `s` cut to at most `width` columns, the cut marked with "..." (never a
// character cut in two).
std::string fit_text(std::string_view s, size_t width);
// Appends `text` word-wrapped to `width` columns: the first line after
// `first` (a prefix such as "chosen    "), the others after `rest`; a word
// longer than a line is broken. Ends with a line feed.
void append_wrapped(std::string& out, std::string_view first, std::string_view rest, std::string_view text,
                    size_t width);
// Appends `items` joined by ", ", wrapped as append_wrapped does but only
// between items (an item wider than a line is word-wrapped).
void append_list_wrapped(std::string& out, std::string_view first, std::string_view rest,
                         const std::vector<std::string>& items, size_t width);
// Every line of `text` at most `width` columns: longer lines are broken, the
// continuation indented by two spaces. The last guard before the terminal.
std::string wrap_long_lines(std::string_view text, size_t width);

// ---- suggestions -------------------------------------------------------------

// Levenshtein distance (insertions, deletions, substitutions; an
// adjacent transposition counts one).
size_t edit_distance(std::string_view a, std::string_view b);
// The candidates closest to `word` (within about a third of its length,
// at least 1, at most 3 edits; a candidate that starts with `word` or that
// `word` starts with counts too), nearest first.
std::vector<std::string> closest_words(std::string_view word, const std::vector<std::string>& candidates);

// ---- schedule's summary of unschedulable pods --------------------------------

// The reason that rejected the most nodes in a FitError message ("0/5000
// nodes are available: 25 node(s) were unschedulable, 4576 Insufficient
// cpu."), in a short form ("Insufficient cpu", "node affinity/selector");
// the message itself (shortened) when it is not a FitError.
std::string main_unschedulable_reason(std::string_view message);
// "16 unschedulable: 14 node affinity/selector, 2 Insufficient cpu": the
// count of each main reason, most first (then by name); at most `max_groups`
// groups, the rest counted as "N other".
std::string unschedulable_summary(const std::vector<std::pair<std::string, size_t>>& counts, size_t total,
                                  size_t max_groups = 6);

// ---- schedule's summary of preemptions ----------------------------------------

// "preemption: 5 pods evicted by 3 pods" and, when some of those evictions
// violated a PodDisruptionBudget, ", 1 of them against a
// PodDisruptionBudget"; "" when no pod preempted.
std::string preemption_summary(size_t victims, size_t preemptors, int64_t pdb_violations);

}  // namespace bulkscore::cli
