// make_machine: the one place that knows every backend. A new backend adds one row to k_backends.

#include "lab/lava_machine.hpp"
#include "lab/local_machine.hpp"
#include "lab/machine.hpp"
#include "lab/qemu_machine.hpp"
#include "lab/ssh_machine.hpp"

#include <algorithm>
#include <array>

namespace bisectd::lab {

namespace {

using Factory = Result<std::unique_ptr<Machine>> (*)(const MachineSpec&);

struct Backend {
  std::string_view name;
  Factory create;
};

constexpr std::array k_backends{
  Backend{"local", &LocalMachine::create},
  Backend{"qemu", &QemuMachine::create},
  Backend{"ssh", &SshMachine::create},
  Backend{"lava", &LavaMachine::create},
};

} // namespace

bool is_known_backend(std::string_view name) {
  return std::any_of(k_backends.begin(), k_backends.end(), [&](const Backend& b) { return b.name == name; });
}

std::string known_backends() {
  std::string names;
  for (const auto& backend : k_backends) {
    names += (names.empty() ? "" : ", ") + std::string(backend.name);
  }
  return names;
}

Result<std::unique_ptr<Machine>> make_machine(const MachineSpec& spec) {
  for (const auto& backend : k_backends) {
    if (backend.name == spec.backend) {
      return backend.create(spec);
    }
  }
  return make_error(ErrorCode::invalid_config, "machine " + spec.name + ": unknown backend '" + spec.backend +
                                                 "' (known: " + known_backends() + ")");
}

} // namespace bisectd::lab
