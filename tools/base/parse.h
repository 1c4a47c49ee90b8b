// Parsers for the small text formats the kernel exposes in sysfs and procfs.
//
// All of them take untrusted input (a fake tree, a hostile file, a kernel
// that changed format): they never crash, never allocate unboundedly and
// return std::nullopt / an error on anything they do not fully understand.
// parse_fuzz.cc drives them under libFuzzer.

#ifndef HOTPAGE_TOOLS_BASE_PARSE_H_
#define HOTPAGE_TOOLS_BASE_PARSE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

// Largest id a kernel list may name: well above any real CPU or node count
// (NR_CPUS is at most 8192 in distribution kernels), small enough that a
// hostile "0-2000000000" cannot make us allocate gigabytes.
inline constexpr int kMaxListId = 1 << 16;

// Parses a kernel list ("0-3,8,10-11", "0-7:2" strides are not used by sysfs
// and are rejected). Surrounding whitespace is ignored; empty means empty.
// Returns sorted unique values, or an error describing the first bad token.
absl::StatusOr<std::vector<int>> ParseKernelList(absl::string_view text);

// Major and minor of a kernel release as /proc/sys/kernel/osrelease prints
// it ("6.12.117+deb12-amd64", "5.15.0-91-generic", "6.9-rc1"): digits, '.',
// digits, then anything. nullopt otherwise.
std::optional<std::pair<int, int>> ParseKernelRelease(absl::string_view s);

// Formats sorted values back into the kernel's compact list form.
std::string FormatKernelList(const std::vector<int>& values);

// A decimal integer with optional surrounding whitespace; nothing else.
std::optional<int64_t> ParseInt(absl::string_view text);

// Whitespace-separated decimal integers ("10 20 30"), at most `max_count`.
std::optional<std::vector<int64_t>> ParseIntRow(absl::string_view text,
                                                size_t max_count = 4096);

// A sysfs selection line ("always [madvise] never"): the bracketed word.
std::optional<std::string> ParseBracketChoice(absl::string_view text);

// The value of `key` in a node meminfo file ("Node 0 MemTotal:  1024 kB"),
// in bytes. std::nullopt if the key is missing or malformed.
std::optional<uint64_t> ParseNodeMeminfo(absl::string_view text,
                                         absl::string_view key);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_PARSE_H_
