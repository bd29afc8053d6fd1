#include "cli_args.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "core/error.hpp"

namespace penumbra::cli {

namespace {

/// Value of "--name VALUE" (both removed from args), or nothing when the option is absent or
/// is the last argument (then it stays in args, an unexpected argument).
std::optional<std::string> takeValue(Args& args, const std::string& name) {
  const auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end() || it + 1 == args.end()) return std::nullopt;
  std::string value = *(it + 1);
  args.erase(it, it + 2);
  return value;
}

/// True when all of `text` is a finite number (std::stod's syntax), stored in v.
bool wholeNumber(const std::string& text, double& v) {
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {  // not a number, or out of double's range
    return false;
  }
  return used != 0 && used == text.size() && std::isfinite(v);
}

}  // namespace

std::string takeOption(Args& args, const std::string& name, const std::string& fallback) {
  return takeValue(args, name).value_or(fallback);
}

bool takeFlag(Args& args, const std::string& name) {
  const auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}

std::string dataDir() {
  if (const char* env = std::getenv("PENUMBRA_TEST_DATA"); env && *env) return env;
  return std::string(PENUMBRA_SOURCE_DIR) + "/../shared/data";
}

double parseOptionNumber(const std::string& text, const std::string& option) {
  double v = 0;
  PENUMBRA_REQUIRE(wholeNumber(text, v), InvalidArgument,
                   option + ": expected a number, got '" + text + "'");
  return v;
}

int parseOptionInteger(const std::string& text, const std::string& option) {
  double v = 0;
  PENUMBRA_REQUIRE(wholeNumber(text, v) && v == std::trunc(v) && v >= INT_MIN && v <= INT_MAX,
                   InvalidArgument, option + ": expected an integer, got '" + text + "'");
  return int(v);
}

std::uint64_t parseOptionCount(const std::string& text, const std::string& option, std::uint64_t lo,
                               std::uint64_t hi) {
  std::uint64_t exact = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), exact);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size() && !text.empty()) {
    if (exact >= lo && exact <= hi) return exact;
  } else {
    double v = 0;  // "1e7" style; 2^64 is exact in double, so the comparison below is too
    if (wholeNumber(text, v) && v == std::trunc(v) && v >= double(lo) &&
        v < 18446744073709551616.0 && std::uint64_t(v) <= hi)
      return std::uint64_t(v);
  }
  PENUMBRA_THROW(InvalidArgument, option + ": expected a whole number from " + std::to_string(lo) +
                                      " to " + std::to_string(hi) + ", got '" + text + "'");
}

Backend parseBackendOption(const std::string& text, const std::string& option) {
  if (text == "cuda-strict") {
    const BackendChoice choice = selectBackend(Backend::Cuda);
    if (choice.backend != Backend::Cuda) {
      std::string why;
      (void)queryCudaDevices(&why);
      PENUMBRA_THROW(Unsupported, option + " cuda-strict: no usable GPU (" + why +
                                      "); use --backend cuda to fall back to the CPU");
    }
    return Backend::Cuda;
  }
  if (text == "cpu" || text == "cuda" || text == "auto") return parseBackend(text);
  PENUMBRA_THROW(InvalidArgument,
                 option + ": unknown backend '" + text + "' (cpu, cuda, cuda-strict or auto)");
}

bool wantsHelp(const Args& args) {
  return std::find_if(args.begin(), args.end(), [](const std::string& a) {
           return a == "--help" || a == "-h";
         }) != args.end();
}

std::string OptionParser::text(const std::string& name, const std::string& fallback) {
  return takeOption(args_, name, fallback);
}

std::optional<std::string> OptionParser::value(const std::string& name) { return takeValue(args_, name); }

double OptionParser::number(const std::string& name, double fallback) {
  const std::optional<std::string> value = takeValue(args_, name);
  return value ? parseOptionNumber(*value, name) : fallback;
}

int OptionParser::integer(const std::string& name, int fallback) {
  const std::optional<std::string> value = takeValue(args_, name);
  return value ? parseOptionInteger(*value, name) : fallback;
}

std::uint64_t OptionParser::count(const std::string& name, std::uint64_t fallback, std::uint64_t lo,
                                  std::uint64_t hi) {
  const std::optional<std::string> value = takeValue(args_, name);
  return value ? parseOptionCount(*value, name, lo, hi) : fallback;
}

bool OptionParser::flag(const std::string& name) { return takeFlag(args_, name); }

bool OptionParser::allTaken(const std::string& usage) const {
  if (args_.empty()) return true;
  std::cerr << "penumbra-cli " << command_ << ": unexpected argument '" << args_.front() << "'\n"
            << usage;
  return false;
}

bool OptionParser::positionals(std::size_t count, const std::string& usage) const {
  for (const std::string& a : args_)
    if (a.size() > 1 && a[0] == '-') {  // an unknown option, or one without its value
      std::cerr << "penumbra-cli " << command_ << ": unexpected argument '" << a << "'\n" << usage;
      return false;
    }
  if (args_.size() == count) return true;
  std::cerr << "penumbra-cli " << command_ << ": expected " << count << " file argument(s), got "
            << args_.size() << "\n"
            << usage;
  return false;
}

}  // namespace penumbra::cli
