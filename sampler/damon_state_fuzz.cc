// Fuzz target for ParseDamonState (sampler/damon_source.h): the DAMON state
// file is left in /run/hotpage by an earlier run and the next Start acts on
// it (it may remove the kdamond it names), so it is untrusted input.
// Checks properties, not only absence of crashes: a parsed state names
// kdamond 0, vaddr and pids in the kernel's range, and formats back to a
// file of the same size (one spelling per value) that parses to the same
// state. Each input is also tried after a valid header line, so that
// generated inputs (tools/base/fuzz_driver.cc, under gcc) reach the lines.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "sampler/damon_source.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

void One(absl::string_view text) {
  using namespace hotpage;
  absl::StatusOr<DamonState> st = ParseDamonState(text);
  if (!st.ok()) {
    Check(!st.status().message().empty());
    return;
  }
  Check(st->pid >= 1 && st->pid <= (int64_t{1} << 22));
  Check(st->target_pid >= 1 && st->target_pid <= (int64_t{1} << 22));
  Check(st->kdamond == 0);
  Check(st->operations == "vaddr");
  const std::string again_text = FormatDamonState(*st);
  Check(again_text.size() == text.size());
  absl::StatusOr<DamonState> again = ParseDamonState(again_text);
  Check(again.ok() && again->pid == st->pid &&
        again->target_pid == st->target_pid &&
        again->start_time_ticks == st->start_time_ticks);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  One(text);
  One(absl::StrCat("hotpage-damon-state 1\n", text));
  One(absl::StrCat("hotpage-damon-state 1\npid 7\nstart_time 1\nkdamond 0\n",
                   text));
  return 0;
}
