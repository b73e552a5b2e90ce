#include "daemon/reporting/reproduce.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"

#include <algorithm>
#include <optional>

namespace bisectd::daemon::reporting {

namespace {

bool is_env_name(std::string_view name) {
  return !name.empty() && !(name.front() >= '0' && name.front() <= '9') &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

// `NAME=value` with the value quoted (as a person writes it); the whole word quoted when NAME is no shell name.
std::string assignment(const std::string& name, const std::string& value) {
  return is_env_name(name) ? name + "=" + base::shell_quote(value) : base::shell_quote(name + "=" + value);
}

// `NAME=value ... argv`, each value quoted; a name the shell would not take as an assignment goes through env(1).
std::string command_line(const std::map<std::string, std::string>& env, const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  bool plain = std::all_of(env.begin(), env.end(), [](const auto& entry) { return is_env_name(entry.first); });
  if (!env.empty() && !plain) {
    words.emplace_back("env");
  }
  for (const auto& [name, value] : env) {
    words.push_back(plain ? assignment(name, value) : base::shell_quote(name + "=" + value));
  }
  for (const auto& arg : argv) {
    words.push_back(base::shell_quote(arg));
  }
  return base::join(words, " ");
}

// `make` with what every call of the kernel recipe shares: the build dir, ARCH and the recipe's KCFLAGS.
std::string make_line(const kbuild::Recipe& recipe, const std::vector<std::string>& targets) {
  std::string line = command_line(recipe.env, {"make"}) + " O=build " + assignment("ARCH", recipe.arch);
  if (!recipe.kcflags.empty()) {
    line += " " + assignment("KCFLAGS", recipe.kcflags);
  }
  for (const auto& target : targets) {
    line += " " + base::shell_quote(target);
  }
  return line;
}

// The file at `path` as an attachment the lines read as ../NAME; a comment line when it cannot be attached.
std::optional<std::string> attach(const std::filesystem::path& path, std::vector<report::Attachment>& files,
                                  std::vector<std::string>& lines) {
  auto name = base::file_name_safe(path.filename().string());
  auto text = base::read_untrusted(path, k_max_attached_config);
  if (!text) {
    lines.push_back("# " + name + " (the job's, on bisectd's host) is not attached: " +
                    base::escape_control(text.error().message, base::LineBreaks::escape));
    return std::nullopt;
  }
  files.push_back({name, *text});
  return "../" + name;
}

void kernel_build(const kbuild::Recipe& recipe, Reproduction& out) {
  auto& lines = out.lines;
  lines.emplace_back("mkdir -p build");
  if (recipe.config.find('/') == std::string::npos) {
    lines.push_back(make_line(recipe, {recipe.config})); // a make target: tinyconfig, defconfig
  } else if (auto config = attach(recipe.config, out.files, lines)) {
    lines.push_back("cp " + base::shell_quote(*config) + " build/.config");
  }
  if (!recipe.fragment.empty()) {
    if (auto fragment = attach(recipe.fragment, out.files, lines)) {
      lines.push_back("cat " + base::shell_quote(*fragment) + " >> build/.config");
    }
  }
  for (const auto& option : recipe.extra_options) {
    lines.push_back("echo " + base::shell_quote(option) + " >> build/.config");
  }
  lines.push_back(make_line(recipe, {"olddefconfig"}));
  // -j"$(nproc)" is for the shell to expand: not quoted. The recipe builds x86 only (kbuild::kernel_arch).
  lines.push_back(make_line(recipe, {}) + " -j\"$(nproc)\" bzImage" + (recipe.modules ? " modules" : ""));
}

} // namespace

Reproduction reproduction(const Job& job, const std::string& url, const std::string& checkout_dir,
                          const std::string& culprit, const std::string& parent) {
  Reproduction out;
  auto& lines = out.lines;
  lines.push_back("git clone " + base::shell_quote(base::strip_url_userinfo(url)) + " " +
                  base::shell_quote(checkout_dir));
  lines.push_back("cd " + base::shell_quote(checkout_dir));
  lines.push_back("git checkout " + base::shell_quote(culprit) + "  # then the same from here on its parent " +
                  base::shell_quote(parent));
  if (job.build.kind == kbuild::RecipeKind::kernel) {
    kernel_build(job.build, out);
    lines.push_back("# boot build/arch/x86/boot/bzImage on the test machine, then run there:");
  } else if (!job.build.command.empty()) {
    lines.push_back(command_line(job.build.env, job.build.command));
  }
  if (!job.run.command.empty()) {
    lines.push_back(command_line(job.run.env, job.run.command) +
                    base::join({"  #", std::to_string(job.runs), "runs:", job.metrics.primary,
                                job.metrics.direction == bisect::Direction::higher_is_better ? "(higher is better)"
                                                                                              : "(lower is better)"},
                               " "));
  }
  return out;
}

} // namespace bisectd::daemon::reporting
