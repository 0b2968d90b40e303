// gnuplot, run as a child (found on PATH, no shell in between) with a script
// on its standard input, returning the PNG it writes on its standard output.
// The callers' scripts name no file (the data is a datablock inside them,
// the output is standard output), so no name a user chose ever reaches
// gnuplot, and the caller writes the PNG itself with its other outputs
// (`replay --plot`, bench_soak --plot).
#pragma once

#include <string>

namespace bulkscore {

// The PNG gnuplot drew. Throws Error (exit 1) with gnuplot's own message
// when it cannot start, fails, or draws nothing.
std::string run_gnuplot(const std::string& script);

}  // namespace bulkscore
