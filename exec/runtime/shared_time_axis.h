#pragma once
// Puts the measured timelines of ranks that read one clock on one time axis. Each rank times its
// step from the moment it starts it (after the step's barrier); ranks that share cores leave the
// barrier one after another, as each gets its core, so timelines counted from their own starts
// hide who waited for whom. Ranks on one kernel read one steady clock (CLOCK_MONOTONIC on Linux,
// network namespaces included), so their starts can be compared; ranks on other kernels (other
// machines) cannot, and keep their own origin.

#include <string>
#include <vector>

namespace splitbrain::exec {

// This kernel's boot id: ranks with equal ids read one steady clock. "" where it cannot be read.
std::string steady_clock_domain();

// Per rank, the seconds to add to its timeline's starts: how long after the earliest start of
// the ranks with its domain its step started; 0 for a rank whose domain is "". Both vectors have
// one entry per rank. Pure.
std::vector<double> shared_axis_offsets_seconds(const std::vector<std::string>& domains,
                                                const std::vector<double>& started_at_seconds);

// How long a step lasted: over each domain's ranks, from the first starting to the last finishing;
// the longest over the domains (a rank whose domain is "" counts its own `seconds`). For ranks
// that share cores, with nothing in the step to make them wait for each other, the slowest one's
// own time is not it: each runs its step whole while the other waits for the core, and times only
// its own turn. Their domain is their clock and their group of cores (a rank elsewhere that left
// the step's barrier a network hop late did not take longer). Vectors of one entry per rank. Pure.
double step_span_seconds(const std::vector<std::string>& domains, const std::vector<double>& started_at_seconds,
                         const std::vector<double>& seconds);

}  // namespace splitbrain::exec
