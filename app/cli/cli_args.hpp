#pragma once
// Arguments of penumbra-cli's subcommands: options taken out by name ("--name VALUE", "--flag"),
// values checked as they are taken, with errors that name the option, and whatever is left
// reported as an unexpected argument.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device.hpp"

namespace penumbra::cli {

using Args = std::vector<std::string>;

/// Value of "--name VALUE" in args (removed from args), or fallback.
std::string takeOption(Args& args, const std::string& name, const std::string& fallback = {});
/// True if "--name" is present (removed from args).
bool takeFlag(Args& args, const std::string& name);
/// The shared data folder: $PENUMBRA_TEST_DATA, else <source>/../shared/data.
std::string dataDir();

/// The value `text` of `option` as a number: all of it, finite. Throws InvalidArgument naming
/// the option: "--gantry: expected a number, got 'abc'".
double parseOptionNumber(const std::string& text, const std::string& option);
/// The value `text` of `option` as an integer (a number without a fraction, in int's range).
/// Throws InvalidArgument naming the option: "--threads: expected an integer, got '2.5'".
int parseOptionInteger(const std::string& text, const std::string& option);
/// The value `text` of `option` as a whole number in [lo, hi], exactly ("18446744073709551615")
/// or in exponent form ("1e7"). Throws InvalidArgument naming the option and the range:
/// "--packets: expected a whole number from 1 to 9223372036854775807, got '1e30'".
std::uint64_t parseOptionCount(const std::string& text, const std::string& option, std::uint64_t lo,
                               std::uint64_t hi);

/// The value of --backend: "cpu", "cuda", "auto", or "cuda-strict". "cuda" without a usable GPU
/// runs on the CPU and the engine says so in a note; "cuda-strict" refuses instead (Unsupported:
/// "--backend cuda-strict: no usable GPU (reason)"). Other values: InvalidArgument naming the
/// option.
Backend parseBackendOption(const std::string& text, const std::string& option = "--backend");
/// Usage text of `command` ("usage: penumbra-cli proton ..."), or nullptr for an unknown one.
const char* usageOf(const std::string& command);
/// True when args ask for help ("--help" or "-h").
bool wantsHelp(const Args& args);

/// The options of one subcommand, taken out of its arguments by name (the order of the calls
/// decides which option claims a value that looks like an option). Numbers are checked as they
/// are taken; an option without its value stays in rest() and is reported by allTaken().
class OptionParser {
public:
  /// command: the subcommand's name in messages ("photon").
  OptionParser(std::string command, Args args)
      : command_(std::move(command)), args_(std::move(args)) {}

  /// Value of "--name VALUE", or fallback when the option is absent.
  std::string text(const std::string& name, const std::string& fallback = {});
  /// Value of "--name VALUE", or nothing when the option is absent (an empty value is given:
  /// for options whose absence means a default, so that "--range ''" is refused, not ignored).
  std::optional<std::string> value(const std::string& name);
  /// Value of "--name NUMBER" (parseOptionNumber), or fallback when the option is absent.
  double number(const std::string& name, double fallback);
  /// Value of "--name N" (parseOptionInteger), or fallback when the option is absent.
  int integer(const std::string& name, int fallback);
  /// Value of "--name N" (parseOptionCount in [lo, hi]), or fallback when the option is absent.
  std::uint64_t count(const std::string& name, std::uint64_t fallback, std::uint64_t lo,
                      std::uint64_t hi);
  /// True if "--name" is present.
  bool flag(const std::string& name);

  /// The arguments not taken so far (positional arguments, unknown options).
  const Args& rest() const { return args_; }
  /// True when every argument was taken; otherwise prints "penumbra-cli COMMAND: unexpected
  /// argument 'X'" and `usage` to stderr.
  bool allTaken(const std::string& usage) const;

  /// True when rest() is `count` positional arguments. Otherwise prints "penumbra-cli COMMAND:
  /// unexpected argument 'X'" for a leftover option (or the usage alone for a wrong count) to
  /// stderr: the caller returns 2.
  bool positionals(std::size_t count, const std::string& usage) const;

private:
  std::string command_;
  Args args_;
};

}  // namespace penumbra::cli
