#pragma once
// Environment variables that steer the dynamic loader or libc before a program's own code runs (glibc's
// unsecvars.h list and every LD_*): a job's env must never set them, since whatever a job sets reaches processes
// the daemon starts (daemon/config/job_file.cpp refuses them; base/process passes a job's env into the sandbox only).

#include <string_view>

namespace bisectd::base {

// True for LD_* and the other loader/libc variables (GCONV_PATH, GLIBC_TUNABLES, LOCPATH, NLSPATH, ...).
bool is_loader_variable(std::string_view name);

} // namespace bisectd::base
