#include "base/loader_env.hpp"

#include <algorithm>
#include <array>

namespace bisectd::base {

bool is_loader_variable(std::string_view name) {
  // glibc's sysdeps/generic/unsecvars.h without TMPDIR and TZDIR (a build may set its temporary directory; neither
  // loads code), plus GLIBC_TUNABLES. Every LD_* counts, known to this glibc or not.
  static constexpr std::array<std::string_view, 12> k_names{
    "GCONV_PATH",   "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES",      "LOCALDOMAIN", "LOCPATH",
    "MALLOC_TRACE", "NIS_PATH",    "NLSPATH",        "RESOLV_HOST_CONF", "RES_OPTIONS", "MALLOC_CHECK_"};
  return name.starts_with("LD_") || std::find(k_names.begin(), k_names.end(), name) != k_names.end();
}

} // namespace bisectd::base
