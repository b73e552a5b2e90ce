#pragma once
// Every command group of bisectctl, in --help order (the dispatch table; cli/main.cpp and the tests use it).

#include "cli/app.hpp"

#include <span>

namespace bisectd::cli {

std::span<const Registrar> command_groups();

} // namespace bisectd::cli
