// The `hotpage` command: subcommand registry and a small, strict flag
// parser shared by every subcommand.
//
// Each subcommand lives in its own cmd_<name>.cc and is listed in
// hotpage_main.cc's table. Flags are `--name value`, `--name=value` or a
// bare `--name` for booleans; anything unknown, missing or malformed is an
// error that names the flag and points at `--help` (exit status 2).

#ifndef HOTPAGE_TOOLS_CLI_H_
#define HOTPAGE_TOOLS_CLI_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

// Exit statuses of the hotpage command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the work failed (message on stderr)
inline constexpr int kExitUsage = 2;    // bad command line

struct FlagSpec {
  std::string name;        // without "--"
  std::string value_name;  // empty for a boolean flag
  std::string help;
  bool repeatable = false;  // may be given several times (GetAll)
  char short_name = 0;      // e.g. 'o' for "-o FILE"
};

class ParsedFlags {
 public:
  bool Has(absl::string_view name) const;
  // The last value of a flag (the only one unless repeatable).
  std::optional<std::string> Get(absl::string_view name) const;
  // Every value of a repeatable flag, in order.
  std::vector<std::string> GetAll(absl::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend absl::StatusOr<ParsedFlags> ParseFlags(
      const std::vector<std::string>& args, const std::vector<FlagSpec>& specs);
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::vector<std::string> positional_;
};

// Parses args (after the subcommand name). "--help"/"-h" are always known
// (as the boolean "help"). "--" ends flags.
absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs);

// true when args (after the subcommand name, or after `hotpage` itself)
// hold "--version" before any "--": every command answers it the same way,
// in hotpage_main.cc, before its own flags are parsed. Arguments after "--"
// belong to a command hotpage runs (`record -- COMMAND`).
bool AsksForVersion(const std::vector<std::string>& args);

// Parses a flag value as an integer in [lo, hi]; the error names the flag.
absl::StatusOr<int64_t> FlagInt(const ParsedFlags& flags,
                                absl::string_view name, int64_t default_value,
                                int64_t lo, int64_t hi);
// Same for a floating-point value.
absl::StatusOr<double> FlagDouble(const ParsedFlags& flags,
                                  absl::string_view name, double default_value,
                                  double lo, double hi);

// Usage text for a subcommand: synopsis, description, flags.
std::string FormatUsage(absl::string_view command, absl::string_view synopsis,
                        absl::string_view description,
                        const std::vector<FlagSpec>& specs);

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

// Subcommand entry points.
int RunTopology(const std::vector<std::string>& args);
int RunRecord(const std::vector<std::string>& args);
int RunImport(const std::vector<std::string>& args);
int RunAttach(const std::vector<std::string>& args);
int RunDump(const std::vector<std::string>& args);
int RunSimulate(const std::vector<std::string>& args);
int RunDoctor(const std::vector<std::string>& args);
int RunDaemon(const std::vector<std::string>& args);
int RunStatus(const std::vector<std::string>& args);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_CLI_H_
